import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { InputError } from '../../cli/errors.js';
import { loadScenario, parseScenario } from '../../sim/scenario/load.js';
import type { Scenario } from '../../sim/scenario/types.js';

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = join(here, '../fixtures/scenarios');
const sharedFormat = join(here, '../../../shared/scenario-format.yaml');

/** The defaults of the model's stages beside the worker pool: the worker's statements and pages, the hop, the API tier. */
const STAGE_COSTS = { expandPerFollower: 2e-6, eventStatements: { points: [{ p: 0, value: 0.002 }, { p: 1, value: 0.002 }] }, eventStatementsByIdle: null, eventFirstPageByIdle: null, eventWritesByIdle: null, eventWritesSpread: { points: [{ p: 0, value: 1 }, { p: 1, value: 1 }] }, eventStatementsGap: 0.1, pickup: { points: [{ p: 0, value: 0.0005 }, { p: 1, value: 0.0005 }] }, batch: 0, zrangePerEntry: 0 };
const STAGES = {
  worker: { splitPosts: true, pipelines: 2, followerPage: 10_000, eventConcurrency: 8 },
  postToLog: { points: [{ p: 0, value: 0.001 }, { p: 0.5, value: 0.006 }, { p: 0.9, value: 0.012 }, { p: 0.99, value: 0.035 }, { p: 1, value: 0.1 }] },
  api: { instances: null, coresPerInstance: 1, cpuPerRead: 0.0003, cpuPerList: 0.00002, cpuPerListEntry: 0, cpuPerPost: 0.00001, cpuPerWrite: 0.0005, postListed: { points: [{ p: 0, value: 0.001 }, { p: 0.5, value: 0.003 }, { p: 0.9, value: 0.006 }, { p: 0.99, value: 0.011 }, { p: 1, value: 0.033 }] }, network: 0.0002, idleOverhead: 0, idleCpu: 0, backgroundCpu: 0, spread: { points: [{ p: 0, value: 1 }, { p: 1, value: 1 }] } },
  cores: null,
};

function failure(fn: () => unknown): InputError {
  try {
    fn();
  } catch (err) {
    if (err instanceof InputError) return err;
    throw err;
  }
  throw new Error('expected an InputError');
}

/** Parses `text` as s.yaml and returns the one line the CLI would print after "feedlab: ". */
function errorLine(text: string): string {
  return failure(() => parseScenario(text, 's.yaml')).line();
}

