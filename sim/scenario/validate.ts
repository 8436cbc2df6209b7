// Walks a schema (schema.ts) over parsed YAML nodes: checks types, units and ranges, fills
// defaults, and refuses anything else with one line naming the key path and what is valid,
// located at file:line:col of the offending node.
import { Document, isAlias, isMap, isScalar, isSeq, type LineCounter, type Node, type Scalar, type YAMLMap, type YAMLSeq } from 'yaml';
import { InputError } from '../errors.js';
import type { At, NumericType, ObjectSpec, Range, Spec } from './schema.js';
import type { Interval } from './types.js';
import { nearest } from '../../core/suggest.js';
import {
  COUNT_EXAMPLE,
  DURATION_EXAMPLE,
  SIZE_EXAMPLE,
  formatBytes,
  formatDuration,
  parseCount,
  parseDuration,
  parseNumber,
  parseSize,
} from './units.js';

type Value = string | number;

const PLAIN_NUMBER = /^\s*[-+]?[\d._]+(?:[eE][-+]?\d+)?\s*$/;

const PARSE: Record<NumericType, (v: Value) => number> = {
  number: parseNumber,
  count: parseCount,
  duration: parseDuration,
  size: parseSize,
  // A plain number is days; anything with a unit is a duration converted to days.
  days: (v) => (typeof v === 'number' || PLAIN_NUMBER.test(v) ? parseCount(v) : parseDuration(v) / 86400),
};

const FORMAT: Record<NumericType, (n: number) => string> = {
  number: String,
  count: String,
  duration: formatDuration,
  size: formatBytes,
  days: (n) => `${n} days`,
};

// Key paths as users would write them: infrastructure.costs.rtt, events[2].at, pagesPerSession["2-5"].
const IDENT = /^[A-Za-z_$][\w$]*$/;
const LAST_SEGMENT = /(?:\.[^.[\]]+|\[(?:\d+|"(?:[^"\\]|\\.)*")\])$/;

function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (!IDENT.test(key)) return `${path}[${JSON.stringify(key)}]`;
  return path ? `${path}.${key}` : key;
}

function parentPath(path: string): string {
  const m = LAST_SEGMENT.exec(path);
  return m ? path.slice(0, m.index) : '';
}

/** Where each key path sits in the file, and the schema-wide index used for suggestions. */
export class Context {
  private readonly positions = new Map<string, { line: number; col: number }>();
  private readonly factory = new Document();
  /** Lower-cased key name -> every path template where it is valid, e.g. threshold -> [policy.threshold]. */
  private readonly keysByName = new Map<string, string[]>();
  /** Inputs written as [low, likely, high], in file order. */
  readonly intervals: Interval[] = [];

  constructor(
    private readonly doc: Document,
    private readonly lines: LineCounter,
    readonly source: string,
    readonly baseDir: string,
    root: Spec,
  ) {
    this.index(root, '');
  }

  private index(spec: Spec, path: string): void {
    if (spec.type === 'object') {
      for (const [key, field] of Object.entries(spec.fields)) {
        const p = childPath(path, key);
        const list = this.keysByName.get(key.toLowerCase()) ?? [];
        this.keysByName.set(key.toLowerCase(), [...list, p]);
        this.index(field, p);
      }
    } else if (spec.type === 'list') this.index(spec.items, `${path}[]`);
    else if (spec.type === 'either') this.index(spec.map, path);
  }

  /** Remembers where the node for `path` is, for errors found later (defaults and cross-key checks). */
  mark(path: string, node: Node | null | undefined): void {
    if (node?.range) this.positions.set(path, this.lines.linePos(node.range[0]));
  }

  /** file:line:col of the node, else of the path or its nearest located ancestor. */
  where(path: string, node?: Node | null): string {
    let pos = node?.range ? this.lines.linePos(node.range[0]) : undefined;
    for (let p = path; !pos; p = parentPath(p)) {
      pos = this.positions.get(p);
      if (p === '') break;
    }
    return `${this.source}:${pos?.line ?? 1}:${pos?.col ?? 1}`;
  }

