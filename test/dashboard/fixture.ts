// A tiny scenario run through the real simulator, with every minute's snapshot kept: what the
// dashboard would have been sent, to feed it in tests without a worker thread.
import { formatPolicy, type FanoutPolicy } from '../../core/fanout-policy.js';
import type { MinuteSnapshot } from '../../sim/model/simulation.js';
import type { RunResult } from '../../sim/result.js';
import { policyFor, prepare, runPolicy, scenarioGraph, type PreparedScenario } from '../../sim/run-scenario.js';
import { parseScenario } from '../../sim/scenario/load.js';
import type { LiveMessage } from '../../cli/dashboard/state.js';

/** 20 simulated minutes of a 5k-user graph with two 30%-of-everyone celebrities posting at minute 5. */
export const TINY = `name: tiny
seed: 7
duration: 20m
population: 500000
graph:
  generate: { users: 5000, avgFollows: 20, alpha: 2.1, celebrities: [{ count: 2, followers: 0.3, name: star }] }
activity:
  postsPerUserPerDay: { dist: lognormal, mean: 3, sigma: 1 }
  sessionsPerUserPerDay: 5
  dormantShare: 0.5
  diurnal: none
events:
  - at: 5m
    celebrityBurst: { accounts: 2, window: 30s }
infrastructure: { fanoutWorkers: 2, writesPerSecondPerWorker: 2000, redisShards: 4 }
policy: { kind: threshold, threshold: 25000 }
slo: { fanoutLagP99: 50ms, readP99: 100ms, redisMemory: 1TB }
`;

let cached: PreparedScenario | null = null;
export function tinyPrepared(): PreparedScenario {
  if (!cached) {
    const sc = parseScenario(TINY, 'tiny.yaml');
    cached = prepare(sc, scenarioGraph(sc));
  }
  return cached;
}

export interface RecordedRun {
  policy: FanoutPolicy;
  snapshots: MinuteSnapshot[];
  result: RunResult;
}

export function recordRun(spec?: string, stopAfterMinutes?: number): RecordedRun {
  const prepared = tinyPrepared();
  const policy = policyFor(prepared.scenario, spec);
  const snapshots: MinuteSnapshot[] = [];
  const result = runPolicy(prepared, policy, undefined, {
    onMinute: (s) => snapshots.push(s),
    shouldStop: () => stopAfterMinutes !== undefined && snapshots.length >= stopAfterMinutes,
  });
  return { policy, snapshots, result };
}

/** The messages the worker would post for one policy, minutes in batches of `batch`. */
export function messagesFor(index: number, run: RecordedRun, batch = 4): LiveMessage[] {
  const out: LiveMessage[] = [{ type: 'start', index, policy: formatPolicy(run.policy), durationSeconds: run.result.scenario.durationSeconds }];
  for (let i = 0; i < run.snapshots.length; i += batch) out.push({ type: 'minutes', index, snapshots: run.snapshots.slice(i, i + batch) });
  out.push({ type: 'finished', index, result: run.result });
  return out;
}