function expectFormatExample(s: Scenario): void {
  expect(s.name).toBe('celebrity-burst');
  expect(s.description).toBe('World Cup final - ten celebrities post within one minute');
  expect(s.seed).toBe(42);
  expect(s.duration).toBe(7200);
  expect(s.population).toBe(200_000_000);
  expect(s.graph).toEqual({
    kind: 'generate',
    users: 1_000_000,
    avgFollows: 200,
    alpha: 2.1,
    maxFollows: 5000,
    followsSigma: 1,
    celebrities: [{ count: 10, followers: 0.3 }],
  });
  expect(s.activity).toEqual({
    postsPerUserPerDay: { dist: 'lognormal', mean: 0.2, sigma: 1.5 },
    sessionsPerUserPerDay: 5,
    pagesPerSession: {
      buckets: [
        { min: 1, max: 1, p: 0.7 },
        { min: 2, max: 5, p: 0.25 },
        { min: 6, max: 40, p: 0.05 },
      ],
    },
    pageSize: 20,
    diurnal: { peakFactor: 3, peakHourUtc: 20, startHourUtc: 0 },
    dormantShare: 0.6,
    dormantAway: [14 * 86400, 90 * 86400],
  });
  expect(s.events).toEqual([
    { at: 1800, kind: 'celebrityBurst', accounts: 10, window: 60, postsPerAccount: 1 },
    { at: 3600, kind: 'breakingNews', multiplier: 500, window: 300 },
    { at: 5400, kind: 'coldStartStorm', share: 0.05, window: 600 },
    { at: 6000, kind: 'cacheLoss', shards: 1 },
  ]);
  expect(s.infrastructure).toEqual({
    fanoutWorkers: 50,
    writesPerSecondPerWorker: 5000,
    batchSize: 1000,
    redisShards: 16,
    redisProcesses: null,
    partitions: 64,
    postgresConnections: 100,
    costs: { rtt: 0.0003, zadd: 2e-6, zrange: 15e-6, mgetPerKey: 2e-6, rebuild: 0.04, expand: 0.001, ...STAGE_COSTS },
    ...STAGES,
    largePostClass: null,
  });
  expect(s.policy).toEqual({
    kind: 'threshold',
    threshold: 25000,
    skipDormant: true,
    timelineCap: 800,
    leaseDays: 7,
    dormantDays: 14,
    celebrityListLength: 100,
    readerCap: 2000,
    backlogBound: 1e6,
    minThreshold: 1000,
  });
  expect(s.slo).toEqual({
    fanoutLagP99: 5,
    readP99: 0.1,
    redisMemory: 2e12,
    // in the figures' order (THRESHOLD_FIGURES), each list in its written order
    thresholds: [
      { figure: 'fanoutLag', statistic: 'p50', op: '<', value: 0.5, valueText: '500ms', expression: 'p50 < 500ms' },
      { figure: 'fanoutLag', statistic: 'p99.9', op: '<', value: 30, valueText: '30s', expression: 'p99.9 < 30s' },
      { figure: 'read', statistic: 'p90', op: '<', value: 0.02, valueText: '20ms', expression: 'p90 < 20ms' },
      { figure: 'read', statistic: 'max', op: '<', value: 1, valueText: '1s', expression: 'max < 1s' },
      { figure: 'coldReadShare', statistic: null, op: '<', value: 0.01, valueText: '1%', expression: '< 1%' },
      { figure: 'backlogDrain', statistic: null, op: '<', value: 600, valueText: '10m', expression: '< 10m' },
    ],
  });
  expect(s.replay).toEqual({ users: 20000, timeScale: 30, workers: 2, warm: true, policies: null });
  expect(s.sweep.policies).toEqual(['push', 'pull', 'threshold:10000', 'threshold:25000', 'threshold:50000', 'rate', 'reader-cap:2000']);
}

describe('the annotated format example', () => {
  test('loads with every value resolved (fixture copy)', () => {
    const path = join(fixtures, 'format-example.yaml');
    const s = loadScenario(path);
    expect(s.source).toBe(path);
    expectFormatExample(s);
  });

  test.skipIf(!existsSync(sharedFormat))('loads from ../shared, as users see it', () => {
    expectFormatExample(loadScenario(sharedFormat));
  });
});