  fail(path: string, message: string, node?: Node | null): never {
    throw new InputError(`${path || 'scenario'}: ${message}`, this.where(path, node));
  }

  /** A node for a default written as YAML-ish JS; it has no range, so errors point at its parent. */
  create(value: unknown): Node {
    return this.factory.createNode(value) as Node;
  }

  deref(node: Node, path: string): Node {
    if (!isAlias(node)) return node;
    const target = node.resolve(this.doc);
    if (!target) this.fail(path, `unknown alias *${node.source}`, node);
    return target;
  }

  /** Valid places for a key misplaced here, e.g. ["policy.threshold"]. */
  elsewhere(key: string): string[] {
    return this.keysByName.get(key.toLowerCase()) ?? [];
  }
}

function isEmpty(node: Node | null): boolean {
  return node === null || (isScalar(node) && node.value === null);
}

function shown(node: Node | null): string {
  if (node === null || isEmpty(node)) return 'nothing';
  if (isMap(node)) return 'a map';
  if (isSeq(node)) return 'a list';
  if (isScalar(node)) return typeof node.value === 'string' ? JSON.stringify(node.value) : (node.source ?? String(node.value));
  return 'something else';
}

/** What a valid value looks like, for "expected ..." messages. */
function expected(spec: Spec): string {
  const base = ((): string => {
    switch (spec.type) {
      case 'string':
        return spec.oneOf ? `one of ${spec.oneOf.join(', ')}` : 'a string';
      case 'boolean':
        return 'true or false';
      case 'number':
        return 'a number';
      case 'count':
        return spec.integer ? 'a whole number like 1000 or 2e8' : COUNT_EXAMPLE;
      case 'duration':
        return DURATION_EXAMPLE;
      case 'size':
        return SIZE_EXAMPLE;
      case 'days':
        return 'a number of days or a duration like 7d';
      case 'object':
        return `a map with keys ${Object.keys(spec.fields).join(', ')}`;
      case 'list':
        return spec.length ? `a list of ${spec.length} items` : 'a list';
      case 'dict':
        return `a map of ${spec.keyDescription} to ${spec.values.description}`;
      case 'either':
        return `${expected(spec.scalar)}, or ${expected(spec.map)}`;
    }
  })();
  return spec.none ? `${base}, or none` : base;
}

function rangeText(spec: Range & { type: NumericType }): string {
  const f = FORMAT[spec.type];
  if (spec.min !== undefined && spec.max !== undefined) return `${f(spec.min)} to ${f(spec.max)}`;
  const parts: string[] = [];
  if (spec.min !== undefined) parts.push(`>= ${f(spec.min)}`);
  if (spec.above !== undefined) parts.push(`> ${f(spec.above)}`);
  if (spec.max !== undefined) parts.push(`<= ${f(spec.max)}`);
  if (spec.below !== undefined) parts.push(`< ${f(spec.below)}`);
  return parts.join(' and ');
}

/** Validates `node` (null: written but empty) against `spec` at `path`, returning the resolved value. */
export function validate(node: Node | null, spec: Spec, path: string, ctx: Context): unknown {
  const target = node && ctx.deref(node, path);
  // An empty value has a zero-width position; its key (marked by the caller) reads better.
  if (!isEmpty(node)) ctx.mark(path, node);
  if (target === null || isEmpty(target)) {
    if (spec.none) return finish(spec, null, path, ctx);
    // `generate:` with nothing after it chooses generate with its defaults.
    if (spec.type === 'object') return validate(ctx.create({}), spec, path, ctx);
    return absent(spec, path, ctx, true);
  }
  if (spec.none && isScalar(target) && target.value === 'none') return finish(spec, null, path, ctx);
  return finish(spec, check(target, spec, path, ctx), path, ctx);
}

