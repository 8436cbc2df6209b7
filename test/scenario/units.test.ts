import { describe, expect, test } from 'vitest';
import { InputError } from '../../cli/errors.js';
import {
  formatBytes,
  formatCount,
  formatDuration,
  parseCount,
  parseDuration,
  parseNumber,
  parseSize,
} from '../../sim/scenario/units.js';

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return (err as Error).message;
  }
  throw new Error('expected an InputError');
}

describe('parseDuration', () => {
  test.each([
    ['500ms', 0.5],
    ['2us', 0.000002],
    ['15us', 0.000015],
    ['0.3ms', 0.0003],
    ['5s', 5],
    ['30m', 1800],
    ['36min', 2160],
    ['2h', 7200],
    ['7d', 604800],
    ['1.5h', 5400],
    ['60 s', 60],
    ['.5s', 0.5],
    ['1e3ms', 1],
    ['1_000s', 1000],
    ['0s', 0],
    // 0 is 0 in every unit
    ['0', 0],
    [0, 0],
  ])('%j -> %d s', (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds);
  });

  test('a number without a unit is refused, with the units that are valid', () => {
    // slo.readP99: 100 meant 100 ms and was taken as 100 s
    expect(message(() => parseDuration(100))).toBe('100 has no unit (expected a duration like 500ms, 5s, 2h; valid units: us, ms, s, m, min, h, d)');
    expect(message(() => parseDuration('0.25'))).toBe('"0.25" has no unit (expected a duration like 500ms, 5s, 2h; valid units: us, ms, s, m, min, h, d)');
  });

  test('bad unit lists the valid units', () => {
    expect(message(() => parseDuration('5x'))).toBe('unknown unit "x" in "5x" (valid units: us, ms, s, m, min, h, d)');
    // Units are case-sensitive: M would be months to some readers.
    expect(message(() => parseDuration('5M'))).toBe('unknown unit "M" in "5M" (valid units: us, ms, s, m, min, h, d)');
  });

  test('not a duration at all', () => {
    expect(message(() => parseDuration('soon'))).toBe(
      'expected a duration like 500ms, 5s, 2h, got "soon" (valid units: us, ms, s, m, min, h, d)',
    );
    expect(message(() => parseDuration('5 s s'))).toMatch(/^expected a duration/);
  });

  test('negative and non-finite are refused', () => {
    expect(message(() => parseDuration('-5s'))).toBe('"-5s" is negative (expected a duration like 500ms, 5s, 2h, >= 0)');
    expect(message(() => parseDuration(Infinity))).toBe('Infinity is not a finite number (expected a duration like 500ms, 5s, 2h)');
    expect(message(() => parseDuration(NaN))).toBe('NaN is not a finite number (expected a duration like 500ms, 5s, 2h)');
    expect(message(() => parseDuration('1e999s'))).toMatch(/is not a finite number/);
  });
});

describe('parseSize', () => {
  test.each([
    ['64MB', 64e6],
    ['2GB', 2e9],
    ['1.5TB', 1.5e12],
    ['512KiB', 512 * 1024],
    ['2GiB', 2 * 2 ** 30],
    ['1TiB', 2 ** 40],
    ['3MiB', 3 * 2 ** 20],
    ['10KB', 10_000],
    ['100B', 100],
    ['64mb', 64e6],
    ['2 GB', 2e9],
    ['0', 0],
    [0, 0],
  ])('%j -> %d bytes', (text, bytes) => {
    expect(parseSize(text)).toBe(bytes);
  });

  test('bad unit lists the valid units', () => {
    expect(message(() => parseSize('2XB'))).toBe(
      'unknown unit "XB" in "2XB" (valid units: B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB)',
    );
  });

  test('a number without a unit is refused, with the units that are valid', () => {
    expect(message(() => parseSize(4096))).toBe('4096 has no unit (expected a size like 64MB, 2GB, 512KiB; valid units: B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB)');
    expect(message(() => parseSize('64'))).toMatch(/^"64" has no unit/);
  });

  test('negative is refused', () => {
    expect(message(() => parseSize(-1))).toBe('-1 is negative (expected a size like 64MB, 2GB, 512KiB, >= 0)');
  });
});

describe('parseCount', () => {
  test.each([
    [200000000, 2e8],
    ['2e8', 2e8],
    ['2E8', 2e8],
    ['200_000_000', 2e8],
    ['1.5e3', 1500],
    [' 42 ', 42],
    [0, 0],
  ])('%j -> %d', (text, n) => {
    expect(parseCount(text)).toBe(n);
  });

  test('refuses units, words, negatives, non-finite', () => {
    expect(message(() => parseCount('10k'))).toBe('expected a number like 1000 or 2e8, got "10k"');
    expect(message(() => parseCount('2__0'))).toBe('expected a number like 1000 or 2e8, got "2__0"');
    expect(message(() => parseCount('many'))).toBe('expected a number like 1000 or 2e8, got "many"');
    expect(message(() => parseCount(-3))).toBe('-3 is negative (expected a count, >= 0)');
    expect(message(() => parseCount(Infinity))).toBe('Infinity is not a finite number');
  });

  test('parseNumber allows negatives but not garbage', () => {
    expect(parseNumber('-2.5')).toBe(-2.5);
    expect(parseNumber(-1)).toBe(-1);
    expect(message(() => parseNumber('1.2.3'))).toBe('expected a number like 0.5, 1000 or 2e8, got "1.2.3"');
  });
});

describe('formatters', () => {
  test.each([
    [2160, '36 min'],
    [7200, '2 h'],
    [5400, '1.5 h'],
    [604800, '7 d'],
    [0.1, '100 ms'],
    [0.0003, '300 us'],
    [0.000002, '2 us'],
    [5, '5 s'],
    [59.9996, '1 min'],
    [0, '0 s'],
    [-90, '-1.5 min'],
    [Infinity, '∞'],
    [NaN, 'n/a'],
  ])('formatDuration(%d) = %s', (s, text) => {
    expect(formatDuration(s)).toBe(text);
  });

  test.each([
    [384e9, '384 GB'],
    [2e12, '2 TB'],
    [1.5e12, '1.5 TB'],
    [64e6, '64 MB'],
    [512, '512 B'],
    [1234, '1.23 KB'],
    [999_999, '1 MB'],
    [0, '0 B'],
    [Infinity, '∞'],
  ])('formatBytes(%d) = %s', (b, text) => {
    expect(formatBytes(b)).toBe(text);
  });

  test.each([
    [17400, '17.4k'],
    [2_100_000, '2.1M'],
    [200_000_000, '200M'],
    [1.2e9, '1.2B'],
    [950, '950'],
    [12.5, '12.5'],
    [0, '0'],
  ])('formatCount(%d) = %s', (n, text) => {
    expect(formatCount(n)).toBe(text);
  });

  test('formatting then parsing round-trips sizes and durations', () => {
    expect(parseSize(formatBytes(384e9).replace(' ', ''))).toBe(384e9);
    for (const s of [0.0003, 0.1, 5, 2160, 7200, 604800]) {
      expect(parseDuration(formatDuration(s).replace(' ', ''))).toBe(s);
    }
  });
});
