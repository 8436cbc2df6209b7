// The capacity plan: from a scenario (its workload, its SLOs, its intervals) to the resources that
// meet the SLOs with headroom, each with its reason; p5/p50/p95 over the sampled inputs; the fan-out
// fleet checked by simulation; the binding constraint and what-ifs. The document (feedlab.plan/1)
// is self-describing: every row carries its label, unit and display strings, so a renderer needs
// none of this code.
import { formatPolicy, type FanoutPolicy } from '../../core/fanout-policy.js';
import type { FollowerGraph } from '../graph/graph.js';
import { basePolicy } from '../policy.js';
import { FEEDLAB_VERSION } from '../result.js';
import { prepare } from '../run-scenario.js';
import { formatBytes, formatCount } from '../scenario/units.js';
import type { IntervalKey, PlanSettings, Scenario } from '../scenario/types.js';
import { documentProvenance, type DocumentProvenance } from '../scenario/calibration.js';
import { bindingConstraint, whatIfs, type Binding, type PlannedFleet, type WhatIf } from './binding.js';
import { lagFloor, lagModel } from './fanout.js';
import { checkWorkers, type CheckFleet, type CheckProgress, type SimulationCheck } from './check.js';
import { DISTRIBUTION, quantiles, sampleAtPercentile } from './intervals.js';
import { checkGrowthForGraph, likelyPoint, planSettings, POINT_LABELS, samplePoints, type PlanOptions, type PlanPoint } from './inputs.js';
import { evaluatePoint, fmtTime, plural, reasonFor, RESOURCE_IDS, RESOURCES, resourceValue, shardsText, type Figures, type PlanContext, type ResourceId } from './resources.js';
import { measureWorkload, type Workload } from './workload.js';

export const PLAN_SCHEMA = 'feedlab.plan/1';

export type Quantiles = { p5: number; p50: number; p95: number };
type Display = { p5: string; p50: string; p95: string };

export interface PlanRow {
  id: string;
  label: string;
  unit: 'count' | 'bytes' | 'per-second' | 'seconds' | 'number';
  values: Quantiles;
  display: Display;
}

export interface PlanResource extends PlanRow {
  id: ResourceId;
  /** How the number was found. */
  method: 'closed form' | 'closed form, checked by simulation';
  reason: string;
}

export interface PlanInput {
  key: IntervalKey;
  label: string;
  /** The key path when the scenario gives an interval, else null (a single value). */
  path: string | null;
  low: number;
  likely: number;
  high: number;
  /** The samples' p5/p50/p95 (all the likely value when not an interval). */
  sampled: Quantiles;
}

export interface DesignPoint {
  /** Index of the sample (0 without intervals). */
  sample: number;
  point: PlanPoint;
  /** The table's p50 fleet the binding constraint and what-ifs hold fixed. */
  workers: number;
  shards: number;
  nodes: number;
  partitions: number;
  /** Resources whose value at the design point differs from the table's p50 (empty when it matches). */
  differs: { id: ResourceId; value: number; p50: number }[];
  text: string;
}

export interface PlanDocument {
  schema: typeof PLAN_SCHEMA;
  tool: { name: 'feedlab'; version: string; mode: 'plan' };
  scenario: {
    name: string;
    description: string;
    source: string;
    seed: number;
    policy: string;
    durationSeconds: number;
    sampledUsers: number;
    sampledEdges: number;
    /** The calibration file the infrastructure's measured costs came from (absent: none). */
    calibration?: DocumentProvenance;
  };
  settings: { growth: number; headroom: number; samples: number; distribution: string; plan: PlanSettings };
  slo: { fanoutLagP99Seconds: number; readP99Seconds: number; redisMemoryBytes: number };
  /** False when the scenario has no intervals: one point, every quantile the same. */
  sampled: boolean;
  /** The table's value columns, in order: p5, p50, p95 when sampled, else one "plan" column (p50). */
  columns: { key: 'p5' | 'p50' | 'p95'; label: string }[];
  inputs: PlanInput[];
  /** What the plan sizes for (at the growth): peak rates, timelines, memory used. */
  workload: PlanRow[];
  resources: PlanResource[];
  check: SimulationCheck[];
  /**
   * Where the reasons, the binding constraint and the what-ifs are computed: one sample (the p50 one
   * nearest the medians of the workload, matching the table's p50 resources where one does), on the
   * table's p50 fleet.
   */
  designPoint: DesignPoint;
  binding: Binding;
  whatIfs: WhatIf[];
  /** True when every resource meets every objective within the limits. */
  satisfied: boolean;
  problems: string[];
  method: { closedForm: string; simulated: string };
}

