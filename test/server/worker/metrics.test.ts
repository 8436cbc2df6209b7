// MemoryMetrics with weighted samples: a value observed with a count stands for that many samples
// in the percentiles, the count and the mean, through export, merge and the Prometheus text.
import { describe, expect, it } from 'vitest';
import { MemoryMetrics, teeMetrics } from '../../../server/worker/metrics.js';

describe('MemoryMetrics: weighted samples', () => {
  it('counts a sample observed with a count that many times, in the count, the mean and the percentiles', () => {
    const m = new MemoryMetrics();
    m.observe('fanoutFollowerLagPushMs', 10, 3);
    m.observe('fanoutFollowerLagPushMs', 100, 1);
    m.observe('fanoutFollowerLagPushMs', 1_000); // count 1
    const s = m.summary('fanoutFollowerLagPushMs');
    expect(s.count).toBe(5);
    expect(s.mean).toBe((10 * 3 + 100 + 1_000) / 5);
    expect(s.p50).toBeCloseTo(10, 1); // 3 of 5 samples are 10 (HDR: within 0.1%)
    expect(s.p90).toBeCloseTo(1_000, 0);
    expect(s.max).toBeCloseTo(1_000, 0);
  });

  it('records nothing for a count below 1 or not whole', () => {
    const m = new MemoryMetrics();
    m.observe('fanoutFollowerLagPullMs', 5, 0);
    m.observe('fanoutFollowerLagPullMs', 5, -2);
    m.observe('fanoutFollowerLagPullMs', 5, 1.5);
    expect(m.summary('fanoutFollowerLagPullMs')).toMatchObject({ count: 0, mean: 0 });
  });

  it('keeps the weights through export and merge', () => {
    const a = new MemoryMetrics();
    a.observe('fanoutFollowerLagPullMs', 40, 20_000);
    const b = new MemoryMetrics();
    b.observe('fanoutFollowerLagPullMs', 2, 500);
    const doc = JSON.parse(JSON.stringify(a.exportMetrics('w1', 1)));
    expect(doc.histograms.fanoutFollowerLagPullMs.sumMs).toBe(800_000);
    b.merge(doc);
    const s = b.summary('fanoutFollowerLagPullMs');
    expect(s.count).toBe(20_500);
    expect(s.mean).toBeCloseTo((40 * 20_000 + 2 * 500) / 20_500, 9);
    expect(s.p50).toBeCloseTo(40, 1);
    expect(s.mean * s.count).toBeCloseTo(801_000, 3);
  });

  it('passes the count on through a tee', () => {
    const a = new MemoryMetrics();
    const b = new MemoryMetrics();
    teeMetrics(a, b).observe('fanoutFollowerLagPushMs', 3, 7);
    expect([a.summary('fanoutFollowerLagPushMs').count, b.summary('fanoutFollowerLagPushMs').count]).toEqual([7, 7]);
  });
});
