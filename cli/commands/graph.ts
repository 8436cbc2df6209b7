// feedlab graph generate | import | stats: make, convert and describe follower graphs (cli/spec/graph.ts).
import { basename, dirname, resolve } from 'node:path';
import { isGraphFile, loadGraph, saveGraph } from '../../sim/graph/file.js';
import { GENERATE_DEFAULTS, validateGenerateParams, type CelebrityParams, type GenerateParams } from '../../sim/graph/generate.js';
import type { FollowerGraph } from '../../sim/graph/graph.js';
import { importCounts, importEdgeList } from '../../sim/graph/import.js';
import { DEFAULT_THRESHOLDS, graphStats, type DegreeSummary, type GraphStats } from '../../sim/graph/stats.js';
import { numberFlag, threadsFlag } from '../args.js';
import { generateGraphOnThreads } from '../../sim/parallel/generate-graph.js';
import type { GENERATE_OPTIONS, IMPORT_OPTIONS, STATS_OPTIONS } from '../spec/graph.js';
import type { Values } from '../spec/options.js';
import { EXIT_OK, InputError } from '../errors.js';
import { Progress } from '../output.js';
import { checkDirs } from '../../sim/make-dirs.js';

export async function generate(values: Values<typeof GENERATE_OPTIONS>): Promise<number> {
  const users = numberFlag('users', values.users, 0, { min: 2, max: 0xfffffffe, integer: true });
  const params: GenerateParams = {
    users,
    avgFollows: numberFlag('avg-follows', values['avg-follows'], 0, { min: Number.MIN_VALUE }),
    alpha: numberFlag('alpha', values.alpha, 0, { min: Number.MIN_VALUE }),
    seed: numberFlag('seed', values.seed, 1, { min: 0, max: 0xffffffff, integer: true }),
    maxFollows: numberFlag('max-follows', values['max-follows'], GENERATE_DEFAULTS.maxFollows, { min: 1, integer: true }),
    followsSigma: numberFlag('follows-sigma', values['follows-sigma'], GENERATE_DEFAULTS.followsSigma, { min: 0 }),
    celebrities: [
      ...(values.celebrity ?? []).map((spec) => celebrityFlag('celebrity', spec, users)),
      ...(values.celebrities ?? []).map((spec) => celebrityFlag('celebrities', spec, users)),
    ],
  };
  if (!(params.alpha > 1)) throw new InputError(`--alpha must be greater than 1, got ${values.alpha}`);
  const names = params.celebrities.filter((c) => c.name !== undefined).map((c) => c.name);
  const repeated = names.find((n, i) => names.indexOf(n) !== i);
  if (repeated !== undefined) throw new InputError(`--celebrity ${repeated} is given twice`);
  try {
    validateGenerateParams(params);
  } catch (err) {
    throw new InputError((err as Error).message);
  }

  const threads = threadsFlag(values.threads);
  checkDirs(dirname(resolve(values.out!)), `--out ${values.out}`); // before the work, not after it
  const started = Date.now();
  const progress = new Progress(threads > 1 ? `graph generate on ${threads} threads` : 'graph generate', !values.quiet);
  const g = await generateGraphOnThreads(params, threads, (f, d) => progress.update(f, d));
  progress.done();
  save(g, values.out!);
  const seconds = (Date.now() - started) / 1000;
  process.stdout.write(`wrote ${values.out}: ${fmt(g.users)} accounts, ${fmt(g.edges)} edges, ${(g.edges / g.users).toFixed(2)} follows per account (${seconds.toFixed(1)} s)\n`);
  return EXIT_OK;
}

/** NAME=F (--celebrity) or COUNT=F (--celebrities); F <= 1 a share of the users, > 1 a follower count. */
function celebrityFlag(flag: 'celebrity' | 'celebrities', spec: string, users: number): CelebrityParams {
  const eq = spec.lastIndexOf('=');
  const example = flag === 'celebrity' ? 'NAME=F, e.g. popstar=0.3 or popstar=250000' : 'COUNT=F, e.g. 10=0.3 or 10=250000';
  if (eq <= 0 || eq === spec.length - 1) throw new InputError(`--${flag} "${spec}" must be ${example}`);
  const left = spec.slice(0, eq);
  const followers = Number(spec.slice(eq + 1));
  if (!Number.isFinite(followers) || followers <= 0) throw new InputError(`--${flag} "${spec}": followers must be a positive number (<= 1: a share of the users, > 1: a count)`);
  if (followers > 1 && (!Number.isInteger(followers) || followers > users - 1)) {
    throw new InputError(`--${flag} "${spec}": a follower count must be a whole number from 2 to users - 1 = ${users - 1}`);
  }
  if (flag === 'celebrity') return { count: 1, followers, name: left };
  const count = Number(left);
  if (!Number.isInteger(count) || count < 1) throw new InputError(`--celebrities "${spec}": COUNT must be a whole number >= 1`);
  return { count, followers };
}

export async function importCommand(values: Values<typeof IMPORT_OPTIONS>, positionals: string[]): Promise<number> {
  const file = positionals[0];
  // its bytes read as an edge list made a 300-character line of binary in the error
  if (isGraphFile(file)) throw new InputError(`already a .fgraph file: graph stats reads it, and a scenario takes it as graph: { file: ${file} }`, file);
  const out = values.out ?? defaultOutput(file);
  checkDirs(dirname(resolve(out)), `--out ${out}`);
  const g = await importWithProgress(file, values.undirected === true, !values.quiet);
  save(g, out);
  process.stdout.write(`wrote ${out}: ${fmt(g.users)} accounts, ${fmt(g.edges)} edges\n`);
  return EXIT_OK;
}

