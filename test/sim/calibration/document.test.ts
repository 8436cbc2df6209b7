// The calibration document and file: fits, the infrastructure block in the scenario's units, the
// refusal of unsound numbers, and the round trip (a written file loads back to the same values).
import { parse } from 'yaml';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { calibrationDocument, durationText, type Measurements, type Provenance } from '../../../sim/calibration/document.js';
import { calibrationYaml } from '../../../sim/calibration/file.js';
import { calibrationTable } from '../../../reports/calibration.js';
import { fitLine, fitLineRelative, spreadOf, type Fit } from '../../../sim/calibration/figures.js';
import { CALIBRATED_KEYS, parseCalibration } from '../../../sim/scenario/calibration.js';
import { loadScenario } from '../../../sim/scenario/load.js';
import { parseDuration } from '../../../sim/scenario/units.js';

/** A fit through samples on a + b x, each off by noise(i) (a median of one sample is that sample). */
const line = (a: number, b: number, xs: number[], noise: (i: number) => number = () => 0): Fit => fitLine(new Map(xs.map((x, i) => [x, [a + b * x + noise(i)]])));

const spread = (median: number) => ({ median, p10: median * 0.9, p90: median * 1.2, n: 5 });

const q = (values: number[]) => ({ points: [0, 0.5, 0.9, 0.99, 0.999, 1].map((p, i) => ({ p, value: values[i] })), n: 1000 });

function measurements(): Measurements {
  return {
    rtt: spread(110.37e-6),
    timelineWrites: { fit: line(310e-6, 21.5e-6, [1, 10, 100, 300, 1000, 3000]), redisPerWrite: spread(12.56e-6) },
    pageRead: spread(15.99e-6),
    pageReadByEntries: line(8e-6, 0.32e-6, [1, 5, 25]),
    mgetPerKey: spread(0.2797e-6),
    expansion: line(365e-6, 1.004e-6, [10, 30, 100, 300, 1000, 3000, 10000]),
    eventStatements: spread(435.5e-6),
    rebuild: spread(3.59e-3),
    api: {
      lists: line(292e-6, 29.2e-6, [2, 3, 4, 6, 10]),
      quietLists: line(332e-6, 9.2e-6, [2, 3, 4, 6, 10]),
      fullListEntries: 25,
      posts: line(229e-6, 4.62e-6, [5, 20, 50]),
      at: { lists: 2, posts: 20 },
      write: spread(812e-6),
      trivialRoundTrip: spread(114e-6),
      trivialCpu: spread(78.5e-6),
      service: { ...q([315e-6, 553e-6, 736e-6, 2.9e-3, 5.1e-3, 15.3e-3]), mean: 627e-6, cpu: spread(360e-6), idleCpuPerSecond: spread(4e-3) },
    },
    postToLog: q([1e-3, 4e-3, 7e-3, 20e-3, 21e-3, 21e-3]),
    postListed: q([1.1e-3, 2.8e-3, 3.8e-3, 11.1e-3, 25.6e-3, 32.8e-3]),
    worker: {
      source: 'calibrate-worker',
      events: 300,
      pickup: { ...q([0, 1e-3, 1e-3, 14e-3, 14e-3, 14e-3]), n: 300, mean: 923.3e-6 },
      // the 280 events that found the worker waiting, and their readings spread over their ms
      pickupIdle: { ...q([0, 1e-3, 1e-3, 3e-3, 4e-3, 4e-3]), n: 280, mean: 681.2e-6, unrounded: q([0, 0.62e-3, 1.4e-3, 3.1e-3, 4.2e-3, 4.5e-3]).points },
      statements: { ...q([559e-6, 1.251e-3, 2.813e-3, 9.383e-3, 29.49e-3, 29.49e-3]), n: 300, mean: 1.79e-3 },
      firstPage: { ...q([3e-6, 276e-6, 633e-6, 2.48e-3, 4.63e-3, 4.63e-3]), n: 300, mean: 359e-6 },
      writes: { ...q([200e-6, 600e-6, 1e-3, 3e-3, 5e-3, 5e-3]), n: 300, mean: 700e-6 },
    },
    // the median statement, first page and writes at the typical idle times of 40, 10 and 2.5 posts a second
    statementsByIdle: {
      points: [
        { gap: 0.01404, ...spread(813e-6), n: 80, firstPage: { ...spread(700e-6), n: 80 }, writes: { ...spread(1.1e-3), n: 80 } },
        { gap: 0.05615, ...spread(787e-6), n: 300, firstPage: { ...spread(750e-6), n: 300 }, writes: { ...spread(1.0e-3), n: 300 } },
        { gap: 0.2246, ...spread(1.346e-3), n: 80, firstPage: { ...spread(1.29e-3), n: 80 }, writes: { ...spread(1.05e-3), n: 80 } },
      ],
      referenceGap: 0.05615,
    },
  };
}

