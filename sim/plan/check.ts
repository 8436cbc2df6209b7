// The simulation check of the fan-out fleet: the scenario is simulated, at a sampled point with the
// growth applied, by the real simulator under the scenario's policy, with the fleet the plan gives
// at that point: the closed form's workers, its Redis shards, and its event-log partitions (enough
// for the expansion, and one per worker). While the simulated per-follower lag p99 misses its
// objective the workers grow (by the miss, between x1.25 and x4), with the partitions, and the
// scenario is simulated again; when the lag does not improve as the workers grow, the lag is not set
// by the fan-out fleet: the check stops there and says what sets it instead of inflating the fleet.
import type { SloCheck, SloVerdict } from '../slo.js';
import type { FanoutPolicy } from '../../core/fanout-policy.js';
import type { FollowerGraph } from '../graph/graph.js';
import { prepare, runPolicy, scenarioGraph, type ProgressFn } from '../run-scenario.js';
import { ScenarioError } from '../scenario-error.js';
import type { Scenario } from '../scenario/types.js';
import { scenarioAt, type PlanPoint } from './inputs.js';

export const MAX_CHECK_RUNS = 8;
export const MAX_WORKERS = 1_000_000;
/** The simulator keeps a shard number per user in 16 bits. */
export const MAX_CHECK_SHARDS = 65_535;
/** A run whose lag p99 is within this share of the run before, with more workers, did not improve. */
export const STALL_TOLERANCE = 0.01;

export interface CheckRun {
  workers: number;
  partitions: number;
  lagP99Seconds: number;
  pass: boolean;
}

