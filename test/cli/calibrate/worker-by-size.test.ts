// How calibrate pools the running worker's posts of several sizes into one scatter about the line
// (cli/calibrate/worker-by-size.ts pooledSpread): each size's posts as ratios to its own median,
// pooled, and the pool's quantiles.
import { describe, expect, it } from 'vitest';
import { pooledSpread, postsPerSecond } from '../../../cli/calibrate/worker-by-size.js';
import { bySizeAuthors } from '../../../cli/calibrate/world.js';

/** A size's writes: quantiles at `ps` from `n` posts. */
const size = (n: number, values: number[], ps = [0, 0.5, 1]) => ({ n, mean: values[1], points: ps.map((p, i) => ({ p, value: values[i] })) });

describe("a running worker's writes about its line", () => {
  it("pools each size's ratios to its median, weighted by its posts: closed forms", () => {
    // ratios 0.5-1-1.25-1.5 (a 2 ms median) and 0.9-1-1.05-1.1 (a 20 ms median): below 1 + x (x
    // under 0.1) are 0.5 + x of the first's posts and 0.5 + 5x of the second's
    const ps = [0, 0.5, 0.75, 1];
    const wide = (n: number) => size(n, [0.001, 0.002, 0.0025, 0.003], ps);
    const narrow = (n: number) => size(n, [0.018, 0.02, 0.021, 0.022], ps);
    const d = pooledSpread([wide(40), narrow(40)])!;
    expect(d.n).toBe(80);
    expect(d.points.map((q) => q.p)).toEqual(ps);
    // as many posts each: (0.5 + x + 0.5 + 5x) / 2 = 0.75 at x = 1/12
    [0.5, 1, 1 + 1 / 12, 1.5].forEach((r, i) => expect(d.points[i].value).toBeCloseTo(r, 5));
    // three times the narrow size's posts: (0.5 + x + 3 (0.5 + 5x)) / 4 = 0.75 at x = 1/16
    const weighted = pooledSpread([wide(40), narrow(120)])!;
    expect(weighted.n).toBe(160);
    expect(weighted.points[2].value).toBeCloseTo(1 + 1 / 16, 5);
  });

  it("one slow post of a size's 40 moves the pool's top, not its p98", () => {
    // a size's p98 of 40 posts is its largest (as the worker's histograms give it): one at 7x
    const ps = [0, 0.5, 0.95, 0.98, 1];
    const calm = size(40, [0.8, 1, 1.3, 1.4, 1.5].map((r) => r * 0.01), ps);
    const slow = size(40, [0.8, 1, 1.3, 7, 7].map((r) => r * 0.01), ps);
    const d = pooledSpread([calm, calm, calm, slow])!;
    expect(d.points.find((q) => q.p === 1)!.value).toBeCloseTo(7, 9);
    // the mean of the sizes' p98 would be 2.8; of the 160 posts, 2% are over 1.4-1.5
    const p98 = d.points.find((q) => q.p === 0.98)!.value;
    expect(p98).toBeGreaterThan(1.4);
    expect(p98).toBeLessThan(1.5);
    expect(d.points.find((q) => q.p === 0.95)!.value).toBeCloseTo(1.3, 5);
  });

  it('leaves out a size with no posts, and is null with none', () => {
    const d = pooledSpread([size(0, [NaN, NaN, NaN]), size(40, [0.001, 0.002, 0.004])])!;
    expect(d.n).toBe(40);
    d.points.forEach((q, i) => expect(q.value).toBeCloseTo([0.5, 1, 2][i], 5));
    expect(pooledSpread([])).toBeNull();
    expect(pooledSpread([size(0, [NaN, NaN, NaN])])).toBeNull();
  });

  it("paces each size's posts so that none keeps the worker busy over a tenth of the time or comes back to an audience more often than every 5 s on average", () => {
    // the write targets hold 300 audiences of 10 followers, 30 of 100, 3 of 1,000
    expect([10, 100, 1_000].map(bySizeAuthors)).toEqual([300, 30, 3]);
    // 10 a second at most
    expect(postsPerSecond(10, 300, 25e-6)).toBe(10);
    // 30 authors again after 5 s: 6 a second
    expect(postsPerSecond(100, 30, 25e-6)).toBeCloseTo(6, 10);
    // 3 authors of 1,000: 0.6 a second, under the busy share's 0.1 / 25 ms = 4
    expect(postsPerSecond(1_000, 3, 25e-6)).toBeCloseTo(0.6, 10);
    // a slow write: 0.1 / (1,000 x 0.5 ms) = 0.2 a second
    expect(postsPerSecond(1_000, 3, 500e-6)).toBeCloseTo(0.2, 10);
    // no write cost measured: the other two bounds
    expect(postsPerSecond(1_000, 3, 0)).toBeCloseTo(0.6, 10);
  });
});
