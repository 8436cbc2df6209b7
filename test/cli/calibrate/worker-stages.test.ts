// The running worker's pickup is read to the ms on two clocks (the log's entry id, the worker's
// Date.now()); calibrate spreads each reading over its millisecond before the model draws from it
// (cli/calibrate/worker-stages.ts wholeMsQuantiles), and passes the table on beside the readings.
import * as hdr from 'hdr-histogram-js';
import { describe, expect, it } from 'vitest';
import { workerStages, wholeMsQuantiles } from '../../../cli/calibrate/worker-stages.js';
import type { FleetFigures } from '../../../sim/replay/redis-figures.js';

/** A microsecond histogram of whole-ms readings: `counts[k]` readings of k ms. */
function readings(counts: Record<number, number>): hdr.Histogram {
  const h = hdr.build({ bitBucketSize: 64, autoResize: true, numberOfSignificantValueDigits: 3 });
  for (const [k, n] of Object.entries(counts)) h.recordValueWithCount(Number(k) * 1000, n);
  return h;
}

describe("the worker's pickup, read to the ms", () => {
  it('spreads each reading over its millisecond and leaves a 0 at 0: closed forms', () => {
    // 50 readings of 0 ms, 40 of 1, 10 of 13 (past HDR's exact range: 13,000 us is a bucket of 8)
    const q = wholeMsQuantiles(readings({ 0: 50, 1: 40, 13: 10 }), [0, 0.25, 0.5, 0.7, 0.9, 0.99, 1]);
    expect(q.map((x) => x.p)).toEqual([0, 0.25, 0.5, 0.7, 0.9, 0.99, 1]);
    const ms = q.map((x) => x.value * 1000);
    // the zeros at 0, the ones over 0.5-1.5, the 13s over 12.5-13.5
    [0, 0, 0, 1, 1.5, 13.4, 13.5].forEach((v, i) => expect(ms[i]).toBeCloseTo(v, 9));
    // so the table's mean is the readings' (0.4 x 1 + 0.1 x 13 = 1.7 ms): its integral over p
    const fine = wholeMsQuantiles(readings({ 0: 50, 1: 40, 13: 10 }), Array.from({ length: 10001 }, (_, i) => i / 10000));
    const mean = fine.slice(1).reduce((s, x, i) => s + ((x.value + fine[i].value) / 2) * 1e-4, 0);
    expect(mean * 1000).toBeCloseTo(1.7, 2);
  });

  it('one reading alone spans its millisecond; quantiles never fall as p rises', () => {
    expect(wholeMsQuantiles(readings({ 4: 1 }), [0, 0.5, 1]).map((x) => x.value * 1000)).toEqual([3.5, 4, 4.5]);
    const q = wholeMsQuantiles(readings({ 0: 3, 1: 700, 2: 40, 3: 5, 7: 1, 30: 2 }), [0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 1]);
    for (let i = 1; i < q.length; i++) expect(q[i].value).toBeGreaterThanOrEqual(q[i - 1].value);
  });

  it("refuses a WebAssembly histogram, whose recorded values it cannot walk", () => {
    expect(() => wholeMsQuantiles({} as hdr.Histogram, [0.5])).toThrow(/JS histogram/);
  });

  it("takes the idle worker's pickup apart from every event's, with its readings spread over their ms", () => {
    // 100 events: 90 found the worker waiting (50 read 0 ms, 40 read 1 ms), 10 waited behind its work (13 ms)
    const all = readings({ 0: 50, 1: 40, 13: 10 });
    const idle = readings({ 0: 50, 1: 40 });
    const fleet: FleetFigures = {
      workers: 1, oldestAt: 0, publishedAt: [0], counters: { eventsCreated: 100 },
      histograms: new Map([['eventPickupMs', { h: all, sumMs: 170 }], ['eventPickupIdleMs', { h: idle, sumMs: 40 }]]),
    };
    const stages = workerStages(fleet, 'calibrate-worker');
    expect(stages.events).toBe(100);
    expect([stages.pickup.n, stages.pickupIdle.n]).toEqual([100, 90]);
    expect(stages.pickup.mean).toBeCloseTo(0.0017, 12);
    expect(stages.pickupIdle.mean).toBeCloseTo(0.04 / 90, 12);
    // every event's p99 is a wait behind the worker's work; the idle one's is under 1.5 ms
    expect(stages.pickup.points.find((x) => x.p === 0.99)!.value).toBeCloseTo(0.013, 4);
    expect(stages.pickupIdle.unrounded.find((x) => x.p === 0.99)!.value).toBeCloseTo(0.0015 - 0.9 / 40 / 1000, 9);
    expect(stages.pickupIdle.unrounded.find((x) => x.p === 0.5)!.value).toBe(0);
    // a worker that does not publish the idle figure: none, and no table
    const older = workerStages({ ...fleet, histograms: new Map([['eventPickupMs', { h: all, sumMs: 170 }]]) }, 'deployment-workers');
    expect(older.pickupIdle.n).toBe(0);
    expect(older.pickupIdle.unrounded).toEqual([]);
  });
});
