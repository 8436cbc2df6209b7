// The scenario reference (docs/scenario-reference.md), written from the schema itself: every key a
// scenario may hold, its type with units and bounds, its default and what it means. Generated, so
// the reference cannot drift from what the loader accepts; a test holds the committed file to it.
import { scenarioSchema, type NumericType, type Range, type Spec } from './schema.js';
import { formatBytes, formatDuration } from './units.js';

interface Row {
  key: string;
  type: string;
  dflt: string;
  description: string;
}

const UNITS: Record<NumericType, string> = { duration: 'duration', size: 'size', days: 'days', count: 'count', number: 'number' };

function bounds(r: Range, type: NumericType): string {
  const parts: string[] = [];
  // a bound in the unit the key is written in (0 needs none)
  const v = (x: number) => (x === 0 ? '0' : type === 'duration' ? formatDuration(x) : type === 'size' ? formatBytes(x) : String(x));
  if (r.integer) parts.push('whole');
  if (r.min !== undefined) parts.push(`>= ${v(r.min)}`);
  if (r.above !== undefined) parts.push(`> ${v(r.above)}`);
  if (r.max !== undefined) parts.push(`<= ${v(r.max)}`);
  if (r.below !== undefined) parts.push(`< ${v(r.below)}`);
  return parts.length > 0 ? `, ${parts.join(', ')}` : '';
}

function typeOf(s: Spec): string {
  switch (s.type) {
    case 'string':
      return s.oneOf ? `one of ${s.oneOf.map((v) => `\`${v}\``).join(', ')}` : 'text';
    case 'boolean':
      return '`true` or `false`';
    case 'object':
      return s.exactlyOne ? `map: exactly one of ${s.exactlyOne.map((k) => `\`${k}\``).join(', ')}` : 'map';
    case 'list':
      return `list${s.length !== undefined ? ` of ${s.length}` : s.minItems !== undefined ? `, at least ${s.minItems}` : ''}`;
    case 'dict':
      return `map of ${s.keyDescription}`;
    case 'either':
      return `${typeOf(s.scalar)}, or a map`;
    default:
      return `${UNITS[s.type]}${bounds(s, s.type)}${s.interval ? ', or `[low, likely, high]`' : ''}`;
  }
}

const shown = (v: unknown): string => (v === undefined ? '' : typeof v === 'string' ? (v === '' ? '""' : `\`${v}\``) : `\`${JSON.stringify(v)}\``);

function walk(s: Spec, key: string, rows: Row[]): void {
  const extra = [s.none ? '`none` allowed' : '', s.onlyWhen ? `only with ${s.onlyWhen.key}: ${s.onlyWhen.values.join(' or ')}` : ''].filter(Boolean).join('; ');
  if (key !== '') {
    rows.push({
      key: `\`${key}\``,
      type: typeOf(s) + (extra ? `; ${extra}` : ''),
      dflt: s.required ? 'required' : shown(s.default),
      description: s.description,
    });
  }
  const below = (k: string) => (key === '' ? k : `${key}.${k}`);
  if (s.type === 'object') for (const [k, f] of Object.entries(s.fields)) walk(f, below(k), rows);
  else if (s.type === 'list') walk(s.items, `${key}[]`, rows);
  else if (s.type === 'dict') walk(s.values, below(`<${s.keyDescription}>`), rows);
  else if (s.type === 'either') {
    if (s.map.type === 'object' || s.map.type === 'dict') {
      const inner: Row[] = [];
      walk(s.map, key, inner);
      rows.push(...inner.slice(1));
    }
  }
}

/** Every key of the schema, one row each, in the schema's order. */
export function scenarioKeys(): Row[] {
  const rows: Row[] = [];
  walk(scenarioSchema, '', rows);
  return rows;
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** docs/scenario-reference.md. */
export function scenarioReference(): string {
  const rows = scenarioKeys();
  return [
    '# Scenario reference',
    '',
    '<!-- Generated from sim/scenario/schema.ts by `npm run docs`; test/scenario/reference.test.ts holds it to the schema. -->',
    '',
    'Every key a scenario file may hold, with its type, default and meaning. A duration takes its unit',
    '(`2us`, `500ms`, `5s`, `30m`, `2h`, `7d`), a size its own (`B`, `MB`/`GB`/`TB` decimal, `MiB`/`GiB`/`TiB`),',
    'a count may be written `2e8`; 0 may go without a unit. `[low, likely, high]` marks an interval `feedlab',
    'plan` samples (run takes the likely value). An unknown key is refused with the nearest known one, a',
    'value out of its bounds with the file, line and column. `scenarios/` has worked examples.',
    '',
    '| key | type | default | meaning |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${cell(r.key)} | ${cell(r.type)} | ${cell(r.dflt)} | ${cell(r.description)} |`),
    '',
  ].join('\n');
}