/** A key not written (or written empty): its default, or an error when it is required. */
function absent(spec: Spec, path: string, ctx: Context, written = false): unknown {
  if (spec.required) ctx.fail(path, `${written ? 'needs a value' : 'required key is missing'} (${spec.description})`);
  if (spec.default !== undefined) return validate(ctx.create(withUnit(spec, spec.default)), spec, path, ctx);
  if (spec.type === 'object' || spec.type === 'either') return validate(ctx.create({}), spec, path, ctx);
  return undefined;
}

/** A default written as a number is in the key's base unit (seconds, bytes): said so, since a written number without a unit is refused. */
function withUnit(spec: Spec, value: unknown): unknown {
  if (typeof value !== 'number' || value === 0) return value;
  return spec.type === 'duration' ? `${value}s` : spec.type === 'size' ? `${value}B` : value;
}

function finish(spec: Spec, value: unknown, path: string, ctx: Context): unknown {
  if (!spec.build) return value;
  const at: At = {
    baseDir: ctx.baseDir,
    fail: (message, sub) => ctx.fail(sub === undefined ? path : childPath(path, sub), message),
  };
  return spec.build(value, at);
}

function typeError(spec: Spec, node: Node | null, path: string, ctx: Context): never {
  return ctx.fail(path, `expected ${expected(spec)}, got ${shown(node)}`, node);
}

function check(node: Node, spec: Spec, path: string, ctx: Context): unknown {
  switch (spec.type) {
    case 'object':
      return isMap(node) ? objectValue(node, spec, path, ctx) : typeError(spec, node, path, ctx);
    case 'list':
      return isSeq(node) ? listValue(node, spec, path, ctx) : typeError(spec, node, path, ctx);
    case 'dict':
      return isMap(node) ? dictValue(node, spec, path, ctx) : typeError(spec, node, path, ctx);
    case 'either':
      // [low, likely, high] is the scalar branch written as an interval
      if (isSeq(node) && intervalKey(spec.scalar)) return validate(node, spec.scalar, path, ctx);
      // `postsPerUserPerDay: lognormal` is neither branch: say both, not just "expected a number".
      if (isSeq(node) || (isScalar(node) && !fitsScalar(spec.scalar, node))) return typeError(spec, node, path, ctx);
      return validate(node, isMap(node) ? spec.map : spec.scalar, path, ctx);
    default:
      if (isSeq(node) && intervalKey(spec)) return intervalValue(node, spec as NumericSpec, path, ctx);
      return isScalar(node) ? scalarValue(node, spec, path, ctx) : typeError(spec, node, path, ctx);
  }
}

type NumericSpec = Extract<Spec, { type: NumericType }>;

function intervalKey(spec: Spec): string | undefined {
  return spec.type === 'number' || spec.type === 'count' || spec.type === 'duration' || spec.type === 'size' || spec.type === 'days' ? spec.interval : undefined;
}

/**
 * `[low, likely, high]`: three values of the key's own kind and range, in order. The scenario
 * resolves to the likely value (run and sweep use it); the interval is kept for feedlab plan.
 */
function intervalValue(seq: YAMLSeq, spec: NumericSpec, path: string, ctx: Context): number {
  const n = seq.items.length;
  if (n !== 3) ctx.fail(path, `an interval is [low, likely, high]: three numbers, got ${n} item${n === 1 ? '' : 's'}`, seq as Node);
  const one: Spec = { ...spec, interval: undefined, build: undefined, none: undefined };
  const [low, likely, high] = seq.items.map((item, i) => {
    const node = (item as Node | null) ?? null;
    const p = childPath(path, i);
    if (node === null || isEmpty(node) || !isScalar(node)) ctx.fail(path, `an interval is [low, likely, high]: item ${i + 1} is ${shown(node)}, expected ${expected(one)}`, node ?? (seq as Node));
    return scalarValue(node, one, p, ctx) as number;
  });
  if (!(low <= likely && likely <= high)) {
    const f = FORMAT[spec.type];
    ctx.fail(path, `[${f(low)}, ${f(likely)}, ${f(high)}] is not in order: an interval needs low <= likely <= high`, seq as Node);
  }
  ctx.intervals.push({ key: spec.interval!, path, low, likely, high, where: ctx.where(path, seq as Node) });
  return likely;
}

