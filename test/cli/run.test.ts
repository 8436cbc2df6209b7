// feedlab run and sweep, end to end through the built CLI.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectInputErrors, feedlab, oneLine, scratchDir, SMALL, writeScenario } from './cli-helpers.js';

const dir = scratchDir();
const small = writeScenario(dir, 'small.yaml', SMALL);

describe('feedlab run', () => {
  it('--json prints one versioned result document with every documented field', () => {
    const r = feedlab(['run', small, '--json', '--quiet']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.schema).toBe('feedlab.result/1');
    const s = doc.summary;
    for (const k of ['p50', 'p99', 'max', 'mean']) expect(typeof s.fanout.lagSeconds[k]).toBe('number');
    for (const k of ['mean', 'peak']) expect(s.fanout.writesPerSecond[k]).toBeGreaterThan(0);
    expect(s.fanout.deliveries).toBeGreaterThan(0);
    for (const k of ['peak', 'end']) expect(s.redis.memoryBytes[k]).toBeGreaterThan(0);
    for (const k of ['p50', 'p99']) expect(s.reads.latencyMs[k]).toBeGreaterThan(0);
    expect(s.reads.redisOpsPerRead.mean).toBeGreaterThanOrEqual(2);
    expect(typeof s.slo.pass).toBe('boolean');
    expect(s.slo.checks.map((c: { id: string }) => c.id)).toEqual(['fanoutLagP99', 'readP99', 'redisMemory']);
    expect(doc.series.intervalSeconds).toBe(60);
    expect(doc.series.lagP99Seconds).toHaveLength(20);
    expect(doc.series.memoryBytes).toHaveLength(20);
    expect(doc.events[0].kind).toBe('celebrityBurst');
  });

  it('is byte-for-byte reproducible for a seed, and --seed changes the run', () => {
    const a = feedlab(['run', small, '--json', '--quiet']).stdout;
    expect(feedlab(['run', small, '--json', '--quiet']).stdout).toBe(a);
    expect(feedlab(['run', small, '--json', '--quiet', '--seed', '12']).stdout).not.toBe(a);
  });

  it('prints a readable report with the SLO verdict, progress going to stderr', () => {
    const r = feedlab(['run', small]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^small: policy threshold:25000:skip-dormant/);
    expect(r.stdout).toMatch(/post lag\s+p50/);
    expect(r.stdout).toMatch(/SLO: (all met|NOT MET)/);
    expect(r.stderr).toMatch(/simulate small .*done/);
  });

  it('--policy overrides the scenario; --check exits 1 when an SLO fails', () => {
    const push = feedlab(['run', small, '--json', '--quiet', '--policy', 'push:all-followers', '--check']);
    const doc = JSON.parse(push.stdout);
    expect(doc.policy).toBe('push:all-followers');
    // two 30%-of-everyone celebrities pushed to 600k followers each: lag far over 5 s
    expect(doc.summary.slo.pass).toBe(false);
    expect(push.code).toBe(1);
    const ok = feedlab(['run', small, '--json', '--quiet', '--check']);
    expect(JSON.parse(ok.stdout).summary.slo.pass).toBe(true);
    expect(ok.code).toBe(0);
  });

  it('--set and --duration change the scenario for this run', () => {
    const r = feedlab(['run', small, '--json', '--quiet', '--set', 'policy.threshold=1000', '--duration', '10m']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.policy).toBe('threshold:1000:skip-dormant');
    expect(doc.scenario.durationSeconds).toBe(600);
  });

  it('--out writes report.json (the same document) and report.md', () => {
    const out = join(dir, 'out-run');
    const r = feedlab(['run', small, '--json', '--quiet', '--out', out]);
    expect(r.code).toBe(0);
    expect(readFileSync(join(out, 'report.json'), 'utf8').trim()).toBe(r.stdout.trim());
    const md = readFileSync(join(out, 'report.md'), 'utf8');
    expect(md).toMatch(/^# small: threshold:25000/);
    expect(md).toMatch(/\| fan-out lag p99 \|/);
    // without --quiet it says where the files went, last on stderr
    const said = feedlab(['run', small, '--json', '--out', out]);
    expect(said.code).toBe(0);
    expect(said.stderr.trim().split('\n').at(-1)).toBe(`feedlab: report written to ${join(out, 'report.json')}, report.md, report.html and series.csv`);
  });

  it('bad input: one line, exit 2, and no output directory', () => {
    const out = join(dir, 'never');
    const cases: Array<[string[], RegExp]> = [
      [['run'], /^feedlab: run: missing required argument 'scenario'/],
      [['run', join(dir, 'missing.yaml'), '--out', out], /cannot read scenario file .*missing\.yaml.*no such file/],
      [['run', small, '--policy', 'fanout-everything', '--out', out], /unknown policy "fanout-everything" \(valid forms: push, pull/],
      [['run', small, '--seed', 'abc'], /--seed must be a whole number from 0 to 9007199254740991/],
      // a 20-digit seed was rounded to another seed without a word
      [['run', small, '--seed', '12345678901234567890'], /--seed must be a whole number from 0 to 9007199254740991 \(2\^53 - 1, held exactly\), got "12345678901234567890"$/],
      [['run', small, small], /^feedlab: run: too many arguments for 'run'\. Expected 1 argument but got 2\./],
      [['run', small, '--set', 'policy.treshold=5'], /^feedlab: --set policy\.treshold=5: policy has no key "treshold"; did you mean "policy\.threshold"\?$/],
      // -5 and 0 get the same range (they once gave different bounds)
      [['run', small, '--set', 'policy.timelineCap=-5'], /^feedlab: --set policy\.timelineCap=-5: policy\.timelineCap: -5 is out of range \(valid: 1 to 65535\)$/],
      [['run', small, '--set', 'policy.timelineCap=0'], /^feedlab: --set policy\.timelineCap=0: policy\.timelineCap: 0 is out of range \(valid: 1 to 65535\)$/],
      [['run', small, '--duration', '100'], /^feedlab: --set duration=100: duration: 100 has no unit/],
      [['run', small, '--frobnicate'], /^feedlab: run: unknown option '--frobnicate'/],
      [['bogus'], /^feedlab: unknown command 'bogus'/],
      [['run', small, '--out', join(small, 'sub')], /--out .*small\.yaml is not a directory/],
      // refused before the run (Node's recursive mkdir looped for ever there, after it)
      [['run', small, '--out', '/proc/feedlab-no/out'], /^feedlab: --out \/proc\/feedlab-no\/out: cannot make \/proc\/feedlab-no \(ENOENT\)$/],
      [['run', writeScenario(dir, 'cap.yaml', SMALL.replace('threshold: 25000 }', 'threshold: 25000, timelineCap: 70000 }'))], /cap\.yaml:\d+:\d+: policy\.timelineCap: 70000 is out of range \(valid: 1 to 65535\)/],
      // an API sized automatically whose background alone fills the half of a core it is sized for
      [['run', small, '--quiet', '--set', 'infrastructure.api.backgroundCpu=0.5'], /^feedlab: infrastructure\.api\.backgroundCpu 0\.5 leaves an API process nothing of the 50% of its 1 cores it is sized to be busy: give instances, or a smaller backgroundCpu$/],
    ];
    expectInputErrors(cases);
    expect(existsSync(out)).toBe(false);
  });

  it('a scenario error names the file, line and column, and suggests the key', () => {
    const bad = writeScenario(dir, 'typo.yaml', SMALL.replace('fanoutWorkers: 8', 'fanoutWorker: 8'));
    const r = feedlab(['run', bad]);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toMatch(/typo\.yaml:\d+:\d+: infrastructure\.fanoutWorker: unknown key; did you mean "fanoutWorkers"\?/);
  });

  it('a celebrity burst asking for more accounts than exist is refused cleanly', () => {
    const bad = writeScenario(dir, 'burst.yaml', SMALL.replace('users: 20000', 'users: 20').replace('avgFollows: 40', 'avgFollows: 3').replace('population: 2000000', 'population: 200').replace('accounts: 2,', 'accounts: 50,'));
    const r = feedlab(['run', bad, '--quiet']);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toMatch(/burst\.yaml: a celebrityBurst at 300s asks for 50 accounts; the graph has 20/);
  });
});

describe('feedlab run on a graph file', () => {
  const graph = join(dir, 'g.fgraph');
  const gen = feedlab(['graph', 'generate', '--users', '3000', '--avg-follows', '15', '--alpha', '2.2', '--seed', '5', '--out', graph]);
  const scenario = (file: string) => writeScenario(dir, `${file}.yaml`, `name: from-file\nduration: 10m\ngraph:\n  file: ${file}\n`);

  it('runs a scenario over a saved graph, found relative to the scenario file', () => {
    expect(gen.code).toBe(0);
    const r = feedlab(['run', scenario('g.fgraph'), '--json', '--quiet']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.scenario.sampledUsers).toBe(3000);
    expect(doc.scenario.sampledEdges).toBeGreaterThan(30_000);
  });

  it('a corrupt or missing graph file is one line and exit 2', () => {
    const bytes = readFileSync(graph);
    bytes[Math.floor(bytes.length / 2)] ^= 0xff;
    writeFileSync(join(dir, 'bad.fgraph'), bytes);
    const bad = feedlab(['run', scenario('bad.fgraph'), '--quiet']);
    expect(bad.code).toBe(2);
    expect(oneLine(bad.stderr)).toMatch(/bad\.fgraph: corrupt graph file: checksum mismatch/);
    const missing = feedlab(['run', scenario('nowhere.fgraph'), '--quiet']);
    expect(missing.code).toBe(2);
    expect(oneLine(missing.stderr)).toMatch(/nowhere\.fgraph: no such graph file/);
  });
});

describe('feedlab sweep', () => {
  it('one row per policy and a recommendation: the cheapest policy that meets every SLO', () => {
    const out = join(dir, 'out-sweep');
    const r = feedlab(['sweep', small, '--policies', 'push:all-followers,pull,threshold:10000,threshold:100000', '--json', '--quiet', '--out', out]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.schema).toBe('feedlab.sweep/1');
    expect(doc.rows.map((x: { policy: string }) => x.policy)).toEqual(['push:all-followers', 'pull:skip-dormant', 'threshold:10000:skip-dormant', 'threshold:100000:skip-dormant']);
    const rec = doc.recommended.policy;
    const row = doc.rows.find((x: { policy: string }) => x.policy === rec);
    expect(row.sloPass).toBe(true);
    for (const other of doc.rows) if (other.sloPass) expect(row.servers.total).toBeLessThanOrEqual(other.servers.total);
    expect(doc.recommended.reason).toMatch(/fewest servers/);
    expect(readdirSync(out).sort()).toEqual(['report.html', 'report.json', 'report.md', 'series.csv']);
  });

  it('runs its policies on worker threads over one graph: the same document on one thread and on two, progress for all of them', () => {
    const policies = ['--policies', 'push:all-followers,pull,threshold:10000,threshold:100000', '--json'];
    const serial = feedlab(['sweep', small, ...policies, '--quiet', '--threads', '1']);
    const parallel = feedlab(['sweep', small, ...policies, '--threads', '2', '--no-dashboard']);
    expect(serial.code, serial.stderr).toBe(0);
    expect(parallel.code, parallel.stderr).toBe(0);
    expect(parallel.stdout).toBe(serial.stdout);
    expect(parallel.stderr).toMatch(/^4 policies on 2 threads done in \S+ push:all-followers, pull, threshold:10000, threshold:100000$/m);
    expect(serial.stderr).toBe('');
    // one thread per policy at most
    expect(feedlab(['sweep', small, '--policies', 'push,pull', '--threads', '8', '--json', '--no-dashboard']).stderr).toMatch(/^2 policies on 2 threads done/m);
    const bad = feedlab(['sweep', small, '--threads', '0']);
    expect(bad.code).toBe(2);
    expect(oneLine(bad.stderr)).toMatch(/--threads must be at least 1, got 0$/);
  });

  it('uses the scenario sweep list by default and prints a table', () => {
    const r = feedlab(['sweep', small, '--quiet']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/policy\s+lag p99\s+peak writes\/s/);
    expect(r.stdout).toMatch(/^recommended: /m);
    expect(r.stdout.split('\n').filter((l) => /^(push|pull|threshold)/.test(l))).toHaveLength(5);
  });

  it('refuses a bad policy before simulating anything', () => {
    const r = feedlab(['sweep', small, '--policies', 'push,threshold:x']);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toMatch(/policy "threshold:x": the threshold must be a number/);
  });
});
