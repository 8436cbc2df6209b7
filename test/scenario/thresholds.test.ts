// slo.thresholds in a scenario: every form it accepts, and each refusal as the one line the CLI prints.
import { describe, expect, test } from 'vitest';
import { InputError } from '../../cli/errors.js';
import { parseScenario } from '../../sim/scenario/load.js';
import { compare, parseThreshold, thresholdId, THRESHOLD_FIGURE_NAMES } from '../../sim/scenario/thresholds.js';
import { scenarioSchema } from '../../sim/scenario/schema.js';

/** The scenario `name: x` with these lines under slo.thresholds (each indented by the caller's four spaces). */
const withThresholds = (lines: string) => `name: x\nslo:\n  thresholds:\n${lines
  .split('\n')
  .map((l) => `    ${l}`)
  .join('\n')}\n`;

function errorLine(text: string): string {
  try {
    parseScenario(text, 's.yaml');
  } catch (err) {
    if (err instanceof InputError) return err.line();
    throw err;
  }
  throw new Error('expected an InputError');
}

describe('accepted forms', () => {
  test('every figure, statistic and operator, in the figures\' order with units converted', () => {
    const sc = parseScenario(
      withThresholds(
        [
          'servers: ["< 40", ">= 0.5"]',
          'redisMemory: ["< 2TB", "<= 512GiB"]',
          'peakWrites: ["<= 2e5", "< 250000", "> 1_000"]',
          'backlogDrain: ["< 10m", "<= 90s"]',
          'coldReadShare: ["< 1%", "<= 0.005", "< 2.5 %"]',
          'read: ["p50 < 5ms", "p90 < 20ms", "p99 <= 100ms", "p99.9 < 250ms", "max < 1s", "mean < 2000us"]',
          'fanoutPostLag: ["p99 < 5 s", "max>=1ms"]',
          'fanoutLag:',
          '  - p50 < 500ms',
          '  - "p99.9 < 30s"',
          '  - mean > 0s',
        ].join('\n'),
      ),
      's.yaml',
    );
    const t = sc.slo.thresholds!;
    expect(t.map((x) => x.figure)).toEqual([
      'fanoutLag', 'fanoutLag', 'fanoutLag',
      'fanoutPostLag', 'fanoutPostLag',
      'read', 'read', 'read', 'read', 'read', 'read',
      'coldReadShare', 'coldReadShare', 'coldReadShare',
      'backlogDrain', 'backlogDrain',
      'peakWrites', 'peakWrites', 'peakWrites',
      'redisMemory', 'redisMemory',
      'servers', 'servers',
    ]);
    const by = (id: string) => t.find((x) => thresholdId(x) === id)!;
    expect(by('fanoutLag p50 < 500ms')).toEqual({ figure: 'fanoutLag', statistic: 'p50', op: '<', value: 0.5, valueText: '500ms', expression: 'p50 < 500ms' });
    expect(by('fanoutLag mean > 0s')).toMatchObject({ statistic: 'mean', op: '>', value: 0 });
    // spaces inside the value are the value's; the id spells it one way
    expect(by('fanoutPostLag p99 < 5s')).toMatchObject({ value: 5, expression: 'p99 < 5 s' });
    expect(by('fanoutPostLag max >= 1ms')).toMatchObject({ statistic: 'max', op: '>=', value: 0.001, expression: 'max>=1ms' });
    expect(by('read p99.9 < 250ms')).toMatchObject({ statistic: 'p99.9', value: 0.25 });
    expect(by('read mean < 2000us')).toMatchObject({ value: 0.002 });
    expect(by('read p99 <= 100ms')).toMatchObject({ op: '<=', value: 0.1 });
    expect(by('coldReadShare < 1%')).toMatchObject({ statistic: null, value: 0.01 });
    expect(by('coldReadShare <= 0.005')).toMatchObject({ value: 0.005 });
    expect(by('coldReadShare < 2.5%')).toMatchObject({ value: 0.025 });
    expect(by('backlogDrain < 10m')).toMatchObject({ value: 600 });
    expect(by('backlogDrain <= 90s')).toMatchObject({ value: 90 });
    expect(by('peakWrites <= 2e5')).toMatchObject({ value: 200000 });
    expect(by('peakWrites > 1_000')).toMatchObject({ op: '>', value: 1000 });
    expect(by('redisMemory < 2TB')).toMatchObject({ value: 2e12 });
    expect(by('redisMemory <= 512GiB')).toMatchObject({ value: 512 * 2 ** 30 });
    expect(by('servers < 40')).toMatchObject({ value: 40 });
    expect(by('servers >= 0.5')).toMatchObject({ value: 0.5 });
  });

  test('no thresholds, none, an empty map or empty lists: the scenario resolves exactly as without the key', () => {
    const plain = parseScenario('name: x\n', 's.yaml');
    expect(plain.slo).toEqual({ fanoutLagP99: 5, readP99: 0.1, redisMemory: Infinity });
    expect('thresholds' in plain.slo).toBe(false);
    for (const text of ['name: x\nslo: { thresholds: none }\n', 'name: x\nslo:\n  thresholds:\n', 'name: x\nslo: { thresholds: {} }\n', 'name: x\nslo: { thresholds: { read: [] } }\n']) {
      expect(parseScenario(text, 's.yaml')).toEqual(plain);
    }
  });

  test('the schema lists every figure the parser knows, and nothing else', () => {
    const slo = scenarioSchema.fields.slo;
    if (slo.type !== 'object') throw new Error('slo is a map');
    const thresholds = slo.fields.thresholds;
    if (thresholds.type !== 'object') throw new Error('slo.thresholds is a map');
    expect(Object.keys(thresholds.fields)).toEqual(THRESHOLD_FIGURE_NAMES);
  });

  test('compare: the four operators at, below and above the target; NaN never passes', () => {
    expect([compare(1, '<', 2), compare(2, '<', 2), compare(3, '<', 2)]).toEqual([true, false, false]);
    expect([compare(1, '<=', 2), compare(2, '<=', 2), compare(3, '<=', 2)]).toEqual([true, true, false]);
    expect([compare(1, '>', 2), compare(2, '>', 2), compare(3, '>', 2)]).toEqual([false, false, true]);
    expect([compare(1, '>=', 2), compare(2, '>=', 2), compare(3, '>=', 2)]).toEqual([false, true, true]);
    for (const op of ['<', '<=', '>', '>='] as const) expect(compare(NaN, op, 2)).toBe(false);
  });

  test('parseThreshold on its own refuses without a location (the schema adds it)', () => {
    expect(() => parseThreshold('read', 'p99 < 20')).toThrow(InputError);
    try {
      parseThreshold('read', 'p99 < 20');
    } catch (err) {
      expect((err as InputError).where).toBeUndefined();
    }
  });
});

