// The model fed a replay's own stages: each swapped input in closed form, from a saved replay.
import { describe, expect, it } from 'vitest';
import { atMean, fedByReplay, fedByReplayRefined, serverSpread, summaryDistribution, tailPoint } from '../../../sim/compare/replay-stages.js';
import { quantileAt, quantileMean } from '../../../sim/scenario/quantiles.js';
import { parseScenario } from '../../../sim/scenario/load.js';
import type { RunResult } from '../../../sim/result.js';
import { EVENTS_YAML, savedReplay, simulatedEvents } from './documents.js';

describe('summaryDistribution', () => {
  it("is the summary's quantiles from min, a missing one skipped, none falling, ending at max", () => {
    const d = summaryDistribution({ mean: 0.006, p50: 0.005, p90: 0.008, p99: 0.052, p999: null, max: 0.069 }, 0.002)!;
    const knots = new Set([0, 0.5, 0.9, 0.99, 1]);
    expect(d.points.filter((q) => knots.has(q.p))).toEqual([
      { p: 0, value: 0.002 },
      { p: 0.5, value: 0.005 },
      { p: 0.9, value: 0.008 },
      { p: 0.99, value: 0.052 },
      { p: 1, value: 0.069 },
    ]);
    // p90 to p99 filled in on the power law through them; the last segment, to max, is a line
    expect(d.points).toHaveLength(5 + 7);
    for (let i = 1; i < d.points.length; i++) expect(d.points[i].p).toBeGreaterThan(d.points[i - 1].p);
    expect(d.points.filter((q) => q.p > 0.9 && q.p < 0.99).every((q) => Math.abs(Math.log(q.value / 0.008) / Math.log(0.052 / 0.008) - Math.log((1 - 0.9) / (1 - q.p)) / Math.log(10)) < 1e-9)).toBe(true);
    // a min above the median is the median: the distribution starts no higher than half its draws
    expect(summaryDistribution({ p50: 0.001, p99: 0.003, max: 0.004 }, 0.01)!.points[0]).toEqual({ p: 0, value: 0.001 });
    // a p99 read below the p90 (a coarse clock) holds the p90's value (and a flat segment gets no tail)
    expect(summaryDistribution({ p50: 0.001, p90: 0.003, p99: 0.002, max: 0.004 }, 0)!.points.map((q) => q.value)).toEqual([0, 0.001, 0.003, 0.003, 0.004]);
    expect(summaryDistribution(undefined, 0)).toBeNull();
    expect(summaryDistribution({ p50: null, max: 1 }, 0)).toBeNull();
  });
});

describe('tailPoint', () => {
  it('is the power law through two quantiles: halfway from p99 = 1 to p99.9 = 100 in log(1 - p) is 10', () => {
    const q = tailPoint({ p: 0.99, value: 1 }, { p: 0.999, value: 100 }, 0.5);
    expect(q.p).toBeCloseTo(1 - 0.01 / Math.sqrt(10), 12);
    expect(q.value).toBeCloseTo(10, 12);
    expect(tailPoint({ p: 0.99, value: 1 }, { p: 0.999, value: 100 }, 0)).toEqual({ p: 0.99, value: 1 });
  });

  it("draws a replay's statements (p99 6.36 ms, p99.9 37 ms) at their p99, where straight lines drew 8.5 ms", () => {
    const d = summaryDistribution({ p50: 0.000812, p90: 0.002299, p99: 0.006363, p999: 0.037087, max: 0.038815 }, 0.0003)!;
    const n = 200_000;
    const draws = Array.from({ length: n }, (_, i) => quantileAt(d, (i + 0.5) / n)).sort((a, b) => a - b);
    expect(draws[Math.floor(0.99 * n)]).toBeCloseTo(0.006363, 5);
    // a draw in the top 1% averages the power law's, far under the line's midpoint (21.7 ms)
    const top = draws.slice(Math.floor(0.99 * n), Math.floor(0.999 * n));
    expect(top.reduce((a, b) => a + b, 0) / top.length).toBeLessThan(0.017);
  });
});

