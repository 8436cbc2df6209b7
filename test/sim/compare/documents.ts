// Result documents for the comparison tests: hand-made ones whose figures are set by the test (every
// other figure 1), the two saved replays of test/cli/replay.test.ts's replay-events scenario (real
// measurements, 2026-12-04, test/fixtures/results), and that scenario simulated in-process.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunResult } from '../../../sim/result.js';
import { parseScenario } from '../../../sim/scenario/load.js';
import { policyFor, prepare, runPolicy, scenarioGraph } from '../../../sim/run-scenario.js';

export const RESULTS = join(import.meta.dirname, '../../fixtures/results');
export const REPLAY_RUNS = [join(RESULTS, 'replay-events.run1.json'), join(RESULTS, 'replay-events.run2.json')];

export function savedReplay(i: 0 | 1): RunResult {
  return JSON.parse(readFileSync(REPLAY_RUNS[i], 'utf8')) as RunResult;
}

/** The scenario the saved replays ran (test/cli/replay.test.ts runs it too). */
export const EVENTS_YAML = readFileSync(join(import.meta.dirname, '../../fixtures/scenarios/replay-events.yaml'), 'utf8');

/** replay-events simulated under its own policy (or `policy`), with `seed`. */
export function simulatedEvents(seed = 9, policy?: string): RunResult {
  const sc = parseScenario(EVENTS_YAML.replace('seed: 9', `seed: ${seed}`), 'events.yaml');
  return runPolicy(prepare(sc, scenarioGraph(sc)), policyFor(sc, policy));
}

export interface HandMade {
  source?: 'simulate' | 'replay';
  seed?: number;
  policy?: string;
  followerLagP99?: number;
  readP99Ms?: number;
  memoryEnd?: number;
  listBytes?: number;
  commandsPerRead?: number;
  contended?: boolean;
  partialAt?: number;
}

const latency = (p99: number) => ({ mean: 1, p50: 1, p90: 1, p99, p999: 1, max: 1 });

/** A result document with only what the figures read; every figure not set is 1 (memory: 1000 B, lists 0). */
export function handMade(h: HandMade = {}): RunResult {
  const source = h.source ?? 'simulate';
  const memoryEnd = h.memoryEnd ?? 1000;
  const listBytes = h.listBytes ?? 0;
  const doc = {
    schema: 'feedlab.result/1',
    tool: { name: 'feedlab', version: '0.1.0', mode: source },
    source,
    scenario: { name: 'hand', description: '', seed: h.seed ?? 1, durationSeconds: 60, population: 100, sampledUsers: 100, sampledEdges: 1000, scale: 1, graph: {} },
    policy: h.policy ?? 'push',
    ...(h.partialAt === undefined ? {} : { partial: { stoppedAtSeconds: h.partialAt } }),
    summary: {
      fanout: {
        lagSeconds: latency(1),
        followerLagSeconds: latency(h.followerLagP99 ?? 1),
        writesPerSecond: { mean: 1, peak: 1 },
        deliveriesPerPost: 1,
      },
      redis: { memoryBytes: { peak: memoryEnd, end: memoryEnd }, listBytes },
      reads: { latencyMs: latency(h.readP99Ms ?? 1), redisOpsPerRead: { mean: h.commandsPerRead ?? 1 } },
    },
    ...(source === 'replay'
      ? {
          replay: {
            mapping: { timeScale: 1 },
            cpu: { contended: h.contended ?? false },
            memory: {
              keyspaceBytesPerKey: 0,
              classes: {
                timelines: { keys: 1, bytes: memoryEnd - listBytes },
                pulledLists: { keys: listBytes > 0 ? 1 : 0, bytes: listBytes },
                ownLists: { keys: 1, bytes: 10 },
                bodies: { keys: 1, bytes: 20 },
                eventLog: { keys: 1, bytes: 30 },
                other: { keys: 1, bytes: 40 },
              },
            },
          },
        }
      : {}),
  };
  return doc as unknown as RunResult;
}