const provenance: Provenance = {
  machine: { hostname: 'lab', cpu: 'Test CPU', cores: 2, memoryBytes: 25.3e9 },
  date: '2026-12-02T00:29:46.348Z',
  versions: { node: 'v20.20.2', redis: '7.0.15', postgres: '15.20', feedlab: '0.1.0' },
  mode: 'self-contained',
  target: null,
  contention: { otherShare: 0.31, contended: true, overSeconds: 45 },
  samples: 5,
  world: { users: 10215 },
};

describe('fits and spreads', () => {
  test('a straight line is found exactly; noise lowers r²', () => {
    const f = line(2, 3, [1, 2, 5, 10]);
    expect(f.slope).toBeCloseTo(3, 12);
    expect(f.intercept).toBeCloseTo(2, 12);
    expect(f.rSquared).toBeCloseTo(1, 12);
    expect(f.points.map((p) => p.x)).toEqual([1, 2, 5, 10]);
    const noisy = fitLine(new Map([[1, [5]], [2, [1]], [3, [6]], [4, [2]]]));
    expect(noisy.rSquared).toBeLessThan(0.5);
  });

  test("a relative fit is off by the least share of each point, where an ordinary one follows the largest", () => {
    // a running worker's writes (us) at 10-1,000 followers, measured 2026-12-03
    const xs = [10, 30, 100, 300, 1000];
    const ys = [832, 1508, 4343, 9855, 29810];
    const samples = new Map(xs.map((x, i) => [x, [ys[i]]]));
    const rel = fitLineRelative(samples);
    // weighted least squares by 1 / y² (numpy: 541.048, 31.6498)
    expect(rel.intercept).toBeCloseTo(541.048, 2);
    expect(rel.slope).toBeCloseTo(31.6498, 3);
    for (let i = 0; i < xs.length; i++) expect(Math.abs((rel.intercept + rel.slope * xs[i]) / ys[i] - 1)).toBeLessThan(0.15);
    // the ordinary fit puts the smallest 45% over
    const ols = fitLine(samples);
    expect((ols.intercept + ols.slope * 10) / 832).toBeGreaterThan(1.4);
    // an exact line is found exactly, r² 1; scatter lowers r²
    const exact = fitLineRelative(new Map([1, 2, 5, 10].map((x) => [x, [2 + 3 * x]])));
    expect([exact.intercept, exact.slope, exact.rSquared].map((v) => Number(v.toFixed(9)))).toEqual([2, 3, 1]);
    expect(fitLineRelative(new Map([[1, [5]], [2, [1]], [3, [6]], [4, [2]]])).rSquared).toBeLessThan(0.5);
    expect(fitLineRelative(new Map([[1, [5]]])).slope).toBeNaN();
  });

  test('a spread is the median and p10-p90 of the samples', () => {
    expect(spreadOf([5, 1, 3, 2, 4])).toEqual({ median: 3, p10: 1.4, p90: 4.6, n: 5 });
    expect(spreadOf([]).n).toBe(0);
  });
});

