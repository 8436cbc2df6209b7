// The benches' `feedlab` runner under a prefix command (the graph bench's GNU time): the prefix sees
// the CLI's exit, and a timeout stops both, leaving nothing running. The built CLI (dist/, built by
// `npm test` before vitest), as the benches run it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const { runCli } = (await import(join(ROOT, 'dist/bench/harness.js'))) as typeof import('../../bench/harness.js');
/** A prefix that outlives the CLI under it and says how it ended. */
const SHELL_PREFIX = ['/bin/sh', '-c', '"$0" "$@"; echo "prefix saw $?" >&2'];
const dir = mkdtempSync(join(tmpdir(), 'feedlab-harness-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const generate = (users: number, out: string) => ['graph', 'generate', '--users', String(users), '--avg-follows', '20', '--alpha', '2.1', '-o', out, '-q'];

describe('runCli with a prefix', () => {
  it('runs the CLI under the prefix: its stdout, then the prefix seeing exit 0', async () => {
    const out = join(dir, 'small.fgraph');
    const r = await runCli(generate(1000, out), { timeoutMs: 30_000, prefix: SHELL_PREFIX });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^wrote .*small\.fgraph: 1,000 accounts, [\d,]+ edges/);
    expect(r.stderr.trim()).toBe('prefix saw 0');
    expect(existsSync(out)).toBe(true);
  });

  it('stops the CLI under the prefix at the timeout, and nothing of it is left running', async () => {
    const out = join(dir, 'stopped.fgraph');
    const r = await runCli(generate(5_000_000, out), { timeoutMs: 500, prefix: SHELL_PREFIX });
    expect(r.code).not.toBe(0);
    expect(r.seconds).toBeLessThan(10);
    // pgrep exits 1 when no process matches the run's unique output path
    expect(spawnSync('pgrep', ['-f', out]).status).toBe(1);
    expect(existsSync(out)).toBe(false);
  });
});
