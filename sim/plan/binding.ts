// Which constraint binds, and what would change it. Both re-run the plan math (closed form) at the
// plan's design point (the p50 sample nearest the medians, with the growth applied) on the table's
// p50 fleet (its workers and shards):
// - binding: keep that fleet and raise the load until each objective fails: Redis memory (the
//   shards full, or over the scenario's memory budget, whichever comes first), the lag p99
//   (fan-out), the read p99 (Redis shards). The one that fails at the smallest load multiple binds.
// - what-ifs: change one knob of the design (timeline cap, threshold, dormant skipping, lease),
//   plan again, and say what moved, with the numbers.
import type { FanoutPolicy } from '../../core/fanout-policy.js';
import { formatBytes, formatCount } from '../scenario/units.js';
import type { Scenario } from '../scenario/types.js';
import { lagEstimate, lagModel } from './fanout.js';
import type { PlanPoint } from './inputs.js';
import { evaluatePoint, fmtTime, plural, shardsText, type Figures, type PlanContext } from './resources.js';
import { measureWorkload, type Prepared, type Workload } from './workload.js';

export type ConstraintId = 'memory' | 'lag' | 'readLatency';

export interface ConstraintSlack {
  id: ConstraintId;
  label: string;
  /** The load multiple (over the planned load) at which the planned fleet stops meeting it. */
  loadMultiple: number;
  /** What runs out there. */
  limit: string;
}

export interface Binding {
  constraint: ConstraintId;
  reason: string;
  constraints: ConstraintSlack[];
}

const MAX_MULTIPLE = 1000;