const METHOD = {
  closedForm:
    'Every resource is computed in closed form for each sample: the workload measured once over the sampled graph and population (who pushes to whom, timeline lengths, pulled lists), moved to the sample by the ratios of its inputs and the growth; memory with the measured Redis 7 encoding model; Little\'s law and square-root staffing for API cores and Postgres connections; M/M/1 shards for the read p99.',
  simulated:
    'The fan-out workers are checked by the simulator at the samples at the p50 and p95 of the closed-form workers (the one point when there are no intervals): the scenario runs with that many workers under its policy, and the fleet grows until the simulated per-follower lag p99 meets its objective.',
};

function display(unit: PlanRow['unit'], v: number): string {
  if (!Number.isFinite(v)) return 'unbounded';
  switch (unit) {
    case 'bytes':
      return formatBytes(v);
    case 'per-second':
      return `${formatCount(v)}/s`;
    case 'seconds':
      return fmtTime(v);
    case 'count':
      return Math.round(v).toLocaleString('en-US');
    default:
      return formatCount(v);
  }
}

function row<Id extends string>(id: Id, label: string, unit: PlanRow['unit'], values: Quantiles) {
  return { id, label, unit, values, display: { p5: display(unit, values.p5), p50: display(unit, values.p50), p95: display(unit, values.p95) } };
}

export interface PlanRequest {
  scenario: Scenario;
  /** The scenario's graph, built (or loaded) once by the caller. */
  graph: FollowerGraph;
  options: PlanOptions;
  progress?: CheckProgress;
}

/** A simulation check the closed form asks for: at which sample, with which fleet (check.ts). */
export interface CheckJob {
  quantile: 'p50' | 'p95';
  point: PlanPoint;
  fleet: CheckFleet;
}

/**
 * The plan up to its simulation checks: the closed form over every sample, and the checks it asks
 * for (one per distinct sample: the p50's and the p95's may be the same), which `finishPlan` takes
 * back in `jobs` order. Each check is its own simulation, so they may run in any order or at once.
 */
export interface PlanStage {
  req: PlanRequest;
  policy: FanoutPolicy;
  settings: PlanSettings;
  ctx: PlanContext;
  prepared: ReturnType<typeof prepare>;
  likely: PlanPoint;
  workload: ReturnType<typeof measureWorkload>;
  sampled: boolean;
  points: PlanPoint[];
  figures: Figures[];
  closedForm: Record<ResourceId, Quantiles>;
  rep: number;
  /** The checks to simulate, one per distinct sample. */
  jobs: CheckJob[];
  /** The quantiles checked, p50 first, and the job each one's figures come from. */
  wanted: { quantile: 'p50' | 'p95'; job: number }[];
}

export function buildPlan(req: PlanRequest): PlanDocument {
  const stage = planStage(req);
  return finishPlan(stage, runChecks(stage));
}

/** A stage's checks one after the other, on this thread. */
export function runChecks(stage: PlanStage): SimulationCheck[] {
  return stage.jobs.map((job) => runCheck(stage.req, job));
}

/** One check of a stage, on this thread. */
export function runCheck(req: Pick<PlanRequest, 'scenario' | 'graph' | 'options' | 'progress'>, job: CheckJob): SimulationCheck {
  return checkWorkers({ scenario: req.scenario, policy: basePolicy(req.scenario), graph: req.graph, growth: req.options.growth, progress: req.progress }, job.quantile, job.point, job.fleet);
}

