// Units users write in scenario files and flags (durations, sizes, counts), and the
// human formats reports print them in. Parsers return seconds, bytes and plain numbers.
// Errors are InputErrors without a location: the caller (scenario loader, a CLI flag)
// prefixes the key or flag and supplies the location.
import { InputError } from '../errors.js';

/** Seconds per duration unit. Lower-case only: `M` vs `m` is a classic month/minute trap. */
export const DURATION_UNITS: Readonly<Record<string, number>> = {
  us: 1e-6,
  µs: 1e-6,
  ms: 1e-3,
  s: 1,
  m: 60,
  // What formatDuration prints, so its output reads back in.
  min: 60,
  h: 3600,
  d: 86400,
};

/** Bytes per size unit: KB/MB/GB/TB are decimal (as cloud providers bill), KiB.. are binary. */
export const SIZE_UNITS: Readonly<Record<string, number>> = {
  B: 1,
  KB: 1e3,
  MB: 1e6,
  GB: 1e9,
  TB: 1e12,
  PB: 1e15,
  KiB: 2 ** 10,
  MiB: 2 ** 20,
  GiB: 2 ** 30,
  TiB: 2 ** 40,
  PiB: 2 ** 50,
};

/** The units of a duration and of a size, as messages list them. */
export const DURATION_LIST = 'us, ms, s, m, min, h, d';
export const SIZE_LIST = Object.keys(SIZE_UNITS).join(', ');
export const DURATION_EXAMPLE = 'a duration like 500ms, 5s, 2h';
export const SIZE_EXAMPLE = 'a size like 64MB, 2GB, 512KiB';
export const COUNT_EXAMPLE = 'a number like 1000 or 2e8';

// A decimal number with optional exponent; underscores only between digits (200_000_000).
const NUMBER = String.raw`[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d+)?`;
const NUMBER_ONLY = new RegExp(`^${NUMBER}$`);
const WITH_UNIT = new RegExp(`^(${NUMBER})\\s*([A-Za-zµ]*)$`);

// Size units are matched case-insensitively (users write 64mb and 2gb); durations are not.
const SIZE_BY_LOWER = new Map(Object.entries(SIZE_UNITS).map(([k, v]) => [k.toLowerCase(), v]));

function show(text: string | number): string {
  return typeof text === 'number' ? String(text) : JSON.stringify(text);
}

function finiteNonNegative(value: number, text: string | number, what: string): number {
  if (!Number.isFinite(value)) throw new InputError(`${show(text)} is not a finite number (expected ${what})`);
  if (value < 0) throw new InputError(`${show(text)} is negative (expected ${what}, >= 0)`);
  return value;
}

/** A plain number: a YAML number, or a string like "2e8", "0.5", "200_000_000". May be negative. */
export function parseNumber(text: string | number): number {
  if (typeof text === 'number') {
    if (!Number.isFinite(text)) throw new InputError(`${show(text)} is not a finite number`);
    return text;
  }
  const trimmed = text.trim();
  if (!NUMBER_ONLY.test(trimmed)) throw new InputError(`expected a number like 0.5, 1000 or 2e8, got ${show(text)}`);
  const value = Number(trimmed.replace(/_/g, ''));
  if (!Number.isFinite(value)) throw new InputError(`${show(text)} is not a finite number`);
  return value;
}

/** A non-negative count: 1000, 2e8, "2e8", "200_000_000". Whole-number checks are the caller's. */
export function parseCount(text: string | number): number {
  if (typeof text === 'string' && !NUMBER_ONLY.test(text.trim())) {
    throw new InputError(`expected ${COUNT_EXAMPLE}, got ${show(text)}`);
  }
  return finiteNonNegative(parseNumber(text), text, 'a count');
}