/** The largest multiple of the load at which `holds` is still true (bisection; holds must be monotone). */
function multipleUntil(holds: (m: number) => boolean): number {
  if (!holds(1e-3)) return 0;
  let hi = 1;
  while (holds(hi)) {
    hi *= 2;
    if (hi > MAX_MULTIPLE) return Infinity;
  }
  let lo = hi / 2;
  if (!holds(lo)) lo = 1e-3;
  for (let i = 0; i < 40; i++) {
    const mid = (lo + hi) / 2;
    if (holds(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** The fleet the binding constraint and the what-ifs hold fixed: the table's p50. */
export interface PlannedFleet {
  workers: number;
  shards: number;
}

const times = (x: number) => (Number.isFinite(x) ? `${x < 10 ? x.toFixed(2) : x.toPrecision(3)}x` : `over ${MAX_MULTIPLE}x`);

export function bindingConstraint(w: Workload, ctx: PlanContext, point: PlanPoint, fleet: PlannedFleet): Binding {
  const sc = ctx.scenario;
  const s = ctx.settings;
  const fixed = { workers: fleet.workers, shards: fleet.shards };
  const at = (m: number) => evaluatePoint(w, { ...ctx, growth: ctx.growth * m }, point, fixed);
  const m = lagModel(sc);
  const budget = sc.slo.redisMemory;
  const nodesHold = (f: Figures) => f.redis.usedBytes * f.redis.imbalance * s.fragmentation <= s.redisNodeMemory * f.redis.shards;
  const budgetHolds = (f: Figures) => f.memory.timelineBytes + f.memory.listBytes <= budget;
  const full = multipleUntil((k) => nodesHold(at(k)));
  const nodes = `${shardsText(fleet.shards, s.replicas)} of ${formatBytes(s.redisNodeMemory)} are full`;
  let memory: { loadMultiple: number; limit: string };
  if (!Number.isFinite(budget)) memory = { loadMultiple: full, limit: nodes };
  else {
    const over = multipleUntil((k) => budgetHolds(at(k)));
    const budgetText = `the ${formatBytes(budget)} budget for timelines and lists is reached`;
    memory =
      over < full
        ? { loadMultiple: over, limit: `${budgetText} (the ${shardsText(fleet.shards, s.replicas)} would be full at ${times(full)})` }
        : { loadMultiple: full, limit: `${nodes} (the ${formatBytes(budget)} budget would be reached at ${times(over)})` };
  }
  const constraints: ConstraintSlack[] = [
    { id: 'memory', label: 'Redis memory', ...memory },
    {
      id: 'lag',
      label: 'fan-out lag',
      loadMultiple: multipleUntil((k) => lagEstimate(fixed.workers, at(k).load, m) <= sc.slo.fanoutLagP99),
      limit: `p99 over ${fmtTime(sc.slo.fanoutLagP99)} with ${plural(fixed.workers, 'worker')}`,
    },
    {
      id: 'readLatency',
      label: 'read latency',
      loadMultiple: multipleUntil((k) => at(k).redis.readP99Seconds <= sc.slo.readP99),
      limit: `p99 over ${fmtTime(sc.slo.readP99)} with ${plural(fixed.shards, 'shard')}`,
    },
  ];
  const sorted = [...constraints].sort((a, b) => a.loadMultiple - b.loadMultiple);
  const first = sorted[0];
  const others = sorted.slice(1).map((c) => `${c.label} to ${times(c.loadMultiple)}`).join(', ');
  const reason = `${first.label} binds: the planned fleet holds ${times(first.loadMultiple)} the planned load before ${first.limit}; ${others}`;
  return { constraint: first.id, reason, constraints };
}

// ---- what-ifs

export interface WhatIfFigure {
  id: 'timelineMemory' | 'redisMemoryUsed' | 'redisMemoryProvisioned' | 'redisShards' | 'fanoutWorkers' | 'lagP99' | 'readP99';
  label: string;
  from: number;
  to: number;
}

export interface WhatIf {
  knob: string;
  from: string;
  to: string;
  text: string;
  figures: WhatIfFigure[];
}

interface Knob {
  knob: string;
  from: string;
  to: string;
  /** How the knob reads in a sentence: "a timeline cap of 400 instead of 800". */
  phrase: string;
  scenario: Scenario;
  policy: FanoutPolicy;
}

function knobs(sc: Scenario, policy: FanoutPolicy): Knob[] {
  const out: Knob[] = [];
  const withPolicy = (p: Partial<Scenario['policy']>): Scenario => ({ ...sc, policy: { ...sc.policy, ...p } });
  const cap = sc.policy.timelineCap;
  if (cap >= 2) {
    const half = Math.floor(cap / 2);
    out.push({ knob: 'policy.timelineCap', from: String(cap), to: String(half), phrase: `a timeline cap of ${half} instead of ${cap}`, scenario: withPolicy({ timelineCap: half }), policy });
  }
  if (policy.kind === 'threshold' || policy.kind === 'adaptive') {
    const t = policy.threshold;
    const half = Math.floor(t / 2);
    out.push({ knob: 'policy.threshold', from: String(t), to: String(half), phrase: `a threshold of ${formatCount(half)} instead of ${formatCount(t)}`, scenario: withPolicy({ threshold: half }), policy: { ...policy, threshold: half } });
    out.push({ knob: 'policy.threshold', from: String(t), to: String(t * 2), phrase: `a threshold of ${formatCount(t * 2)} instead of ${formatCount(t)}`, scenario: withPolicy({ threshold: t * 2 }), policy: { ...policy, threshold: t * 2 } });
  } else if (policy.kind === 'push' || policy.kind === 'pull') {
    const t = sc.policy.threshold;
    out.push({ knob: 'policy.kind', from: policy.kind, to: `threshold:${t}`, phrase: `a threshold of ${formatCount(t)} instead of ${policy.kind}`, scenario: withPolicy({ kind: 'threshold' }), policy: { ...policy, kind: 'threshold', threshold: t } });
  }
  const skip = policy.skipDormant;
  out.push({
    knob: 'policy.skipDormant',
    from: String(skip),
    to: String(!skip),
    phrase: skip ? 'pushing to dormant followers too' : 'skipping dormant followers',
    scenario: withPolicy({ skipDormant: !skip }),
    policy: { ...policy, skipDormant: !skip },
  });
  const lease = sc.policy.leaseDays;
  out.push({ knob: 'policy.leaseDays', from: String(lease), to: String(lease / 2), phrase: `a lease of ${lease / 2} days instead of ${lease}`, scenario: withPolicy({ leaseDays: lease / 2 }), policy });
  return out;
}

/** "halves X", "doubles X", "cuts X by 30%", "raises X by 25%", "raises X 12x", or null when within 1%. */
export function changeText(label: string, from: number, to: number): string | null {
  if (from === to || (from > 0 && Math.abs(to / from - 1) < 0.01)) return null;
  if (from === 0) return `raises ${label} from nothing`;
  const r = to / from;
  if (!Number.isFinite(r)) return `makes ${label} unbounded`;
  if (r >= 0.47 && r <= 0.53) return `halves ${label}`;
  if (r >= 1.9 && r <= 2.1) return `doubles ${label}`;
  if (r > 2.1) return `raises ${label} ${r < 10 ? r.toFixed(1) : Math.round(r).toLocaleString('en-US')}x`;
  return r < 1 ? `cuts ${label} by ${Math.round((1 - r) * 100)}%` : `raises ${label} by ${Math.round((r - 1) * 100)}%`;
}

/**
 * At the design point: each knob's plan (closed form) against the design point's own, and the lag
 * and read p99 with the knob on the planned fleet (the table's p50 workers and shards).
 */
export function whatIfs(prep: Prepared, base: Workload, ctx: PlanContext, point: PlanPoint, design: Figures, fleet: PlannedFleet): WhatIf[] {
  const m0 = lagModel(ctx.scenario);
  const planned = { workers: fleet.workers, shards: fleet.shards };
  const onFleet = evaluatePoint(base, ctx, point, planned);
  return knobs(ctx.scenario, ctx.policy).map((k) => {
    // measured over the same graph and population as the plan's own (at its base point), then moved to the design point
    const w = measureWorkload({ ...prep, scenario: k.scenario }, k.policy, base.point);
    const kctx: PlanContext = { ...ctx, scenario: k.scenario, policy: k.policy };
    const replanned = evaluatePoint(w, kctx, point);
    const sameFleet = evaluatePoint(w, kctx, point, planned);
    const figures: WhatIfFigure[] = [
      { id: 'timelineMemory', label: 'timeline memory', from: design.memory.timelineBytes, to: replanned.memory.timelineBytes },
      { id: 'redisMemoryUsed', label: 'Redis memory used', from: design.redis.usedBytes, to: replanned.redis.usedBytes },
      { id: 'redisMemoryProvisioned', label: 'Redis memory provisioned', from: design.redis.provisionedBytes, to: replanned.redis.provisionedBytes },
      { id: 'redisShards', label: 'Redis shards', from: design.redis.shards, to: replanned.redis.shards },
      { id: 'fanoutWorkers', label: 'fan-out workers (closed form)', from: design.fanout.closedForm, to: replanned.fanout.closedForm },
      { id: 'lagP99', label: 'lag', from: lagEstimate(fleet.workers, onFleet.load, m0), to: lagEstimate(fleet.workers, sameFleet.load, lagModel(k.scenario)) },
      { id: 'readP99', label: 'read p99', from: onFleet.redis.readP99Seconds, to: sameFleet.redis.readP99Seconds },
    ];
    return { knob: k.knob, from: k.from, to: k.to, text: whatIfText(k.phrase, figures), figures };
  });
}

const SINGULAR: Partial<Record<WhatIfFigure['id'], [string, string]>> = {
  redisShards: ['Redis shard', 'Redis shards'],
  fanoutWorkers: ['fan-out worker (closed form)', 'fan-out workers (closed form)'],
};

function whatIfText(phrase: string, figures: WhatIfFigure[]): string {
  const isBytes = (f: WhatIfFigure) => f.id === 'timelineMemory' || f.id === 'redisMemoryUsed' || f.id === 'redisMemoryProvisioned';
  const fmt = (f: WhatIfFigure, v: number) => (isBytes(f) ? formatBytes(v) : f.id === 'lagP99' || f.id === 'readP99' ? fmtTime(v) : formatCount(v));
  const moved: string[] = [];
  const still: string[] = [];
  const used = figures.find((f) => f.id === 'redisMemoryUsed');
  for (const f of figures) {
    const c = changeText(f.label, f.from, f.to);
    if (f.id === 'redisMemoryProvisioned') {
      // said with the memory used when that moved too
      if (c !== null && used && changeText(used.label, used.from, used.to) !== null) continue;
    }
    if (c === null) {
      still.push(f.label);
      continue;
    }
    const names = SINGULAR[f.id];
    if (names) moved.push(`needs ${formatCount(f.to)} ${f.to === 1 ? names[0] : names[1]} instead of ${formatCount(f.from)}`);
    else if (f.id === 'redisMemoryUsed') {
      const prov = figures.find((g) => g.id === 'redisMemoryProvisioned')!;
      const provText = changeText(prov.label, prov.from, prov.to) !== null ? `; provisioned ${fmt(prov, prov.from)} -> ${fmt(prov, prov.to)}` : '';
      moved.push(`${c} (${fmt(f, f.from)} -> ${fmt(f, f.to)}${provText})`);
    } else moved.push(`${c} (${fmt(f, f.from)} -> ${fmt(f, f.to)}${f.id === 'lagP99' || f.id === 'readP99' ? ' on the planned fleet' : ''})`);
  }
  const both = still.indexOf('Redis memory used');
  if (both >= 0 && still.includes('Redis memory provisioned')) still.splice(both, 2, 'Redis memory used and provisioned');
  const head = moved.length > 0 ? `${phrase} ${moved.join(', ')}` : `${phrase} changes nothing in the plan`;
  return still.length > 0 && moved.length > 0 ? `${head}; ${still.join(', ')} unchanged` : head;
}
