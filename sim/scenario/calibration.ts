// Calibration files, as `feedlab calibrate` writes them: a `calibration:` block of provenance (the
// machine, the date, the contention, the samples and fits) and an `infrastructure:` block of the
// measured costs, in the scenario format's own keys and units. A scenario includes one with
// `calibration: FILE`; `--calibration FILE` on run, sweep, plan and replay applies one too.
//
// Precedence, key by key (a key is a leaf of `infrastructure`: costs.rtt, api.cpuPerRead, postToLog):
// a key the scenario writes itself wins over its included file, which wins over the defaults, and
// --calibration on the command line wins over both. The file's block is validated with the
// scenario's own infrastructure spec (so every per-key check applies, located in the file), then
// only the keys it writes are taken.
import { readInputFile } from './read-file.js';
import { dirname } from 'node:path';
import { Document, isAlias, isMap, isScalar, LineCounter, parseDocument, type Node, type YAMLMap } from 'yaml';
import { InputError } from '../errors.js';
import { scenarioSchema, type ObjectSpec, type Spec } from './schema.js';
import type { Infrastructure } from './types.js';
import { Context, validate } from './validate.js';

/** The infrastructure keys a calibration measures, and the only ones a calibration file may write. */
export const CALIBRATED_KEYS = [
  'writesPerSecondPerWorker',
  'costs.rtt',
  'costs.zadd',
  'costs.batch',
  'costs.zrange',
  'costs.zrangePerEntry',
  'costs.mgetPerKey',
  'costs.expand',
  'costs.expandPerFollower',
  'costs.eventStatements',
  'costs.eventStatementsByIdle',
  'costs.eventFirstPageByIdle',
  'costs.eventWritesByIdle',
  'costs.eventStatementsGap',
  'costs.eventWritesSpread',
  'costs.pickup',
  'costs.rebuild',
  'postToLog',
  'api.cpuPerRead',
  'api.cpuPerList',
  'api.cpuPerListEntry',
  'api.cpuPerPost',
  'api.cpuPerWrite',
  'api.network',
  'api.idleOverhead',
  'api.idleCpu',
  'api.backgroundCpu',
  'api.spread',
  'api.postListed',
] as const;

export type CalibratedKey = (typeof CALIBRATED_KEYS)[number];

/** Where a scenario's infrastructure came from, for result documents and reports. */
export interface CalibrationProvenance {
  /** The calibration file, as resolved (relative to the scenario's directory when included). */
  file: string;
  /** The machine it was measured on: hostname, cores and CPU model. */
  machine: string;
  /** When it was measured (ISO 8601). */
  date: string;
  /** Other processes took more than a quarter of the machine while it was measured. */
  contended: boolean;
  /** Each process's waits for a core while the running worker was measured (calibration.coreWaits), by name; absent from older files and a target's. */
  coreWaits?: Record<string, ProcessWaits>;
  /**
   * Redis's commandstats over the running worker's posts by size (calibration.measurements.workerBySize.redisCommands):
   * calls and microseconds by command, to set beside a replay's window; absent from older files.
   */
  workerRedisCommands?: Record<string, CommandTime>;
}

/** Redis's calls of a command and its own microseconds in them (INFO commandstats). */
export interface CommandTime {
  calls: number;
  usec: number;
}

/** What a result or plan document says of its calibration: the file, the machine, the date, whether it was contended (not the measurements the provenance carries for compare). */
export type DocumentProvenance = Pick<CalibrationProvenance, 'file' | 'machine' | 'date' | 'contended'>;

export function documentProvenance(c: CalibrationProvenance): DocumentProvenance {
  return { file: c.file, machine: c.machine, date: c.date, contended: c.contended };
}

/** A process's mean wait for a core each time it was put on one (seconds), and its waits over its CPU time. */
export interface ProcessWaits {
  perSlice: number;
  ofCpu: number;
}

export interface Calibration {
  provenance: CalibrationProvenance;
  /** The keys the file writes, with their resolved values (seconds, quantile distributions). */
  values: Map<CalibratedKey, unknown>;
}

export const INFRASTRUCTURE_SPEC = scenarioSchema.fields.infrastructure as ObjectSpec;

const MACHINE_SPEC: Spec = {
  type: 'object',
  description: 'the machine the calibration was measured on',
  fields: {
    hostname: { type: 'string', description: 'its hostname', required: true },
    cpu: { type: 'string', description: 'its CPU model', required: true },
    cores: { type: 'count', integer: true, description: 'its logical cores', required: true, min: 1 },
    memory: { type: 'size', description: 'its memory', required: true, above: 0 },
  },
};

const CONTENTION_SPEC: Spec = {
  type: 'object',
  description: "the other processes' share of the machine while it was measured",
  fields: {
    otherShare: { type: 'number', description: 'their share of all cores, 0 to 1', required: true, min: 0, max: 1 },
    contended: { type: 'boolean', description: 'true when otherShare was over 25%', required: true },
    over: { type: 'duration', description: 'the wall time it was measured over', min: 0 },
  },
};

