// slo.thresholds end to end through the built CLI: exit codes of run, sweep and plan, the stderr line,
// --no-thresholds and --check, the checks in the JSON, the terminal report and report.md.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { create } from 'xmlbuilder2';
import { fmtMs, fmtSeconds, fmtShare } from '../../reports/summary-lines.js';
import { expectInputErrors, feedlab, oneLine, ROOT, scratchDir, SMALL, writeScenario } from './cli-helpers.js';

const SLO_LINE = 'slo: { fanoutLagP99: 5s, readP99: 100ms, redisMemory: 1TB }\n';

/** SMALL with these lines (already indented by four) under slo.thresholds. */
function withThresholds(lines: string[]): string {
  if (!SMALL.includes(SLO_LINE)) throw new Error('SMALL changed: update SLO_LINE');
  return SMALL.replace(SLO_LINE, `slo:\n  fanoutLagP99: 5s\n  readP99: 100ms\n  redisMemory: 1TB\n  thresholds:\n${lines.map((l) => `    ${l}\n`).join('')}`);
}

const dir = scratchDir();
// under SMALL's threshold:25000 policy the read max is a few milliseconds and the lag p99.9 a fraction of a second
const PASSING = ['fanoutLag: ["p99.9 < 30s"]', 'coldReadShare: ["< 1%"]', 'backlogDrain: ["< 10m"]'];
const failing = writeScenario(dir, 'failing.yaml', withThresholds([...PASSING, 'read: ["max < 100us"]']));
const passing = writeScenario(dir, 'passing.yaml', withThresholds(PASSING));

interface Check {
  id: string;
  actual: number;
  target: number;
  pass: boolean;
  unit: string;
  threshold?: { figure: string; statistic: string | null; op: string; expression: string };
}

const lastLine = (text: string) => text.trim().split('\n').pop()!;