/** The plan's samples, drawn, with the workload each is evaluated against (planStageOf evaluates them). */
export type PlanSamples = Pick<PlanStage, 'req' | 'policy' | 'settings' | 'ctx' | 'prepared' | 'likely' | 'workload' | 'sampled' | 'points'>;

export function planStage(req: PlanRequest): PlanStage {
  const samples = planSamples(req);
  return planStageOf(samples, evaluateSamples(samples.workload, samples.ctx, samples.points));
}

/** The workload measured once over the graph, and the samples drawn from the scenario's intervals. */
export function planSamples(req: PlanRequest): PlanSamples {
  const { scenario: sc, graph, options } = req;
  checkGrowthForGraph(sc, options.growth, graph.users);
  const policy: FanoutPolicy = basePolicy(sc);
  const settings = planSettings(sc);
  const ctx: PlanContext = { scenario: sc, policy, settings, growth: options.growth, headroom: options.headroom };
  const prepared = prepare(sc, graph);
  const likely = likelyPoint(sc, graph);
  const workload = measureWorkload(prepared, policy, likely);
  const sampled = (sc.intervals ?? []).length > 0;
  const points = samplePoints(sc, likely, options.samples);
  return { req, policy, settings, ctx, prepared, likely, workload, sampled, points };
}

/** Every sample's closed form, in order (each its own: any slice of them may be evaluated anywhere). */
export function evaluateSamples(workload: Workload, ctx: PlanContext, points: readonly PlanPoint[]): Figures[] {
  return points.map((p) => evaluatePoint(workload, ctx, p));
}

/** The plan up to its checks, from its samples and their figures (evaluateSamples, in order). */
export function planStageOf(samples: PlanSamples, figures: Figures[]): PlanStage {
  const { req, policy, settings, ctx, prepared, likely, workload, sampled, points } = samples;
  const sc = req.scenario;
  if (figures.length !== points.length) throw new Error(`${figures.length} figures for ${points.length} samples`);
  const workerValues = figures.map((f) => f.fanout.workers);
  const closedForm = Object.fromEntries(RESOURCE_IDS.map((id) => [id, quantiles(figures.map((f) => resourceValue(f, id)))])) as Record<ResourceId, Quantiles>;
  const rep = representativeSample(figures, closedForm);

  // the simulation check at the samples at the p50 (the design point when its workers are the p50) and p95 of the closed-form workers
  const jobs: CheckJob[] = [];
  const wanted: PlanStage['wanted'] = [];
  const quantilesWanted: ['p50' | 'p95', number][] = sampled ? [['p50', 50], ['p95', 95]] : [['p50', 50]];
  for (const [label, p] of quantilesWanted) {
    const i = label === 'p50' && workerValues[rep] === closedForm.fanoutWorkers.p50 ? rep : sampleAtPercentile(workerValues, p);
    const same = jobs.findIndex((j) => j.point === points[i]);
    if (same >= 0) {
      wanted.push({ quantile: label, job: same });
      continue;
    }
    const f = figures[i];
    jobs.push({ quantile: label, point: points[i], fleet: { workers: f.fanout.workers, shards: f.redis.shards, expansionPartitions: f.partitions.expansion, lagFloor: lagFloor(f.load, lagModel(sc)) } });
    wanted.push({ quantile: label, job: jobs.length - 1 });
  }
  return { req, policy, settings, ctx, prepared, likely, workload, sampled, points, figures, closedForm, rep, jobs, wanted };
}