const PROCESS_WAITS_SPEC: Spec = {
  type: 'object',
  description: "a process's waits for a core",
  fields: {
    perSlice: { type: 'duration', description: 'its mean wait each time it was put on a core', required: true, min: 0 },
    ofCpu: { type: 'number', description: 'its waits over its CPU time', required: true, min: 0 },
    slices: { type: 'count', integer: true, description: 'the times it was put on a core', min: 1 },
  },
};

/** The processes calibrate's running worker's measurements had (cli/calibrate/session.ts names them). */
const CORE_WAITS_SPEC: Spec = {
  type: 'dict',
  description: "each process's waits for a core while the running worker was measured",
  keyPattern: /^(worker|server|redis|postgres|driver)$/,
  keyDescription: 'a process calibrate ran: worker, server, redis, postgres or driver',
  values: PROCESS_WAITS_SPEC,
};

/** Redis's INFO commandstats over a phase, by command (as `feedlab calibrate` writes them). */
const COMMANDS_SPEC: Spec = {
  type: 'dict',
  description: "Redis's calls and own microseconds by command (INFO commandstats)",
  keyPattern: /^[a-z][a-z0-9_.|-]*$/,
  keyDescription: 'a Redis command, lower case as INFO commandstats names it',
  values: {
    type: 'object',
    description: "a command's calls and Redis's own time",
    fields: {
      calls: { type: 'count', integer: true, description: 'its calls', required: true, min: 0 },
      usec: { type: 'number', description: "Redis's own microseconds in them", required: true, min: 0 },
    },
  },
};

const DATE_SPEC: Spec = {
  type: 'string',
  description: 'when it was measured (ISO 8601)',
  required: true,
  build: (s: string, at) => (Number.isNaN(Date.parse(s)) ? at.fail(`"${s}" is not a date (write ISO 8601, e.g. 2026-12-02T10:00:00Z)`) : s),
};

/** The file's root for suggestions ("did you mean ..."): its two blocks. */
const FILE_SPEC: ObjectSpec = {
  type: 'object',
  description: 'a calibration file',
  fields: {
    calibration: { type: 'object', description: 'provenance', fields: { machine: MACHINE_SPEC, date: DATE_SPEC, contention: CONTENTION_SPEC, coreWaits: CORE_WAITS_SPEC } },
    infrastructure: INFRASTRUCTURE_SPEC,
  },
};

export function loadCalibration(path: string, from?: string): Calibration {
  return parseCalibration(readInputFile(path, 'calibration file', from), path);
}

/** A calibration file's text; `source` names it in errors (file:line:col). */
export function parseCalibration(text: string, source: string): Calibration {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const syntax = doc.errors[0];
  if (syntax) {
    const { line, col } = lines.linePos(syntax.pos[0]);
    throw new InputError(`invalid YAML: ${syntax.message.replace(/\s+/g, ' ').trim()}`, `${source}:${line}:${col}`);
  }
  const ctx: Context = new Context(doc, lines, source, dirname(source), FILE_SPEC);
  const root = doc.contents as Node | null;
  if (!isMap(root)) throw new InputError('a calibration file is a map with the blocks calibration and infrastructure (written by feedlab calibrate)', `${source}:1:1`);
  for (const pair of root.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    if (!Object.hasOwn(FILE_SPEC.fields, key)) ctx.fail(key, 'unknown block (a calibration file has calibration and infrastructure)', pair.key as Node);
  }
  const block = (name: string): YAMLMap => {
    const node = deref(doc, root.get(name, true) as Node | undefined);
    if (!isMap(node)) ctx.fail(name, node ? 'expected a map' : `the ${name} block is missing (a calibration file has calibration and infrastructure)`, node ?? root);
    return node;
  };
  const provenanceNode = block('calibration');
  const infraNode = block('infrastructure');
  const field = (name: string, spec: Spec, optional = false) => {
    const pair = provenanceNode.items.find((p) => isScalar(p.key) && p.key.value === name);
    if (!pair && optional) return undefined;
    if (!pair) ctx.fail(`calibration.${name}`, `required key is missing (${spec.description})`, provenanceNode);
    ctx.mark(`calibration.${name}`, pair.key as Node);
    return validate((pair.value as Node | null) ?? null, spec, `calibration.${name}`, ctx);
  };
  const machine = field('machine', MACHINE_SPEC) as { hostname: string; cpu: string; cores: number };
  const date = field('date', DATE_SPEC) as string;
  const contention = field('contention', CONTENTION_SPEC) as { contended: boolean };
  const waits = field('coreWaits', CORE_WAITS_SPEC, true) as [string, ProcessWaits][] | undefined;
  const coreWaits = waits && Object.fromEntries(waits.map(([k, w]) => [k, { perSlice: w.perSlice, ofCpu: w.ofCpu }]));
  const workerRedisCommands = measuredCommands(doc, provenanceNode, ctx);

  const resolved = validate(infraNode, INFRASTRUCTURE_SPEC, 'infrastructure', ctx) as Record<string, unknown>;
  const values = new Map<CalibratedKey, unknown>();
  for (const { path, key } of writtenKeys(doc, infraNode, INFRASTRUCTURE_SPEC)) {
    if (!(CALIBRATED_KEYS as readonly string[]).includes(path)) {
      ctx.fail(
        `infrastructure.${path}`,
        `not a measured cost: a calibration file holds only ${CALIBRATED_KEYS.join(', ')} (set the deployment's shape in the scenario)`,
        key,
      );
    }
    values.set(path as CalibratedKey, getPath(resolved, path));
  }
  if (values.size === 0) ctx.fail('infrastructure', 'writes no measured cost (expected some of costs.*, writesPerSecondPerWorker, postToLog, api.*)', infraNode);
  return {
    provenance: {
      file: source,
      machine: `${machine.hostname}, ${machine.cores} x ${machine.cpu}`,
      date,
      contended: contention.contended,
      ...(coreWaits ? { coreWaits } : {}),
      ...(workerRedisCommands ? { workerRedisCommands } : {}),
    },
    values,
  };
}

