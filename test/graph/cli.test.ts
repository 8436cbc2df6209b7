// feedlab graph generate | import | stats through the built CLI, as a user runs them.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { scratch, SLASHDOT } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');
const MAIN = join(ROOT, 'dist/cli/main.js');
const dir = scratch();

/** `npm test` builds first; when these tests run alone, build if dist is older than the sources. */
beforeAll(() => {
  const built = existsSync(join(ROOT, 'dist/cli/commands/graph.js')) ? statSync(join(ROOT, 'dist/cli/commands/graph.js')).mtimeMs : 0;
  const sources = [join(ROOT, 'cli/commands/graph.ts'), ...['sim/graph', 'sim/parallel'].flatMap((d) => readdirSync(join(ROOT, d)).map((f) => join(ROOT, d, f)))];
  if (sources.some((f) => statSync(f).mtimeMs > built)) {
    try {
      execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.json')], { stdio: 'ignore' });
    } catch {
      // type errors elsewhere in the tree do not stop tsc from emitting
    }
  }
});

function feedlab(...args: string[]) {
  const r = spawnSync(process.execPath, [MAIN, 'graph', ...args], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Exit 2 and exactly one line on stderr, no stack trace. */
function failsWith(args: string[], pattern: RegExp): string {
  const r = feedlab(...args);
  expect(r.code).toBe(2);
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(lines[0]).toMatch(pattern);
  return lines[0];
}

describe('feedlab graph generate', () => {
  const args = ['generate', '--users', '30000', '--avg-follows', '12', '--alpha', '2.2', '--seed', '9', '--celebrity', 'popstar=0.4', '--celebrities', '2=700', '--quiet'];

  it('writes the same bytes for the same arguments, other bytes for another seed', () => {
    const a = feedlab(...args, '--out', 'a.fgraph');
    expect(a.code).toBe(0);
    expect(a.stdout).toMatch(/^wrote a\.fgraph: 30,000 accounts, [\d,]+ edges/);
    expect(feedlab(...args, '--out', 'b.fgraph').code).toBe(0);
    expect(feedlab(...args.map((x) => (x === '9' ? '10' : x)), '--out', 'c.fgraph').code).toBe(0);
    const [a1, b1, c1] = ['a', 'b', 'c'].map((n) => readFileSync(join(dir, `${n}.fgraph`)));
    expect(a1.equals(b1)).toBe(true);
    expect(a1.equals(c1)).toBe(false);
  });

  it('writes the same bytes on one thread and on three', () => {
    expect(feedlab(...args, '--threads', '1', '--out', 'one.fgraph').code).toBe(0);
    expect(feedlab(...args, '--threads', '3', '--out', 'three.fgraph').code).toBe(0);
    const [a1, one, three] = ['a', 'one', 'three'].map((n) => readFileSync(join(dir, `${n}.fgraph`)));
    expect(one.equals(a1)).toBe(true);
    expect(three.equals(a1)).toBe(true);
  });

  it('puts the celebrities in the graph with their exact follower counts', () => {
    const r = feedlab('stats', 'a.fgraph', '--json', '--top', '3');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.top[0]).toMatchObject({ id: 29997, name: 'popstar', followers: 12000 });
    expect(doc.provenance.generator).toMatch(/chung-lu/);
  });

  it('refuses bad arguments with one line and exit 2', () => {
    // one prefix (it was "feedlab: feedlab graph generate: ...")
    failsWith(['generate', '--users', '1000', '--avg-follows', '10', '--out', 'x.fgraph'], /^feedlab: graph generate: required option '--alpha <A>' not specified/);
    failsWith(['generate', '--users', '1000', '--avg-follows', '10', '--alpha', '0.5', '--out', 'x.fgraph'], /--alpha must be greater than 1/);
    failsWith(['generate', '--users', 'many', '--avg-follows', '10', '--alpha', '2', '--out', 'x.fgraph'], /--users must be a number, got "many"/);
    failsWith(['generate', '--users', '1000', '--avg-follows', '10', '--alpha', '2', '--out', 'x.fgraph', '--celebrity', 'star'], /--celebrity "star" must be NAME=F/);
    failsWith(['generate', '--users', '1000', '--avg-follows', '10', '--alpha', '2', '--out', 'x.fgraph', '--celebrity', 'star=5000'], /users - 1 = 999/);
    failsWith(['generate', '--users', '1000', '--avg-follows', '10', '--alpha', '2', '--out', 'x.fgraph', '--threads', '0'], /--threads must be at least 1, got 0/);
    expect(existsSync(join(dir, 'x.fgraph'))).toBe(false);
  });

  it('refuses an output it cannot make before generating, not after', () => {
    // Node's recursive mkdir looped for ever under /proc, after the whole generation
    const began = Date.now();
    failsWith(['generate', '--users', '5000000', '--avg-follows', '50', '--alpha', '2', '--out', '/proc/feedlab-no/g.fgraph'], /^feedlab: --out \/proc\/feedlab-no\/g\.fgraph: cannot make \/proc\/feedlab-no \(ENOENT\)$/);
    expect(Date.now() - began).toBeLessThan(5_000);
  });
});

describe('feedlab graph import and stats', () => {
  it('imports Slashdot, reports its counts, and its stats reproduce the published figures', () => {
    const imp = feedlab('import', SLASHDOT);
    expect(imp.code).toBe(0);
    expect(imp.stdout).toBe('wrote soc-Slashdot0902.fgraph: 82,168 accounts, 870,161 edges\n');
    expect(imp.stderr).toContain('948,468 lines read, 948,464 edge lines, 78,303 self-loops dropped, 0 duplicates merged');

    const json = feedlab('stats', 'soc-Slashdot0902.fgraph', '--json', '--thresholds', '100,1000');
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.stdout);
    expect(doc.schema).toBe('feedlab.graph-stats/1');
    expect(doc).toMatchObject({ nodes: 82168, edges: 870161, followers: { max: 2552, median: 2, p99: 150, p999: 419 } });
    expect(doc.thresholds.map((t: { accounts: number }) => t.accounts)).toEqual([1451, 11]);
    expect(doc.powerLaw.xmin).toBe(254);
    for (const key of ['reciprocity', 'followers', 'followees', 'thresholds', 'top', 'powerLaw', 'provenance', 'source']) expect(doc).toHaveProperty(key);
    for (const key of ['min', 'median', 'mean', 'p99', 'p999', 'max']) expect(doc.followees).toHaveProperty(key);
    for (const key of ['alpha', 'sigma', 'xmin', 'nTail', 'ks']) expect(doc.powerLaw).toHaveProperty(key);

    // The edge list directly gives the same document but for its source.
    const direct = JSON.parse(feedlab('stats', SLASHDOT, '--json', '--thresholds', '100,1000', '--quiet').stdout);
    expect({ ...direct, source: '', provenance: {} }).toEqual({ ...doc, source: '', provenance: {} });

    const text = feedlab('stats', 'soc-Slashdot0902.fgraph').stdout;
    expect(text).toContain('alpha 3.375 ± 0.145, xmin 254, 270 accounts in the tail');
    expect(text).toMatch(/followers\s+1\s+2\s+10\.59\s+150\s+419\s+2,552/);
    expect(text).toMatch(/> 1,000\s+11\s/);
  });

  it('refuses missing, foreign, corrupt and malformed files with one line and exit 2', () => {
    failsWith(['stats', 'nope.fgraph'], /^feedlab: nope\.fgraph: no such file$/);
    failsWith(['import', 'nope.txt'], /^feedlab: nope\.txt: no such file$/);
    writeFileSync(join(dir, 'bad.txt'), '1 2\n2 3\nthree 4\n');
    failsWith(['import', 'bad.txt'], /^feedlab: bad\.txt:3: the source is not a node id \(a non-negative integer\), found "three 4"$/);
    failsWith(['stats', 'bad.txt'], /^feedlab: bad\.txt:3: /);
    expect(existsSync(join(dir, 'bad.fgraph'))).toBe(false);

    const bytes = readFileSync(join(dir, 'a.fgraph'));
    bytes[bytes.length >> 1] ^= 1;
    writeFileSync(join(dir, 'flipped.fgraph'), bytes);
    failsWith(['stats', 'flipped.fgraph'], /^feedlab: flipped\.fgraph: corrupt graph file: checksum mismatch/);
    writeFileSync(join(dir, 'short.fgraph'), bytes.subarray(0, 5000));
    failsWith(['stats', 'short.fgraph'], /^feedlab: short\.fgraph: corrupt graph file: truncated/);
    failsWith(['stats'], /^feedlab: graph stats: missing required argument 'file'/);
    failsWith(['import', 'a.fgraph'], /^feedlab: a\.fgraph: already a \.fgraph file: graph stats reads it, and a scenario takes it as graph: \{ file: a\.fgraph \}$/);
    // a directory where a file belongs: said, exit 2 (was "internal error: EISDIR", exit 70)
    failsWith(['stats', dir], new RegExp(`^feedlab: ${dir}: is a directory, not a file$`));
    failsWith(['shuffle'], /^feedlab: graph: unknown command 'shuffle'/);
  });
});