test('a minimal scenario gets every default', () => {
  const s = parseScenario('name: x\n', 'min.yaml');
  expect(s).toEqual({
    source: 'min.yaml',
    name: 'x',
    description: '',
    seed: 42,
    duration: 86400,
    population: null,
    graph: { kind: 'generate', users: 100000, avgFollows: 200, alpha: 2.1, maxFollows: 5000, followsSigma: 1, celebrities: [] },
    activity: {
      postsPerUserPerDay: { dist: 'constant', mean: 2 },
      sessionsPerUserPerDay: 5,
      pagesPerSession: {
        buckets: [
          { min: 1, max: 1, p: 0.7 },
          { min: 2, max: 5, p: 0.25 },
          { min: 6, max: 40, p: 0.05 },
        ],
      },
      pageSize: 20,
      diurnal: { peakFactor: 3, peakHourUtc: 20, startHourUtc: 0 },
      dormantShare: 0.6,
      dormantAway: [14 * 86400, 90 * 86400],
    },
    events: [],
    infrastructure: {
      fanoutWorkers: 50,
      writesPerSecondPerWorker: 5000,
      batchSize: 1000,
      redisShards: 16,
      redisProcesses: null,
      partitions: 64,
      postgresConnections: 100,
      costs: { rtt: 0.0003, zadd: 2e-6, zrange: 15e-6, mgetPerKey: 2e-6, rebuild: 0.04, expand: 0.001, ...STAGE_COSTS },
    ...STAGES,
      largePostClass: null,
    },
    policy: {
      kind: 'threshold',
      threshold: 25000,
      skipDormant: true,
      timelineCap: 800,
      leaseDays: 7,
      dormantDays: 14,
      celebrityListLength: 100,
      readerCap: 2000,
      backlogBound: 1e6,
      minThreshold: 1000,
    },
    slo: { fanoutLagP99: 5, readP99: 0.1, redisMemory: Infinity },
    sweep: { policies: ['push', 'pull', 'threshold:10000', 'threshold:25000', 'threshold:50000'] },
  } satisfies Scenario);
  expect(loadScenario(join(fixtures, 'minimal.yaml')).name).toBe('minimal');
});

