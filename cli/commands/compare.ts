// feedlab compare A.json B.json: two saved result documents held against each other, figure by
// figure: A is the simulated side, B the measured one (feedlab.compare/1).
import { basename } from 'node:path';
import { compareTerminal, gapsText, gapWords } from '../../reports/compare.js';
import { reportFiles } from '../../reports/files.js';
import { buildComparison, type CompareDocument } from '../../sim/compare/compare.js';
import { pairDocuments, type ComparableDocument } from '../../sim/compare/pair.js';
import { RESULT_SCHEMA, stringifyResult } from '../../sim/result.js';
import { EXIT_OK, EXIT_SLO_FAILED, InputError } from '../errors.js';
import { checkOutputDir, writeReport, sayWritten } from '../output.js';
import { readJsonDocument } from '../json-document.js';
import { compareScenario } from '../compare/scenario-mode.js';
import { COMPARE_SCENARIO_OPTIONS, type COMPARE_OPTIONS } from '../spec/live.js';
import type { Values } from '../spec/options.js';

const SCHEMAS = [RESULT_SCHEMA, 'feedlab.sweep/1'];


/** The comparable document in a file, or one line naming the file and what is wrong with it. */
function readComparable(path: string): ComparableDocument {
  const { doc, schema } = readJsonDocument(path);
  const valid = `compare reads ${SCHEMAS.join(' and ')}`;
  if (typeof schema !== 'string') throw new InputError(`not a feedlab document: no "schema" (${valid})`, path);
  const family = /^(feedlab\.[a-z-]+)\/(\d+)$/.exec(schema);
  if (!family) throw new InputError(`not a feedlab document: schema "${schema}" (${valid})`, path);
  if (!SCHEMAS.includes(schema)) {
    const known = SCHEMAS.find((s) => s.startsWith(`${family[1]}/`));
    throw new InputError(known ? `schema "${schema}" is a version this feedlab does not read (${valid})` : `a ${schema} document has no run figures to compare (${valid})`, path);
  }
  if (schema === 'feedlab.sweep/1') {
    const runs = (doc as { runs?: unknown }).runs;
    if (!Array.isArray(runs)) throw new InputError('an incomplete feedlab.sweep/1 document: "runs" missing', path);
    runs.forEach((r, i) => checkRun(r, path, `runs[${i}].`));
    if (runs.length === 0) throw new InputError('a feedlab.sweep/1 document without runs: nothing to compare', path);
  } else checkRun(doc, path, '');
  return doc as ComparableDocument;
}

/** The sections the figures are read from: a document without them is refused, naming the first few. */
const REQUIRED = [
  'scenario.name',
  'scenario.seed',
  'source',
  'policy',
  ...['fanout.lagSeconds', 'fanout.followerLagSeconds', 'fanout.writesPerSecond', 'redis.memoryBytes', 'reads.latencyMs', 'reads.redisOpsPerRead'].map((k) => `summary.${k}`),
];

function checkRun(doc: unknown, path: string, prefix: string): void {
  const at = (p: string) => p.split('.').reduce<unknown>((v, step) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[step] : undefined), doc);
  const missing = REQUIRED.filter((k) => at(k) === undefined || at(k) === null);
  if (missing.length > 0) {
    const named = missing.slice(0, 4).map((k) => `"${prefix}${k}"`).join(', ');
    throw new InputError(`an incomplete ${RESULT_SCHEMA} document: ${named}${missing.length > 4 ? ` and ${missing.length - 4} more` : ''} missing`, path);
  }
  const source = at('source');
  if (source !== 'simulate' && source !== 'replay') throw new InputError(`"${prefix}source" is "${String(source)}" (valid: simulate, replay)`, path);
}

/** One line for --check: how many figures are outside, and the first few with their ratios. */
function outsideLine(doc: CompareDocument): string {
  const outside = doc.figures.filter((f) => f.verdict === 'outside');
  const named = outside.slice(0, 5).map((f) => `${f.id} (${f.policy}) ${f.ratio === null ? 'no ratio' : `ratio ${Number(f.ratio.toPrecision(3))}`}${f.gap ? `, ${gapWords(f.gap)}` : ''}`);
  const more = outside.length > 5 ? ` and ${outside.length - 5} more` : '';
  const whose = doc.gaps ? ` (${gapsText(doc.gaps)})` : '';
  return `${outside.length} ${outside.length === 1 ? 'figure is' : 'figures are'} outside 15% of the measured value and outside the noise${whose}: ${named.join(', ')}${more}`;
}

export async function run(values: Values<typeof COMPARE_OPTIONS>, positionals: string[]): Promise<number> {
  if (positionals.length === 1) {
    if (values.out) checkOutputDir(values.out);
    const { doc, files } = await compareScenario(positionals[0], values, values.out);
    return finish(doc, values, files);
  }
  if (positionals.length !== 2) {
    throw new InputError(`compare: a scenario, or two result documents (simulated, then measured), got ${positionals.length} arguments`);
  }
  const scenarioOnly = (Object.keys(COMPARE_SCENARIO_OPTIONS) as (keyof typeof COMPARE_SCENARIO_OPTIONS)[]).filter((k) => values[k] !== undefined);
  if (scenarioOnly.length > 0) throw new InputError(`compare: --${scenarioOnly[0]} goes with compare SCENARIO, not with two documents`);
  const [pathA, pathB] = positionals;
  const a = readComparable(pathA);
  const b = readComparable(pathB);
  if (values.out) checkOutputDir(values.out);

  const names = { a: basename(pathA), b: basename(pathB) };
  // the same file name on both sides (sim/report.json, live/report.json) is told apart by its path
  const [nameA, nameB] = names.a === names.b ? [pathA, pathB] : [names.a, names.b];
  const paired = pairDocuments({ name: nameA, doc: a }, { name: nameB, doc: b });
  if (paired.policies.length === 0) {
    const policies = (d: ComparableDocument) => (d.schema === 'feedlab.sweep/1' ? d.runs.map((r) => r.policy) : [d.policy]).join(', ');
    throw new InputError(`compare: no policy in common: ${nameA} has ${policies(a)}; ${nameB} has ${policies(b)}`);
  }
  return finish(buildComparison(paired), values, {});
}

/** Print, write and judge a comparison; `extra` files go beside the report (a replay's documents, the calibration). */
function finish(doc: CompareDocument, values: { json?: boolean; out?: string; check?: boolean; quiet?: boolean }, extra: Record<string, string>): number {
  const files = { ...extra, ...reportFiles(doc) };
  if (values.out) writeReport(values.out, files);
  if (values.json) {
    for (const w of doc.warnings) process.stderr.write(`feedlab: note: ${w}\n`);
    process.stdout.write(stringifyResult(doc) + '\n');
  } else process.stdout.write(compareTerminal(doc));
  sayWritten(values, files);
  if (values.check && doc.counts.outside > 0) {
    process.stderr.write(`feedlab: ${outsideLine(doc)}\n`);
    return EXIT_SLO_FAILED;
  }
  return EXIT_OK;
}
