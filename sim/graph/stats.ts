// Degree statistics of a follower graph: the figures a capacity planner needs (how many accounts
// are over a push/pull threshold, how heavy the head is) and the fitted power-law tail.

import type { FollowerGraph } from './graph.js';
import { fitPowerLawTail, type PowerLawFit } from './powerlaw.js';

export const GRAPH_STATS_SCHEMA = 'feedlab.graph-stats/1';
export const DEFAULT_THRESHOLDS = [100, 1000, 10000, 25000, 50000];

/** Percentiles are nearest-rank: the smallest value with at least p of the accounts at or below it. */
export interface DegreeSummary {
  min: number;
  median: number;
  mean: number;
  p99: number;
  p999: number;
  max: number;
}

export interface ThresholdCount {
  /** Accounts with more followers than this. */
  followers: number;
  accounts: number;
  share: number;
}

export interface TopAccount {
  id: number;
  name: string | null;
  sourceId: number | null;
  followers: number;
  followees: number;
}

export interface GraphStats {
  schema: typeof GRAPH_STATS_SCHEMA;
  source: string;
  nodes: number;
  edges: number;
  /** Share of edges whose reverse edge exists too. */
  reciprocity: number;
  followers: DegreeSummary;
  followees: DegreeSummary;
  thresholds: ThresholdCount[];
  top: TopAccount[];
  /** Tail of the follower counts (accounts with at least one follower); null when there is none to fit. */
  powerLaw: (PowerLawFit & { method: string }) | null;
  provenance: Readonly<Record<string, string | number>>;
}

export interface StatsOptions {
  source: string;
  thresholds?: number[];
  top?: number;
}

export function graphStats(g: FollowerGraph, opts: StatsOptions): GraphStats {
  const inHist = degreeHistogram(g.followerOffsets);
  const outHist = degreeHistogram(g.followeeOffsets);
  const thresholds = opts.thresholds ?? DEFAULT_THRESHOLDS;
  const fit = fitPowerLawTail(inHist);
  return {
    schema: GRAPH_STATS_SCHEMA,
    source: opts.source,
    nodes: g.users,
    edges: g.edges,
    reciprocity: g.edges > 0 ? reciprocatedEdges(g) / g.edges : 0,
    followers: summarise(inHist, g.users, g.edges),
    followees: summarise(outHist, g.users, g.edges),
    thresholds: thresholds.map((t) => {
      const accounts = countAbove(inHist, t);
      return { followers: t, accounts, share: g.users > 0 ? accounts / g.users : 0 };
    }),
    top: topByFollowers(g, opts.top ?? 10),
    powerLaw: fit && { ...fit, method: 'discrete MLE (Hurwitz zeta), xmin by minimum KS distance (Clauset, Shalizi & Newman 2009)' },
    provenance: g.provenance,
  };
}

/** counts[d] = accounts with degree d, from CSR offsets. */
export function degreeHistogram(offsets: Uint32Array): Float64Array {
  const n = offsets.length - 1;
  let max = 0;
  for (let i = 0; i < n; i++) max = Math.max(max, offsets[i + 1] - offsets[i]);
  const counts = new Float64Array(max + 1);
  for (let i = 0; i < n; i++) counts[offsets[i + 1] - offsets[i]]++;
  return counts;
}

/** Nearest-rank percentile of a histogram holding `total` values: rank ceil(p * total). */
export function histogramPercentile(counts: Float64Array, total: number, p: number): number {
  const rank = Math.max(1, Math.ceil(p * total - 1e-9));
  let seen = 0;
  for (let v = 0; v < counts.length; v++) {
    seen += counts[v];
    if (seen >= rank) return v;
  }
  return counts.length - 1;
}

function summarise(counts: Float64Array, users: number, edges: number): DegreeSummary {
  let min = 0;
  while (min < counts.length - 1 && counts[min] === 0) min++;
  return {
    min,
    median: histogramPercentile(counts, users, 0.5),
    mean: users > 0 ? edges / users : 0,
    p99: histogramPercentile(counts, users, 0.99),
    p999: histogramPercentile(counts, users, 0.999),
    max: counts.length - 1,
  };
}

function countAbove(counts: Float64Array, threshold: number): number {
  let n = 0;
  for (let v = Math.max(0, Math.floor(threshold) + 1); v < counts.length; v++) n += counts[v];
  return n;
}

/** Edges u -> v with v -> u: mark u's followers, then look up each account u follows. */
function reciprocatedEdges(g: FollowerGraph): number {
  const mark = new Uint32Array(g.users);
  let both = 0;
  for (let u = 0; u < g.users; u++) {
    const stamp = u + 1;
    for (let e = g.followerOffsets[u]; e < g.followerOffsets[u + 1]; e++) mark[g.followerIds[e]] = stamp;
    for (let e = g.followeeOffsets[u]; e < g.followeeOffsets[u + 1]; e++) if (mark[g.followeeIds[e]] === stamp) both++;
  }
  return both;
}

/** The k accounts with the most followers, most first, ties by lower id. */
function topByFollowers(g: FollowerGraph, k: number): TopAccount[] {
  const best: number[] = []; // ids, kept sorted by (followers desc, id asc)
  const followers = (a: number) => g.followerOffsets[a + 1] - g.followerOffsets[a];
  for (let a = 0; a < g.users && k > 0; a++) {
    const f = followers(a);
    if (best.length === k && f <= followers(best[k - 1])) continue;
    let i = best.length;
    while (i > 0 && followers(best[i - 1]) < f) i--;
    best.splice(i, 0, a);
    if (best.length > k) best.pop();
  }
  return best.map((id) => ({
    id,
    name: g.names.get(id) ?? null,
    sourceId: g.sourceIds ? g.sourceIds[id] : null,
    followers: followers(id),
    followees: g.followeeOffsets[id + 1] - g.followeeOffsets[id],
  }));
}