describe('the infrastructure block', () => {
  test('every key, in the scenario format\'s units', () => {
    const doc = calibrationDocument(provenance, measurements(), []);
    expect(doc.calibration.refused).toEqual([]);
    const b = doc.infrastructure;
    expect(b.writesPerSecondPerWorker).toBe(46500);
    expect(b.costs).toEqual({
      batch: '199.6us',
      rtt: '110.4us',
      zadd: '12.56us',
      // an empty list's read and each entry more, from reads of 1, 5 and 25 entries
      zrange: '8us',
      zrangePerEntry: '0.32us',
      mgetPerKey: '0.2797us',
      expand: '365us',
      expandPerFollower: '1.004us',
      // a running worker's own statements, drawn per event, over calibrate's process's 435.5 us
      eventStatements: { min: '559us', p50: '1.251ms', p90: '2.813ms', p99: '9.383ms', 'p99.9': '29.49ms', max: '29.49ms' },
      // the worker's median statement after each pace's idle time, and the hop's idle time
      eventStatementsByIdle: { '14.04ms': '813us', '56.15ms': '787us', '224.6ms': '1.346ms' },
      eventStatementsGap: '56.15ms',
      // and the first page's and the writes' own
      eventFirstPageByIdle: { '14.04ms': '700us', '56.15ms': '750us', '224.6ms': '1.29ms' },
      eventWritesByIdle: { '14.04ms': '1.1ms', '56.15ms': '1ms', '224.6ms': '1.05ms' },
      // the idle worker's readings spread over their ms, drawn per event (not every event's, whose tail waited behind the worker's work)
      pickup: { min: '0us', p50: '620us', p90: '1.4ms', p99: '3.1ms', 'p99.9': '4.2ms', max: '4.5ms' },
      rebuild: '3.59ms',
    });
    expect(b.postToLog).toEqual({ min: '1ms', p50: '4ms', p90: '7ms', p99: '20ms', 'p99.9': '21ms', max: '21ms' });
    // an empty list 9.2 us, each of a full list's 25 entries (29.2 - 9.2) / 25 us; the base less one
    // full list (the timeline) and one empty (the reader's own): 335.9 - 38.4 - 92.4 us
    expect(b.api).toMatchObject({ cpuPerList: '9.2us', cpuPerListEntry: '0.8us', cpuPerPost: '4.62us', cpuPerRead: '205.1us', cpuPerWrite: '812us', network: '35.5us' });
    expect(b.api!.spread).toEqual({ min: 0.502, p50: 0.882, p90: 1.17, p99: 4.63, 'p99.9': 8.13, max: 24.4 });
    // a paced read's mean 627 us less the page's 335.9 us of CPU, two round trips and its Redis work;
    // of it, CPU: the paced read's 360 us less the fits' 335.9 us
    expect(b.api).toMatchObject({ idleOverhead: '40.77us', idleCpu: '24.1us', backgroundCpu: 0.004 });
    // the server's own time of a post into its author's list, as quantiles (a pulled post's delivery)
    expect(b.api!.postListed).toEqual({ min: '1.1ms', p50: '2.8ms', p90: '3.8ms', p99: '11.1ms', 'p99.9': '25.6ms', max: '32.8ms' });
  });

  test("a paced read's CPU beyond the fits is idleCpu, at most idleOverhead; one not measured or not positive writes none", () => {
    const withCpu = (cpu: number | null) => {
      const m = measurements();
      if (cpu === null) delete m.api!.service.cpu;
      else m.api!.service.cpu = spread(cpu);
      return calibrationDocument(provenance, m, []);
    };
    expect(withCpu(900e-6).infrastructure.api).toMatchObject({ idleOverhead: '40.77us', idleCpu: '40.77us' });
    // less CPU than the fits give the page: none of the idle cost is CPU
    expect(withCpu(300e-6).infrastructure.api).toMatchObject({ idleCpu: '0us' });
    expect(withCpu(null).infrastructure.api!.idleCpu).toBeUndefined();
    const zero = withCpu(0);
    expect(zero.infrastructure.api!.idleCpu).toBeUndefined();
    expect(zero.calibration.refused).toContainEqual(expect.objectContaining({ key: 'api.idleCpu', why: "a paced read's CPU: the median is 0 us, not positive" }));
    // the server alone: its quiet seconds pooled (each holds a tick or two), else their median
    const pooled = measurements();
    pooled.api!.service.idleCpuRate = 0.0062;
    expect(calibrationDocument(provenance, pooled, []).infrastructure.api!.backgroundCpu).toBe(0.0062);
    expect(withCpu(null).infrastructure.api!.backgroundCpu).toBe(0.004);
  });

  test("a running worker's statement after idle time is refused from too few events, or without the hop's point, and then neither key is written", () => {
    const m = measurements();
    const points = m.statementsByIdle!.points;
    m.statementsByIdle = { points: points.map((p, i) => (i === 2 ? { ...p, n: 39 } : p)), referenceGap: 0.05615 };
    const few = calibrationDocument(provenance, m, []);
    expect(few.infrastructure.costs).not.toHaveProperty('eventStatementsByIdle');
    expect(few.infrastructure.costs).not.toHaveProperty('eventStatementsGap');
    // the stages' curves go with the statement's: they are moved about its reference gap
    expect(few.infrastructure.costs).not.toHaveProperty('eventFirstPageByIdle');
    expect(few.calibration.refused.map((r) => r.key)).toEqual(['costs.eventStatementsByIdle', 'costs.eventFirstPageByIdle', 'costs.eventWritesByIdle', 'costs.eventStatementsGap']);
    expect(few.calibration.refused[0].why).toBe("a running worker's statement after idle time: 39 events at the idle time 224.6ms, fewer than 40");
    m.statementsByIdle = { points: [points[0], points[2]], referenceGap: 0.05615 };
    expect(calibrationDocument(provenance, m, []).calibration.refused[0].why).toBe("a running worker's statement after idle time: no point at the hop's idle time 56.15ms");
    // the worker's statements themselves are still taken
    expect(few.infrastructure.costs!.eventStatements).toMatchObject({ p50: '1.251ms' });
  });

  test("a stage's own curve by idle time is refused alone: from too few events, or from a file that did not measure it", () => {
    const m = measurements();
    const points = m.statementsByIdle!.points;
    m.statementsByIdle = { points: points.map((p, i) => (i === 0 ? { ...p, firstPage: { ...p.firstPage!, n: 12 } } : p)), referenceGap: 0.05615 };
    const few = calibrationDocument(provenance, m, []);
    expect(few.calibration.refused).toEqual([{ key: 'costs.eventFirstPageByIdle', why: "a running worker's first follower page after idle time: 12 events at the idle time 14.04ms, fewer than 40" }]);
    expect(few.infrastructure.costs).not.toHaveProperty('eventFirstPageByIdle');
    expect(few.infrastructure.costs!.eventWritesByIdle).toEqual({ '14.04ms': '1.1ms', '56.15ms': '1ms', '224.6ms': '1.05ms' });
    // an older measurement (the statement's only) keeps its curve and leaves the stages unmoved
    m.statementsByIdle = { points: points.map(({ firstPage: _f, writes: _w, ...p }) => p), referenceGap: 0.05615 };
    const older = calibrationDocument(provenance, m, []);
    expect(older.infrastructure.costs!.eventStatementsByIdle).toEqual({ '14.04ms': '813us', '56.15ms': '787us', '224.6ms': '1.346ms' });
    expect(older.calibration.refused.map((r) => [r.key, r.why])).toEqual([
      ['costs.eventFirstPageByIdle', "a running worker's first follower page after idle time: not measured at the idle time 14.04ms"],
      ['costs.eventWritesByIdle', "a running worker's writes after idle time: not measured at the idle time 14.04ms"],
    ]);
  });

  test("a running worker's writes and first page by a post's size win over calibrate's process's when sound", () => {
    const m = measurements();
    // 1.2 ms + 40 us a follower of writes; 900 us + 1.5 us a follower of first page
    m.workerBySize = { events: 200, writes: line(1.2e-3, 40e-6, [10, 30, 100, 300, 1000]), firstPage: line(900e-6, 1.5e-6, [10, 30, 100, 300, 1000]) };
    const doc = calibrationDocument(provenance, m, []);
    expect(doc.calibration.fellBack).toEqual([]);
    expect(doc.infrastructure.writesPerSecondPerWorker).toBe(25000);
    // the intercept less calibrate's round trip (110.37 us)
    expect(doc.infrastructure.costs).toMatchObject({ batch: '1.09ms', expand: '900us', expandPerFollower: '1.5us' });
    expect(doc.calibration.refused).toEqual([]);
  });

  test("how a running worker's posts scatter about its line: ratios in the file, only with that line, from enough posts", () => {
    const m = measurements();
    const spread = { n: 160, points: [{ p: 0, value: 0.712 }, { p: 0.1, value: 0.853 }, { p: 0.5, value: 1 }, { p: 0.9, value: 1.4149 }, { p: 1, value: 2.3051 }] };
    m.workerBySize = { events: 200, writes: line(1.2e-3, 40e-6, [10, 30, 100, 300, 1000]), firstPage: line(900e-6, 1.5e-6, [10, 30, 100, 300, 1000]), writesSpread: spread };
    const doc = calibrationDocument(provenance, m, []);
    // three significant digits, as ratios
    expect(doc.infrastructure.costs!.eventWritesSpread).toEqual({ min: 0.712, p10: 0.853, p50: 1, p90: 1.41, max: 2.31 });
    expect(doc.calibration.refused).toEqual([]);
    // the file loads back into the scenario's distribution, and keeps the measurement
    const text = calibrationYaml(doc, 'feedlab calibrate');
    expect(parseCalibration(text, 'cal.yaml').values.get('costs.eventWritesSpread')).toEqual({
      points: [
        { p: 0, value: 0.712 },
        { p: 0.1, value: 0.853 },
        { p: 0.5, value: 1 },
        { p: 0.9, value: 1.41 },
        { p: 1, value: 2.31 },
      ],
    });
    expect(text).toMatch(/writesOverMedian:\n\s+n: 160\n\s+min: 0\.712\n\s+p10: 0\.853\n\s+p50: 1\n\s+p90: 1\.41\n\s+max: 2\.31/);
    // fewer posts than a distribution is taken from
    const few = measurements();
    few.workerBySize = { ...m.workerBySize, writesSpread: { ...spread, n: 48 } };
    expect(calibrationDocument(provenance, few, []).calibration.refused).toEqual([
      { key: 'costs.eventWritesSpread', why: "a running worker's writes over its line: 48 samples, fewer than 50" },
    ]);
    // the line fell back to calibrate's own batches: a scatter about another line is not written
    const scattered = measurements();
    const scatter = [0, 3e-3, -2e-3, 3e-3, -1e-3];
    scattered.workerBySize = { ...m.workerBySize, writes: line(1.2e-3, 4e-6, [10, 30, 100, 300, 1000], (i) => scatter[i]) };
    const fell = calibrationDocument(provenance, scattered, []);
    expect(fell.infrastructure.costs).not.toHaveProperty('eventWritesSpread');
    expect(fell.calibration.refused).toEqual([{ key: 'costs.eventWritesSpread', why: "a running worker's writes over its line: that line was not used (the writes came from calibrate's own batches)", notMeasured: true }]);
  });

  test("an unsound running-worker fit falls back to calibrate's own measurement and says why", () => {
    const m = measurements();
    // the writes scatter (r² under 0.9); the first page's line crosses zero below it
    const scatter = [0, 3e-3, -2e-3, 3e-3, -1e-3];
    m.workerBySize = { events: 200, writes: line(1.2e-3, 4e-6, [10, 30, 100, 300, 1000], (i) => scatter[i]), firstPage: line(-50e-6, 1.5e-6, [10, 30, 100, 300, 1000]) };
    const doc = calibrationDocument(provenance, m, []);
    expect(doc.infrastructure.writesPerSecondPerWorker).toBe(46500);
    expect(doc.infrastructure.costs).toMatchObject({ batch: '199.6us', expand: '365us', expandPerFollower: '1.004us' });
    expect(doc.calibration.fellBack.map((f) => f.keys)).toEqual([['writesPerSecondPerWorker', 'costs.batch'], ['costs.expand', 'costs.expandPerFollower']]);
    expect(doc.calibration.fellBack[0].why).toMatch(/^a running worker's writes against a post's followers: the fit's r² is 0\.173, under 0\.9/);
    expect(doc.calibration.fellBack[1].why).toBe("a running worker's first page against a post's followers: the fit's intercept is -50 us, negative");
    // the file says which keys came from where
    const text = calibrationYaml(doc, 'feedlab calibrate');
    expect(text).toContain("# From calibrate's own measurement, the running worker's being unsound:\n#   writesPerSecondPerWorker, costs.batch: a running worker's writes");
    expect(text).toMatch(/workerBySize:\n\s+events: 200\n\s+firstPage:\n\s+intercept: -50us/);
  });

  test("a running worker's first page flat within its scatter keeps its level on calibrate's own slope", () => {
    const m = measurements();
    // a calibration's medians (2026-12-05 16:59): the small posts' pages flat about 1 ms
    const medians = [1.074e-3, 1.089e-3, 0.927e-3, 1.022e-3, 2.279e-3];
    const xs = [10, 30, 100, 300, 1000];
    m.workerBySize = { events: 200, writes: line(1.2e-3, 40e-6, xs), firstPage: line(0, 0, xs, (i) => medians[i]) };
    const doc = calibrationDocument(provenance, m, []);
    // the medians less 1.004 us a follower: 1.064, 1.059, 0.827, 0.721, 1.275 ms; their median
    expect(doc.infrastructure.costs).toMatchObject({ expand: '1.059ms', expandPerFollower: '1.004us' });
    expect(doc.calibration.fellBack).toHaveLength(1);
    const [f] = doc.calibration.fellBack;
    expect(f.keys).toEqual(['costs.expandPerFollower']);
    expect(f.levelled!.key).toBe('costs.expand');
    expect(f.levelled!.value).toBeCloseTo(1.05888e-3, 8);
    expect(f.why).toMatch(/^a running worker's first page against a post's followers: the fit's r² is 0\.892, under 0\.9, and the line leaves a size's own spread/);
    expect(doc.calibration.refused).toEqual([]);
    // the table says where each came from
    const table = calibrationTable(doc, null);
    expect(table).toMatch(/costs\.expand +1\.059ms +a running worker's first page, its level 1\.06 ms \(its sizes' medians less b x followers, their median\) on calibrate's process's b; its own line a /);
    expect(table).toMatch(/costs\.expandPerFollower +1\.004us +b of calibrate's process's a 365 us \+ b 1 us x rows, r² 1\.0000 over 10\/30\/100\/300\/1000\/3000\/10000 \(the running worker's level kept as costs\.expand\)/);
    // the file names the level beside the key that fell back
    expect(calibrationYaml(doc, 'feedlab calibrate')).toContain("#   costs.expandPerFollower (costs.expand 1.059ms: the running worker's level on it): a running worker's first page");
    // a level that is not a positive duration falls back whole (pages of 9-15 us less 1 us a follower: -91 us)
    const low = measurements();
    low.workerBySize = { ...m.workerBySize, firstPage: line(0, 0, xs, (i) => [10e-6, 14e-6, 9e-6, 15e-6, 12e-6][i]) };
    expect(calibrationDocument(provenance, low, []).calibration.fellBack).toEqual([{ keys: ['costs.expand', 'costs.expandPerFollower'], why: expect.stringMatching(/r² .* under 0\.9/) }]);
    // as does a straight line that only crosses zero: its slope is sound, calibrate's whole line is taken
    const steep = measurements();
    steep.workerBySize = { ...m.workerBySize, firstPage: line(-50e-6, 3e-6, xs) };
    expect(calibrationDocument(provenance, steep, []).calibration.fellBack).toEqual([{ keys: ['costs.expand', 'costs.expandPerFollower'], why: "a running worker's first page against a post's followers: the fit's intercept is -50 us, negative" }]);
    const noisy = measurements();
    noisy.workerBySize = m.workerBySize;
    noisy.expansion = line(365e-6, 1e-6, [10, 100, 1000, 10000], (i) => [400e-6, -3e-3, 4e-3, -2e-3][i]);
    const whole = calibrationDocument(provenance, noisy, []);
    expect(whole.calibration.fellBack.map((x) => x.keys)).toEqual([['costs.expand', 'costs.expandPerFollower']]);
    expect(whole.calibration.refused.map((r) => r.key)).toEqual(['costs.expand', 'costs.expandPerFollower']);
  });

  test('a scattered full-lists fit refuses the per-entry split with it: every key is written or refused', () => {
    const m = measurements();
    // r² 0.857, as on a busy machine (2026-12-03)
    const scatter = [0, 60e-6, -60e-6, 60e-6, -60e-6];
    m.api!.lists = line(292e-6, 29.2e-6, [2, 3, 4, 6, 10], (i) => scatter[i]);
    const doc = calibrationDocument(provenance, m, []);
    const why = Object.fromEntries(doc.calibration.refused.map((r) => [r.key, r.why]));
    expect(why['api.cpuPerListEntry']).toBe("API CPU per list entry: needs the full lists' fit");
    expect(doc.infrastructure.api).not.toHaveProperty('cpuPerListEntry');
    const written = parseCalibration(calibrationYaml(doc, 'feedlab calibrate'), 'cal.yaml');
    expect([...written.values.keys()].sort()).toEqual(CALIBRATED_KEYS.filter((k) => !(k in why) && k !== 'costs.eventWritesSpread').sort());
  });

  test("without a worker's figures the statements are calibrate's process's and the pickup is not written; too few events are refused", () => {
    const m = measurements();
    m.worker = null;
    const doc = calibrationDocument(provenance, m, []);
    expect(doc.infrastructure.costs?.eventStatements).toBe('435.5us');
    expect(doc.infrastructure.costs).not.toHaveProperty('pickup');
    const few = measurements();
    few.worker = { ...few.worker!, pickupIdle: { ...few.worker!.pickupIdle, n: 12 }, statements: { ...few.worker!.statements, n: 12 } };
    const d2 = calibrationDocument(provenance, few, []);
    expect(d2.infrastructure.costs?.eventStatements).toBe('435.5us');
    expect(d2.calibration.refused).toEqual([{ key: 'costs.pickup', why: "the worker's pickup of events that found it waiting: 12 events, fewer than 50" }]);
  });

  test('without the split (empty lists cost as much as full ones, or no line through the slices) a list costs its full read', () => {
    const m = measurements();
    m.api!.quietLists = line(292e-6, 29.2e-6, [2, 3, 4, 6, 10]);
    m.pageReadByEntries = line(-2e-6, 0.5e-6, [1, 5, 25]);
    const doc = calibrationDocument(provenance, m, []);
    const why = Object.fromEntries(doc.calibration.refused.map((r) => [r.key, r.why]));
    expect(why['api.cpuPerListEntry']).toBe('API CPU per list entry: a full list (29.2 us) costs no more than an empty one (29.2 us)');
    expect(why['costs.zrangePerEntry']).toBe('Redis time of a page read against its entries: the intercept is -2 us, not positive');
    expect(doc.infrastructure.api).toMatchObject({ cpuPerList: '29.2us', cpuPerRead: '185.1us' });
    expect(doc.infrastructure.api).not.toHaveProperty('cpuPerListEntry');
    expect(doc.infrastructure.costs).toMatchObject({ zrange: '15.99us' });
    expect(doc.infrastructure.costs).not.toHaveProperty('zrangePerEntry');
  });

  test("empty lists' flat noise (r² near 0) is taken as flat; a scatter as wide as the full lists' rise is refused", () => {
    const m = measurements();
    // medians wander by 4 us around 332 us: a quarter of the full fit's rise over 2-10 lists is 58 us
    const wobble = [0, 4e-6, -1e-6, 2e-6, 1e-6];
    m.api!.quietLists = line(332e-6, 0, [2, 3, 4, 6, 10], (i) => wobble[i]);
    expect(m.api!.quietLists.rSquared).toBeLessThan(0.9);
    const flat = calibrationDocument(provenance, m, []);
    expect(flat.calibration.refused.map((r) => r.key)).not.toContain('api.cpuPerListEntry');
    const slope = m.api!.quietLists.slope;
    expect(parseDuration(flat.infrastructure.api!.cpuPerList!)).toBeCloseTo(Math.max(0, slope), 9);
    expect(parseDuration(flat.infrastructure.api!.cpuPerListEntry!)).toBeCloseTo((29.2e-6 - Math.max(0, slope)) / 25, 9);
    // the same wander at 100 us: wider than the rise, and no line through it
    m.api!.quietLists = line(332e-6, 0, [2, 3, 4, 6, 10], (i) => wobble[i] * 25);
    const wide = calibrationDocument(provenance, m, []);
    const why = Object.fromEntries(wide.calibration.refused.map((r) => [r.key, r.why]));
    expect(why['api.cpuPerListEntry']).toMatch(/^API CPU against empty merged lists: the fit's r² is 0\.\d{3}, under 0\.9/);
    expect(wide.infrastructure.api).toMatchObject({ cpuPerList: '29.2us' });
  });

  test("a small per-post cost under a large base is taken when its line runs through every size's spread, though its r² is low", () => {
    // calibrate on a quiet machine, 2026-12-04 18:50: the API's CPU against hydrated posts
    const us = (x: number) => x * 1e-6;
    const pts = [
      { x: 5, median: us(374.4), p10: us(237.8), p90: us(434.7), n: 10 },
      { x: 20, median: us(373), p10: us(309.3), p90: us(502.4), n: 10 },
      { x: 50, median: us(500.1), p10: us(428.1), p90: us(734.5), n: 10 },
    ];
    const fit = fitLine(new Map(pts.map((p) => [p.x, [p.median]])));
    const measured: Fit = { ...fit, points: pts };
    expect(measured.rSquared).toBeCloseTo(0.887, 3);
    const m = measurements();
    m.api!.posts = measured;
    const doc = calibrationDocument(provenance, m, []);
    expect(doc.calibration.refused.map((r) => r.key)).toEqual([]);
    expect(parseDuration(doc.infrastructure.api!.cpuPerPost!)).toBeCloseTo(measured.slope, 9);
    // the same medians with the 50-post samples tight around theirs: the line (490.8 us there) leaves that spread
    m.api!.posts = { ...measured, points: pts.map((p) => (p.x === 50 ? { ...p, p10: us(495), p90: us(505) } : p)) };
    const tight = Object.fromEntries(calibrationDocument(provenance, m, []).calibration.refused.map((r) => [r.key, r.why]));
    expect(tight['api.cpuPerPost']).toBe("API CPU against hydrated posts: the fit's r² is 0.887, under 0.9, and the line leaves a size's own spread: the samples scatter too much for a straight line");
    // two sizes can always be joined: a line through them is never taken on its spreads alone
    m.api!.posts = { ...measured, rSquared: 0.5, points: pts.slice(0, 2) };
    expect(calibrationDocument(provenance, m, []).calibration.refused.map((r) => r.key)).toContain('api.cpuPerPost');
  });

  test('unsound numbers are refused, one line each, and left out', () => {
    const m = measurements();
    m.timelineWrites.fit = line(300e-6, -1e-6, [1, 10, 100]);
    m.expansion = line(365e-6, 1e-6, [10, 100, 1000, 10000], (i) => [400e-6, -3e-3, 4e-3, -2e-3][i]);
    m.api!.trivialCpu = spread(200e-6);
    m.postToLog = { ...m.postToLog!, n: 12 };
    m.postListed = { ...m.postListed!, n: 3 };
    const doc = calibrationDocument(provenance, m, [{ key: 'costs.rebuild', why: 'not measured here' }]);
    const why = Object.fromEntries(doc.calibration.refused.map((r) => [r.key, r.why]));
    expect(why.writesPerSecondPerWorker).toMatch(/^timeline writes against batch size: the fit's slope is -1 us per timeline, not positive/);
    expect(why['costs.batch']).toBe(why.writesPerSecondPerWorker);
    expect(why['costs.expand']).toMatch(/^follower pages against rows: the fit's r² is 0\.\d+, under 0\.9/);
    // a round trip not above its CPU leaves no hop: 0, not refused (the default would add 0.2 ms)
    expect(why['api.network']).toBeUndefined();
    expect(why.postToLog).toBe('post to event log: 12 samples, fewer than 50');
    expect(why['api.postListed']).toBe("a post's creation to its author's list: 3 samples, fewer than 50");
    expect(doc.infrastructure.api).not.toHaveProperty('postListed');
    expect(why['costs.rebuild']).toBe('not measured here');
    expect(doc.infrastructure.writesPerSecondPerWorker).toBeUndefined();
    expect(doc.infrastructure.costs).not.toHaveProperty('expand');
    expect(doc.infrastructure.costs).not.toHaveProperty('rebuild');
    expect(doc.infrastructure.postToLog).toBeUndefined();
    expect(doc.infrastructure.api).toHaveProperty('network', '0us');
    // the file says so and still loads (without them)
    const text = calibrationYaml(doc, 'feedlab calibrate');
    expect(text).toMatch(/^# Refused \(not written/m);
    expect(text).toMatch(/^# {3}costs\.expand: follower pages/m);
    const back = parseCalibration(text, 'cal.yaml');
    expect([...back.values.keys()]).not.toContain('costs.expand');
    expect(back.values.get('costs.rtt')).toBe(110.4e-6);
  });

  test('durations keep four significant digits in the unit that reads best', () => {
    expect(durationText(0.00011037)).toBe('110.4us');
    expect(durationText(0.0035912)).toBe('3.591ms');
    expect(durationText(2.5)).toBe('2.5s');
    expect(durationText(0)).toBe('0us');
    expect(parseDuration(durationText(2.797e-7))).toBeCloseTo(2.797e-7, 15);
  });
});

describe('the file', () => {
  test("writes each process's waits for a core while the running worker was measured, and loads them back", () => {
    const waits = {
      worker: { runSeconds: 2, waitSeconds: 0.5, slices: 20_000 },
      postgres: { runSeconds: 1, waitSeconds: 0.7, slices: 10_000 },
      redis: { runSeconds: 0, waitSeconds: 0, slices: 0 },
    };
    const text = calibrationYaml(calibrationDocument({ ...provenance, coreWaits: waits }, measurements(), []), 'feedlab calibrate');
    // a process never put on a core is left out
    expect((parse(text) as { calibration: { coreWaits: unknown } }).calibration.coreWaits).toEqual({
      worker: { perSlice: '25us', ofCpu: 0.25, slices: 20_000 },
      postgres: { perSlice: '70us', ofCpu: 0.7, slices: 10_000 },
    });
    expect(parseCalibration(text, 'cal.yaml').provenance.coreWaits).toEqual({ worker: { perSlice: 25e-6, ofCpu: 0.25 }, postgres: { perSlice: 70e-6, ofCpu: 0.7 } });
    // an older file has none
    expect(parseCalibration(calibrationYaml(calibrationDocument(provenance, measurements(), []), 'feedlab calibrate'), 'cal.yaml').provenance).not.toHaveProperty('coreWaits');
  });

  test("writes Redis's commandstats over the running worker's posts by size, and loads them back for compare", () => {
    const m = measurements();
    const redisCommands = { evalsha: { calls: 4000, usec: 86_000 }, zadd: { calls: 4000, usec: 21_200 } };
    m.workerBySize = { events: 200, writes: line(1.2e-3, 40e-6, [10, 30, 100, 300, 1000]), firstPage: line(900e-6, 1.5e-6, [10, 30, 100, 300, 1000]), redisSecondsPerWrite: 21.5e-6, redisCommands };
    const text = calibrationYaml(calibrationDocument(provenance, m, []), 'feedlab calibrate');
    expect((parse(text) as { calibration: { measurements: { workerBySize: { redisPerWrite: string; redisCommands: unknown } } } }).calibration.measurements.workerBySize).toMatchObject({ redisPerWrite: '21.5us', redisCommands });
    expect(parseCalibration(text, 'cal.yaml').provenance.workerRedisCommands).toEqual(redisCommands);
  });

  test('loads back to the same values, through the scenario schema, and a scenario takes them', () => {
    const doc = calibrationDocument(provenance, measurements(), []);
    const text = calibrationYaml(doc, 'feedlab calibrate --out cal.yaml');
    expect(text.split('\n')[0]).toBe('# feedlab calibration: the live stack\'s costs, written by `feedlab calibrate --out cal.yaml` (feedlab 0.1.0),');
    expect(text).toMatch(/CONTENDED: other processes took 31% of the machine/);
    const dir = mkdtempSync(join(tmpdir(), 'feedlab-calibration-file-'));
    const file = join(dir, 'cal.yaml');
    writeFileSync(file, text);
    const back = parseCalibration(text, file);
    // every key but the spread about the running worker's line, which these measurements do not have
    expect([...back.values.keys()].sort()).toEqual(CALIBRATED_KEYS.filter((k) => k !== 'costs.eventWritesSpread').sort());
    const b = doc.infrastructure;
    // every value exactly as the block writes it
    for (const [k, v] of Object.entries(b.costs!)) {
      if (typeof v === 'string') expect(back.values.get(`costs.${k}` as never), k).toBe(parseDuration(v));
      else if (k.endsWith('ByIdle')) expect(back.values.get(`costs.${k}` as never), k).toEqual(Object.entries(v).map(([gap, value]) => ({ gap: parseDuration(gap), value: parseDuration(value) })));
      else expect((back.values.get(`costs.${k}` as never) as { points: { value: number }[] }).points.map((p) => p.value), k).toEqual(Object.values(v).map((x) => parseDuration(x)));
    }
    expect(back.values.get('writesPerSecondPerWorker')).toBe(b.writesPerSecondPerWorker);
    for (const [k, v] of Object.entries(b.api!)) {
      if (k === 'backgroundCpu') expect(back.values.get('api.backgroundCpu'), k).toBe(v);
      else if (k !== 'spread' && k !== 'postListed') expect(back.values.get(`api.${k}` as never), k).toBe(parseDuration(v as string));
    }
    expect((back.values.get('api.spread') as { points: { value: number }[] }).points.map((p) => p.value)).toEqual(Object.values(b.api!.spread!));
    expect((back.values.get('postToLog') as { points: { value: number }[] }).points.map((p) => p.value)).toEqual(Object.values(b.postToLog!).map((v) => parseDuration(v)));
    expect((back.values.get('api.postListed') as { points: { value: number }[] }).points.map((p) => p.value)).toEqual(Object.values(b.api!.postListed!).map((v) => parseDuration(v)));
    // and within the written precision of what was measured
    expect(Math.abs((back.values.get('costs.rtt') as number) / 110.37e-6 - 1)).toBeLessThan(5e-4);
    expect(back.provenance).toEqual({ file, machine: 'lab, 2 x Test CPU', date: provenance.date, contended: true });

    writeFileSync(join(dir, 's.yaml'), 'name: uses-it\ncalibration: cal.yaml\n');
    const sc = loadScenario(join(dir, 's.yaml'));
    expect(sc.infrastructure.costs.rebuild).toBe(0.00359);
    expect(sc.infrastructure.costs.batch).toBe(parseDuration(b.costs!.batch!));
    expect(sc.infrastructure.api!.cpuPerRead).toBe(parseDuration(b.api!.cpuPerRead!));
    expect(sc.calibration?.contended).toBe(true);
  });
});