describe('atMean', () => {
  it("scales a millisecond clock's quantiles to its exact mean: p50 1 ms of a 0.75 ms pickup", () => {
    const d = summaryDistribution({ mean: 0.00075, p50: 0.001, p90: 0.001, p99: 0.003, max: 0.004 }, 0)!;
    const scaled = atMean(d, 0.00075)!;
    expect(quantileMean(scaled)).toBeCloseTo(0.00075, 12);
    expect(quantileAt(scaled, 0.5) / quantileAt(d, 0.5)).toBeCloseTo(0.00075 / quantileMean(d), 12);
    expect(atMean(d, null)).toBe(d);
    expect(atMean(null, 0.001)).toBeNull();
  });
});

describe('serverSpread', () => {
  it("is the server's buckets over their mean: all reads within 1-2 ms is uniform on 2/3-4/3", () => {
    const s = serverSpread([
      { le: 0.001, count: 0 },
      { le: 0.002, count: 100 },
      { le: Infinity, count: 100 },
    ])!;
    expect(quantileMean(s)).toBeCloseTo(1, 9);
    expect(quantileAt(s, 0)).toBeCloseTo(2 / 3, 9);
    expect(quantileAt(s, 0.5)).toBeCloseTo(1, 9);
    expect(quantileAt(s, 1)).toBeCloseTo(4 / 3, 9);
  });

  it('is null for no reads', () => {
    expect(serverSpread([])).toBeNull();
    expect(serverSpread([{ le: 0.001, count: 0 }, { le: Infinity, count: 0 }])).toBeNull();
    expect(serverSpread(undefined)).toBeNull();
  });
});

