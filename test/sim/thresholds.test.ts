// Thresholds checked against a real small simulation: every figure read from the result itself,
// the verdict and exit code replay gets from judgeResult, the backlog's drain time, determinism.
import { describe, expect, test } from 'vitest';
import { backlogDrainSeconds, stringifyResult, type RunResult } from '../../sim/result.js';
import { policyFor, prepare, runPolicy, scenarioGraph } from '../../sim/run-scenario.js';
import { parseScenario } from '../../sim/scenario/load.js';
import type { Scenario } from '../../sim/scenario/types.js';
import { exitCodeFor, judgeResult, verdictExit, type SloCheck, type SloVerdict } from '../../sim/slo.js';
import { sweepRow } from '../../sim/sweep.js';

// One fan-out worker and pushed celebrities: a backlog that lasts minutes; a cold-start storm: cold reads.
const BASE = `name: thresholds
seed: 5
duration: 20m
population: 1000000
graph:
  generate: { users: 10000, avgFollows: 30, alpha: 2.1, celebrities: [{ count: 2, followers: 0.3, name: star }] }
activity:
  postsPerUserPerDay: { dist: lognormal, mean: 3, sigma: 1 }
  sessionsPerUserPerDay: 5
  dormantShare: 0.5
  diurnal: none
events:
  - at: 5m
    celebrityBurst: { accounts: 2, window: 30s }
  - at: 10m
    coldStartStorm: { share: 0.3, window: 2m }
infrastructure: { fanoutWorkers: 1, writesPerSecondPerWorker: 2000, redisShards: 4 }
policy: { kind: push }
`;
const SLO = 'slo:\n  fanoutLagP99: 5s\n  readP99: 100ms\n  redisMemory: 1TB\n';

function run(text: string): { sc: Scenario; result: RunResult } {
  const sc = parseScenario(text, 'thresholds.yaml');
  const result = runPolicy(prepare(sc, scenarioGraph(sc)), policyFor(sc));
  return { sc, result };
}

/** The slo section with these [figure, expression] thresholds, grouped by figure. */
function thresholdsYaml(list: ReadonlyArray<readonly [string, string, ...unknown[]]>): string {
  const figures = [...new Set(list.map(([fig]) => fig))];
  const lines = figures.map((fig) => `    ${fig}: [${list.filter(([g]) => g === fig).map(([, e]) => JSON.stringify(e)).join(', ')}]`);
  return `${SLO}  thresholds:\n${lines.join('\n')}\n`;
}

const base = run(BASE + SLO);
const s0 = base.result.summary;

// a value written so that it reads back as this number (6 significant digits, as the JSON keeps)
const sig = (x: number) => Number(x.toPrecision(6));
const twice = (x: number) => sig(Math.max(x, 1e-6) * 2);
const half = (x: number) => sig(x / 2);

/** The figure each threshold must read, straight from the summary (p99.9 is summary's p999). */
const FIGURE: Record<string, () => number> = {
  'fanoutLag p99.9': () => s0.fanout.followerLagSeconds.p999,
  'fanoutLag p50': () => s0.fanout.followerLagSeconds.p50,
  'fanoutPostLag max': () => s0.fanout.lagSeconds.max,
  'fanoutPostLag mean': () => s0.fanout.lagSeconds.mean,
  'read p90': () => s0.reads.latencyMs.p90,
  'read p99': () => s0.reads.latencyMs.p99,
  coldReadShare: () => s0.reads.coldShare,
  backlogDrain: () => s0.fanout.backlog.drainSeconds,
  peakWrites: () => s0.fanout.writesPerSecond.peak,
  redisMemory: () => s0.redis.memoryBytes.peak,
  servers: () => sweepRow(base.result, base.sc.infrastructure.writesPerSecondPerWorker).servers.total,
};

test('the base run has what the thresholds below need: lag, cold reads, a backlog over minutes', () => {
  expect(s0.fanout.followerLagSeconds.p999).toBeGreaterThan(5);
  expect(s0.reads.coldShare).toBeGreaterThan(0);
  expect(s0.fanout.backlog.drainSeconds).toBeGreaterThanOrEqual(120);
});