export async function stats(values: Values<typeof STATS_OPTIONS>, positionals: string[]): Promise<number> {
  const file = positionals[0];
  const thresholds = values.thresholds === undefined ? DEFAULT_THRESHOLDS : parseThresholds(values.thresholds);
  const top = numberFlag('top', values.top, 10, { min: 0, max: 10000, integer: true });
  const g = isGraphFile(file) ? loadGraph(file) : await importWithProgress(file, values.undirected === true, !values.quiet);
  const s = graphStats(g, { source: file, thresholds, top });
  process.stdout.write(values.json ? JSON.stringify(s, null, 2) + '\n' : statsText(s));
  return EXIT_OK;
}

async function importWithProgress(file: string, undirected: boolean, show: boolean): Promise<FollowerGraph> {
  const progress = new Progress(`import ${basename(file)}`, show);
  const g = await importEdgeList(file, { undirected, onProgress: (f, d) => progress.update(f, d) });
  progress.done();
  const c = importCounts(g)!;
  if (show) {
    process.stderr.write(
      `${file}: ${fmt(c.lines)} lines read, ${fmt(c.edgeLines)} edge lines, ${fmt(c.selfLoops)} self-loops dropped, ${fmt(c.duplicates)} duplicates merged: ${fmt(g.users)} accounts, ${fmt(g.edges)} edges\n`,
    );
  }
  return g;
}

/** Save, turning a file-system refusal into one line naming the output. */
function save(g: FollowerGraph, out: string): void {
  try {
    saveGraph(g, out);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (typeof e.code === 'string') throw new InputError(`cannot write the graph (${e.code}: ${e.message.replace(/^[A-Z]+: /, '')})`, out);
    throw err;
  }
}

/** soc-Slashdot0902.txt.gz -> soc-Slashdot0902.fgraph, out.ego-twitter -> out.ego-twitter.fgraph (in the current directory). */
export function defaultOutput(file: string): string {
  const name = basename(file).replace(/\.gz$/i, '').replace(/\.(txt|tsv|csv|edges|el|edgelist)$/i, '');
  return `${name}.fgraph`;
}

function parseThresholds(raw: string): number[] {
  const list = raw.split(',').map((s) => s.trim());
  const values = list.map(Number);
  const bad = list.findIndex((s, i) => s === '' || !Number.isFinite(values[i]) || values[i] < 0);
  if (bad >= 0) throw new InputError(`--thresholds must be non-negative numbers separated by commas, got "${list[bad]}"`);
  return values;
}

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

function statsText(s: GraphStats): string {
  const lines: string[] = [];
  const p = s.provenance;
  const origin = typeof p.generator === 'string' ? `generated (${p.generator}, alpha ${p.alpha}, seed ${p.seed})` : typeof p.format === 'string' ? `${p.format}, ${p.direction}` : '';
  lines.push(`graph        ${s.source}${origin ? `  [${origin}]` : ''}`);
  lines.push(`accounts     ${fmt(s.nodes)}`);
  lines.push(`edges        ${fmt(s.edges)}`);
  lines.push(`reciprocity  ${s.reciprocity.toFixed(3)}`);
  lines.push('');
  const head = ['', 'min', 'median', 'mean', 'p99', 'p99.9', 'max'];
  const row = (label: string, d: DegreeSummary) => [label, fmt(d.min), fmt(d.median), d.mean.toFixed(2), fmt(d.p99), fmt(d.p999), fmt(d.max)];
  lines.push(...table([head, row('followers', s.followers), row('followees', s.followees)]));
  if (s.thresholds.length > 0) {
    lines.push('');
    lines.push(...table([['followers', 'accounts', 'share'], ...s.thresholds.map((t) => [`> ${fmt(t.followers)}`, fmt(t.accounts), pct(t.share)])]));
  }
  if (s.top.length > 0) {
    lines.push('');
    lines.push('top accounts by followers');
    lines.push(...table([['id', 'name / source id', 'followers', 'followees'], ...s.top.map((t) => [String(t.id), t.name ?? (t.sourceId !== null ? String(t.sourceId) : '-'), fmt(t.followers), fmt(t.followees)])]));
  }
  lines.push('');
  const f = s.powerLaw;
  lines.push(
    f
      ? `power-law tail of followers: alpha ${f.alpha.toFixed(3)} ± ${f.sigma.toFixed(3)}, xmin ${fmt(f.xmin)}, ${fmt(f.nTail)} accounts in the tail, KS distance ${f.ks.toFixed(4)}`
      : 'power-law tail of followers: too few distinct follower counts to fit',
  );
  lines.push(`  (${f ? f.method : 'discrete MLE'})`);
  return lines.join('\n') + '\n';
}

/** Right-aligned columns, the first left-aligned. */
function table(rows: string[][]): string[] {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ').trimEnd());
}

function pct(share: number): string {
  return `${(share * 100).toFixed(share < 0.001 && share > 0 ? 4 : 3)}%`;
}
