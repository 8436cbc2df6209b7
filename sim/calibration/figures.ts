// The figures a calibration measures, as data: every figure is several samples taken after a
// warm-up, reported as their median with the p10-p90 of the samples and their count; a cost that
// grows with something (a batch's timeline writes, an author's followers, a page's lists and posts)
// is a straight-line fit, time = a + b x n, over the medians at each n (simple-statistics'
// linearRegression and rSquared), with every point's own spread. Units: seconds (CPU seconds for
// the API tier's CPU), or as named.
import { linearRegression, linearRegressionLine, quantileSorted, rSquared } from 'simple-statistics';

/** Several samples of one figure: their median, p10 and p90, and how many there were. */
export interface Spread {
  median: number;
  p10: number;
  p90: number;
  n: number;
}

/** A fit of y = intercept + slope x over the medians of the samples at each x. */
export interface Fit {
  intercept: number;
  slope: number;
  rSquared: number;
  points: ({ x: number } & Spread)[];
}

/** Median and p10-p90 of some samples (NaN for none). */
export function spreadOf(samples: readonly number[]): Spread {
  const xs = samples.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (xs.length === 0) return { median: NaN, p10: NaN, p90: NaN, n: 0 };
  return { median: quantileSorted(xs, 0.5), p10: quantileSorted(xs, 0.1), p90: quantileSorted(xs, 0.9), n: xs.length };
}

/** Each x's samples as a point (their median and spread), those with samples, ascending in x. */
function medianPoints(samples: ReadonlyMap<number, readonly number[]>): Fit['points'] {
  return [...samples].map(([x, ys]) => ({ x, ...spreadOf(ys) })).filter((p) => p.n > 0).sort((a, b) => a.x - b.x);
}

/** No line: fewer than two sizes to draw it through. */
const noFit = (points: Fit['points']): Fit => ({ intercept: NaN, slope: NaN, rSquared: NaN, points });

/** The straight line through the medians of each x's samples (at least two distinct x). */
export function fitLine(samples: ReadonlyMap<number, readonly number[]>): Fit {
  const points = medianPoints(samples);
  if (points.length < 2) return noFit(points);
  const pairs = points.map((p) => [p.x, p.median]);
  const { m, b } = linearRegression(pairs);
  return { intercept: b, slope: m, rSquared: rSquared(pairs, linearRegressionLine({ m, b })), points };
}

/**
 * The straight line through the medians that is off by the least share of each: least squares
 * weighted by 1 / median², and its r² under the same weights. Where sizes span two decades or more
 * an ordinary fit is set by the largest ones: a running worker's writes at 10-1,000 followers
 * (2026-12-03) came out 1.45x the measured median at 10 by linearRegression, 1.03x by this, and
 * within 15% at every size in two runs. (simple-statistics has no weighted regression.)
 */
export function fitLineRelative(samples: ReadonlyMap<number, readonly number[]>): Fit {
  const points = medianPoints(samples).filter((p) => p.median > 0);
  if (points.length < 2) return noFit(points);
  const w = points.map((p) => 1 / (p.median * p.median));
  const sw = w.reduce((a, b) => a + b, 0);
  const mx = points.reduce((a, p, i) => a + w[i] * p.x, 0) / sw;
  const my = points.reduce((a, p, i) => a + w[i] * p.median, 0) / sw;
  let sxy = 0, sxx = 0, syy = 0;
  points.forEach((p, i) => {
    sxy += w[i] * (p.x - mx) * (p.median - my);
    sxx += w[i] * (p.x - mx) ** 2;
    syy += w[i] * (p.median - my) ** 2;
  });
  const slope = sxy / sxx;
  const intercept = my - slope * mx;
  const residual = points.reduce((a, p, i) => a + w[i] * (p.median - intercept - slope * p.x) ** 2, 0);
  return { intercept, slope, rSquared: syy > 0 ? 1 - residual / syy : 1, points };
}

/** Samples collected by key (a batch size, an author's follower count, a page's shape), in rounds. */
export class SampleSet {
  readonly byKey = new Map<number, number[]>();

  add(key: number, value: number): void {
    const list = this.byKey.get(key);
    if (list) list.push(value);
    else this.byKey.set(key, [value]);
  }

  all(): number[] {
    return [...this.byKey.values()].flat();
  }
}

/** The quantiles of a distribution as calibrate reports them (min, p50, p90, p99, p99.9, max), from raw values. */
export function quantilesOf(values: readonly number[], keys: readonly number[]): { p: number; value: number }[] {
  const xs = [...values].sort((a, b) => a - b);
  return keys.map((p) => ({ p, value: xs.length === 0 ? NaN : quantileSorted(xs, p) }));
}