describe('checked against the run', () => {
  const f = (k: string) => FIGURE[k]();
  // [yaml figure, expression, the figure key above, expected pass]
  const wanted: Array<[string, string, string, boolean]> = [
    ['fanoutLag', `p99.9 < ${twice(f('fanoutLag p99.9'))}s`, 'fanoutLag p99.9', true],
    ['fanoutLag', `p99.9 < ${half(f('fanoutLag p99.9'))}s`, 'fanoutLag p99.9', false],
    ['fanoutLag', `p50 >= ${half(f('fanoutLag p50'))}s`, 'fanoutLag p50', true],
    ['fanoutPostLag', `max <= ${half(f('fanoutPostLag max'))}s`, 'fanoutPostLag max', false],
    ['fanoutPostLag', `mean > ${half(f('fanoutPostLag mean'))}s`, 'fanoutPostLag mean', true],
    ['read', `p90 < ${twice(f('read p90'))}ms`, 'read p90', true],
    ['read', `p99 > ${twice(f('read p99'))}ms`, 'read p99', false],
    ['coldReadShare', `< ${twice(f('coldReadShare') * 100)}%`, 'coldReadShare', true],
    ['coldReadShare', `< ${half(f('coldReadShare'))}`, 'coldReadShare', false],
    // the drain time is whole minutes: the boundary itself, both ways
    ['backlogDrain', `<= ${f('backlogDrain')}s`, 'backlogDrain', true],
    ['backlogDrain', `< ${f('backlogDrain') / 60}m`, 'backlogDrain', false],
    ['peakWrites', `< ${twice(f('peakWrites'))}`, 'peakWrites', true],
    ['peakWrites', `< ${half(f('peakWrites'))}`, 'peakWrites', false],
    ['redisMemory', `< ${Math.round(f('redisMemory') * 2)}B`, 'redisMemory', true],
    ['redisMemory', `>= ${Math.round(f('redisMemory') * 2)}B`, 'redisMemory', false],
    ['servers', `< ${twice(f('servers'))}`, 'servers', true],
    ['servers', `< ${half(f('servers'))}`, 'servers', false],
  ];
  const withThresholds = run(BASE + thresholdsYaml(wanted));
  const r = withThresholds.result;
  const checks = r.summary.slo.checks.filter((c) => c.threshold);

  test('the simulation is the one without thresholds: they only add checks', () => {
    const { slo: _a, ...rest1 } = r.summary;
    const { slo: _b, ...rest0 } = s0;
    expect(stringifyResult(rest1)).toBe(stringifyResult(rest0));
    // the objectives come first, unchanged
    expect(r.summary.slo.checks.slice(0, 3)).toEqual(s0.slo.checks);
  });

  test('one check per threshold, each on its figure of the result, passing as the comparison says', () => {
    expect(checks).toHaveLength(wanted.length);
    for (const [figure, expression, key, pass] of wanted) {
      const c = checks.find((x) => x.threshold!.figure === figure && x.threshold!.expression === expression);
      expect(c, `${figure} ${expression}`).toBeDefined();
      expect(c!.actual, `${figure} ${expression}`).toBe(FIGURE[key]());
      expect(c!.pass, `${figure} ${expression}: ${c!.actual} vs ${c!.target}`).toBe(pass);
      expect(c!.id).toBe(`${figure} ${expression.replace(/\s+/g, ' ')}`);
    }
    expect(r.summary.slo.pass).toBe(false);
  });

  test('targets and units: read in ms, lags and the drain in s, memory in bytes, the share of 1', () => {
    const by = (id: string) => checks.find((c) => c.id.startsWith(id))!;
    expect(by('read p90')).toMatchObject({ unit: 'ms', target: twice(f('read p90')), description: 'home-feed read p90' });
    expect(by('fanoutLag p99.9')).toMatchObject({ unit: 's', target: twice(f('fanoutLag p99.9')), description: 'fan-out lag p99.9, per follower' });
    expect(by('backlogDrain <=')).toMatchObject({ unit: 's', target: f('backlogDrain') });
    expect(by('redisMemory <')).toMatchObject({ unit: 'bytes', target: Math.round(f('redisMemory') * 2) });
    expect(by('coldReadShare <')).toMatchObject({ unit: 'share' });
    expect(by('coldReadShare <').target).toBeCloseTo(twice(f('coldReadShare') * 100) / 100, 12);
    expect(by('peakWrites <')).toMatchObject({ unit: 'writes/s' });
    expect(by('servers <')).toMatchObject({ unit: 'servers' });
  });

  test('judgeResult on the document (what replay calls) gives the same verdict, and the exit code', () => {
    const j = judgeResult(r, withThresholds.sc, {});
    expect(j.slo).toEqual(r.summary.slo);
    expect(j.exitCode).toBe(1);
    const failedIds = checks.filter((c) => !c.pass).map((c) => c.id);
    expect(j.message).toBe(`thresholds not met: ${failedIds.join(', ')} (exit 1; --no-thresholds leaves thresholds out of the exit code)`);
    // --no-thresholds: checked, not counted; --check counts the objectives too
    expect(judgeResult(r, withThresholds.sc, { thresholds: false })).toMatchObject({ exitCode: 0, message: null });
    const objectivesFailed = r.summary.slo.checks.filter((c) => !c.threshold && !c.pass).map((c) => c.id);
    expect(objectivesFailed).toContain('fanoutLagP99');
    expect(judgeResult(r, withThresholds.sc, { thresholds: false, check: true })).toMatchObject({ exitCode: 1, message: `SLO not met: ${objectivesFailed.join(', ')} (exit 1)` });
    expect(judgeResult(r, withThresholds.sc, { check: true }).message).toBe(`SLO not met: ${objectivesFailed.join(', ')}; ${j.message}`);
    // a summary.slo already in the document is not trusted
    const tampered = { ...r, summary: { ...r.summary, slo: { pass: true, checks: [] } } };
    expect(judgeResult(tampered, withThresholds.sc).slo).toEqual(r.summary.slo);
  });

  test('thresholds that all pass exit 0; the same scenario and seed give byte-identical JSON', () => {
    const text = thresholdsYaml(wanted.filter(([, , , pass]) => pass));
    const a = run(BASE + text);
    const b = run(BASE + text);
    expect(stringifyResult(b.result)).toBe(stringifyResult(a.result));
    const thresholdChecks = a.result.summary.slo.checks.filter((c) => c.threshold);
    expect(thresholdChecks).toHaveLength(wanted.filter(([, , , pass]) => pass).length);
    expect(thresholdChecks.every((c) => c.pass)).toBe(true);
    expect(judgeResult(a.result, a.sc).exitCode).toBe(0);
  });

  test('a figure the document lacks reads NaN and fails (null in the JSON)', () => {
    const old = { ...r, summary: { ...r.summary, fanout: { ...r.summary.fanout, backlog: { peakWrites: 1, endWrites: 0, drainedAtSeconds: 0 } } } } as unknown as RunResult;
    const drain = judgeResult(old, withThresholds.sc).slo.checks.filter((c) => c.threshold?.figure === 'backlogDrain');
    expect(drain.map((c) => [Number.isNaN(c.actual), c.pass])).toEqual([
      [true, false],
      [true, false],
    ]);
    expect(JSON.parse(stringifyResult(drain[0])).actual).toBeNull();
  });
});

