// feedlab report RESULT.json [--out DIR]: render a saved result document (report.json of a run, a
// sweep, a plan or a compare) again into report.json, report.md and report.html.
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { reportFiles, REPORT_SCHEMAS, type ReportDocument } from '../../reports/files.js';
import type { Values } from '../spec/options.js';
import type { REPORT_OPTIONS } from '../spec/simulate.js';
import { EXIT_OK, InputError } from '../errors.js';
import { checkOutputDir, writeReport } from '../output.js';
import { readJsonDocument } from '../json-document.js';

/** The keys (dotted paths) each document must have for its reports to be drawn. */
const REQUIRED: Record<string, string[]> = {
  'feedlab.result/1': [
    'scenario.name',
    'scenario.population',
    'policy',
    'events',
    ...['posts', 'fanout.lagSeconds', 'fanout.followerLagSeconds', 'fanout.writesPerSecond', 'fanout.backlog'].map((k) => `summary.${k}`),
    ...['redis.memoryBytes', 'redis.naiveMemoryBytes', 'redis.perShard', 'reads.latencyMs', 'reads.redisOpsPerRead', 'slo.checks'].map((k) => `summary.${k}`),
    ...['intervalSeconds', 'startSeconds', 'postsPerSecond', 'writesPerSecond', 'readsPerSecond', 'coldReadsPerSecond'].map((k) => `series.${k}`),
    ...['backlogWrites', 'lagP99Seconds', 'readP99Ms', 'memoryBytes', 'naiveMemoryBytes', 'maxShardBytes'].map((k) => `series.${k}`),
  ],
  'feedlab.sweep/1': ['scenario', 'rows', 'runs'],
  'feedlab.plan/1': ['scenario', 'settings', 'slo', 'columns', 'inputs', 'workload', 'resources', 'check', 'binding', 'whatIfs', 'problems', 'method'],
  'feedlab.compare/1': ['scenario', 'agreement', 'sides.simulated', 'sides.measured', 'measurement', 'warnings', 'policies', 'unmatched', 'counts', 'figures'],
};

function readDocument(path: string): ReportDocument {
  const { doc, schema } = readJsonDocument(path);
  if (typeof schema !== 'string') throw new InputError(`not a feedlab result document: no "schema" (valid: ${REPORT_SCHEMAS.join(', ')})`, path);
  if (!REPORT_SCHEMAS.includes(schema)) throw new InputError(`schema "${schema}" has no report (valid: ${REPORT_SCHEMAS.join(', ')})`, path);
  checkKeys(doc as Record<string, unknown>, schema, path, '');
  if (schema === 'feedlab.sweep/1') {
    const runs = (doc as { runs: unknown }).runs;
    if (!Array.isArray(runs) || !Array.isArray((doc as { rows: unknown }).rows)) throw new InputError('rows and runs must be lists', path);
    runs.forEach((r, i) => checkKeys(r as Record<string, unknown>, 'feedlab.result/1', path, `runs[${i}].`));
  }
  return doc as ReportDocument;
}

/** The value at a dotted path, or undefined where any step is missing or not an object. */
function at(doc: unknown, path: string): unknown {
  let v: unknown = doc;
  for (const step of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[step];
  }
  return v;
}

function checkKeys(doc: Record<string, unknown>, schema: string, path: string, prefix: string): void {
  const missing = (REQUIRED[schema] ?? []).filter((k) => at(doc, k) === undefined || at(doc, k) === null);
  if (missing.length > 0) {
    const named = missing.slice(0, 4).map((k) => `"${prefix}${k}"`).join(', ');
    throw new InputError(`an incomplete ${schema} document: ${named}${missing.length > 4 ? ` and ${missing.length - 4} more` : ''} missing`, path);
  }
}

/**
 * Never replace another document: without --out the reports go beside RESULT.json, where a
 * report.json of another run may already be (a sweep's once replaced a run's). The document itself,
 * or one with the same text, may be written again.
 */
function refuseOverwrite(source: string, out: string, files: Record<string, string>): void {
  for (const name of Object.keys(files).filter((n) => n.endsWith('.json'))) {
    const target = join(out, name);
    if (!existsSync(target) || resolve(target) === resolve(source)) continue;
    let existing: string;
    try {
      existing = readFileSync(target, 'utf8');
    } catch {
      continue; // unreadable: writeReport says why it cannot replace it
    }
    if (existing !== files[name]) {
      throw new InputError(`${target} holds another document, which this would replace: give --out DIR for ${basename(source)}'s reports`);
    }
  }
}

export async function run(values: Values<typeof REPORT_OPTIONS>, positionals: string[]): Promise<number> {
  const path = positionals[0];
  const doc = readDocument(path);
  const out = values.out ?? dirname(path);
  checkOutputDir(out);
  let files: Record<string, string>;
  try {
    files = reportFiles(doc);
  } catch (err) {
    // a document that passed the checks above but still lacks a figure a report needs
    throw new InputError(`cannot render this ${doc.schema} document: ${(err as Error).message}`, path);
  }
  refuseOverwrite(path, out, files);
  writeReport(out, files);
  for (const name of Object.keys(files)) process.stdout.write(`${join(out, name)}\n`);
  return EXIT_OK;
}
