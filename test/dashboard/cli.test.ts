// The dashboard through the built CLI: off a terminal nothing redraws; on a pseudo-terminal
// (util-linux `script`) it runs, and q / Ctrl-C stop cleanly with the partial report written.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { feedlab, ROOT, scratchDir, SMALL, writeScenario } from '../cli/cli-helpers.js';
import { clock } from '../../cli/dashboard/format.js';
import { CURSOR_HIDE, CURSOR_UP, hasScript, onPty, personEnv } from '../cli/pty.js';

const MAIN = join(ROOT, 'dist/cli/main.js');
const dir = scratchDir();
const small = writeScenario(dir, 'small.yaml', SMALL);
// the same network over days: long enough to still be running when the test presses a key
const long = writeScenario(dir, 'long.yaml', SMALL.replace('duration: 20m', 'duration: 7d'));

describe('off a terminal', () => {
  it('piped stdout gets the plain report: no escape codes at all, progress plain on stderr', () => {
    const r = spawnSync(process.execPath, [MAIN, 'run', small], { cwd: ROOT, encoding: 'utf8', env: personEnv() });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^small: policy threshold:25000:skip-dormant/);
    expect(r.stdout).toMatch(/SLO: all met/);
    expect(r.stdout).not.toContain('\x1b');
    expect(r.stderr).not.toContain('\x1b');
    expect(r.stderr).toMatch(/simulate small .*done/);
  });
});

