// Sampling [low, likely, high] intervals: the triangular distribution, seeded streams, percentiles.
import { describe, expect, test } from 'vitest';
import { drawInterval, percentile, quantiles, sampleAtPercentile, triangularQuantile } from '../../sim/plan/intervals.js';
import { likelyPoint, samplePoints } from '../../sim/plan/inputs.js';
import { parseScenario } from '../../sim/scenario/load.js';

describe('triangular distribution', () => {
  test('its quantile function hits low, likely and high where it should', () => {
    expect(triangularQuantile(10, 20, 40, 0)).toBe(10);
    expect(triangularQuantile(10, 20, 40, 1)).toBe(40);
    // F(likely) = (likely - low) / (high - low) = 1/3
    expect(triangularQuantile(10, 20, 40, 1 / 3)).toBeCloseTo(20, 12);
    // the median of (0, 0, 1) is 1 - sqrt(1/2)
    expect(triangularQuantile(0, 0, 1, 0.5)).toBeCloseTo(1 - Math.SQRT1_2, 12);
    expect(triangularQuantile(5, 5, 5, 0.7)).toBe(5);
  });

  test('draws are seeded per input: same seed, same draws; another seed or input, others', () => {
    const iv = { key: 'population' as const, low: 80e6, likely: 100e6, high: 130e6 };
    const a = drawInterval(iv, 500, 42);
    expect(Array.from(drawInterval(iv, 500, 42))).toEqual(Array.from(a));
    expect(Array.from(drawInterval(iv, 500, 43))).not.toEqual(Array.from(a));
    expect(Array.from(drawInterval({ ...iv, key: 'avgFollows' }, 500, 42))).not.toEqual(Array.from(a));
    for (const v of a) {
      expect(v).toBeGreaterThanOrEqual(80e6);
      expect(v).toBeLessThanOrEqual(130e6);
    }
    // the mean of a triangular distribution is (low + likely + high) / 3
    const mean = a.reduce((s, v) => s + v, 0) / a.length;
    expect(mean / ((80e6 + 100e6 + 130e6) / 3)).toBeGreaterThan(0.98);
    expect(mean / ((80e6 + 100e6 + 130e6) / 3)).toBeLessThan(1.02);
  });

  test('p5 <= p50 <= p95, all within [low, high], and near the exact quantiles', () => {
    const iv = { key: 'postsPerUserPerDay' as const, low: 1, likely: 2, high: 5 };
    const q = quantiles(drawInterval(iv, 4000, 7));
    expect(q.p5).toBeLessThanOrEqual(q.p50);
    expect(q.p50).toBeLessThanOrEqual(q.p95);
    expect(q.p5).toBeGreaterThanOrEqual(1);
    expect(q.p95).toBeLessThanOrEqual(5);
    for (const [p, v] of [[0.05, q.p5], [0.5, q.p50], [0.95, q.p95]] as const) expect(Math.abs(v - triangularQuantile(1, 2, 5, p))).toBeLessThan(0.1);
  });
});

test('nearest-rank percentiles are always one of the values', () => {
  const xs = [5, 1, 4, 2, 3];
  expect(percentile(xs, 50)).toBe(3);
  expect(percentile(xs, 5)).toBe(1);
  expect(percentile(xs, 95)).toBe(5);
  expect(quantiles([7])).toEqual({ p5: 7, p50: 7, p95: 7 });
  expect(xs[sampleAtPercentile(xs, 50)]).toBe(3);
  expect(sampleAtPercentile([2, 2, 2], 50)).toBe(1);
});

test('sample points keep every non-interval input at its value and every interval within its bounds', () => {
  const sc = parseScenario(
    'name: x\npopulation: [1e6, 2e6, 4e6]\ngraph: { generate: { users: 1000, avgFollows: 20 } }\nactivity: { sessionsPerUserPerDay: [3, 5, 9], dormantShare: 0.4 }\n',
    's.yaml',
  );
  const likely = likelyPoint(sc, { users: 1000, edges: 20000 });
  expect(likely).toEqual({ population: 2e6, avgFollows: 20, postsPerUserPerDay: 2, sessionsPerUserPerDay: 5, dormantShare: 0.4, peakFactor: 3 });
  const points = samplePoints(sc, likely, 300);
  expect(points).toHaveLength(300);
  for (const p of points) {
    expect(Number.isInteger(p.population)).toBe(true);
    expect(p.population).toBeGreaterThanOrEqual(1e6);
    expect(p.population).toBeLessThanOrEqual(4e6);
    expect(p.sessionsPerUserPerDay).toBeGreaterThanOrEqual(3);
    expect(p.sessionsPerUserPerDay).toBeLessThanOrEqual(9);
    expect(p.avgFollows).toBe(20);
    expect(p.dormantShare).toBe(0.4);
  }
  // without intervals: the one likely point
  expect(samplePoints(parseScenario('name: y\n', 's.yaml'), likely, 300)).toEqual([likely]);
});