/** The plan, from its stage and the results of its checks (in `stage.jobs` order). */
export function finishPlan(stage: PlanStage, results: readonly SimulationCheck[]): PlanDocument {
  const { req, policy, settings, ctx, prepared, likely, workload, sampled, points, figures, closedForm, rep } = stage;
  const { scenario: sc, graph, options } = req;
  const valuesOf = (fn: (f: Figures) => number) => figures.map(fn);
  // the job's own point object: the design point is found by identity (a result from a thread is a copy)
  const checks: SimulationCheck[] = stage.wanted.map((w) => ({ ...results[w.job], point: stage.jobs[w.job].point, quantile: w.quantile }));
  const checkAt = (q: 'p50' | 'p95') => checks.find((c) => c.quantile === q) ?? checks[0];

  const table = {} as Record<ResourceId, Quantiles>;
  for (const id of RESOURCE_IDS) {
    const q = { ...closedForm[id] };
    if (id === 'fanoutWorkers' || id === 'partitions') {
      const checked = (c: SimulationCheck) => (id === 'fanoutWorkers' ? c.workers : c.partitions);
      q.p50 = Math.max(q.p50, checked(checkAt('p50')));
      q.p95 = Math.max(q.p95, checked(checkAt('p95')), q.p50);
      if (!sampled) q.p5 = q.p50;
    }
    table[id] = q;
  }

  // the design point: the representative sample with its workers (as checked, when the p50 check ran there)
  const repCheck = checks.find((c) => c.point === points[rep]);
  const design = evaluatePoint(workload, ctx, points[rep], { workers: Math.max(figures[rep].fanout.workers, repCheck?.workers ?? 0) });
  const fleet: PlannedFleet = { workers: table.fanoutWorkers.p50, shards: table.redisShards.p50 };
  const unitOf = (id: ResourceId) => (RESOURCES[id].unit === 'bytes' ? 'bytes' : 'count');
  const differs = RESOURCE_IDS.filter((id) => display(unitOf(id), resourceValue(design, id)) !== display(unitOf(id), table[id].p50)).map((id) => ({ id, value: resourceValue(design, id), p50: table[id].p50 }));

  const resources: PlanResource[] = RESOURCE_IDS.map((id) => {
    let reason = reasonFor(id, design, ctx);
    const d = differs.find((x) => x.id === id);
    if (d) reason += ` (${display(unitOf(id), d.value)} at the design point; the p50 over the samples is ${display(unitOf(id), d.p50)})`;
    if (id === 'fanoutWorkers') reason += `; ${checkText(checks, sc.slo.fanoutLagP99)}`;
    const base = row(id, RESOURCES[id].label, unitOf(id), table[id]);
    return { ...base, method: id === 'fanoutWorkers' || id === 'partitions' ? 'closed form, checked by simulation' : 'closed form', reason };
  });

  const rows: PlanRow[] = [
    row('postsPerSecondPeak', 'posts/s at the peak', 'per-second', quantiles(valuesOf((f) => f.load.postsPeak))),
    row('writesPerSecondPeak', 'timeline writes/s at the peak', 'per-second', quantiles(valuesOf((f) => f.load.writesPeak))),
    row('pagesPerSecondPeak', 'feed pages/s at the peak', 'per-second', quantiles(valuesOf((f) => f.load.pagesPeak))),
    row('timelines', 'timelines kept', 'count', quantiles(valuesOf((f) => f.memory.timelines))),
    row('timelineMemory', 'timeline memory', 'bytes', quantiles(valuesOf((f) => f.memory.timelineBytes))),
    row('redisMemoryUsed', 'Redis memory used (timelines, lists, post bodies)', 'bytes', quantiles(valuesOf((f) => f.redis.usedBytes))),
    row('readP99', 'read p99 on the planned shards (closed form)', 'seconds', quantiles(valuesOf((f) => f.redis.readP99Seconds))),
    row('rebuildsPerSecond', 'timeline rebuilds/s at the peak (cold starts)', 'per-second', quantiles(valuesOf((f) => f.load.rebuildsPerSecond))),
  ];

  // the binding constraint and the what-ifs: at the design point, on the table's p50 fleet
  const binding = bindingConstraint(workload, ctx, points[rep], fleet);
  const ifs = whatIfs(prepared, workload, ctx, points[rep], evaluatePoint(workload, ctx, points[rep]), fleet);
  const designPoint: DesignPoint = {
    sample: rep,
    point: points[rep],
    workers: fleet.workers,
    shards: fleet.shards,
    nodes: table.redisNodes.p50,
    partitions: table.partitions.p50,
    differs,
    text: designText(sampled, rep, points.length, points[rep], (sc.intervals ?? []).map((i) => i.key), fleet, table, settings.replicas, RESOURCE_IDS.every((id) => matchesP50(id, resourceValue(design, id), table[id].p50))),
  };

  const problems: string[] = [];
  for (const c of checks) {
    if (c.pass || problems.some((p) => p.startsWith(`the lag objective at ${c.quantile}`))) continue;
    if (c.notSetByFleet !== null) problems.push(`the lag objective at ${c.quantile}: not set by the fan-out fleet: ${c.notSetByFleet}`);
    else problems.push(`the lag objective at ${c.quantile}: ${plural(c.workers, 'worker')} still gave a simulated lag p99 of ${fmtTime(c.lagP99Seconds)} (objective ${fmtTime(sc.slo.fanoutLagP99)}) after ${plural(c.runs.length, 'run')}`);
  }
  const readShards = quantiles(valuesOf((f) => f.redis.readShards));
  if (!Number.isFinite(readShards.p95)) problems.push(`the read p99 of ${fmtTime(sc.slo.readP99)}: no number of shards meets it (the hottest celebrity list alone keeps its shard too busy)`);
  const lagWorkers = quantiles(valuesOf((f) => f.fanout.lag));
  if (!Number.isFinite(lagWorkers.p95)) problems.push('the lag objective: no fleet meets it in closed form');
  const kept = quantiles(valuesOf((f) => f.memory.timelineBytes + f.memory.listBytes));
  if (kept.p95 > sc.slo.redisMemory) {
    problems.push(`the Redis memory budget of ${formatBytes(sc.slo.redisMemory)}: timelines and lists need ${formatBytes(kept.p95)} at p95 (${formatBytes(kept.p50)} at p50)`);
  }

  const interval = (key: IntervalKey) => (sc.intervals ?? []).find((i) => i.key === key);
  const inputs: PlanInput[] = (Object.keys(POINT_LABELS) as IntervalKey[]).map((key) => {
    const iv = interval(key);
    const q = quantiles(points.map((p) => p[key]));
    return { key, label: POINT_LABELS[key], path: iv?.path ?? null, low: iv?.low ?? likely[key], likely: likely[key], high: iv?.high ?? likely[key], sampled: q };
  });

  return {
    schema: PLAN_SCHEMA,
    tool: { name: 'feedlab', version: FEEDLAB_VERSION, mode: 'plan' },
    scenario: {
      name: sc.name,
      description: sc.description,
      source: sc.source,
      seed: sc.seed,
      policy: formatPolicy(policy),
      durationSeconds: sc.duration,
      sampledUsers: graph.users,
      sampledEdges: graph.edges,
      ...(sc.calibration ? { calibration: documentProvenance(sc.calibration) } : {}),
    },
    settings: { growth: options.growth, headroom: options.headroom, samples: points.length, distribution: DISTRIBUTION, plan: settings },
    slo: { fanoutLagP99Seconds: sc.slo.fanoutLagP99, readP99Seconds: sc.slo.readP99, redisMemoryBytes: sc.slo.redisMemory },
    sampled,
    columns: sampled ? [{ key: 'p5', label: 'p5' }, { key: 'p50', label: 'p50' }, { key: 'p95', label: 'p95' }] : [{ key: 'p50', label: 'plan' }],
    inputs,
    workload: rows,
    resources,
    check: checks,
    designPoint,
    binding,
    whatIfs: ifs,
    satisfied: problems.length === 0,
    problems,
    method: METHOD,
  };
}