test('a scenario without thresholds gets exactly the three objectives, with no threshold key', () => {
  expect(s0.slo.checks.map((c) => c.id)).toEqual(['fanoutLagP99', 'readP99', 'redisMemory']);
  expect(stringifyResult(s0.slo)).not.toMatch(/threshold/);
  // and its exit code is 0 unless --check asks for the objectives
  expect(judgeResult(base.result, base.sc)).toMatchObject({ exitCode: 0, message: null });
  expect(judgeResult(base.result, base.sc, { check: true }).exitCode).toBe(s0.slo.pass ? 0 : 1);
});

describe('the backlog drain time', () => {
  test('the run: the longest stretch of minute samples above one second of the fleet\'s work', () => {
    const floor = base.sc.infrastructure.fanoutWorkers * base.sc.infrastructure.writesPerSecondPerWorker;
    const b = s0.fanout.backlog;
    const series = base.result.series.backlogWrites;
    expect(b.drainSeconds).toBe(backlogDrainSeconds(series, 60, base.result.scenario.durationSeconds, b.drainedAtSeconds, floor));
    // one burst, one stretch: its minutes above the floor, counted whole
    const above = series.map((x) => x > floor);
    const first = above.indexOf(true);
    const last = above.lastIndexOf(true);
    expect(above.slice(first, last + 1).every(Boolean)).toBe(true);
    expect(b.drainSeconds).toBe((last - first + 1) * 60);
    // the burst at 5 min: the stretch starts at the sample before it
    expect(first * 60).toBe(300);
  });

  test('synthetic series: the longest stretch wins, the floor is exclusive, an open stretch runs to the drain', () => {
    expect(backlogDrainSeconds([], 60, 0, 0, 10)).toBe(0);
    expect(backlogDrainSeconds([0, 5, 10, 0], 60, 240, 200, 10)).toBe(0);
    expect(backlogDrainSeconds([0, 11, 0, 11, 11, 11, 0], 60, 420, 300, 10)).toBe(180);
    expect(backlogDrainSeconds([11, 11, 0], 60, 180, 100, 10)).toBe(120);
    // still above the floor at the end (sample 3 at 200 s, a partial last minute): until the last write finishes
    expect(backlogDrainSeconds([0, 0, 11, 50], 60, 200, 950, 10)).toBe(950 - 120);
    // above at the end but drainedAt earlier than the end (cannot happen, but the end is the floor of it)
    expect(backlogDrainSeconds([0, 11], 60, 120, 100, 10)).toBe(60);
  });
});

