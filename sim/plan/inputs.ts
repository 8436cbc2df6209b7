// What a plan is computed from: the scenario's inputs at one point (the likely values, or one
// sample of the intervals), the growth on the load and the headroom kept on every resource.
import { InputError } from '../errors.js';
import type { FollowerGraph } from '../graph/graph.js';
import { PLAN_DEFAULTS } from '../scenario/schema.js';
import type { IntervalKey, PlanSettings, Scenario } from '../scenario/types.js';
import { drawInterval } from './intervals.js';

export const DEFAULT_GROWTH = 1;
export const DEFAULT_HEADROOM = 0.3;
export const DEFAULT_SAMPLES = 200;
/** The most draws --samples takes: 5,000 plan a 100k-user sampled graph in well under a minute. */
export const MAX_SAMPLES = 5000;

export interface PlanOptions {
  /** Multiplier on the number of users (so on posts/s, reads/s, timelines): 1.5 = next year at +50%. */
  growth: number;
  /** Share of every resource kept spare at the peak: provisioned = needed / (1 - headroom). */
  headroom: number;
  /** Draws of the intervals (ignored when the scenario has none). */
  samples: number;
}

export function checkPlanOptions(o: PlanOptions): PlanOptions {
  if (!Number.isFinite(o.growth) || o.growth <= 0 || o.growth > 1000) throw new InputError(`--growth must be a multiplier above 0 and at most 1000 (1.5 = 50% more users), got ${o.growth}`);
  if (!Number.isFinite(o.headroom) || o.headroom < 0 || o.headroom >= 1) throw new InputError(`--headroom must be a share in [0, 1) (0.3 keeps 30% spare), got ${o.headroom}`);
  if (!Number.isInteger(o.samples) || o.samples < 1 || o.samples > MAX_SAMPLES) {
    throw new InputError(`--samples must be a whole number from 1 to ${MAX_SAMPLES} (the p5/p50/p95 settle within a few hundred draws), got ${o.samples}`);
  }
  return o;
}

/**
 * The fewest users a sample can have after the growth, the interval's low population (or the single
 * value): the simulation check runs the sampled graph at a sample's population, so even the low one
 * must hold the graph's users. Throws one line naming the file.
 */
export function checkGrowthForGraph(sc: Scenario, growth: number, graphUsers: number): void {
  const iv = (sc.intervals ?? []).find((i) => i.key === 'population');
  const low = iv ? iv.low : (sc.population ?? graphUsers);
  const users = Math.round(low * growth);
  if (users >= graphUsers) return;
  const from = iv ? `${iv.path} low ${Math.round(low).toLocaleString('en-US')}` : `population ${Math.round(low).toLocaleString('en-US')}`;
  // the least growth that holds, rounded up to 3 significant digits
  const least = graphUsers / low;
  const step = 10 ** (Math.floor(Math.log10(least)) - 2);
  const suggest = Number((Math.ceil(least / step - 1e-9) * step).toPrecision(3));
  throw new InputError(
    `${sc.source}: ${from} x --growth ${growth} = ${users.toLocaleString('en-US')} users, fewer than the ${graphUsers.toLocaleString('en-US')} of the sampled graph; the simulation check needs at least as many (--growth ${suggest} or more)`,
  );
}

/** The inputs a plan moves: one value each. */
export type PlanPoint = Record<IntervalKey, number>;

export const POINT_LABELS: Record<IntervalKey, string> = {
  population: 'users (population)',
  avgFollows: 'follows per user',
  postsPerUserPerDay: 'posts per user per day',
  sessionsPerUserPerDay: 'sessions per user per day',
  dormantShare: 'dormant share',
  peakFactor: 'diurnal peak factor',
};

export function planSettings(sc: Scenario): PlanSettings {
  return { ...PLAN_DEFAULTS, ...(sc.plan ?? {}) };
}

/** The scenario's own values (the likely ones where it gives intervals). */
export function likelyPoint(sc: Scenario, graph: Pick<FollowerGraph, 'users' | 'edges'>): PlanPoint {
  return {
    population: sc.population ?? graph.users,
    avgFollows: sc.graph.kind === 'generate' ? sc.graph.avgFollows : graph.edges / graph.users,
    postsPerUserPerDay: sc.activity.postsPerUserPerDay.mean,
    sessionsPerUserPerDay: sc.activity.sessionsPerUserPerDay,
    dormantShare: sc.activity.dormantShare,
    peakFactor: sc.activity.diurnal?.peakFactor ?? 1,
  };
}

/** `n` points drawn from the intervals with the scenario's seed; just the likely point when there are none. */
export function samplePoints(sc: Scenario, likely: PlanPoint, n: number): PlanPoint[] {
  const intervals = sc.intervals ?? [];
  if (intervals.length === 0) return [{ ...likely }];
  const draws = intervals.map((iv) => ({ key: iv.key, values: drawInterval(iv, n, sc.seed) }));
  return Array.from({ length: n }, (_, i) => {
    const p = { ...likely };
    for (const d of draws) p[d.key] = d.key === 'population' ? Math.round(d.values[i]) : d.values[i];
    return p;
  });
}

/** The scenario at a point, with the growth applied to its users (and fan-out workers set, for the simulation check). */
export function scenarioAt(sc: Scenario, point: PlanPoint, growth: number, fanoutWorkers?: number): Scenario {
  const population = Math.round(point.population * growth);
  const graph = sc.graph.kind === 'generate' ? { ...sc.graph, avgFollows: point.avgFollows } : sc.graph;
  const posts = { ...sc.activity.postsPerUserPerDay, mean: point.postsPerUserPerDay };
  const diurnal = sc.activity.diurnal ? { ...sc.activity.diurnal, peakFactor: point.peakFactor } : null;
  const infrastructure = fanoutWorkers === undefined ? sc.infrastructure : { ...sc.infrastructure, fanoutWorkers };
  const out: Scenario = {
    ...sc,
    population,
    graph,
    activity: { ...sc.activity, postsPerUserPerDay: posts, sessionsPerUserPerDay: point.sessionsPerUserPerDay, dormantShare: point.dormantShare, diurnal },
    infrastructure,
  };
  delete out.intervals;
  return out;
}