describe('refused: one line at the list item, naming what is valid', () => {
  const DURATION_UNITS = '(valid units: us, ms, s, m, min, h, d)';
  const STATS = '(valid: p50, p90, p99, p99.9, max, mean)';
  const cases: Array<[string, string, string]> = [
    // the offending item is the second one, at line 4, column 32: the location is that item's
    ['a duration without its unit', 'fanoutLag: ["p50 < 500ms", "p99 < 30"]', `s.yaml:4:32: slo.thresholds.fanoutLag[1]: "30" needs a unit: fanoutLag takes a duration like 500ms, 5s, 2h ${DURATION_UNITS}`],
    ['a backlogDrain without its unit', 'backlogDrain: ["< 600"]', `s.yaml:4:20: slo.thresholds.backlogDrain[0]: "600" needs a unit: backlogDrain takes a duration like 500ms, 5s, 2h ${DURATION_UNITS}`],
    [
      'a size without its unit',
      'redisMemory: ["< 2000000"]',
      's.yaml:4:19: slo.thresholds.redisMemory[0]: "2000000" needs a unit: redisMemory takes a size like 64MB, 2GB, 512KiB (valid units: B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB)',
    ],
    ['a size where a duration goes', 'read: ["p99 < 2TB"]', `s.yaml:4:12: slo.thresholds.read[0]: read takes a duration like 500ms, 5s, 2h: unknown unit "TB" in "2TB" ${DURATION_UNITS}`],
    ['a duration where a share goes', 'coldReadShare: ["< 5ms"]', 's.yaml:4:21: slo.thresholds.coldReadShare[0]: coldReadShare takes a share like 1% or 0.01, got "5ms" (valid units: %, or none for a share of 1)'],
    ['a share over 1', 'coldReadShare: ["< 5"]', 's.yaml:4:21: slo.thresholds.coldReadShare[0]: "5" is not a share between 0 and 1 (0% and 100%); did you mean "5%"?'],
    ['a count with a unit', 'peakWrites: ["< 200k"]', 's.yaml:4:18: slo.thresholds.peakWrites[0]: peakWrites takes a plain number like 200000 or 2e5, got "200k"'],
    ['a negative duration', 'fanoutLag: ["p99 < -5s"]', 's.yaml:4:17: slo.thresholds.fanoutLag[0]: fanoutLag takes a duration like 500ms, 5s, 2h: "-5s" is negative (expected a duration like 500ms, 5s, 2h, >= 0)'],
    ['an unknown figure', 'readLatency: ["p99 < 1s"]', 's.yaml:4:5: slo.thresholds.readLatency: unknown figure (valid figures: fanoutLag, fanoutPostLag, read, coldReadShare, backlogDrain, peakWrites, redisMemory, servers)'],
    ['an unknown figure near a known one', 'fanoutLagP99: ["p99 < 1s"]', 's.yaml:4:5: slo.thresholds.fanoutLagP99: unknown figure; did you mean "fanoutLag"?'],
    ['a misspelt figure', 'coldReadShar: ["< 1%"]', 's.yaml:4:5: slo.thresholds.coldReadShar: unknown figure; did you mean "coldReadShare"?'],
    ['a statistic on a single figure', 'coldReadShare: ["p99 < 1%"]', 's.yaml:4:21: slo.thresholds.coldReadShare[0]: coldReadShare is a single figure and takes no statistic, got "p99" in "p99 < 1%" (write e.g. "< 1%")'],
    ['no statistic on a distribution', 'read: ["< 20ms"]', 's.yaml:4:12: slo.thresholds.read[0]: read needs a statistic before the comparison: one of p50, p90, p99, p99.9, max, mean (e.g. "p99 < 5s"), got "< 20ms"'],
    ['an unknown statistic', 'read: ["min < 20ms"]', `s.yaml:4:12: slo.thresholds.read[0]: unknown statistic "min" ${STATS}`],
    ['a percentile the results do not keep', 'read: ["p95 < 20ms"]', 's.yaml:4:12: slo.thresholds.read[0]: the percentile "p95" is not one the results keep (valid statistics: p50, p90, p99, p99.9, max, mean)'],
    ['a k6 percentile', 'read: ["p(99) < 20ms"]', `s.yaml:4:12: slo.thresholds.read[0]: unknown statistic "p(99)"; did you mean "p99"? ${STATS}`],
    ['the summary\'s spelling of p99.9', 'read: ["p999 < 20ms"]', `s.yaml:4:12: slo.thresholds.read[0]: unknown statistic "p999"; did you mean "p99.9"? ${STATS}`],
    ['k6\'s avg', 'fanoutLag: ["avg < 1s"]', `s.yaml:4:17: slo.thresholds.fanoutLag[0]: unknown statistic "avg"; did you mean "mean"? ${STATS}`],
    ['no operator', 'read: ["p99 20ms"]', 's.yaml:4:12: slo.thresholds.read[0]: "p99 20ms" is not a threshold: no comparison (write [statistic] operator value, e.g. "p99 < 5s"; operators <, <=, >, >=)'],
    ['an equality', 'read: ["p99 == 20ms"]', 's.yaml:4:12: slo.thresholds.read[0]: operator "==" in "p99 == 20ms" is not supported (valid: <, <=, >, >=)'],
    ['a reversed operator', 'read: ["p99 =< 20ms"]', 's.yaml:4:12: slo.thresholds.read[0]: operator "=<" in "p99 =< 20ms" is not supported; did you mean "<="? (valid: <, <=, >, >=)'],
    ['two comparisons', 'read: ["p99 < 20ms < 30ms"]', 's.yaml:4:12: slo.thresholds.read[0]: "p99 < 20ms < 30ms" is not a threshold: one operator and one value only (write [statistic] operator value, e.g. "p99 < 5s")'],
    ['no value', 'read: ["p99 <"]', 's.yaml:4:12: slo.thresholds.read[0]: "p99 <" has no value after "<" (write [statistic] operator value, e.g. "p99 < 5s")'],
    ['two words before the operator', 'read: ["p 99 < 20ms"]', 's.yaml:4:12: slo.thresholds.read[0]: "p 99 < 20ms" is not a threshold: "p 99" before the operator should be one statistic (write [statistic] operator value, e.g. "p99 < 5s")'],
    ['an empty item', 'read: [""]', 's.yaml:4:12: slo.thresholds.read[0]: must not be empty (a threshold such as "p99 < 5s")'],
    ['a number item', 'servers: [20]', 's.yaml:4:15: slo.thresholds.servers[0]: "20" is not a threshold: no comparison (write [statistic] operator value, e.g. "< 2e5"; operators <, <=, >, >=)'],
    ['a boolean item', 'read: [true]', 's.yaml:4:12: slo.thresholds.read[0]: expected a string, got true'],
    ['one string where a list goes', 'read: "p99 < 20ms"', 's.yaml:4:11: slo.thresholds.read: expected a list, got "p99 < 20ms"'],
    ['the same threshold twice', 'read: ["p99 < 20ms", "p99<20ms"]', 's.yaml:4:26: slo.thresholds.read[1]: "p99<20ms" repeats item 1 (read p99 < 20ms)'],
    ['a block list item, located on its own line', 'fanoutLag:\n  - p50 < 500ms\n  - p99 < 30', `s.yaml:6:9: slo.thresholds.fanoutLag[1]: "30" needs a unit: fanoutLag takes a duration like 500ms, 5s, 2h ${DURATION_UNITS}`],
  ];

  test.each(cases)('%s', (_label, lines, line) => {
    expect(errorLine(withThresholds(lines))).toBe(line);
  });

  test('thresholds that are not a map, and a figure key in the wrong place', () => {
    expect(errorLine('name: x\nslo:\n  thresholds: ["p99 < 5s"]\n')).toBe(
      's.yaml:3:15: slo.thresholds: expected a map with keys fanoutLag, fanoutPostLag, read, coldReadShare, backlogDrain, peakWrites, redisMemory, servers, or none, got a list',
    );
    expect(errorLine('name: x\nslo:\n  coldReadShare: ["< 1%"]\n')).toBe(
      's.yaml:3:3: slo.coldReadShare: unknown key here; it belongs under slo.thresholds (slo.thresholds.coldReadShare)',
    );
  });
});