describe('fedByReplay', () => {
  const sc = parseScenario(EVENTS_YAML, 'events.yaml');
  const replay = savedReplay(0);
  const sims = [simulatedEvents(9), simulatedEvents(10)];

  it("swaps in the replay's hop, statement (its idle curve dropped), pickup and read spread, and names each", () => {
    const { sc: fed, swapped } = fedByReplay(sc, replay, sims);
    const stages = replay.summary.fanout.stagesSeconds!;
    // the millisecond clocks' quantiles scaled to their exact means
    expect(quantileMean(fed.infrastructure.postToLog)).toBeCloseTo(stages.postToLog.mean, 12);
    expect(quantileAt(fed.infrastructure.postToLog, 0.99) / quantileAt(fed.infrastructure.postToLog, 0.5)).toBeCloseTo(stages.postToLog.p99 / stages.postToLog.p50, 9);
    expect(quantileMean(fed.infrastructure.costs.pickup)).toBeCloseTo(stages.pickup.mean, 12);
    expect(quantileAt(fed.infrastructure.costs.eventStatements, 0.5)).toBe(stages.statements.p50);
    expect(fed.infrastructure.costs.eventStatementsByIdle).toBeNull();
    expect(quantileMean(fed.infrastructure.api!.spread)).toBeCloseTo(1, 9);
    expect(swapped.map((s) => s.key)).toEqual(['postToLog', 'costs.eventStatements', 'costs.pickup', ...(swapped.some((s) => s.key === 'writesPerSecondPerWorker') ? ['writesPerSecondPerWorker'] : []), 'costs.expand', 'costs.batch', 'api.spread']);
    // the first page's line moved by the replay's p50 less the model's (at most to 0)
    const modelPage = (sims[0].summary.fanout.stagesSeconds!.firstPage.p50 + sims[1].summary.fanout.stagesSeconds!.firstPage.p50) / 2;
    expect(fed.infrastructure.costs.expand).toBeCloseTo(Math.max(0, sc.infrastructure.costs.expand + stages.firstPage.p50 - modelPage), 12);
    expect(fed.infrastructure.costs.expandPerFollower).toBe(sc.infrastructure.costs.expandPerFollower);
    // the batch moved by the replay's writes p50 less the model's (at most to 0)
    const modelWrites = (sims[0].summary.fanout.stagesSeconds!.writes.p50 + sims[1].summary.fanout.stagesSeconds!.writes.p50) / 2;
    expect(fed.infrastructure.costs.batch).toBeCloseTo(Math.max(0, sc.infrastructure.costs.batch + stages.writes.p50 - modelWrites), 12);
    // the rest of the scenario is untouched, and the scenario given is not changed
    expect(fed.infrastructure.costs.rtt).toBe(sc.infrastructure.costs.rtt);
    expect(fed.infrastructure.api!.cpuPerRead).toBe(sc.infrastructure.api!.cpuPerRead);
    expect(sc.infrastructure.costs.eventStatements).toEqual(parseScenario(EVENTS_YAML, 'events.yaml').infrastructure.costs.eventStatements);
  });

  it("moves the writes line's slope by the replay's large-post writes per timeline less the model's", () => {
    const withLarge = (r: RunResult, p50: number): RunResult => {
      const stages = { ...r.summary.fanout.stagesSeconds!, largeWritesPerTimeline: { mean: p50, p50, p90: p50, p99: p50, p999: p50, max: p50 } };
      return { ...r, summary: { ...r.summary, fanout: { ...r.summary.fanout, stagesSeconds: stages } } };
    };
    const perFollower = 1 / sc.infrastructure.writesPerSecondPerWorker;
    // the model's large posts at 30 us a timeline, the replay's at 45: the slope rises by 15 us
    const { sc: fed, swapped } = fedByReplay(sc, withLarge(replay, 45e-6), [withLarge(sims[0], 28e-6), withLarge(sims[1], 32e-6)]);
    expect(1 / fed.infrastructure.writesPerSecondPerWorker).toBeCloseTo(perFollower + 15e-6, 12);
    expect(swapped.find((s) => s.key === 'writesPerSecondPerWorker')!.replay).toBe(`${((perFollower + 15e-6) * 1e6).toFixed(1)} us a follower (a large post 45.0 us a timeline)`);
    // without large posts in the model's runs, the slope stays
    const bare = fedByReplay(sc, withLarge(replay, 45e-6), sims.map((r) => ({ ...r, summary: { ...r.summary, fanout: { ...r.summary.fanout, stagesSeconds: { ...r.summary.fanout.stagesSeconds!, largeWritesPerTimeline: undefined } } } })));
    expect(bare.sc.infrastructure.writesPerSecondPerWorker).toBe(sc.infrastructure.writesPerSecondPerWorker);
  });

  it("moves the slope and the batch again by what the first move left, each swap keeping calibrate's value", () => {
    const withWrites = (r: RunResult, p50: number): RunResult => {
      const w = r.summary.fanout.stagesSeconds!.writes;
      return { ...r, summary: { ...r.summary, fanout: { ...r.summary.fanout, stagesSeconds: { ...r.summary.fanout.stagesSeconds!, writes: { ...w, p50 } } } } };
    };
    // the replay's posts wrote at 1.4 ms; the calibrated model's at 2.0, and after the first move at 1.6
    const seen: number[] = [];
    // a batch of 1 ms calibrated (the scenario's default is none)
    const batched = { ...sc, infrastructure: { ...sc.infrastructure, costs: { ...sc.infrastructure.costs, batch: 0.001 } } };
    const { sc: fed, swapped } = fedByReplayRefined(batched, withWrites(replay, 0.0014), [withWrites(sims[0], 0.002)], (first) => {
      seen.push(first.infrastructure.costs.batch);
      return [withWrites(sims[0], 0.0016)];
    });
    expect(seen[0]).toBeCloseTo(0.0004, 12);
    expect(fed.infrastructure.costs.batch).toBeCloseTo(0.0002, 12);
    expect(swapped.find((x) => x.key === 'costs.batch')!.calibrated).toBe("1.00 ms a batch (a pushed post's writes p50 2.00 ms)");
    expect(swapped.find((x) => x.key === 'costs.batch')!.replay).toBe("0.20 ms a batch (a pushed post's writes p50 1.40 ms)");
    // never below none
    expect(fedByReplay(batched, withWrites(replay, 0.0014), [withWrites(sims[0], 0.004)]).sc.infrastructure.costs.batch).toBe(0);
    expect(swapped.find((x) => x.key === 'costs.eventStatements')!.calibrated).toMatch(/^mean [\d.]+ ms, p99 [\d.]+ ms/);
  });

  it("says how much the model's own waits behind a busy worker add to the pickup it now draws the replay's from", () => {
    const withPickupMean = (r: RunResult, mean: number): RunResult => {
      const p = r.summary.fanout.stagesSeconds!.pickup;
      return { ...r, summary: { ...r.summary, fanout: { ...r.summary.fanout, stagesSeconds: { ...r.summary.fanout.stagesSeconds!, pickup: { ...p, mean } } } } };
    };
    const idle = quantileMean(sc.infrastructure.costs.pickup);
    const text = (mean: number) => fedByReplay(sc, replay, [withPickupMean(sims[0], mean)]).swapped.find((x) => x.key === 'costs.pickup')!.calibrated;
    expect(text(idle + 0.0002)).toMatch(/\(the model's waits behind a busy worker add 0\.20 ms to the mean, counted twice now\)$/);
    expect(text(idle)).not.toContain('busy worker');
  });

  it("draws the pickup from the replay's idle worker's, as calibrate's, where the document has it: no wait counted twice", () => {
    const withIdle = (r: RunResult, idle: { count: number; mean: number; p50: number; p90: number; p99: number; p999: number; max: number }): RunResult =>
      ({ ...r, replay: { ...r.replay!, fanout: { ...r.replay!.fanout, workers: { ...r.replay!.fanout.workers, pickupIdle: idle } } } }) as RunResult;
    const idle = { count: 300, mean: 0.0006, p50: 0.001, p90: 0.001, p99: 0.002, p999: 0.004, max: 0.004 };
    // the model's pickup 0.2 ms over its input: every event's would count it twice, the idle one does not
    const busier = { ...sims[0], summary: { ...sims[0].summary, fanout: { ...sims[0].summary.fanout, stagesSeconds: { ...sims[0].summary.fanout.stagesSeconds!, pickup: { ...sims[0].summary.fanout.stagesSeconds!.pickup, mean: quantileMean(sc.infrastructure.costs.pickup) + 0.0002 } } } } };
    const { sc: fed, swapped } = fedByReplay(sc, withIdle(replay, idle), [busier]);
    expect(quantileMean(fed.infrastructure.costs.pickup)).toBeCloseTo(0.0006, 12);
    // its quantiles' shape kept, scaled to the exact mean (a ms clock's p50 of 1 ms for a 0.6 ms mean)
    expect(quantileAt(fed.infrastructure.costs.pickup, 0.99) / quantileAt(fed.infrastructure.costs.pickup, 0.5)).toBeCloseTo(2, 9);
    const s = swapped.find((x) => x.key === 'costs.pickup')!;
    expect(s.replay).toMatch(/^mean 0\.60 ms, p99 [\d.]+ ms, the events that found the worker waiting$/);
    expect(s.calibrated).not.toContain('counted twice');
    // none measured (an older worker, or no event found its worker waiting): every event's, as before
    const none = fedByReplay(sc, withIdle(replay, { ...idle, count: 0 }), [busier]);
    expect(quantileMean(none.sc.infrastructure.costs.pickup)).toBeCloseTo(replay.summary.fanout.stagesSeconds!.pickup.mean, 12);
    expect(none.swapped.find((x) => x.key === 'costs.pickup')!.calibrated).toContain('counted twice now');
  });

  it('leaves everything as it was for a document without stages', () => {
    const bare: RunResult = { ...replay, summary: { ...replay.summary, fanout: { ...replay.summary.fanout, stagesSeconds: undefined } }, replay: undefined };
    const { sc: fed, swapped } = fedByReplay(sc, bare, sims);
    expect(swapped).toEqual([]);
    expect(fed.infrastructure).toEqual(sc.infrastructure);
    // and simulates nothing again for it (compare SCENARIO runs this for every policy of old documents too)
    let passes = 0;
    const refined = fedByReplayRefined(sc, bare, sims, () => {
      passes++;
      return sims;
    });
    expect(passes).toBe(0);
    expect(refined.swapped).toEqual([]);
  });
});