function checkText(checks: SimulationCheck[], slo: number): string {
  const parts = checks
    .filter((c, i) => checks.findIndex((d) => d.point === c.point) === i)
    .map((c) => {
      const runs = c.runs.map((r) => `${r.workers} -> lag p99 ${fmtTime(r.lagP99Seconds)}`).join(', ');
      const raised = c.workers > c.closedFormWorkers ? ` (raised from ${c.closedFormWorkers})` : '';
      const verdict = c.pass
        ? `${c.workers}${raised} meets ${fmtTime(slo)}`
        : c.notSetByFleet !== null
          ? `${c.workers}${raised} kept, as the lag is not set by the fan-out fleet: ${c.notSetByFleet}`
          : `${c.workers}${raised} still misses ${fmtTime(slo)}`;
      const fleet = `${plural(c.partitions, 'partition')}, ${plural(c.shards, 'shard')}`;
      return `${c.quantile}${checks.length > 1 && checks.every((d) => d.point === c.point) ? '/p95' : ''} (${fleet}): ${runs}: ${verdict}`;
    });
  return `checked by simulation at ${parts.join('; ')}`;
}

/**
 * The sample the reasons, the binding constraint and the what-ifs are computed at: among the samples
 * whose resources are the most of the table's p50s, the one nearest the medians of the workload
 * (the sum of |log(value / median)| over the rates, timelines and memory), the lowest index on a tie.
 */
