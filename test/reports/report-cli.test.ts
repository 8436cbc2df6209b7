// feedlab report RESULT.json [--out DIR], through the built CLI; --out of run and plan writing report.html.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { feedlab, oneLine, scratchDir } from '../cli/cli-helpers.js';
import { FIXTURE, PLAN_FIXTURE } from './docs.js';

/** A saved document's text with something taken out of it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function stripped(file: string, edit: (doc: any) => void): string {
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  edit(doc);
  return JSON.stringify(doc);
}

describe('feedlab report', () => {
  const dir = scratchDir();
  const runDir = join(dir, 'run');

  beforeAll(() => {
    // off a terminal: no dashboard, plain output
    const r = feedlab(['run', FIXTURE, '--out', runDir, '--quiet']);
    expect(r.stderr).toBe('');
    expect(existsSync(join(runDir, 'report.json'))).toBe(true);
  });

  it('run --out writes report.json, report.md and report.html, and report re-renders the same bytes', () => {
    expect(readdirSync(runDir).sort()).toEqual(['report.html', 'report.json', 'report.md', 'series.csv']);
    const html = readFileSync(join(runDir, 'report.html'), 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('data-chart="lag-backlog"');
    const again = join(dir, 'run-again');
    expect(feedlab(['report', join(runDir, 'report.json'), '--out', again]).code).toBe(0);
    for (const f of ['report.json', 'report.md', 'report.html', 'series.csv']) expect(readFileSync(join(again, f), 'utf8'), f).toBe(readFileSync(join(runDir, f), 'utf8'));
  });

  it('never replaces another document beside RESULT.json: without --out a different report.json is refused', () => {
    const beside = join(dir, 'beside');
    mkdirSync(beside, { recursive: true });
    const other = stripped(join(runDir, 'report.json'), (doc) => (doc.scenario.name = 'another run'));
    writeFileSync(join(beside, 'report.json'), other);
    writeFileSync(join(beside, 'saved.json'), readFileSync(join(runDir, 'report.json')));
    const r = feedlab(['report', join(beside, 'saved.json')]);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toBe(`feedlab: ${join(beside, 'report.json')} holds another document, which this would replace: give --out DIR for saved.json's reports`);
    expect(readFileSync(join(beside, 'report.json'), 'utf8')).toBe(other);
    expect(existsSync(join(beside, 'report.md'))).toBe(false);
    // the document itself is rendered in place again
    expect(feedlab(['report', join(runDir, 'report.json')]).code).toBe(0);
  });

  it('plan --out writes report.html too, and report re-renders the plan to identical bytes', () => {
    const planDir = join(dir, 'plan');
    const p = feedlab(['plan', PLAN_FIXTURE, '--out', planDir, '--quiet', '--samples', '40']);
    expect(p.stderr).toBe('');
    expect(p.code).toBe(0);
    expect(readdirSync(planDir).sort()).toEqual(['report.html', 'report.json', 'report.md']);
    const html = readFileSync(join(planDir, 'report.html'), 'utf8');
    expect(html).toMatch(/^<!doctype html>[^]*<h1>Capacity plan: plan-small<\/h1>/);
    expect(html).toContain('data-chart="spread"');
    expect(html).toContain('data-chart="headroom"');
    const again = join(dir, 'plan-again');
    const r = feedlab(['report', join(planDir, 'report.json'), '--out', again]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual(['report.json', 'report.md', 'report.html'].map((f) => join(again, f)));
    for (const f of ['report.json', 'report.md', 'report.html']) expect(readFileSync(join(again, f), 'utf8'), f).toBe(readFileSync(join(planDir, f), 'utf8'));
  });

  it('renders report.json again beside it, printing the paths written', () => {
    const json = readFileSync(join(runDir, 'report.json'), 'utf8');
    const r = feedlab(['report', join(runDir, 'report.json')]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual(['report.json', 'report.md', 'report.html', 'series.csv'].map((f) => join(runDir, f)));
    expect(readFileSync(join(runDir, 'report.json'), 'utf8')).toBe(json); // the same document, byte for byte
    const html = readFileSync(join(runDir, 'report.html'), 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('data-chart="followers"');
    expect(readdirSync(runDir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('writes into --out, the same bytes each time', () => {
    const a = join(dir, 'a');
    const b = join(dir, 'b', 'nested');
    expect(feedlab(['report', join(runDir, 'report.json'), '--out', a]).code).toBe(0);
    expect(feedlab(['report', join(a, 'report.json'), '--out', b]).code).toBe(0);
    for (const f of ['report.json', 'report.md', 'report.html']) expect(readFileSync(join(b, f), 'utf8')).toBe(readFileSync(join(a, f), 'utf8'));
  });

  it('renders a sweep document', () => {
    const sweepDir = join(dir, 'sweep');
    const s = feedlab(['sweep', FIXTURE, '--policies', 'push,threshold:1000,threshold:10000', '--json', '--quiet']);
    expect(s.code).toBe(0);
    mkdirSync(sweepDir, { recursive: true });
    writeFileSync(join(sweepDir, 'saved.json'), s.stdout);
    const r = feedlab(['report', join(sweepDir, 'saved.json')]);
    expect(r.code).toBe(0);
    const html = readFileSync(join(sweepDir, 'report.html'), 'utf8');
    expect(html).toContain('data-chart="tradeoff"');
    expect(readFileSync(join(sweepDir, 'report.md'), 'utf8')).toMatch(/^# Sweep: report-small/);
  });

  it('refuses bad input with exit 2 and one line, writing nothing', () => {
    const bad = join(dir, 'bad');
    mkdirSync(bad, { recursive: true });
    const cases: Array<[string, string, RegExp]> = [
      ['broken.json', '{"schema": "feedlab.result/1", ', /broken\.json: not valid JSON/],
      ['other.json', '{"schema": "feedlab.graph-stats/1"}', /other\.json: schema "feedlab\.graph-stats\/1" has no report \(valid: feedlab\.result\/1, feedlab\.sweep\/1, feedlab\.plan\/1, feedlab\.compare\/1\)/],
      ['none.json', '[1, 2]', /none\.json: not a feedlab result document: no "schema"/],
      ['short.json', '{"schema": "feedlab.result/1", "policy": "push"}', /short\.json: an incomplete feedlab\.result\/1 document: "scenario\.name", "scenario\.population", "events", "summary\.posts" and 22 more missing$/],
      ['plan.json', '{"schema": "feedlab.plan/1", "scenario": {}}', /plan\.json: an incomplete feedlab\.plan\/1 document: "settings", "slo", "columns", "inputs" and 7 more missing$/],
      // a real run's document with one nested figure removed
      ['nested.json', stripped(join(runDir, 'report.json'), (d) => delete d.summary.fanout.lagSeconds), /nested\.json: an incomplete feedlab\.result\/1 document: "summary\.fanout\.lagSeconds" missing$/],
    ];
    for (const [name, text, message] of cases) {
      writeFileSync(join(bad, name), text);
      const r = feedlab(['report', join(bad, name)]);
      expect(r.code, name).toBe(2);
      expect(oneLine(r.stderr)).toMatch(message);
    }
    expect(readdirSync(bad).sort()).toEqual(cases.map(([n]) => n).sort());
    const missing = feedlab(['report', join(bad, 'missing.json')]);
    expect(missing.code).toBe(2);
    expect(oneLine(missing.stderr)).toMatch(/missing\.json: no such file/);
    const usage = feedlab(['report']);
    expect(usage.code).toBe(2);
    expect(oneLine(usage.stderr)).toMatch(/^feedlab: report: missing required argument 'document'/);
  });
});
