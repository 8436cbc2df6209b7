// Inputs written as [low, likely, high] are sampled, and every resource is reported at the 5th,
// 50th and 95th percentile of its samples. The distribution is triangular (low, mode = likely,
// high), drawn by inverting its CDF, one seeded stream per input (named after it) so that adding an
// interval to one input leaves the draws of the others unchanged.
import { Rng } from '../../core/random.js';
import type { Interval } from '../scenario/types.js';

export const DISTRIBUTION = 'triangular';
export const QUANTILES = [5, 50, 95] as const;
export type Quantile = (typeof QUANTILES)[number];

/** The value at cumulative probability u of the triangular distribution (low, likely, high). */
export function triangularQuantile(low: number, likely: number, high: number, u: number): number {
  if (high <= low) return low;
  const split = (likely - low) / (high - low);
  if (u < split) return low + Math.sqrt(u * (high - low) * (likely - low));
  return high - Math.sqrt((1 - u) * (high - low) * (high - likely));
}

/** `n` seeded draws of one interval. */
export function drawInterval(iv: Pick<Interval, 'key' | 'low' | 'likely' | 'high'>, n: number, seed: number): Float64Array {
  const rng = Rng.derive(seed, `plan:${iv.key}`);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = triangularQuantile(iv.low, iv.likely, iv.high, rng.float());
  return out;
}

/** Nearest-rank percentile (p in 0..100) of the values: always one of them. */
export function percentile(values: ArrayLike<number>, p: number): number {
  return values.length === 0 ? NaN : sortedCopy(values)[rankIndex(values, p)];
}

/** The index, in sorted order, of the nearest-rank p-th percentile of n values. */
export function rankIndex(values: ArrayLike<number>, p: number): number {
  const n = values.length;
  return Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1));
}

function sortedCopy(values: ArrayLike<number>): number[] {
  return Array.from(values).sort((a, b) => a - b);
}

/** p5, p50, p95 of the values. */
export function quantiles(values: ArrayLike<number>): Record<`p${Quantile}`, number> {
  const sorted = sortedCopy(values);
  const at = (p: number) => sorted[rankIndex(sorted, p)];
  return { p5: at(5), p50: at(50), p95: at(95) };
}

/** The sample whose value of `key` is the p-th percentile (ties: the lowest sample index). */
export function sampleAtPercentile(values: ArrayLike<number>, p: number): number {
  const order = Array.from({ length: values.length }, (_, i) => i).sort((a, b) => values[a] - values[b] || a - b);
  return order[rankIndex(values, p)];
}