function representativeSample(figures: Figures[], p50: Record<ResourceId, Quantiles>): number {
  if (figures.length === 1) return 0;
  const measures: ((f: Figures) => number)[] = [
    (f) => f.load.postsPeak,
    (f) => f.load.writesPeak,
    (f) => f.load.pagesPeak,
    (f) => f.memory.timelines,
    (f) => f.memory.timelineBytes,
    (f) => f.redis.usedBytes,
    (f) => f.redis.provisionedBytes,
    (f) => f.load.rebuildsPerSecond,
  ];
  const medians = measures.map((m) => quantiles(figures.map(m)).p50);
  let best = 0;
  let bestMiss = Infinity;
  let bestDistance = Infinity;
  figures.forEach((f, i) => {
    const miss = RESOURCE_IDS.filter((id) => !matchesP50(id, resourceValue(f, id), p50[id].p50)).length;
    let distance = 0;
    measures.forEach((m, k) => {
      const v = m(f);
      const med = medians[k];
      if (v > 0 && med > 0 && Number.isFinite(v) && Number.isFinite(med)) distance += Math.abs(Math.log(v / med));
      else if (v !== med) distance += 1;
    });
    if (miss < bestMiss || (miss === bestMiss && distance < bestDistance)) {
      best = i;
      bestMiss = miss;
      bestDistance = distance;
    }
  });
  return best;
}

/** Counts match the table's p50 exactly; bytes within 1% (nearly no sample has the p50's exact bytes). */
function matchesP50(id: ResourceId, value: number, p50: number): boolean {
  return RESOURCES[id].unit === 'count' ? value === p50 : Math.abs(value - p50) <= 0.01 * Math.abs(p50);
}

function designText(sampled: boolean, sample: number, samples: number, point: PlanPoint, keys: IntervalKey[], fleet: PlannedFleet, table: Record<ResourceId, Quantiles>, replicas: number, matches: boolean): string {
  const fleetText = `${plural(fleet.workers, 'worker')}, ${shardsText(fleet.shards, replicas)}, ${plural(table.partitions.p50, 'partition')}`;
  if (!sampled) return `the plan's one point, on its fleet: ${fleetText}`;
  const values = keys.map((k) => `${POINT_LABELS[k]} ${fmtInput(point[k])}`).join(', ');
  const which = matches
    ? "of the samples with every resource at the table's p50 (memory within 1%), the nearest the medians of the workload"
    : "of the samples with the most resources at the table's p50 (none has them all: the reasons say where it differs), the nearest the medians of the workload";
  return `sample ${sample + 1} of ${samples} (${values}), ${which}, on the table's p50 fleet: ${fleetText}`;
}

const fmtInput = (v: number) => (Math.abs(v) >= 1000 ? Math.round(v).toLocaleString('en-US') : Number(v.toPrecision(4)).toString());

export type { PlanPoint };