describe('accepted forms', () => {
  const parse = (text: string) => parseScenario(`name: x\n${text}`, 's.yaml');

  test('graph.file is resolved against the scenario file directory', () => {
    const s = loadScenario(join(fixtures, 'graph-file.yaml'));
    expect(s.graph).toEqual({ kind: 'file', path: join(fixtures, 'graphs/tiny.fgraph') });
    expect(parseScenario('name: x\ngraph: { file: g.fgraph }', 'dir/s.yaml').graph).toEqual({ kind: 'file', path: 'dir/g.fgraph' });
    expect(parseScenario('name: x\ngraph: { file: /abs/g.fgraph }', 'dir/s.yaml').graph).toEqual({ kind: 'file', path: '/abs/g.fgraph' });
  });

  test('events come out sorted by time, ties in file order, aliases resolved', () => {
    const s = loadScenario(join(fixtures, 'anchors.yaml'));
    expect(s.events).toEqual([
      { at: 3600, kind: 'coldStartStorm', share: 0.1, window: 900 },
      { at: 3600, kind: 'cacheLoss', shards: 2 },
      { at: 7200, kind: 'breakingNews', multiplier: 10, window: 900 },
    ]);
  });

  test('an event kind written with no body takes its defaults', () => {
    expect(parse('events:\n  - at: 1h\n    celebrityBurst:\n').events).toEqual([
      { at: 3600, kind: 'celebrityBurst', accounts: 10, window: 60, postsPerAccount: 1 },
    ]);
  });

  test('counts: exponent notation, quoted, underscores', () => {
    expect(parse('population: 2e8').population).toBe(2e8);
    expect(parse('population: "2e8"').population).toBe(2e8);
    expect(parse('population: 200_000_000').population).toBe(2e8);
    expect(parse('policy: { backlogBound: 5e5 }').policy.backlogBound).toBe(5e5);
  });

  test('days: a plain number of days or a duration', () => {
    expect(parse('policy: { leaseDays: 36h, dormantDays: 30 }').policy).toMatchObject({ leaseDays: 1.5, dormantDays: 30 });
    expect(parse('policy: { dormantDays: 7d }').policy.dormantDays).toBe(7);
  });

  test('dormantAway defaults from policy.dormantDays, or is given', () => {
    expect(parse('policy: { dormantDays: 30 }').activity.dormantAway).toEqual([30 * 86400, 90 * 86400]);
    expect(parse('policy: { dormantDays: 120 }').activity.dormantAway).toEqual([120 * 86400, 120 * 86400]);
    expect(parse('activity: { dormantAway: [20d, 365d] }').activity.dormantAway).toEqual([20 * 86400, 365 * 86400]);
  });

  test('distributions: plain number, each dist with its shape', () => {
    expect(parse('activity: { postsPerUserPerDay: 0.5 }').activity.postsPerUserPerDay).toEqual({ dist: 'constant', mean: 0.5 });
    expect(parse('activity: { postsPerUserPerDay: { dist: lognormal, mean: 1 } }').activity.postsPerUserPerDay).toEqual({
      dist: 'lognormal',
      mean: 1,
      sigma: 1,
    });
    expect(parse('activity: { postsPerUserPerDay: { dist: exponential, mean: 3 } }').activity.postsPerUserPerDay).toEqual({
      dist: 'exponential',
      mean: 3,
    });
    expect(parse('activity: { postsPerUserPerDay: { dist: pareto, mean: 2, alpha: 1.8 } }').activity.postsPerUserPerDay).toEqual({
      dist: 'pareto',
      mean: 2,
      alpha: 1.8,
    });
  });

  test('pagesPerSession: a plain number, or buckets in any order', () => {
    expect(parse('activity: { pagesPerSession: 3 }').activity.pagesPerSession).toEqual({ buckets: [{ min: 3, max: 3, p: 1 }] });
    expect(parse('activity: { pagesPerSession: { "3-9": 0.1, 1: 0.6, 2: 0.3 } }').activity.pagesPerSession).toEqual({
      buckets: [
        { min: 1, max: 1, p: 0.6 },
        { min: 2, max: 2, p: 0.3 },
        { min: 3, max: 9, p: 0.1 },
      ],
    });
    // Within 1e-6 of 1 is 1: thirds written to six places are fine.
    expect(parse('activity: { pagesPerSession: { 1: 0.333333, 2: 0.333333, 3: 0.333334 } }').activity.pagesPerSession.buckets).toHaveLength(3);
  });

  test('none: diurnal, largePostClass, redisMemory, population', () => {
    const s = parse('population: none\nactivity: { diurnal: none }\ninfrastructure: { largePostClass: none }\nslo: { redisMemory: none }');
    expect(s.population).toBeNull();
    expect(s.activity.diurnal).toBeNull();
    expect(s.infrastructure.largePostClass).toBeNull();
    expect(s.slo.redisMemory).toBe(Infinity);
    const t = parse('activity: { diurnal: { peakFactor: 2 } }\ninfrastructure: { largePostClass: { followers: 1e6, workers: 10 } }');
    expect(t.activity.diurnal).toEqual({ peakFactor: 2, peakHourUtc: 20, startHourUtc: 0 });
    expect(t.infrastructure.largePostClass).toEqual({ followers: 1e6, workers: 10 });
  });

  test('celebrities: shares, absolute counts, names', () => {
    const s = parse('population: 2e8\ngraph:\n  generate:\n    celebrities:\n      - { count: 3, followers: 5e7, name: star }\n      - { count: 10, followers: 0.1 }');
    expect(s.graph.kind === 'generate' && s.graph.celebrities).toEqual([
      { count: 3, followers: 5e7, name: 'star' },
      { count: 10, followers: 0.1 },
    ]);
  });

  test('names that YAML reads as numbers stay text as written', () => {
    expect(parseScenario('name: 2024.10', 's.yaml').name).toBe('2024.10');
  });
});