// A number without a unit is refused (but 0, the same in every unit): `readP99: 100` meant 100 ms
// and was taken as 100 s, an SLO that could not fail.
function parseWithUnit(text: string | number, units: (unit: string) => number | undefined, what: string, list: string): number {
  const unitless = () => new InputError(`${show(text)} has no unit (expected ${what}; valid units: ${list})`);
  if (typeof text === 'number') {
    finiteNonNegative(text, text, what);
    if (text !== 0) throw unitless();
    return 0;
  }
  const m = WITH_UNIT.exec(text.trim());
  if (!m) throw new InputError(`expected ${what}, got ${show(text)} (valid units: ${list})`);
  const [, num, unit] = m;
  if (unit === '' && Number(num.replace(/_/g, '')) !== 0) throw unitless();
  const factor = unit === '' ? 1 : units(unit);
  if (factor === undefined) throw new InputError(`unknown unit "${unit}" in ${show(text)} (valid units: ${list})`);
  return finiteNonNegative(scale(Number(num.replace(/_/g, '')), factor), text, what);
}

// Dividing by 1e6 gives 15us = 0.000015 exactly as written; multiplying by 1e-6 does not.
function scale(n: number, factor: number): number {
  return factor < 1 ? n / Math.round(1 / factor) : n * factor;
}

/** `500ms`, `2us`, `5s`, `30m`, `2h`, `7d` -> seconds; a number without a unit is refused but 0. */
export function parseDuration(text: string | number): number {
  return parseWithUnit(text, (u) => DURATION_UNITS[u], DURATION_EXAMPLE, DURATION_LIST);
}

/** `64MB`, `2GB`, `1.5TB` (decimal), `512KiB`, `2GiB` (binary), `200B` -> bytes; a number without a unit is refused but 0. */
export function parseSize(text: string | number): number {
  return parseWithUnit(text, (u) => SIZE_BY_LOWER.get(u.toLowerCase()), SIZE_EXAMPLE, SIZE_LIST);
}

/** Three significant digits, no trailing zeros: 36, 1.5, 17.4, 384. */
function short(v: number): string {
  return v >= 100 ? String(Math.round(v)) : String(Number(v.toPrecision(3)));
}

/**
 * Picks the largest unit not above the value, then moves up one unit when rounding reaches it
 * (59.999 s prints as 1 min, not 60 s).
 */
function scaled(value: number, units: readonly (readonly [number, string])[], sep: string): string {
  if (Number.isNaN(value)) return 'n/a';
  if (value < 0) return `-${scaled(-value, units, sep)}`;
  if (value === Infinity) return '∞';
  if (value === 0) return `0${sep}${units.find(([f]) => f === 1)?.[1] ?? units[0][1]}`;
  let i = 0;
  while (i + 1 < units.length && value >= units[i + 1][0]) i++;
  let text = short(value / units[i][0]);
  if (i + 1 < units.length && Number(text) * units[i][0] >= units[i + 1][0]) {
    i++;
    text = short(value / units[i][0]);
  }
  return `${text}${sep}${units[i][1]}`.trimEnd();
}

const DURATION_FORMAT = [
  [1e-6, 'us'],
  [1e-3, 'ms'],
  [1, 's'],
  [60, 'min'],
  [3600, 'h'],
  [86400, 'd'],
] as const;
const BYTES_FORMAT = [
  [1, 'B'],
  [1e3, 'KB'],
  [1e6, 'MB'],
  [1e9, 'GB'],
  [1e12, 'TB'],
  [1e15, 'PB'],
] as const;
const COUNT_FORMAT = [
  [1, ''],
  [1e3, 'k'],
  [1e6, 'M'],
  [1e9, 'B'],
  [1e12, 'T'],
] as const;

/** Seconds for people: `250 us`, `1.5 ms`, `36 min`, `2 h`, `7 d`. */
export function formatDuration(seconds: number): string {
  return scaled(seconds, DURATION_FORMAT, ' ');
}

/** Bytes for people, decimal like the scenario's MB/GB/TB: `512 B`, `64 MB`, `384 GB`, `1.5 TB`. */
export function formatBytes(bytes: number): string {
  return scaled(bytes, BYTES_FORMAT, ' ');
}

/** Counts for people: `950`, `17.4k`, `2.1M`, `200M`, `1.2B`. */
export function formatCount(n: number): string {
  return scaled(n, COUNT_FORMAT, '');
}
