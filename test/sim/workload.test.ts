import { describe, expect, it } from 'vitest';
import { buildAliasTable, drawAlias } from '../../sim/graph/alias.js';
import { Rng } from '../../core/random.js';
import { PagesSampler, meanPagesPerSession, drawDailyRate } from '../../sim/workload/activity.js';
import { diurnalFactor, kappaForPeak } from '../../sim/workload/diurnal.js';
import { RateProfile } from '../../sim/workload/rate-profile.js';

describe('diurnal curve', () => {
  it('peaks at the peak factor at the peak hour and averages 1 over a day', () => {
    const curve = { peakFactor: 3, peakHourUtc: 20, startHourUtc: 0 };
    const k = kappaForPeak(3);
    expect(diurnalFactor(curve, 20 * 3600, k)).toBeCloseTo(3, 9);
    let sum = 0;
    for (let m = 0; m < 1440; m++) sum += diurnalFactor(curve, m * 60 + 30, k);
    expect(sum / 1440).toBeCloseTo(1, 6);
    expect(diurnalFactor(curve, 8 * 3600, k)).toBeGreaterThan(0);
  });
});

describe('rate profile', () => {
  it('draws as many arrivals as its integral says, with windows multiplying the rate', () => {
    const profile = new RateProfile(3600, null, [{ start: 600, end: 900, multiplier: 10 }]);
    expect(profile.integral()).toBeCloseTo(3600 + 9 * 300, 6);
    const rng = new Rng(5);
    let t = 0;
    let inside = 0;
    let total = 0;
    for (;;) {
      t = profile.nextArrival(t, 5, rng.exponential(1));
      if (!Number.isFinite(t)) break;
      total++;
      if (t >= 600 && t < 900) inside++;
    }
    expect(Math.abs(total - 5 * 6300) / (5 * 6300)).toBeLessThan(0.02);
    expect(Math.abs(inside - 5 * 3000) / (5 * 3000)).toBeLessThan(0.03);
  });
});

describe('activity', () => {
  it('a lognormal posting rate has the mean asked for', () => {
    const rng = new Rng(1);
    let s = 0;
    const n = 400_000;
    for (let i = 0; i < n; i++) s += drawDailyRate({ dist: 'lognormal', mean: 2, sigma: 1 }, rng);
    expect(s / n).toBeCloseTo(2, 1);
  });

  it('pages per session follow their buckets', () => {
    const pages = { buckets: [{ min: 1, max: 1, p: 0.7 }, { min: 2, max: 5, p: 0.25 }, { min: 6, max: 40, p: 0.05 }] };
    expect(meanPagesPerSession(pages)).toBeCloseTo(0.7 + 0.25 * 3.5 + 0.05 * 23, 12);
    const sampler = new PagesSampler(pages);
    const rng = new Rng(2);
    let s = 0;
    const n = 200_000;
    for (let i = 0; i < n; i++) s += sampler.draw(rng);
    expect(s / n).toBeCloseTo(meanPagesPerSession(pages), 1);
  });

  it('alias draws follow their weights', () => {
    const table = buildAliasTable(Float64Array.from([1, 2, 7]));
    const rng = new Rng(3);
    const counts = [0, 0, 0];
    for (let i = 0; i < 100_000; i++) counts[drawAlias(table, rng)]++;
    expect(counts[0] / 1e5).toBeCloseTo(0.1, 2);
    expect(counts[2] / 1e5).toBeCloseTo(0.7, 2);
  });
});
