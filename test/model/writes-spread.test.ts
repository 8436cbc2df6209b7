// How a post's writes scatter about the writes line (costs.eventWritesSpread, drawn per post in
// sim/model/fanout-stage.ts): the per-follower part scaled, the round trips not, deterministic by
// seed, and a post that runs long holds its consumer's next writes as long.
import { describe, expect, it } from 'vitest';
import { scenarioFrom, starBurst } from './fixtures.js';

/** `posts` burst posts by the star of 100 followers within `window`, on one consumer: 100 writes at 5,000/s (20 ms) and a 1 ms round trip each. */
const burst = (spread: string, posts: number, window: string, seed = 3) =>
  starBurst(`rtt: 1ms, expand: 2ms, expandPerFollower: 0s, eventStatements: 3ms, pickup: 0s, eventWritesSpread: ${spread}`, { posts, window, seed, duration: '10m' });

describe("a post's writes about the line", () => {
  it('scales the per-follower part, not the round trip: 1 ms + 2 x 20 ms', () => {
    const on = burst('1', 1, '1ms');
    expect(on.fanout.stages.writes.mean).toBeCloseTo(0.001 + 0.02, 9);
    const twice = burst('2', 1, '1ms');
    expect(twice.fanout.stages.writes.mean).toBeCloseTo(0.001 + 0.04, 9);
    // the post's lag with it: 3 ms statement, 2 ms page, then its writes
    expect(twice.fanout.postLag.max).toBeCloseTo(0.003 + 0.002 + 0.041, 9);
  });

  it('draws each post from the quantiles: 400 posts a second apart spread as written, the same by seed', () => {
    const spread = '{ min: 0.5, p50: 1, p90: 1.5, max: 2 }';
    const m = burst(spread, 400, '400s');
    const w = m.fanout.stages.writes;
    expect(w.count).toBe(400);
    const line = (f: number) => 0.001 + 0.02 * f;
    // never beyond the top; the median and p90 of the draws near the written ones (400 draws: within a few percent)
    expect(w.max).toBeLessThanOrEqual(line(2) + 1e-5);
    expect(w.max).toBeGreaterThan(line(1.8));
    expect(w.p50 / line(1)).toBeGreaterThan(0.95);
    expect(w.p50 / line(1)).toBeLessThan(1.05);
    expect(w.p90 / line(1.5)).toBeGreaterThan(0.93);
    expect(w.p90 / line(1.5)).toBeLessThan(1.07);
    // the mean of the piecewise-linear draws: (0.75 x 0.5 + 1.25 x 0.4 + 1.75 x 0.1) = 1.05
    expect(w.mean / line(1.05)).toBeGreaterThan(0.97);
    expect(w.mean / line(1.05)).toBeLessThan(1.03);
    // deterministic by seed, and another seed draws other posts
    expect(burst(spread, 400, '400s').fanout.stages.writes).toEqual(w);
    expect(burst(spread, 400, '400s', 4).fanout.stages.writes).not.toEqual(w);
  });

  it('holds the consumer as long: posts 30 ms apart on average queue behind long ones', () => {
    // 40 posts in 1.2 s: at 1x a post's 21 ms keep the consumer 70% busy; at 2x its 41 ms are more
    // than the 30 ms between posts, and the last waits behind about 40 x 11 ms
    const on = burst('1', 40, '1200ms');
    const twice = burst('2', 40, '1200ms');
    expect(twice.fanout.postLag.max).toBeGreaterThan(0.3);
    expect(twice.fanout.postLag.max).toBeGreaterThan(3 * on.fanout.postLag.max);
  });

  it("gives a large post's writes per timeline: 1 ms + 300 x 0.2 ms over 300, and none below 300 timelines", () => {
    const large = starBurst('rtt: 1ms, expand: 2ms, expandPerFollower: 0s, eventStatements: 3ms, pickup: 0s, eventWritesSpread: 1', { followers: 300, seed: 3 });
    expect(large.fanout.stages.writes.mean).toBeCloseTo(0.001 + 0.06, 9);
    const per = large.fanout.stages.largeWritesPerTimeline;
    expect(per.count).toBe(1);
    // 61 ms over 300 timelines: the mean exact, the p50 to the histogram's 3 digits of 203.333 ms a 1,000
    expect(per.mean).toBeCloseTo(0.061 / 300, 12);
    expect(Math.abs(per.p50 / (0.061 / 300) - 1)).toBeLessThan(1e-3);
    // the documents' fleet, sharing a post's batches: the same post recorded the same way
    const split = starBurst('rtt: 1ms, expand: 2ms, expandPerFollower: 0s, eventStatements: 3ms, pickup: 0s, eventWritesSpread: 1', { followers: 300, seed: 3, splitPosts: true });
    expect(split.fanout.stages.largeWritesPerTimeline.count).toBe(1);
    expect(split.fanout.stages.largeWritesPerTimeline.mean).toBeCloseTo(split.fanout.stages.writes.mean / 300, 12);
    const small = starBurst('rtt: 1ms, expand: 2ms, expandPerFollower: 0s, eventStatements: 3ms, pickup: 0s, eventWritesSpread: 1', { followers: 299, seed: 3 });
    expect(small.fanout.stages.writes.count).toBe(1);
    expect(small.fanout.stages.largeWritesPerTimeline.count).toBe(0);
    expect(small.fanout.stages.largeWritesPerTimeline.p50).toBeNaN();
  });

  it('refuses a spread that is not a distribution of ratios, at its key', () => {
    const costs = (spread: string) => () => scenarioFrom(`infrastructure:\n  costs: { eventWritesSpread: ${spread} }\n`, 10);
    expect(costs('{ p10: 1.2, p50: 1 }')).toThrow(/eventWritesSpread.*p50 is below p10 \(quantiles must not decrease\)/);
    expect(costs('-1')).toThrow(/eventWritesSpread/);
    expect(costs('{ p50: 1, p150: 2 }')).toThrow(/eventWritesSpread/);
    expect(costs('{ min: 0.7, p50: 1, max: 2 }')().infrastructure.costs.eventWritesSpread.points).toEqual([
      { p: 0, value: 0.7 },
      { p: 0.5, value: 1 },
      { p: 1, value: 2 },
    ]);
  });
});