/** Whether a scalar is the right kind for `spec`, before its unit or range is checked. */
function fitsScalar(spec: Spec, node: Scalar): boolean {
  const v = node.value;
  switch (spec.type) {
    case 'number':
    case 'count':
      return typeof v === 'number' || (typeof v === 'string' && PLAIN_NUMBER.test(v));
    case 'duration':
    case 'size':
    case 'days':
      return typeof v === 'number' || typeof v === 'string';
    case 'boolean':
      return typeof v === 'boolean';
    case 'string':
      return typeof v === 'string' || typeof v === 'number';
    default:
      return false;
  }
}

function keyOf(pair: { key: unknown }, path: string, map: Node, ctx: Context): string {
  const k = pair.key as Node | null;
  if (isScalar(k) && (typeof k.value === 'string' || typeof k.value === 'number')) return String(k.value);
  return ctx.fail(path, 'keys must be plain names', k ?? map);
}

function unknownKey(key: string, spec: ObjectSpec, path: string, ctx: Context): string {
  const valid = Object.keys(spec.fields);
  const near = nearest(key, valid);
  const noun = spec.keysAre ?? 'key';
  if (near) return `unknown ${noun}; did you mean "${near}"?`;
  // a map of named things (the figures of slo.thresholds) lists them rather than keys elsewhere
  if (spec.keysAre) return `unknown ${noun} (valid ${noun}s: ${valid.join(', ')})`;
  const there = ctx.elsewhere(key);
  if (there.length > 0) return `unknown key here; it belongs under ${there.map(parentPath).join(' or ')} (${there.join(', ')})`;
  return `unknown key (valid keys: ${valid.join(', ')})`;
}

