// The follower-count distribution of a graph in a form a report can plot on log-log axes:
// accounts counted in logarithmic bins of follower count, and the fitted power-law tail.
import type { FollowerGraph } from './graph.js';
import { fitPowerLawTail } from './powerlaw.js';
import { degreeHistogram } from './stats.js';

/** Bins per decade of follower count (edges round(10^(k/10)), merged where they round alike). */
export const BINS_PER_DECADE = 10;

export interface FollowerBin {
  /** Follower counts lo <= followers < hi. */
  lo: number;
  hi: number;
  accounts: number;
}

export interface FollowerDistribution {
  /** Accounts in the sampled graph. */
  accounts: number;
  /** Accounts nobody follows (not in any bin: a log axis has no zero). */
  withoutFollowers: number;
  maxFollowers: number;
  /** Non-empty bins of accounts with at least one follower, ascending. */
  bins: FollowerBin[];
  /** The power-law tail of follower counts (discrete MLE, xmin by minimum KS distance); null when there is none to fit. */
  tail: { alpha: number; sigma: number; xmin: number; nTail: number; ks: number } | null;
}

/** Bin edges 1, 2, 3, 4, 5, 6, 8, 10, 13, 16, 20, 25, 32, ... up to past `max`. */
export function logBinEdges(max: number): number[] {
  const edges: number[] = [];
  for (let k = 0; ; k++) {
    const e = Math.round(10 ** (k / BINS_PER_DECADE));
    if (edges.length === 0 || e > edges[edges.length - 1]) edges.push(e);
    if (e > max) return edges;
  }
}

/** One pass over the CSR offsets and one fit of the histogram: about a second for 1M accounts. */
export function followerDistribution(g: FollowerGraph): FollowerDistribution {
  const counts = degreeHistogram(g.followerOffsets);
  const max = counts.length - 1;
  const edges = logBinEdges(max);
  const bins: FollowerBin[] = [];
  for (let b = 0; b + 1 < edges.length; b++) {
    const lo = edges[b];
    const hi = edges[b + 1];
    let accounts = 0;
    for (let v = lo; v < hi && v <= max; v++) accounts += counts[v];
    if (accounts > 0) bins.push({ lo, hi, accounts });
  }
  const fit = fitPowerLawTail(counts);
  return {
    accounts: g.users,
    withoutFollowers: counts[0] ?? 0,
    maxFollowers: max,
    bins,
    tail: fit && { alpha: fit.alpha, sigma: fit.sigma, xmin: fit.xmin, nTail: fit.nTail, ks: fit.ks },
  };
}