describe('exit codes across a sweep\'s verdicts', () => {
  const check = (pass: boolean, threshold: boolean): SloCheck => ({
    id: threshold ? 't' : 'o',
    description: '',
    target: 1,
    actual: 1,
    unit: 's',
    pass,
    ...(threshold ? { threshold: { figure: 'read', statistic: 'p99', op: '<', expression: 'p99 < 1s' } as const } : {}),
  });
  const verdict = (...checks: SloCheck[]): SloVerdict => ({ pass: checks.every((c) => c.pass), checks });
  const failsThreshold = verdict(check(true, false), check(false, true));
  const failsObjective = verdict(check(false, false), check(true, true));
  const passes = verdict(check(true, false), check(true, true));

  test('1 only when every policy fails what counts', () => {
    expect(exitCodeFor([failsThreshold, failsThreshold], {})).toBe(1);
    expect(exitCodeFor([failsThreshold, passes], {})).toBe(0);
    // by default the objectives do not count: a policy failing only one still passes
    expect(exitCodeFor([failsThreshold, failsObjective], {})).toBe(0);
    expect(exitCodeFor([failsThreshold, failsObjective], { check: true })).toBe(1);
    expect(exitCodeFor([failsThreshold, failsThreshold], { thresholds: false })).toBe(0);
    expect(exitCodeFor([failsThreshold, failsObjective], { check: true, thresholds: false })).toBe(0);
    expect(exitCodeFor([], { check: true })).toBe(0);
  });

  test('the line says what no policy met', () => {
    expect(verdictExit([failsThreshold, failsThreshold], {}).message).toBe('no policy meets every threshold (exit 1; --no-thresholds leaves thresholds out of the exit code)');
    expect(verdictExit([failsThreshold, failsObjective], { check: true }).message).toBe('no policy meets every SLO and threshold (exit 1; --no-thresholds leaves thresholds out of the exit code)');
    expect(verdictExit([failsObjective, failsObjective], { check: true, thresholds: false }).message).toBe('no policy meets every SLO (exit 1)');
  });
});
