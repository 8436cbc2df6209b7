// The simulation check of the fan-out fleet: the scenario is simulated, at a sampled point with the
// growth applied, with the worker count the closed form gave, under the scenario's policy, by the
// real simulator; while the simulated per-follower lag p99 misses its objective the fleet grows
// (by the miss, between x1.25 and x4) and the scenario is simulated again.
import type { FanoutPolicy } from '../../core/fanout-policy.js';
import type { FollowerGraph } from '../graph/graph.js';
import { prepare, runPolicy, scenarioGraph, type ProgressFn } from '../run-scenario.js';
import { ScenarioError } from '../scenario-error.js';
import type { Scenario } from '../scenario/types.js';
import { scenarioAt, type PlanPoint } from './inputs.js';

export const MAX_CHECK_RUNS = 8;
export const MAX_WORKERS = 1_000_000;

export interface CheckRun {
  workers: number;
  lagP99Seconds: number;
  pass: boolean;
}

export interface SimulationCheck {
  /** Which sample: the one at this percentile of the closed-form fan-out workers. */
  quantile: 'p50' | 'p95';
  point: PlanPoint;
  closedFormWorkers: number;
  runs: CheckRun[];
  /** The checked worker count (the last run's), and whether it met the lag objective. */
  workers: number;
  pass: boolean;
  /** What the last run measured beside the lag: read p99, peak Redis memory (timelines and lists). */
  lagP99Seconds: number;
  readP99Ms: number;
  peakMemoryBytes: number;
  sloPass: boolean;
}

export interface CheckProgress {
  start(label: string): { update: ProgressFn; done(detail?: string): void };
}

export interface CheckInput {
  scenario: Scenario;
  policy: FanoutPolicy;
  /** The graph built for the likely point: reused when the point has the same follows per user. */
  graph: FollowerGraph;
  growth: number;
  progress?: CheckProgress;
}

export function checkWorkers(input: CheckInput, quantile: 'p50' | 'p95', point: PlanPoint, closedFormWorkers: number): SimulationCheck {
  const { scenario: sc, policy, growth } = input;
  const base = scenarioAt(sc, point, growth);
  const users = input.graph.users;
  if ((base.population ?? users) < users) {
    throw new ScenarioError(`${sc.source}: ${base.population} users after --growth ${growth} is fewer than the ${users} of the sampled graph; the simulation check needs at least as many`);
  }
  const sameGraph = sc.graph.kind === 'file' || (base.graph.kind === 'generate' && sc.graph.kind === 'generate' && base.graph.avgFollows === sc.graph.avgFollows);
  const graph = sameGraph ? input.graph : scenarioGraph(base);
  const prepared = prepare(base, graph);
  const floor = (sc.infrastructure.largePostClass?.workers ?? 0) + 1;
  const runs: CheckRun[] = [];
  let workers = Math.max(floor, closedFormWorkers);
  let last = null as ReturnType<typeof runPolicy> | null;
  for (let i = 0; i < MAX_CHECK_RUNS; i++) {
    const scAt = { ...base, infrastructure: { ...base.infrastructure, fanoutWorkers: workers } };
    const p = input.progress?.start(`check ${quantile}: simulate ${sc.name} with ${workers} workers`);
    last = runPolicy({ ...prepared, scenario: scAt }, policy, p?.update);
    const lag = last.summary.fanout.followerLagSeconds.p99;
    const pass = lag <= sc.slo.fanoutLagP99;
    runs.push({ workers, lagP99Seconds: lag, pass });
    p?.done(`lag p99 ${lag.toPrecision(3)} s ${pass ? 'meets' : 'misses'} ${sc.slo.fanoutLagP99} s`);
    if (pass || workers >= MAX_WORKERS) break;
    const factor = Math.min(4, Math.max(1.25, lag / sc.slo.fanoutLagP99));
    workers = Math.min(MAX_WORKERS, Math.max(workers + 1, Math.ceil(workers * factor)));
  }
  const final = runs[runs.length - 1];
  const s = last!.summary;
  return {
    quantile,
    point,
    closedFormWorkers,
    runs,
    workers: final.workers,
    pass: final.pass,
    lagP99Seconds: final.lagP99Seconds,
    readP99Ms: s.reads.latencyMs.p99,
    peakMemoryBytes: s.redis.memoryBytes.peak,
    sloPass: s.slo.pass,
  };
}