/** calibration.measurements.workerBySize.redisCommands, checked, or undefined where the file has none (an older one, a target's). */
function measuredCommands(doc: Document, provenance: YAMLMap, ctx: Context): Record<string, CommandTime> | undefined {
  const path = ['measurements', 'workerBySize', 'redisCommands'];
  let node: Node | null = provenance;
  for (const key of path) {
    node = isMap(node) ? deref(doc, node.get(key, true) as Node | undefined) : null;
    if (!node) return undefined;
  }
  const entries = validate(node, COMMANDS_SPEC, `calibration.${path.join('.')}`, ctx) as [string, CommandTime][] | undefined;
  if (!entries) return undefined;
  return Object.fromEntries(entries.map(([cmd, t]) => [cmd, { calls: t.calls, usec: t.usec }]));
}

function deref(doc: Document, node: Node | null | undefined): Node | null {
  if (!node) return null;
  return isAlias(node) ? ((node.resolve(doc) as Node | undefined) ?? null) : node;
}

/**
 * The leaf keys a YAML map writes below an object spec, as paths (costs.rtt; api when it is
 * written `none`), each with its key node. A nested object written as a map is walked into; an
 * empty one writes nothing.
 */
export function writtenKeys(doc: Document, node: Node | null, spec: ObjectSpec, prefix = ''): { path: string; key: Node }[] {
  const map = deref(doc, node);
  if (!isMap(map)) return [];
  const out: { path: string; key: Node }[] = [];
  for (const pair of map.items) {
    if (!isScalar(pair.key)) continue;
    const name = String(pair.key.value);
    const field = spec.fields[name];
    if (!field) continue;
    const path = prefix ? `${prefix}.${name}` : name;
    const value = deref(doc, pair.value as Node | null);
    if (field.type === 'object' && (value === null || isMap(value) || (isScalar(value) && value.value === null))) {
      out.push(...writtenKeys(doc, value, field, path));
    } else out.push({ path, key: pair.key as Node });
  }
  return out;
}

function getPath(obj: Record<string, unknown>, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | null)?.[k], obj);
}

/** The default of an object below infrastructure (the api tier's, when the scenario has none). */
function defaultsOf(name: string): Record<string, unknown> {
  const doc = new Document();
  const lines = new LineCounter();
  const ctx = new Context(doc, lines, 'defaults', '.', INFRASTRUCTURE_SPEC);
  return validate(ctx.create({}), INFRASTRUCTURE_SPEC.fields[name], `infrastructure.${name}`, ctx) as Record<string, unknown>;
}

/**
 * The calibration's values written into `infra` (in place), except the keys in `keep` (those the
 * scenario writes itself, when the file is its include; none for --calibration). A key under a
 * kept parent (`api: none` written by the scenario) is kept too.
 */
export function applyCalibration(infra: Infrastructure, cal: Calibration, keep: ReadonlySet<string>): void {
  const target = infra as unknown as Record<string, Record<string, unknown> | null>;
  for (const [path, value] of cal.values) {
    const parts = path.split('.');
    if (parts.some((_, i) => keep.has(parts.slice(0, i + 1).join('.')))) continue;
    if (parts.length === 1) {
      (target as Record<string, unknown>)[path] = value;
      continue;
    }
    const [parent, leaf] = parts;
    target[parent] ??= defaultsOf(parent);
    target[parent]![leaf] = value;
  }
}
