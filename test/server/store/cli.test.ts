// feedlab migrate and load-graph as a user runs them (the built CLI): exit codes and one-line errors.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { saveGraph } from '../../../sim/graph/file.js';
import { generateGraph } from '../../../sim/graph/generate.js';
import { createStore, probeDatabase } from '../../../server/store/pool.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const MAIN = join(ROOT, 'dist/cli/main.js');
const UNREACHABLE = 'postgres://root:hunter2@127.0.0.1:1/x';

function feedlab(args: string[]) {
  const r = spawnSync(process.execPath, [MAIN, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The exit code, and exactly one line on stderr with no stack trace. */
function expectOneLine(r: ReturnType<typeof feedlab>, code: number): string {
  expect(r.code, r.stderr).toBe(code);
  const lines = r.stderr.trim().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  return lines[0];
}

// The lead registers the commands in cli/main.ts; until then these tests say so loudly (and fail under CI).
const REGISTERED = !/unknown command/.test(feedlab(['load-graph', '--help']).stderr) && !/unknown command/.test(feedlab(['migrate', '--help']).stderr);
const SKIP_CLI = !REGISTERED && process.env.CI !== 'true';
if (SKIP_CLI) console.warn('\n!!! SKIPPING the migrate/load-graph CLI tests: the commands are not registered in cli/main.ts yet\n');

const DOWN = await probeDatabase(process.env.DATABASE_URL, 2000);
const SKIP_DB = SKIP_CLI || (DOWN !== undefined && process.env.CI !== 'true');
if (!SKIP_CLI && SKIP_DB) console.warn(`\n!!! SKIPPING the load-graph CLI tests that need Postgres: ${DOWN} (set DATABASE_URL; under CI=true they fail instead)\n`);

const dir = mkdtempSync(join(tmpdir(), 'feedlab-load-graph-'));
const GRAPH = join(dir, 'small.fgraph');
saveGraph(generateGraph({ users: 500, avgFollows: 8, alpha: 2.2, maxFollows: 5000, followsSigma: 1, seed: 3, celebrities: [] }), GRAPH);
const schema = `fl_test_cli_${process.pid}_${randomBytes(4).toString('hex')}`;

afterAll(async () => {
  if (SKIP_DB || DOWN !== undefined) return;
  const admin = createStore({ max: 1 });
  await admin.pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.pool.end();
});

describe.skipIf(SKIP_CLI)('load-graph and migrate exit codes', () => {
  it('exits 2 with one line for a missing graph file, a missing argument and a bad schema name', () => {
    expect(expectOneLine(feedlab(['load-graph', join(dir, 'missing.fgraph')]), 2)).toContain('missing.fgraph: no such graph file');
    expect(expectOneLine(feedlab(['load-graph']), 2)).toMatch(/missing required argument 'graph'/);
    expect(expectOneLine(feedlab(['load-graph', GRAPH, '--schema', 'Robert;DROP']), 2)).toMatch(/schema name "Robert;DROP" is not valid/);
    expect(expectOneLine(feedlab(['migrate', '--database-url', 'mysql://x@y/z']), 2)).toMatch(/must start with postgres:\/\//);
  });

  it('exits 3 with one line naming the URL, password redacted, when Postgres is unreachable', () => {
    for (const args of [['load-graph', GRAPH], ['migrate']]) {
      const line = expectOneLine(feedlab([...args, '--database-url', UNREACHABLE]), 3);
      expect(line).toContain('postgres://root:***@127.0.0.1:1/x');
      expect(line).not.toContain('hunter2');
    }
  });
});

describe.skipIf(SKIP_DB)('load-graph against Postgres', () => {
  it('migrates and loads, refuses a second load without --truncate (exit 2), reloads with it', () => {
    const first = feedlab(['load-graph', GRAPH, '--schema', schema, '--json', '--quiet']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toBe('');
    const doc = JSON.parse(first.stdout);
    expect(doc).toMatchObject({ schema: 'feedlab.load-graph/1', pgSchema: schema, users: 500 });
    expect(doc.follows).toBeGreaterThan(1000);

    expect(expectOneLine(feedlab(['load-graph', GRAPH, '--schema', schema]), 2)).toMatch(/already holds 500 users .* pass --truncate/);
    const again = feedlab(['load-graph', GRAPH, '--schema', schema, '--truncate']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^loaded .*: 500 users, [\d,]+ follows in /);
    expect(again.stderr).toMatch(/done in/);

    const migrated = feedlab(['migrate', '--schema', schema]);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toMatch(/up to date at version \d+/);
  });
});