describe('refused input: one line, file:line:col, key path, what is valid', () => {
  const cases: [string, string, string][] = [
    [
      'unknown key with a suggestion',
      'name: x\ninfrastructure:\n  fanoutWorker: 40',
      's.yaml:3:3: infrastructure.fanoutWorker: unknown key; did you mean "fanoutWorkers"?',
    ],
    ['unknown key, case only', 'Name: x', 's.yaml:1:1: Name: unknown key; did you mean "name"?'],
    [
      'unknown key that belongs elsewhere',
      'name: x\ninfrastructure:\n  threshold: 3',
      's.yaml:3:3: infrastructure.threshold: unknown key here; it belongs under policy (policy.threshold)',
    ],
    [
      'unknown key with nothing near lists the valid keys',
      'name: x\nslo: { memory: 2TB }',
      's.yaml:2:8: slo.memory: unknown key (valid keys: fanoutLagP99, readP99, redisMemory, thresholds)',
    ],
    ['missing name', 'seed: 1', 's.yaml:1:1: name: required key is missing (the scenario\'s name, e.g. name: celebrity-burst)'],
    ['empty file', '', 's.yaml:1:1: name: required key is missing (the scenario\'s name, e.g. name: celebrity-burst)'],
    [
      'not a map',
      '- a\n- b',
      's.yaml:1:1: scenario: expected a map with keys name, description, seed, duration, population, graph, activity, events, calibration, infrastructure, policy, slo, plan, replay, sweep, got a list',
    ],
    [
      'wrong type: duration',
      'name: x\nslo:\n  fanoutLagP99: true',
      's.yaml:3:17: slo.fanoutLagP99: expected a duration like 500ms, 5s, 2h, got true',
    ],
    [
      'wrong type: duration that is no duration',
      'name: x\nduration: soon',
      's.yaml:2:11: duration: expected a duration like 500ms, 5s, 2h, got "soon" (valid units: us, ms, s, m, min, h, d)',
    ],
    ['wrong type: boolean', 'name: x\npolicy: { skipDormant: yes }', 's.yaml:2:24: policy.skipDormant: expected true or false, got "yes"'],
    [
      'wrong type: a map where a number goes',
      'name: x\ninfrastructure: { fanoutWorkers: { n: 3 } }',
      's.yaml:2:34: infrastructure.fanoutWorkers: expected a whole number like 1000 or 2e8, got a map',
    ],
    [
      'wrong type: either form',
      'name: x\nactivity: { postsPerUserPerDay: lognormal }',
      's.yaml:2:33: activity.postsPerUserPerDay: expected a number, or a map with keys dist, mean, sigma, alpha, got "lognormal"',
    ],
    [
      'wrong type: none where none is not allowed',
      'name: x\nduration: none',
      's.yaml:2:11: duration: expected a duration like 500ms, 5s, 2h, got "none" (valid units: us, ms, s, m, min, h, d)',
    ],
    ['not a whole number', 'name: x\ninfrastructure: { redisShards: 2.5 }', 's.yaml:2:32: infrastructure.redisShards: expected a whole number, got 2.5'],
    ['whole number too large', 'name: x\npopulation: 1e300', 's.yaml:2:13: population: 1e300 is too large (at most 9007199254740991)'],
    [
      'more sampled users than 32-bit ids',
      'name: x\ngraph: { generate: { users: 5e9 } }',
      's.yaml:2:29: graph.generate.users: 5e9 is out of range (valid: 2 to 4294967295)',
    ],
    ['out of range: alpha', 'name: x\ngraph: { generate: { alpha: 1.2 } }', 's.yaml:2:29: graph.generate.alpha: 1.2 is out of range (valid: 1.5 to 4)'],
    ['out of range: exclusive bound', 'name: x\nduration: 0s', 's.yaml:2:11: duration: "0s" is out of range (valid: > 0 s and <= 366 d)'],
    [
      'out of range: hour of day',
      'name: x\nactivity: { diurnal: { peakHourUtc: 24 } }',
      's.yaml:2:37: activity.diurnal.peakHourUtc: 24 is out of range (valid: >= 0 and < 24)',
    ],
    ['out of range: pageSize', 'name: x\nactivity: { pageSize: 500 }', 's.yaml:2:23: activity.pageSize: 500 is out of range (valid: 1 to 200)'],
    ['out of range: share', 'name: x\nactivity: { dormantShare: 1.5 }', 's.yaml:2:27: activity.dormantShare: 1.5 is out of range (valid: 0 to 1)'],
    ['negative count', 'name: x\npolicy: { threshold: -5 }', 's.yaml:2:22: policy.threshold: -5 is negative (expected a count, >= 0)'],
    ['infinite', 'name: x\ngraph: { generate: { avgFollows: .inf } }', 's.yaml:2:34: graph.generate.avgFollows: Infinity is not a finite number'],
    ['NaN', 'name: x\nactivity: { sessionsPerUserPerDay: .nan }', 's.yaml:2:36: activity.sessionsPerUserPerDay: NaN is not a finite number'],
    [
      'bad duration unit',
      'name: x\ninfrastructure:\n  costs: { rtt: 0.3xs }',
      's.yaml:3:17: infrastructure.costs.rtt: unknown unit "xs" in "0.3xs" (valid units: us, ms, s, m, min, h, d)',
    ],
    [
      'bad size unit',
      'name: x\nslo: { redisMemory: 2XB }',
      's.yaml:2:21: slo.redisMemory: unknown unit "XB" in "2XB" (valid units: B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB)',
    ],
    [
      'bad enum with suggestion',
      'name: x\npolicy: { kind: thresold }',
      's.yaml:2:17: policy.kind: "thresold" is not valid; did you mean "threshold"? (valid: push, pull, threshold, rate, reader-cap, adaptive)',
    ],
    [
      'probabilities not summing to 1',
      'name: x\nactivity:\n  pagesPerSession: { "1": 0.7, "2-5": 0.2 }',
      's.yaml:3:20: activity.pagesPerSession: probabilities sum to 0.9, they must sum to 1 (within 1e-6)',
    ],
    [
      'overlapping page ranges',
      'name: x\nactivity:\n  pagesPerSession: { "1-3": 0.5, "2-4": 0.5 }',
      's.yaml:3:34: activity.pagesPerSession["2-4"]: "2-4" overlaps "1-3" (page ranges must not overlap)',
    ],
    [
      'backwards page range',
      'name: x\nactivity:\n  pagesPerSession: { "5-2": 1 }',
      's.yaml:3:22: activity.pagesPerSession["5-2"]: "5-2" is not a valid page range (write "N" or "A-B" with 1 <= A <= B)',
    ],
    [
      'malformed page key',
      'name: x\nactivity:\n  pagesPerSession: { "1.5": 1 }',
      's.yaml:3:22: activity.pagesPerSession["1.5"]: "1.5" is not a valid key (expected page counts "N" or ranges "A-B")',
    ],
    [
      'both graph.generate and graph.file',
      'name: x\ngraph:\n  generate: { users: 1000 }\n  file: g.fgraph',
      's.yaml:4:3: graph: has both generate and file; give exactly one of generate, file',
    ],
    ['neither graph.generate nor graph.file', 'name: x\ngraph: {}', 's.yaml:2:8: graph: needs exactly one of generate, file'],
    [
      'event with two kinds',
      'name: x\nevents:\n  - at: 10m\n    cacheLoss: { shards: 1 }\n    breakingNews: { multiplier: 3 }',
      's.yaml:5:5: events[0]: has both cacheLoss and breakingNews; give exactly one of celebrityBurst, breakingNews, coldStartStorm, cacheLoss, workerCrash, apiCrash, eventLogLoss, redisFlush, redisOutage, postgresOutage',
    ],
    [
      'event with no kind',
      'name: x\nevents:\n  - at: 10m',
      's.yaml:3:5: events[0]: needs exactly one of celebrityBurst, breakingNews, coldStartStorm, cacheLoss, workerCrash, apiCrash, eventLogLoss, redisFlush, redisOutage, postgresOutage',
    ],
    [
      'event after the duration',
      'name: x\nduration: 2h\nevents:\n  - at: 1h\n    cacheLoss: {}\n  - at: 2h\n    cacheLoss: {}',
      's.yaml:6:9: events[1].at: 2 h is not before the end of the run (duration 2 h)',
    ],
    [
      'event without at',
      'name: x\nevents:\n  - cacheLoss: {}',
      's.yaml:3:5: events[0].at: required key is missing (when the event fires, from the start of the run (before the scenario duration))',
    ],
    [
      'event missing its required magnitude',
      'name: x\nevents:\n  - at: 1h\n    breakingNews: { window: 5m }',
      's.yaml:4:19: events[0].breakingNews.multiplier: required key is missing (post rate multiplier)',
    ],
    [
      'cacheLoss of more shards than there are',
      'name: x\ninfrastructure: { redisShards: 4 }\nevents:\n  - at: 1h\n    cacheLoss: { shards: 5 }',
      's.yaml:5:26: events[0].cacheLoss.shards: 5 is more than infrastructure.redisShards (4)',
    ],
    [
      'more Redis processes than shards',
      'name: x\ninfrastructure: { redisShards: 4, redisProcesses: 5 }',
      's.yaml:2:51: infrastructure.redisProcesses: 5 is more than infrastructure.redisShards (4); a process holds one shard or more',
    ],
    [
      'no Redis process',
      'name: x\ninfrastructure: { redisProcesses: 0 }',
      's.yaml:2:35: infrastructure.redisProcesses: 0 is out of range (valid: >= 1)',
    ],
    [
      'sigma for a distribution without one',
      'name: x\nactivity:\n  postsPerUserPerDay: { dist: exponential, mean: 1, sigma: 2 }',
      's.yaml:3:53: activity.postsPerUserPerDay.sigma: applies only when dist is lognormal',
    ],
    [
      'pareto needs alpha',
      'name: x\nactivity:\n  postsPerUserPerDay: { dist: pareto, mean: 1 }',
      's.yaml:3:23: activity.postsPerUserPerDay.alpha: required key is missing (pareto tail exponent (> 1 for a finite mean))',
    ],
    [
      'dormantAway backwards',
      'name: x\nactivity: { dormantAway: [30d, 2d] }',
      's.yaml:2:26: activity.dormantAway: min is above max (write [min, max])',
    ],
    ['dormantAway not a pair', 'name: x\nactivity: { dormantAway: [3d] }', 's.yaml:2:26: activity.dormantAway: expected a list of 2 items, got 1'],
    [
      'large pool not smaller than all workers',
      'name: x\ninfrastructure: { fanoutWorkers: 8, largePostClass: { followers: 1e6, workers: 8 } }',
      's.yaml:2:80: infrastructure.largePostClass.workers: 8 must be fewer than infrastructure.fanoutWorkers (8); the large pool is carved out of them',
    ],
    [
      'celebrity bigger than the population',
      'name: x\ngraph: { generate: { users: 1000, celebrities: [{ count: 1, followers: 5000 }] } }',
      's.yaml:2:72: graph.generate.celebrities[0].followers: 5k is more than the population (1k); use a share <= 1 or a smaller count',
    ],
    [
      'population below the sampled graph',
      'name: x\npopulation: 10\ngraph: { generate: { users: 1000 } }',
      's.yaml:2:13: population: 10 is below graph.generate.users (1k); the population is what the sampled graph stands for',
    ],
    [
      'mean follows above the cap',
      'name: x\ngraph: { generate: { avgFollows: 300, maxFollows: 100 } }',
      's.yaml:2:34: graph.generate.avgFollows: 300 is above graph.generate.maxFollows (100); a mean cannot exceed the cap',
    ],
    [
      'adaptive floor above the threshold',
      'name: x\npolicy: { kind: adaptive, threshold: 500 }',
      's.yaml:2:9: policy.minThreshold: 1000 is above policy.threshold (500); adaptive only lowers the threshold',
    ],
    [
      'a duration without a unit (it was taken as seconds: 100 ms became 100 s and passed)',
      'name: x\nslo: { readP99: 100 }',
      's.yaml:2:17: slo.readP99: 100 has no unit (expected a duration like 500ms, 5s, 2h; valid units: us, ms, s, m, min, h, d)',
    ],
    [
      'a size without a unit',
      'name: x\nslo: { redisMemory: 64 }',
      's.yaml:2:21: slo.redisMemory: 64 has no unit (expected a size like 64MB, 2GB, 512KiB; valid units: B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB)',
    ],
    // minutes of preparation, then "Invalid typed array length" and exit 70
    ['a duration longer than the per-minute series can hold', 'name: x\nduration: 10000d', 's.yaml:2:11: duration: "10000d" is out of range (valid: > 0 s and <= 366 d)'],
    // 0 is refused here too: the key's range, not "expected >= 0"
    ['a negative duration where 0 is refused too', 'name: x\nslo: { readP99: -5ms }', 's.yaml:2:17: slo.readP99: "-5ms" is out of range (valid: > 0 s)'],
    ['empty sweep list', 'name: x\nsweep: { policies: [] }', 's.yaml:2:20: sweep.policies: needs at least 1 item(s)'],
    ['empty policy string', 'name: x\nsweep: { policies: [push, ""] }', 's.yaml:2:27: sweep.policies[1]: must not be empty (a policy, e.g. threshold:25000)'],
    // checked where it is written, by every command that loads the scenario (run never read the list)
    ['a misspelt policy in a list', 'name: x\nsweep: { policies: [push, treshold:1000] }', 's.yaml:2:27: sweep.policies[1]: unknown policy "treshold:1000"; did you mean "threshold:1000"? (valid forms: push, pull, threshold:T, rate, reader-cap:N, adaptive:T, (any of them):skip-dormant or :all-followers)'],
    ['empty name', 'name: ""', 's.yaml:1:7: name: must not be empty (the scenario\'s name, e.g. name: celebrity-burst)'],
    ['name with no value', 'name:', 's.yaml:1:1: name: needs a value (the scenario\'s name, e.g. name: celebrity-burst)'],
    ['YAML syntax error', 'name: x\nslo: { readP99: 100ms\n', 's.yaml:3:1: invalid YAML: Flow map in block collection must be sufficiently indented and end with a }'],
    ['YAML unclosed quote', 'name: x\ndescription: "fifty', 's.yaml:2:20: invalid YAML: Missing closing "quote'],
    ['YAML nested compact map', 'name: x\nseed: a: b', 's.yaml:2:7: invalid YAML: Nested mappings are not allowed in compact mappings'],
    ['YAML duplicate key', 'name: x\nseed: 1\nseed: 2', 's.yaml:3:1: invalid YAML: Map keys must be unique'],
    ['YAML tab indentation', 'name: x\npolicy:\n\tkind: push', 's.yaml:3:1: invalid YAML: Tabs are not allowed as indentation'],
  ];

  test.each(cases)('%s', (_label, text, line) => {
    expect(errorLine(text)).toBe(line);
  });

  test('every message is one line located at file:line:col', () => {
    for (const [, text] of cases) {
      const err = failure(() => parseScenario(text, 'dir/s.yaml'));
      expect(err.where).toMatch(/^dir\/s\.yaml:\d+:\d+$/);
      expect(err.message).not.toMatch(/\n/);
    }
  });

  test('a file on disk is named with its path in the location', () => {
    const path = join(fixtures, 'typo.yaml');
    expect(failure(() => loadScenario(path)).line()).toBe(
      `${path}:7:3: infrastructure.fanoutWorker: unknown key; did you mean "fanoutWorkers"?`,
    );
  });

  test('a missing file is named', () => {
    const err = failure(() => loadScenario(join(fixtures, 'no-such.yaml')));
    expect(err.message).toBe(`cannot read scenario file "${join(fixtures, 'no-such.yaml')}": no such file`);
    expect(failure(() => loadScenario(fixtures)).message).toBe(`cannot read scenario file "${fixtures}": it is a directory`);
  });
});