function objectValue(map: YAMLMap, spec: ObjectSpec, path: string, ctx: Context): Record<string, unknown> {
  const pairs = new Map<string, { key: unknown; value: unknown }>();
  for (const pair of map.items) {
    const key = keyOf(pair, path, map as Node, ctx);
    const keyNode = pair.key as Node;
    if (!Object.hasOwn(spec.fields, key)) ctx.fail(childPath(path, key), unknownKey(key, spec, path, ctx), keyNode);
    pairs.set(key, pair);
  }
  if (spec.exactlyOne) {
    const given = [...pairs.keys()].filter((k) => spec.exactlyOne!.includes(k));
    const choices = spec.exactlyOne.join(', ');
    if (given.length === 0) ctx.fail(path, `needs exactly one of ${choices}`, map as Node);
    if (given.length > 1) {
      ctx.fail(path, `has both ${given[0]} and ${given[1]}; give exactly one of ${choices}`, pairs.get(given[1])!.key as Node);
    }
  }
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(spec.fields)) {
    const pair = pairs.get(key);
    const p = childPath(path, key);
    if (!pair && spec.exactlyOne?.includes(key)) continue;
    const when = field.onlyWhen;
    if (when && !when.values.includes(out[when.key] as string)) {
      if (pair) ctx.fail(p, `applies only when ${when.key} is ${when.values.join(' or ')}`, pair.key as Node);
      continue;
    }
    // The key's position stands in for an empty value's, which has none of its own.
    if (pair) ctx.mark(p, pair.key as Node);
    const value = pair ? validate((pair.value as Node | null) ?? null, field, p, ctx) : absent(field, p, ctx);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

function listValue(seq: YAMLSeq, spec: Extract<Spec, { type: 'list' }>, path: string, ctx: Context): unknown[] {
  const n = seq.items.length;
  if (spec.length !== undefined && n !== spec.length) ctx.fail(path, `expected ${expected(spec)}, got ${n}`, seq as Node);
  if (spec.minItems !== undefined && n < spec.minItems) ctx.fail(path, `needs at least ${spec.minItems} item(s)`, seq as Node);
  return seq.items.map((item, i) => {
    const node = (item as Node | null) ?? null;
    if (isEmpty(node)) typeError(spec.items, node, childPath(path, i), ctx);
    return validate(node, spec.items, childPath(path, i), ctx);
  });
}

function dictValue(map: YAMLMap, spec: Extract<Spec, { type: 'dict' }>, path: string, ctx: Context): [string, unknown][] {
  return map.items.map((pair) => {
    const key = keyOf(pair, path, map as Node, ctx);
    const p = childPath(path, key);
    if (!spec.keyPattern.test(key)) ctx.fail(p, `"${key}" is not a valid key (expected ${spec.keyDescription})`, pair.key as Node);
    const node = (pair.value as Node | null) ?? null;
    if (isEmpty(node)) typeError(spec.values, node, p, ctx);
    const value = validate(node, spec.values, p, ctx);
    // Later problems with an entry (overlapping ranges) are about its key, so point there.
    ctx.mark(p, pair.key as Node);
    return [key, value];
  });
}

function scalarValue(node: Scalar, spec: Spec, path: string, ctx: Context): unknown {
  const v = node.value;
  if (spec.type === 'boolean') return typeof v === 'boolean' ? v : typeError(spec, node, path, ctx);
  if (spec.type === 'string') {
    // `name: 2024` is a number to YAML but obviously meant as text.
    const s = typeof v === 'string' ? v : typeof v === 'number' ? (node.source ?? String(v)) : typeError(spec, node, path, ctx);
    if (!spec.allowEmpty && s.trim() === '') ctx.fail(path, `must not be empty (${spec.description})`, node);
    if (spec.oneOf && !spec.oneOf.includes(s)) {
      const near = nearest(s, spec.oneOf);
      ctx.fail(path, `"${s}" is not valid${near ? `; did you mean "${near}"?` : ''} (valid: ${spec.oneOf.join(', ')})`, node);
    }
    return s;
  }
  if (spec.type !== 'number' && spec.type !== 'count' && spec.type !== 'duration' && spec.type !== 'size' && spec.type !== 'days') {
    return typeError(spec, node, path, ctx);
  }
  if (typeof v !== 'number' && typeof v !== 'string') return typeError(spec, node, path, ctx);
  let n: number;
  try {
    n = PARSE[spec.type](v);
  } catch (err) {
    // a negative value: the key's own range (-5 and 0 once got different bounds), not the parser's ">= 0"
    if (err instanceof InputError && / is negative \(/.test(err.message) && (spec.above !== undefined || (spec.min ?? 0) > 0)) {
      ctx.fail(path, `${shown(node)} is out of range (valid: ${rangeText(spec)})`, node);
    }
    if (err instanceof InputError) ctx.fail(path, err.message, node);
    throw err;
  }
  const text = shown(node);
  if (spec.integer && !Number.isInteger(n)) ctx.fail(path, `expected a whole number, got ${text}`, node);
  // Past 2^53 whole numbers silently round: 1e300 "users" is a typo, not a plan.
  if (spec.integer && !Number.isSafeInteger(n)) ctx.fail(path, `${text} is too large (at most ${Number.MAX_SAFE_INTEGER})`, node);
  const inRange =
    (spec.min === undefined || n >= spec.min) &&
    (spec.max === undefined || n <= spec.max) &&
    (spec.above === undefined || n > spec.above) &&
    (spec.below === undefined || n < spec.below);
  if (!inRange) ctx.fail(path, `${text} is out of range (valid: ${rangeText(spec)})`, node);
  return n;
}