describe('feedlab run with thresholds', () => {
  it('a failed threshold exits 1 by default, says which on stderr, and is a check of the result', () => {
    const r = feedlab(['run', failing, '--json', '--quiet']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('feedlab: threshold not met: read max < 100us (exit 1; --no-thresholds leaves thresholds out of the exit code)');
    const doc = JSON.parse(r.stdout);
    const checks: Check[] = doc.summary.slo.checks;
    expect(checks.map((c) => c.id)).toEqual(['fanoutLagP99', 'readP99', 'redisMemory', 'fanoutLag p99.9 < 30s', 'read max < 100us', 'coldReadShare < 1%', 'backlogDrain < 10m']);
    expect(doc.summary.slo.pass).toBe(false);
    const byId = (id: string) => checks.find((c) => c.id === id)!;
    // each actual is the result's own figure
    expect(byId('read max < 100us')).toEqual({
      id: 'read max < 100us',
      description: 'home-feed read max',
      target: 0.1,
      actual: doc.summary.reads.latencyMs.max,
      unit: 'ms',
      pass: false,
      threshold: { figure: 'read', statistic: 'max', op: '<', expression: 'max < 100us' },
    });
    expect(byId('fanoutLag p99.9 < 30s')).toMatchObject({ actual: doc.summary.fanout.followerLagSeconds.p999, target: 30, unit: 's', pass: true });
    expect(byId('coldReadShare < 1%')).toMatchObject({ actual: doc.summary.reads.coldShare, target: 0.01, unit: 'share', pass: true });
    expect(byId('backlogDrain < 10m')).toMatchObject({ actual: doc.summary.fanout.backlog.drainSeconds, target: 600, pass: true });
    // the objectives still pass: only the threshold fails
    expect(checks.filter((c) => !c.threshold).every((c) => c.pass)).toBe(true);
  });

  it('--junit writes every check as a JUnit test case, a failure for the one not met', () => {
    const file = join(dir, 'ci', 'checks.xml');
    const r = feedlab(['run', failing, '--json', '--quiet', '--junit', file]);
    expect(r.code).toBe(1);
    const checks: Check[] = JSON.parse(r.stdout).summary.slo.checks;
    const xml = readFileSync(file, 'utf8');
    expect(xml).toMatch(/^<\?xml version="1\.0" encoding="UTF-8"\?>/);
    // read back with the same maintained library that wrote it
    const doc = create(xml).end({ format: 'object' }) as unknown as {
      testsuites: { '@tests': string; '@failures': string; testsuite: { '@name': string; testcase: { '@name': string; failure?: { '@message': string } }[] } };
    };
    expect(doc.testsuites['@tests']).toBe(String(checks.length));
    expect(doc.testsuites['@failures']).toBe('1');
    const cases = doc.testsuites.testsuite.testcase;
    expect(cases).toHaveLength(checks.length);
    expect(cases.filter((c) => c.failure)).toHaveLength(1);
    // the one failure, its name and message escaped as XML requires
    expect(xml).toMatch(/<testcase classname="feedlab\.small\.threshold:25000:skip-dormant" name="read max &lt; 100us">\s*<failure message="read max &lt; 100us: [\d.]+ ms \(threshold &lt; 100 us\)" type="threshold">/);
    // refused before the run when the file's directory cannot be made
    expectInputErrors([[['run', passing, '--junit', '/proc/feedlab-no/x.xml'], /^feedlab: --junit \/proc\/feedlab-no\/x\.xml: cannot make \/proc\/feedlab-no \(ENOENT\)$/]]);
  });

  it('--no-thresholds: the same document, exit 0; --check with it counts only the objectives', () => {
    const a = feedlab(['run', failing, '--json', '--quiet']);
    const b = feedlab(['run', failing, '--json', '--quiet', '--no-thresholds']);
    expect(b.code).toBe(0);
    expect(b.stderr).toBe('');
    expect(b.stdout).toBe(a.stdout);
    const c = feedlab(['run', failing, '--json', '--quiet', '--no-thresholds', '--check']);
    expect(c.code).toBe(0);
    // --check alone: an SLO or a threshold
    expect(feedlab(['run', failing, '--json', '--quiet', '--check']).code).toBe(1);
  });

  it('thresholds that pass exit 0, with --check too; an objective failing under a passing threshold set exits 1 only with --check', () => {
    const ok = feedlab(['run', passing, '--json', '--quiet', '--check']);
    expect(ok.code).toBe(0);
    expect(ok.stderr).toBe('');
    expect(JSON.parse(ok.stdout).summary.slo.pass).toBe(true);
    // push to everyone: the lag objective fails (two 30%-of-everyone celebrities), the thresholds hold
    const push = feedlab(['run', passing, '--json', '--quiet', '--policy', 'push:all-followers']);
    const doc = JSON.parse(push.stdout);
    const failed = doc.summary.slo.checks.filter((c: Check) => !c.pass).map((c: Check) => c.id);
    expect(failed).toEqual(['fanoutLagP99']);
    expect(push.code).toBe(0);
    const checked = feedlab(['run', passing, '--json', '--quiet', '--policy', 'push:all-followers', '--check']);
    expect(checked.code).toBe(1);
    expect(checked.stderr.trim()).toBe('feedlab: SLO not met: fanoutLagP99 (exit 1)');
  });

  it('the terminal report and report.md print every threshold with its verdict; feedlab report renders the same', () => {
    const out = join(dir, 'out');
    const r = feedlab(['run', failing, '--out', out, '--no-dashboard']);
    expect(r.code).toBe(1);
    expect(lastLine(r.stderr)).toMatch(/^feedlab: threshold not met: read max < 100us/);
    const doc = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    const lag = doc.summary.fanout.followerLagSeconds.p999;
    const readMax = doc.summary.reads.latencyMs.max;
    const drain = doc.summary.fanout.backlog.drainSeconds;
    const lines = [
      `FAIL  home-feed read max: ${fmtMs(readMax)} (threshold < 100 us)`,
      `PASS  fan-out lag p99.9, per follower: ${fmtSeconds(lag)} (threshold < 30 s)`,
      `PASS  cold-read share: ${fmtShare(doc.summary.reads.coldShare)} (threshold < 1%)`,
      `PASS  fan-out backlog drain time: ${fmtSeconds(drain)} (threshold < 10 min)`,
    ];
    expect(r.stdout).toContain('SLO and thresholds: NOT MET (1 of 4 thresholds failed)\n');
    // the objectives keep their lines
    expect(r.stdout).toMatch(/ {2}PASS {2}home-feed read p99: .* \(target <= 100 ms\)\n/);
    for (const l of lines) expect(r.stdout).toContain(`  ${l}`);
    const md = readFileSync(join(out, 'report.md'), 'utf8');
    expect(md).toContain('**SLO and thresholds: NOT MET (1 of 4 thresholds failed)**');
    for (const l of lines) expect(md).toContain(`- ${l}`);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('SLO and thresholds: NOT MET');
    expect(html).toContain('home-feed read max (threshold read max &lt; 100us)');
    // rendered again from report.json: the same Markdown
    const again = join(dir, 'again');
    expect(feedlab(['report', join(out, 'report.json'), '--out', again]).code).toBe(0);
    expect(readFileSync(join(again, 'report.md'), 'utf8')).toBe(md);
  });

  it('a bad threshold is one line with the file, line and column of the item, exit 2', () => {
    const bad = writeScenario(dir, 'bad.yaml', withThresholds(['read: ["p99 < 20ms", "p95 < 1s"]']));
    const unit = writeScenario(dir, 'unit.yaml', withThresholds(['backlogDrain: ["< 600"]']));
    // the first threshold line is line 22 of these files
    expectInputErrors([
      [['run', bad], /bad\.yaml:22:26: slo\.thresholds\.read\[1\]: the percentile "p95" is not one the results keep \(valid statistics: p50, p90, p99, p99\.9, max, mean\)$/],
      [['sweep', unit], /unit\.yaml:22:20: slo\.thresholds\.backlogDrain\[0\]: "600" needs a unit: backlogDrain takes a duration like 500ms, 5s, 2h \(valid units: us, ms, s, m, min, h, d\)$/],
      [['run', failing, '--no-threshold'], /unknown option '--no-threshold' \(did you mean --no-thresholds\?\)/],
    ]);
  });

  it('help names --no-thresholds, plan too', () => {
    expect(feedlab(['run', '--help']).stdout).toMatch(/--no-thresholds +a failed threshold/);
    expect(feedlab(['sweep', '--help']).stdout).toMatch(/--no-thresholds/);
    expect(feedlab(['plan', '--help']).stdout).toMatch(/--no-thresholds +a failed threshold/);
  });

  it("plan checks thresholds on its simulation check's runs: printed, in the JSON, exit 1 unless --no-thresholds", () => {
    const planPush = readFileSync(join(ROOT, 'test/fixtures/scenarios/plan-push.yaml'), 'utf8');
    const withPlanThresholds = (lines: string[]) => planPush.replace(/^slo: .*$/m, `slo:\n  fanoutLagP99: 5s\n  readP99: 100ms\n  redisMemory: 1TB\n  thresholds:\n${lines.map((l) => `    ${l}\n`).join('')}`);
    const bad = writeScenario(dir, 'plan-bad.yaml', withPlanThresholds(['read: ["max < 1us", "p99 < 1s"]']));
    const good = writeScenario(dir, 'plan-good.yaml', withPlanThresholds(['read: ["p99 < 1s"]']));
    const r = feedlab(['plan', bad, '--quiet']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^Thresholds on the simulation check's runs: NOT MET\n {2}FAIL {2}home-feed read max: .* \(threshold < 1 us\)\n {2}PASS {2}home-feed read p99: .* \(threshold < 1 s\)$/m);
    expect(oneLine(r.stderr)).toBe('feedlab: threshold not met: read max < 1us (exit 1; --no-thresholds leaves thresholds out of the exit code)');
    const json = feedlab(['plan', bad, '--quiet', '--json', '--no-thresholds']);
    expect(json.code).toBe(0);
    expect(json.stderr).toBe('');
    const doc = JSON.parse(json.stdout);
    expect(doc.check[0].thresholds.map((c: Check) => [c.id, c.pass])).toEqual([['read max < 1us', false], ['read p99 < 1s', true]]);
    expect(feedlab(['plan', good, '--quiet']).code).toBe(0);
    // --junit: the plan itself and each threshold, a test case each
    const junit = join(dir, 'plan-checks.xml');
    expect(feedlab(['plan', bad, '--quiet', '--junit', junit]).code).toBe(1);
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toMatch(/<testsuites name="feedlab plan plan-push" tests="3" failures="1">/);
    expect(xml).toMatch(/<testcase classname="feedlab\.plan-push\.plan" name="plan: every objective met within the limits">\s*<system-out>/);
    expect(xml).toMatch(/<testcase classname="feedlab\.plan-push\.plan" name="read max &lt; 1us">\s*<failure message="read max &lt; 1us: .* \(threshold &lt; 1 us\)" type="threshold">/);
    // refused before the plan when the file's directory cannot be made
    expectInputErrors([[['plan', good, '--junit', '/proc/feedlab-no/x.xml'], /^feedlab: --junit \/proc\/feedlab-no\/x\.xml: cannot make \/proc\/feedlab-no \(ENOENT\)$/]]);
  });
});

describe('feedlab sweep with thresholds', () => {
  it('a threshold changes the recommendation: a policy failing it is not recommended; exit 0 while one passes', () => {
    // seed 12: with 11, pull's reads saturate a shard in this world (p99 772 ms) and fail the SLO's readP99 too
    const sc = writeScenario(dir, 'sweep-read.yaml', withThresholds(['read: ["p99 < 5ms"]']).replace('seed: 11', 'seed: 12'));
    const r = feedlab(['sweep', sc, '--json', '--quiet', '--policies', 'push:all-followers,pull,threshold:25000']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    const read = (i: number) => doc.runs[i].summary.reads.latencyMs.p99;
    // pull's reads merge lists (their slices and the API's CPU per list): over 5 ms; push fails the lag objective
    expect(read(1)).toBeGreaterThan(5);
    expect(read(2)).toBeLessThan(5);
    expect(doc.rows.map((row: { failed: string[] }) => row.failed)).toEqual([['fanoutLagP99'], ['read p99 < 5ms'], []]);
    expect(doc.recommended.policy).toBe('threshold:25000:skip-dormant');
    expect(doc.recommended.reason).toMatch(/pull:skip-dormant fails read p99 < 5ms/);
  });

  it('no policy meets every threshold: exit 1 and no recommendation; --no-thresholds exits 0 with the same document', () => {
    const sc = writeScenario(dir, 'sweep-none.yaml', withThresholds(['read: ["max < 1us"]']));
    const args = ['sweep', sc, '--policies', 'pull,threshold:25000'];
    const r = feedlab([...args, '--json', '--quiet']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('feedlab: no policy meets every threshold (exit 1; --no-thresholds leaves thresholds out of the exit code)');
    const doc = JSON.parse(r.stdout);
    expect(doc.recommended).toBeNull();
    expect(doc.rows.every((row: { sloPass: boolean; failed: string[] }) => !row.sloPass && row.failed.includes('read max < 1us'))).toBe(true);
    const off = feedlab([...args, '--json', '--quiet', '--no-thresholds']);
    expect(off.code).toBe(0);
    expect(off.stdout).toBe(r.stdout);
    const table = feedlab([...args, '--quiet', '--no-thresholds']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/FAIL read max < 1us\n/);
    expect(table.stdout).toMatch(/recommended: none: no policy meets every SLO and threshold\n$/);
  });
});