export interface SimulationCheck {
  /** Which sample: the one at this percentile of the closed-form fan-out workers. */
  quantile: 'p50' | 'p95';
  point: PlanPoint;
  closedFormWorkers: number;
  /** The planned Redis shards at the point, which every run uses. */
  shards: number;
  /** The partitions the expansion needs at the point (each run has max(this, its workers)). */
  expansionPartitions: number;
  runs: CheckRun[];
  /** The checked worker count and partitions, and whether they met the lag objective. */
  workers: number;
  partitions: number;
  pass: boolean;
  /**
   * Set when the lag stopped improving as the workers grew: what sets the lag instead of the fleet.
   * The checked workers are then the last count before the runs that did not help.
   */
  notSetByFleet: string | null;
  /** What the last run measured, on the planned shards: lag p99, read p99, peak Redis memory (timelines and lists), every SLO. */
  lagP99Seconds: number;
  readP99Ms: number;
  peakMemoryBytes: number;
  sloPass: boolean;
  /** The scenario's slo.thresholds on that run (absent from older documents, empty without any). */
  thresholds?: SloCheck[];
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

/** The plan at the checked point: the closed-form workers, the shards, and the partitions the expansion needs. */
export interface CheckFleet {
  workers: number;
  shards: number;
  expansionPartitions: number;
  /** The closed form's least lag of one delivery (`lagFloor`): no fleet goes below it. */
  lagFloor: { seconds: number; batch: number };
}

const fmtSeconds = (s: number) => (s < 1 ? `${+(s * 1000).toPrecision(3)} ms` : `${+s.toPrecision(3)} s`);
const int = (n: number) => Math.round(n).toLocaleString('en-US');

export function checkWorkers(input: CheckInput, quantile: 'p50' | 'p95', point: PlanPoint, fleet: CheckFleet): SimulationCheck {
  const { scenario: sc, policy, growth } = input;
  const shards = Math.max(1, Math.min(MAX_CHECK_SHARDS, fleet.shards));
  const at = scenarioAt(sc, point, growth);
  const base: Scenario = { ...at, infrastructure: { ...at.infrastructure, redisShards: shards } };
  const users = input.graph.users;
  if ((base.population ?? users) < users) {
    throw new ScenarioError(`${sc.source}: ${base.population} users after --growth ${growth} is fewer than the ${users} of the sampled graph; the simulation check needs at least as many`);
  }
  const sameGraph = sc.graph.kind === 'file' || (base.graph.kind === 'generate' && sc.graph.kind === 'generate' && base.graph.avgFollows === sc.graph.avgFollows);
  const graph = sameGraph ? input.graph : scenarioGraph(base);
  const prepared = prepare(base, graph);
  const floor = (sc.infrastructure.largePostClass?.workers ?? 0) + 1;
  const runs: CheckRun[] = [];
  let workers = Math.max(floor, fleet.workers);
  let last = null as ReturnType<typeof runPolicy> | null;
  let notSetByFleet: string | null = null;
  for (let i = 0; i < MAX_CHECK_RUNS; i++) {
    const partitions = Math.max(1, fleet.expansionPartitions, workers);
    const scAt = { ...base, infrastructure: { ...base.infrastructure, fanoutWorkers: workers, partitions } };
    const p = input.progress?.start(`check ${quantile}: simulate ${sc.name} with ${workers} workers`);
    last = runPolicy({ ...prepared, scenario: scAt }, policy, p?.update);
    const lag = last.summary.fanout.followerLagSeconds.p99;
    const pass = lag <= sc.slo.fanoutLagP99;
    const before = runs[runs.length - 1];
    runs.push({ workers, partitions, lagP99Seconds: lag, pass });
    p?.done(`lag p99 ${lag.toPrecision(3)} s ${pass ? 'meets' : 'misses'} ${sc.slo.fanoutLagP99} s (${int(partitions)} partitions, ${int(shards)} shards)`);
    if (pass || workers >= MAX_WORKERS) break;
    if (fleet.lagFloor.seconds > sc.slo.fanoutLagP99) {
      // no fleet goes below one batch: growing it cannot meet the objective
      notSetByFleet = `${batchText(scAt, fleet.lagFloor)}, above the objective of ${fmtSeconds(sc.slo.fanoutLagP99)}: no fleet meets it; a smaller infrastructure.batchSize or faster workers lower it`;
      break;
    }
    if (before && lag >= before.lagP99Seconds * (1 - STALL_TOLERANCE)) {
      notSetByFleet = whatSetsTheLag(scAt, last, before, runs[runs.length - 1], fleet.lagFloor);
      break;
    }
    const factor = Math.min(4, Math.max(1.25, lag / sc.slo.fanoutLagP99));
    workers = Math.min(MAX_WORKERS, Math.max(workers + 1, Math.ceil(workers * factor)));
  }
  const final = runs[runs.length - 1];
  // when more workers did not help, the plan keeps the count before them
  const kept = notSetByFleet !== null && runs.length >= 2 ? runs[runs.length - 2] : final;
  const s = last!.summary;
  return {
    quantile,
    point,
    closedFormWorkers: fleet.workers,
    shards,
    expansionPartitions: fleet.expansionPartitions,
    runs,
    workers: kept.workers,
    partitions: kept.partitions,
    pass: final.pass,
    notSetByFleet,
    lagP99Seconds: final.lagP99Seconds,
    readP99Ms: s.reads.latencyMs.p99,
    peakMemoryBytes: s.redis.memoryBytes.peak,
    sloPass: s.slo.pass,
    thresholds: s.slo.checks.filter((c) => c.threshold !== undefined),
  };
}

/** "one batch sets a floor of 201 ms a delivery (...)". */
function batchText(sc: Scenario, floor: CheckFleet['lagFloor']): string {
  const i = sc.infrastructure;
  const c = i.costs;
  return `one batch sets a floor of ${fmtSeconds(floor.seconds)} a delivery (reading the follower list ${fmtSeconds(c.expand)} + a round trip ${fmtSeconds(c.rtt)} + ${int(floor.batch)} writes at ${int(i.writesPerSecondPerWorker)}/s ${fmtSeconds(floor.batch / i.writesPerSecondPerWorker)})`;
}

/** Why the lag p99 stayed put from one run to the next with more workers (and partitions). */
function whatSetsTheLag(sc: Scenario, run: ReturnType<typeof runPolicy>, before: CheckRun, after: CheckRun, floor: CheckFleet['lagFloor']): string {
  const i = sc.infrastructure;
  const stayed = `the simulated lag p99 stayed at ${fmtSeconds(after.lagP99Seconds)} from ${int(before.workers)} to ${int(after.workers)} workers`;
  const partitionBusy = run.summary.fanout.partitionUtilisation;
  if (partitionBusy >= 0.9) {
    return `${stayed}: the event-log partitions set it (${int(after.partitions)} partitions ${Math.round(partitionBusy * 100)}% busy expanding posts at ${fmtSeconds(i.costs.expand)} each)`;
  }
  if (after.lagP99Seconds <= floor.seconds * 1.5) return `${stayed}: ${batchText(sc, floor)}, which more workers do not shorten`;
  if (i.largePostClass) {
    return `${stayed}: the large-post pool sets it (infrastructure.largePostClass: ${int(i.largePostClass.workers)} workers for authors over ${int(i.largePostClass.followers)} followers, which the check does not grow)`;
  }
  return `${stayed}: something other than the fleet's size sets it (partitions ${Math.round(partitionBusy * 100)}% busy, fan-out workers ${Math.round(run.summary.fanout.workerUtilisation * 100)}% busy)`;
}

/**
 * The scenario's thresholds over the simulation checks, as one verdict: a threshold fails when it
 * fails on the planned fleet at any point checked (p50 or p95), and is shown with that run's figure.
 */
export function thresholdVerdict(checks: readonly SimulationCheck[]): SloVerdict {
  const byId = new Map<string, SloCheck>();
  for (const c of checks) {
    for (const t of c.thresholds ?? []) {
      const seen = byId.get(t.id);
      if (!seen || (seen.pass && !t.pass)) byId.set(t.id, t);
    }
  }
  const list = [...byId.values()];
  return { pass: list.every((t) => t.pass), checks: list };
}