describe.skipIf(!hasScript)('on a pseudo-terminal', () => {
  it('shows the dashboard, ends on the report, and writes the same report files as a plain run', async () => {
    const out = join(dir, 'pty-full');
    const r = await onPty(['run', small, '--out', out]);
    expect(r.code).toBe(0);
    expect(r.output).toContain(CURSOR_UP);
    expect(r.output).toMatch(/simulated 0:20:00 \/ 0:20:00/);
    expect(r.output).toMatch(/lag p99 .*PASS/);
    expect(r.output).toContain('B 5 min');
    // the report comes after the last dashboard frame
    const tail = r.output.slice(r.output.lastIndexOf('q or Ctrl-C'));
    expect(tail).toMatch(/small: policy threshold:25000:skip-dormant[\s\S]*SLO: all met/);
    const plainOut = join(dir, 'plain-full');
    const plain = spawnSync(process.execPath, [MAIN, 'run', small, '--out', plainOut, '--quiet'], { cwd: ROOT, encoding: 'utf8', env: personEnv() });
    expect(plain.status).toBe(0);
    expect(readFileSync(join(out, 'report.json'), 'utf8')).toBe(readFileSync(join(plainOut, 'report.json'), 'utf8'));
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toBe(readFileSync(join(plainOut, 'report.md'), 'utf8'));
  });

  it('--no-dashboard, CI=true, --json, --quiet and a terminal too small keep the plain output', async () => {
    for (const [args, env, size] of [
      [['run', small, '--no-dashboard'], personEnv(), undefined],
      [['run', small], personEnv({ CI: 'true' }), undefined],
      [['run', small, '--json'], personEnv(), undefined],
      [['run', small, '--quiet'], personEnv(), undefined],
      [['run', small], personEnv(), 'rows 12 cols 120'],
    ] as const) {
      const r = await onPty([...args], { env, size });
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.output, args.join(' ')).not.toContain(CURSOR_UP);
      expect(r.output, args.join(' ')).not.toContain(CURSOR_HIDE);
      expect(r.output).not.toContain('q or Ctrl-C');
    }
  });

  it('an input error found in the simulation thread is still one line and exit 2', async () => {
    const bad = writeScenario(dir, 'bad-burst.yaml', SMALL.replace('accounts: 2, window', 'accounts: 30000, window'));
    const r = await onPty(['run', bad]);
    expect(r.code).toBe(2);
    expect(r.output).toMatch(/feedlab: .*bad-burst\.yaml: a celebrityBurst at 300s asks for 30000 accounts; the graph has \d+\r?\n/);
    expect(r.output).not.toMatch(/\n\s+at /);
  });

  it('q stops the run at the current simulated minute, writes the partial report and exits 130', async () => {
    const out = join(dir, 'pty-q');
    const junit = join(dir, 'pty-q.xml');
    const r = await onPty(['run', long, '--out', out, '--junit', junit], { keys: [(o) => (/simulated (?!0:00:00)\d+:\d\d:\d\d \/ 168:00:00/.test(o) ? 'q' : null)] });
    expect(r.code).toBe(130);
    // the checks of the part that ran, marked partial, for a CI system
    expect(readFileSync(junit, 'utf8')).toMatch(/<property name="partial" value="stopped at \d+ s simulated"\/>/);
    const doc = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    expect(doc.schema).toBe('feedlab.result/1');
    const stoppedAt = doc.partial.stoppedAtSeconds;
    expect(stoppedAt % 60).toBe(0);
    expect(stoppedAt).toBeGreaterThan(0);
    expect(stoppedAt).toBeLessThan(7 * 86400);
    // it stopped at a minute the dashboard showed while running (the run is minutes ahead of a frame,
    // and goes back to the one on screen), not at one first drawn after the stop
    expect(r.output).toMatch(new RegExp(`simulated ${clock(stoppedAt)} / 168:00:00[^\n]*ETA`));
    expect(doc.series.memoryBytes).toHaveLength(stoppedAt / 60);
    const md = readFileSync(join(out, 'report.md'), 'utf8');
    expect(md).toMatch(/\*\*partial: stopped at .* of 7 d; every figure covers the first .* only\*\*/);
    expect(r.output).toMatch(/partial: stopped at .* of 7 d/);
    expect(r.output).toMatch(/feedlab: stopped at .* of 7 d simulated; the partial report is in .*pty-q \(exit 130\)/);
  });

  it('a sweep on two threads: the charts follow the first policy running, the report is the one without the dashboard', async () => {
    const out = join(dir, 'pty-parallel');
    const plain = join(dir, 'plain-parallel');
    const args = ['sweep', long, '--policies', 'threshold:25000,push,pull', '--threads', '2'];
    const r = await onPty([...args, '--out', out]);
    expect(r.output).toMatch(/policy 1\/3 threshold:25000:skip-dormant \(\+1 running\)/);
    const alone = feedlab([...args, '--no-dashboard', '--out', plain]);
    expect(r.code).toBe(alone.code);
    expect(readFileSync(join(out, 'report.json'), 'utf8')).toBe(readFileSync(join(plain, 'report.json'), 'utf8'));
  });

  it('Ctrl-C in a sweep stops the running policy and reports the policies that finished', async () => {
    const out = join(dir, 'pty-sweep');
    // one after another (--threads 1): the first policy runs 7 simulated days (a few seconds);
    // Ctrl-C comes as the second starts
    const junit = join(dir, 'pty-sweep.xml');
    const r = await onPty(['sweep', long, '--policies', 'threshold:25000,push,pull', '--threads', '1', '--out', out, '--junit', junit], {
      keys: [(o) => (o.includes('policy 2/3') ? '\x03' : null)],
    });
    expect(r.code).toBe(130);
    const doc = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    expect(doc.schema).toBe('feedlab.sweep/1');
    expect(doc.rows.map((x: { policy: string }) => x.policy)).toEqual(['threshold:25000:skip-dormant']);
    expect(doc.partial.stoppedPolicy).toBe('push');
    expect(doc.partial.notRun).toEqual(['pull']);
    // the finished policy's checks
    expect(readFileSync(junit, 'utf8')).toMatch(/<testsuite name="[^"]+ threshold:25000:skip-dormant"/);
    expect(readFileSync(junit, 'utf8')).not.toMatch(/<testsuite name="[^"]* push/);
    expect(existsSync(join(out, 'report.md'))).toBe(true);
    expect(r.output).toMatch(/partial: stopped after 1 finished policy; push stopped at .* of 7 d \(not compared\); not run: pull/);
    expect(r.output).toContain('feedlab: sweep stopped; 1 of 3 policies finished');
  });
});
