// feedlab plan, end to end through the built CLI (dist/, built before vitest).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectInputErrors, feedlab, oneLine, ROOT, scratchDir, writeScenario } from '../cli/cli-helpers.js';

const dir = scratchDir();
const small = join(ROOT, 'test/fixtures/scenarios/plan-small.yaml');
const push = join(ROOT, 'test/fixtures/scenarios/plan-push.yaml');

describe('feedlab plan', () => {
  it('--json prints one feedlab.plan/1 document, byte-identical for a seed', () => {
    const r = feedlab(['plan', small, '--json', '--quiet', '--samples', '50']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const doc = JSON.parse(r.stdout);
    expect(doc.schema).toBe('feedlab.plan/1');
    expect(doc.settings).toMatchObject({ growth: 1, headroom: 0.3, samples: 50, distribution: 'triangular' });
    expect(doc.columns.map((c: { label: string }) => c.label)).toEqual(['p5', 'p50', 'p95']);
    for (const res of doc.resources) {
      expect(Object.keys(res.display)).toEqual(['p5', 'p50', 'p95']);
      expect(res.reason).toBeTruthy();
    }
    expect(feedlab(['plan', small, '--json', '--quiet', '--samples', '50']).stdout).toBe(r.stdout);
    expect(feedlab(['plan', small, '--json', '--quiet', '--samples', '50', '--seed', '99']).stdout).not.toBe(r.stdout);
  });

  it('runs the checks at the p50 and the p95 at once on worker threads: the same plan as one after the other', () => {
    const serial = feedlab(['plan', small, '--json', '--samples', '50', '--threads', '1']);
    const atOnce = feedlab(['plan', small, '--json', '--samples', '50', '--threads', '2']);
    expect(serial.code, serial.stderr).toBe(0);
    expect(atOnce.code, atOnce.stderr).toBe(0);
    const doc = JSON.parse(atOnce.stdout);
    // two samples, two checks: what the threads have to share
    expect(doc.check.map((c: { quantile: string }) => c.quantile)).toEqual(['p50', 'p95']);
    expect(JSON.stringify(doc.check[0].point)).not.toBe(JSON.stringify(doc.check[1].point));
    expect(atOnce.stdout).toBe(serial.stdout);
    // every simulation's end in its own line, as one after the other prints them, then the two together
    const ends = (stderr: string) => stderr.split('\n').filter((l) => /^check p(50|95): simulate .* done in /.test(l)).map((l) => l.replace(/ done in \S+/, '')).sort();
    expect(ends(atOnce.stderr)).toEqual(ends(serial.stderr));
    expect(ends(atOnce.stderr).length).toBeGreaterThanOrEqual(2);
    expect(atOnce.stderr).toMatch(/^2 checks on 2 threads done in /m);
    expect(serial.stderr).not.toMatch(/checks on/);
  });

  it('evaluates 1,000 samples or more on worker threads, a slice at a time: the same plan as on one thread', () => {
    const serial = feedlab(['plan', small, '--json', '--samples', '1000', '--threads', '1']);
    const atOnce = feedlab(['plan', small, '--json', '--samples', '1000', '--threads', '2']);
    expect(atOnce.code, atOnce.stderr).toBe(0);
    expect(atOnce.stdout).toBe(serial.stdout);
    expect(atOnce.stderr).toMatch(/^1000 samples on 2 threads done in /m);
    expect(serial.stderr).not.toMatch(/samples on/);
    // fewer: the threads would save less than the runs vary by
    expect(feedlab(['plan', small, '--json', '--samples', '999', '--threads', '2']).stderr).not.toMatch(/samples on/);
  });

  it('--growth scales the plan: 1.5x the users, 1.5x the memory used', () => {
    const used = (args: string[]) => JSON.parse(feedlab(['plan', push, '--json', '--quiet', ...args]).stdout).workload.find((w: { id: string }) => w.id === 'redisMemoryUsed').values.p50;
    expect(used(['--growth', '1.5']) / used([])).toBeCloseTo(1.5, 3);
  });

  it('prints the plan table, the reasons, the binding constraint and the what-ifs; progress on stderr', () => {
    const r = feedlab(['plan', push]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^plan-push: capacity plan, policy push:skip-dormant, growth x1, headroom 30%/);
    expect(r.stdout).toMatch(/^fan-out workers\s+\d+$/m);
    expect(r.stdout).toMatch(/^Redis memory, all nodes\s+[\d.]+ GB$/m);
    expect(r.stdout).toMatch(/checked by simulation at p50 \(\d+ partitions?, \d+ shards?\): \d+ -> lag p99/);
    expect(r.stdout).toMatch(/^Binding constraint: fan-out lag binds/m);
    expect(r.stdout).toMatch(/^ {2}a timeline cap of 400 instead of 800 cuts timeline memory by \d+%/m);
    expect(r.stderr).toMatch(/check p50: simulate plan-push with \d+ workers done/);
    expect(feedlab(['plan', push, '--quiet']).stderr).toBe('');
  });

  it('--out writes report.json (the same document), report.md and report.html', () => {
    const out = join(dir, 'out-plan');
    const r = feedlab(['plan', small, '--json', '--quiet', '--samples', '20', '--out', out]);
    expect(r.code).toBe(0);
    expect(readdirSync(out).sort()).toEqual(['report.html', 'report.json', 'report.md']);
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toMatch(/^<!doctype html>[^]*<h1>Capacity plan: plan-small<\/h1>/);
    expect(readFileSync(join(out, 'report.json'), 'utf8').trim()).toBe(r.stdout.trim());
    const md = readFileSync(join(out, 'report.md'), 'utf8');
    expect(md).toMatch(/^# Capacity plan: plan-small/);
    expect(md).toMatch(/\| resource \| p5 \| p50 \| p95 \| method \|/);
    expect(md).toMatch(/## Binding constraint/);
  });

  it('--check exits 1 when no plan meets every objective within the limits', () => {
    const tight = writeScenario(dir, 'tight.yaml', readFileSync(push, 'utf8').replace('redisMemory: 1TB', 'redisMemory: 1GB'));
    const r = feedlab(['plan', tight, '--quiet', '--check']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/Plan: NOT SATISFIED\n {2}the Redis memory budget of 1 GB/);
    expect(feedlab(['plan', push, '--quiet', '--check']).code).toBe(0);
  });

  it('bad input: one line, exit 2, nothing on stdout, no output directory', () => {
    const out = join(dir, 'never');
    const cases: Array<[string[], RegExp]> = [
      [['plan'], /^feedlab: plan: missing required argument 'scenario'/],
      [['plan', join(dir, 'missing.yaml'), '--out', out], /cannot read scenario file .*missing\.yaml.*no such file/],
      [['plan', push, '--growth', 'lots'], /--growth must be a number, got "lots"/],
      [['plan', push, '--growth', '0'], /--growth must be a multiplier above 0/],
      [['plan', push, '--headroom', '1'], /--headroom must be a share in \[0, 1\)/],
      [['plan', push, '--headroom=-0.1'], /--headroom must be at least 0/],
      [['plan', push, '--samples', '2.5'], /--samples must be a whole number/],
      [['plan', push, '--growth', '0.001'], /population 2,000,000 x --growth 0\.001 = 2,000 users, fewer than the 20,000 of the sampled graph; .*\(--growth 0\.01 or more\)$/],
      // the low end of an interval counts, not only the likely population: refused before the graph is built
      [['plan', small, '--growth', '0.011'], /plan-small\.yaml: population low 1,600,000 x --growth 0\.011 = 17,600 users, fewer than the 20,000 of the sampled graph; .*\(--growth 0\.0125 or more\)$/],
      [['plan', push, '--samples', '5001'], /--samples must be a whole number from 1 to 5000 /],
      [['plan', push, '--threads', '0'], /--threads must be at least 1, got 0$/],
      [['plan', push, '--threads', '1.5'], /--threads must be a whole number, got "1\.5"$/],
      // a negative value after a flag reaches the flag's own check, in one line
      [['plan', push, '--growth', '-1'], /--growth must be a multiplier above 0 and at most 1000 .*got -1$/],
      [['plan', push, '--headroom', '-0.1'], /--headroom must be at least 0, got -0\.1$/],
      [['plan', push, '--seed', '-1'], /--seed must be a whole number from 0 to 9007199254740991 \(2\^53 - 1, held exactly\), got "-1"$/],
      [['plan', push, '--out'], /^feedlab: plan: option '-o, --out <DIR>' argument missing/],
      [['plan', push, '--frobnicate'], /^feedlab: plan: unknown option '--frobnicate'/],
      [['plan', writeScenario(dir, 'bad.yaml', readFileSync(small, 'utf8').replace('[4, 5, 7]', '[4, 9, 7]')), '--out', out], /bad\.yaml:11:26: activity\.sessionsPerUserPerDay: \[4, 9, 7\] is not in order: an interval needs low <= likely <= high/],
    ];
    expectInputErrors(cases);
    expect(existsSync(out)).toBe(false);
  });

  it('run on a scenario with intervals uses the likely values and says so in one stderr line', () => {
    const r = feedlab(['run', small, '--json', '--quiet']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).scenario.population).toBe(2e6);
    expect(oneLine(r.stderr)).toMatch(/^feedlab: note: .*plan-small\.yaml gives intervals; using their likely values \(population 2000000, /);
  });
});
