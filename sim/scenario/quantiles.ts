// Distributions written as their quantiles, as a calibration measures them and as people read
// them off a dashboard: `{ min: 1ms, p50: 6ms, p99: 35ms, max: 100ms }`, or one plain duration
// for a constant. Draws interpolate linearly between the points, so a distribution is exactly as
// detailed as what was measured; it has no tail beyond `max`.
import type { At } from './schema.js';

/** Quantile points (p from 0 to 1, values non-decreasing), from p = 0 (min) to p = 1 (max). */
export interface QuantileDistribution {
  points: { p: number; value: number }[];
}

/** Keys a distribution may be written with: min, max, p50, p99.9, ... */
export const QUANTILE_KEY = /^(min|max|p\d{1,2}(\.\d+)?)$/;

/** The probability of a key (min 0, max 1, p99.9 0.999). */
export function quantileOf(key: string): number {
  if (key === 'min') return 0;
  if (key === 'max') return 1;
  return Number(key.slice(1)) / 100;
}

/** A constant: every draw is `value`. */
export function constantDistribution(value: number): QuantileDistribution {
  return { points: [{ p: 0, value }, { p: 1, value }] };
}

/** The one value of a distribution whose every draw is the same (its min is its max); null otherwise. */
export function constantValue(d: QuantileDistribution): number | null {
  const first = d.points[0].value;
  return first === d.points[d.points.length - 1].value ? first : null;
}

/**
 * Written quantiles into a distribution. Needs p50 (or min and max); min defaults to 0 and max to
 * the highest quantile written. Values must not decrease as p grows.
 */
export function buildQuantiles(entries: [string, number][], at: At): QuantileDistribution {
  const points = entries.map(([key, value]) => ({ key, p: quantileOf(key), value }));
  for (const q of points) if (!(q.p >= 0 && q.p <= 1)) at.fail(`"${q.key}" is not a quantile (write min, max or p0 to p99.99)`, q.key);
  points.sort((a, b) => a.p - b.p);
  for (let i = 1; i < points.length; i++) {
    if (points[i].p === points[i - 1].p) at.fail(`"${points[i].key}" repeats "${points[i - 1].key}"`, points[i].key);
    if (points[i].value < points[i - 1].value) at.fail(`${points[i].key} is below ${points[i - 1].key} (quantiles must not decrease)`, points[i].key);
  }
  if (points.length === 0) at.fail('give at least p50, e.g. { p50: 6ms, p99: 35ms, max: 100ms }');
  if (points[0].p > 0) points.unshift({ key: 'min', p: 0, value: 0 });
  if (points[points.length - 1].p < 1) points.push({ key: 'max', p: 1, value: points[points.length - 1].value });
  return { points: points.map(({ p, value }) => ({ p, value })) };
}

/** The value at quantile u in [0, 1] (u uniform gives a draw). */
export function quantileAt(d: QuantileDistribution, u: number): number {
  const pts = d.points;
  if (u <= 0) return pts[0].value;
  if (u >= 1) return pts[pts.length - 1].value;
  let lo = 0;
  let hi = pts.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (pts[mid].p <= u) lo = mid;
    else hi = mid;
  }
  const a = pts[lo];
  const b = pts[hi];
  return b.p === a.p ? b.value : a.value + ((u - a.p) / (b.p - a.p)) * (b.value - a.value);
}

/** The mean of the piecewise-linear distribution (each segment's midpoint times its mass). */
export function quantileMean(d: QuantileDistribution): number {
  let m = 0;
  for (let i = 1; i < d.points.length; i++) {
    const a = d.points[i - 1];
    const b = d.points[i];
    m += (b.p - a.p) * (a.value + b.value) / 2;
  }
  return m;
}

/** The distribution written back as its keys (min, p50, ..., max), e.g. for a calibration file. */
export function quantileEntries(d: QuantileDistribution): [string, number][] {
  return d.points.map(({ p, value }) => [p === 0 ? 'min' : p === 1 ? 'max' : `p${Number((p * 100).toPrecision(6))}`, value]);
}
