// feedlab compare A.json B.json through the built CLI: bad inputs, --json, --out, --check, sweeps.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CompareDocument } from '../../sim/compare/compare.js';
import { figureDef } from '../../sim/compare/figures.js';
import { EVENTS_YAML, REPLAY_RUNS, savedReplay } from '../sim/compare/documents.js';
import { atMean, summaryDistribution } from '../../sim/compare/replay-stages.js';
import { quantileAt } from '../../sim/scenario/quantiles.js';
import { expectInputErrors, feedlab, oneLine, scratchDir } from './cli-helpers.js';

const REPLAY = REPLAY_RUNS[0];

describe('feedlab compare', () => {
  const dir = scratchDir();
  const sim = join(dir, 'sim.json');
  const bad = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  beforeAll(() => {
    writeFileSync(join(dir, 'events.yaml'), EVENTS_YAML);
    const r = feedlab(['run', join(dir, 'events.yaml'), '--json', '--quiet']);
    expect(r.code).toBe(0);
    writeFileSync(sim, r.stdout);
  });

  it('refuses every bad input in one line naming the file, exit 2', () => {
    const result = JSON.parse(readFileSync(sim, 'utf8'));
    const noSummary = { ...result, summary: { ...result.summary, reads: undefined } };
    expectInputErrors([
      [['compare'], /^feedlab: compare: missing required argument 'inputs'/],
      [['compare', sim, REPLAY, sim], /^feedlab: compare: a scenario, or two result documents \(simulated, then measured\), got 3 arguments$/],
      [['compare', sim, REPLAY, '--seeds', '2'], /^feedlab: compare: --seeds goes with compare SCENARIO, not with two documents$/],
      [['compare', sim, REPLAY, '--replay-stages'], /^feedlab: compare: --replay-stages goes with compare SCENARIO, not with two documents$/],
      [['compare', sim, REPLAY, '--bogus'], /^feedlab: compare: unknown option '--bogus'/],
      [['compare', join(dir, 'missing.json'), REPLAY], /^feedlab: .*missing\.json: no such file$/],
      [['compare', sim, dir], /^feedlab: .*: is a directory, not a result document$/],
      [['compare', sim, bad('text.json', 'lag p99 5 s\n')], /^feedlab: .*text\.json: not valid JSON: /],
      [['compare', bad('list.json', '[1, 2]'), REPLAY], /^feedlab: .*list\.json: not a feedlab document: no "schema" \(compare reads feedlab\.result\/1 and feedlab\.sweep\/1\)$/],
      [['compare', sim, bad('other.json', '{"schema": "k6.summary/1"}')], /^feedlab: .*other\.json: not a feedlab document: schema "k6\.summary\/1"/],
      [['compare', bad('v2.json', JSON.stringify({ ...result, schema: 'feedlab.result/2' })), REPLAY], /^feedlab: .*v2\.json: schema "feedlab\.result\/2" is a version this feedlab does not read \(compare reads feedlab\.result\/1 and feedlab\.sweep\/1\)$/],
      [['compare', sim, bad('plan.json', '{"schema": "feedlab.plan/1"}')], /^feedlab: .*plan\.json: a feedlab\.plan\/1 document has no run figures to compare/],
      [['compare', sim, bad('partial.json', JSON.stringify(noSummary))], /^feedlab: .*partial\.json: an incomplete feedlab\.result\/1 document: "summary\.reads\.latencyMs", "summary\.reads\.redisOpsPerRead" missing$/],
      [['compare', sim, bad('sweep.json', JSON.stringify({ schema: 'feedlab.sweep/1', scenario: result.scenario, rows: [], runs: [{ ...result, policy: undefined }] }))], /^feedlab: .*sweep\.json: an incomplete feedlab\.result\/1 document: "runs\[0\]\.policy" missing$/],
    ]);
  });

  it('--json prints the compare document: the required ids, each side named by its source and file', () => {
    const r = feedlab(['compare', sim, REPLAY, '--json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as CompareDocument;
    expect(doc.schema).toBe('feedlab.compare/1');
    expect(doc.scenario).toBe('replay-events');
    expect(doc.sides.simulated.label).toBe('simulate (sim.json)');
    expect(doc.sides.measured.label).toBe('replay (replay-events.run1.json)');
    const ids = new Set(doc.figures.map((f) => f.id));
    for (const id of ['lag_p50', 'lag_p99', 'lag_max', 'writes_per_second_mean', 'writes_per_second_peak', 'memory_bytes', 'read_p50', 'read_p99', 'commands_per_read']) expect(ids.has(id as never), id).toBe(true);
    for (const f of doc.figures) {
      expect(Object.keys(f)).toEqual(expect.arrayContaining(['id', 'policy', 'simulated', 'measured', 'ratio', 'noise', 'verdict']));
      expect(f.policy).toBe('threshold:100000:skip-dormant');
      if (f.verdict !== 'n/a' && f.measured !== 0) expect(f.ratio).toBeCloseTo(f.simulated! / f.measured!, 4);
    }
    const bodies = doc.figures.find((f) => f.id === 'memory_bodies_bytes')!;
    expect(bodies).toMatchObject({ simulated: null, verdict: 'n/a', why: 'simulate (sim.json): not modelled' });
    expect(bodies.measured).toBeGreaterThan(0);
    // the worlds differ (the replay ran 10 simulated minutes in 30 s): said on stderr, and in the document
    expect(r.stderr.trim().split('\n')).toEqual(doc.warnings.map((w) => `feedlab: note: ${w}`));
    expect(doc.warnings[0]).toMatch(/^different time scales: x1 \(sim\.json\) and x20 \(replay-events\.run1\.json\)/);
  });

  it('prints the terminal report and exits 0 without --check, even with figures outside', () => {
    const r = feedlab(['compare', sim, REPLAY]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^compare replay-events: simulate \(sim\.json\) against replay \(replay-events\.run1\.json\)\n/);
    expect(r.stdout).toMatch(/^ {2}memory: post bodies +not modelled +\S+ MB +n\/a$/m);
  });

  it('--check exits 1 with one line naming the figures outside; 0 when every figure holds', () => {
    const r = feedlab(['compare', sim, REPLAY, '--check']);
    const doc = JSON.parse(feedlab(['compare', sim, REPLAY, '--json']).stdout) as CompareDocument;
    const outside = doc.figures.filter((f) => f.verdict === 'outside');
    expect(outside.length).toBeGreaterThan(0); // the simulation of the scenario at x1 against its replay at x20
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toMatch(new RegExp(`^feedlab: ${outside.length} figures are outside 15% of the measured value and outside the noise: ${outside[0].id} \\(threshold:100000:skip-dormant\\) ratio `));
    // a document against itself: every figure within, exit 0 (n/a: the four classes only a replay has, and its large posts' writes: it had none)
    const same = feedlab(['compare', sim, sim, '--check', '--json']);
    expect(JSON.parse(same.stdout).counts).toEqual({ within: 26, noise: 0, outside: 0, 'n/a': 5 });
    expect(same.stderr).toBe('');
    expect(same.code).toBe(0);
    // the two replays of one schedule differ in their lag tails by more than 15% (326 against 66 ms)
    const runs = JSON.parse(feedlab(['compare', REPLAY_RUNS[1], REPLAY, '--json']).stdout) as CompareDocument;
    expect(runs.figures.find((f) => f.id === 'lag_p99')).toMatchObject({ simulated: 0.326143, measured: 0.066047, verdict: 'outside' });
    expect(runs.figures.find((f) => f.id === 'memory_timelines_bytes')!.verdict).toBe('within');
  });

  it('--out writes report.json (the --json document), report.md and report.html; feedlab report renders it again', () => {
    const out = join(dir, 'out');
    const r = feedlab(['compare', sim, REPLAY, '--out', out, '--json']);
    expect(r.code).toBe(0);
    expect(readdirSync(out).sort()).toEqual(['report.html', 'report.json', 'report.md']);
    expect(readFileSync(join(out, 'report.json'), 'utf8')).toBe(r.stdout);
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toMatch(/^# Compare: replay-events\n/);
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('data-compare-chart="lag_p99"');
    const again = join(dir, 'again');
    const rerender = feedlab(['report', join(out, 'report.json'), '--out', again]);
    expect(rerender.code).toBe(0);
    for (const f of ['report.json', 'report.md', 'report.html']) expect(readFileSync(join(again, f), 'utf8'), f).toBe(readFileSync(join(out, f), 'utf8'));
    // an --out that cannot be written is refused before anything is written
    const blocker = bad('blocker', 'a file');
    const refused = feedlab(['compare', sim, REPLAY, '--out', join(blocker, 'sub')]);
    expect(refused.code).toBe(2);
    expect(oneLine(refused.stderr)).toMatch(/is not a directory$/);
  });

  it('pairs two sweeps by policy, listing what only one has, and compares results of different policies with a warning', () => {
    const sweeps = join(dir, 'sweeps');
    mkdirSync(sweeps, { recursive: true });
    const a = feedlab(['sweep', join(dir, 'events.yaml'), '--policies', 'push,pull,threshold:1000', '--json', '--quiet']);
    const b = feedlab(['sweep', join(dir, 'events.yaml'), '--policies', 'threshold:1000,push,threshold:100000', '--seed', '10', '--json', '--quiet']);
    expect([a.code, b.code]).toEqual([0, 0]);
    writeFileSync(join(sweeps, 'a.json'), a.stdout);
    writeFileSync(join(sweeps, 'b.json'), b.stdout);
    const r = feedlab(['compare', join(sweeps, 'a.json'), join(sweeps, 'b.json'), '--json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as CompareDocument;
    expect(doc.policies.map((p) => p.policy)).toEqual(['push:skip-dormant', 'threshold:1000:skip-dormant']);
    expect(doc.unmatched).toEqual([
      { policy: 'pull:skip-dormant', side: 'simulated' },
      { policy: 'threshold:100000:skip-dormant', side: 'measured' },
    ]);
    expect(r.stderr).toContain('feedlab: note: policies not compared (only in a.json: pull:skip-dormant; only in b.json: threshold:100000:skip-dormant)');
    const text = feedlab(['compare', join(sweeps, 'a.json'), join(sweeps, 'b.json')]).stdout;
    expect(text).toContain('not compared: pull:skip-dormant only in simulate (a.json); threshold:100000:skip-dormant only in simulate (b.json)');
    expect(text.match(/^policy /gm)).toHaveLength(2);

    const mixed = feedlab(['compare', sim, join(sweeps, 'a.json')]);
    expect(mixed.code).toBe(2);
    expect(oneLine(mixed.stderr)).toBe('feedlab: compare: no policy in common: sim.json has threshold:100000:skip-dormant; a.json has push:skip-dormant, pull:skip-dormant, threshold:1000:skip-dormant');

    const pull = JSON.parse(a.stdout).runs[1];
    writeFileSync(join(sweeps, 'pull.json'), JSON.stringify(pull));
    const different = feedlab(['compare', sim, join(sweeps, 'pull.json'), '--json']);
    expect(different.code).toBe(0);
    expect(different.stderr).toContain('feedlab: note: different policies: threshold:100000:skip-dormant (sim.json) against pull:skip-dormant (pull.json), compared as one');
  });

  it('is listed in the help, with both forms', () => {
    const r = feedlab(['--help']);
    expect(r.stdout).toMatch(/^ {2}compare \[options\] <inputs\.\.\.> +the estimate, the calibrated simulation and the replay of one\s+scenario side by side, or two result documents/m);
    const help = feedlab(['compare', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: feedlab compare \[options\] <inputs\.\.\.>/);
    expect(help.stdout).toContain('feedlab compare SCENARIO: the estimate, the calibrated simulation and the replay');
    expect(help.stdout).toContain('feedlab compare A.json B.json: two saved documents held against each other');
    expect(help.stdout).toMatch(/\$ feedlab compare sim\/report\.json live\/report\.json/);
  });
});

describe('feedlab compare SCENARIO', () => {
  const dir = scratchDir();
  const scenario = join(dir, 'replay-events.yaml');
  writeFileSync(scenario, EVENTS_YAML);
  const saved = ['--replays', REPLAY_RUNS.join(','), '--no-calibrate'];

  it("simulates the replay's own world beside the saved replays, with the estimate, seed by seed", () => {
    const r = feedlab(['compare', scenario, ...saved, '--seeds', '2', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as CompareDocument;
    expect(doc.scenario).toBe('replay-events');
    expect(doc.policies.map((p) => p.policy)).toEqual(['threshold:100000:skip-dormant']);
    // the replays sent the schedule simulated here: no warning that they are of another world
    expect(doc.warnings).toEqual([]);
    const fig = (id: string) => doc.figures.find((f) => f.id === id)!;
    expect(fig('lag_p99').values.simulated).toHaveLength(2);
    expect(fig('lag_p99').values.measured).toHaveLength(2);
    // what does not hang on the machine's speed: the feeds' memory, the commands a page costs, the writes a post makes
    for (const id of ['memory_timelines_bytes', 'memory_own_lists_bytes', 'memory_bytes', 'commands_per_read', 'deliveries_per_post']) {
      expect(Math.abs(fig(id).ratio! - 1), `${id}: ratio ${fig(id).ratio}`).toBeLessThan(0.15);
    }
    // the documents' closed forms beside them: 2 Redis operations a read, where the server issues 6
    expect(fig('commands_per_read').estimate).toBe(2);
    expect(fig('lag_p99').estimate).toBeNull();
    expect(r.stderr).toMatch(/simulating threshold:100000:skip-dormant, seed 10/);
  });

  /** The scenario with a calibration: key of its own (a quiet calibration of the replays' hour). */
  const ownCalibration = () => {
    const cal = join(dir, 'own-cal.yaml');
    writeFileSync(cal, `calibration:\n  machine: { hostname: vm, cpu: Test CPU, cores: 2, memory: 24GB }\n  date: 2026-12-04T03:10:00.000Z\n  contention: { otherShare: 0.04, contended: false, over: 150s }\ninfrastructure:\n  costs: { rtt: 100us }\n`);
    const path = join(dir, 'own-calibration.yaml');
    writeFileSync(path, `${EVENTS_YAML}calibration: ${cal}\n`);
    return path;
  };

  it('refuses what it cannot compare in one line, exit 2', () => {
    expectInputErrors([
      [['compare', scenario, ...saved, '--runs', '2'], /^feedlab: compare: --replays gives the measured side; --runs would replay it again: give one of them$/],
      [['compare', scenario, '--calibration', 'c.yaml', '--no-calibrate'], /^feedlab: compare: --calibration and --no-calibrate contradict each other$/],
      [['compare', scenario, '--calibration', ' , ', ...saved.slice(0, 2)], /^feedlab: compare: --calibration is empty$/],
      [['compare', scenario, '--calibrations', '2', '--calibration', 'c.yaml'], /^feedlab: compare: --calibrations is how many times feedlab calibrate runs here; --calibration says not to: give one of them$/],
      [['compare', scenario, '--calibrations', '2', '--no-calibrate'], /^feedlab: compare: --calibrations is how many times feedlab calibrate runs here; --no-calibrate says not to: give one of them$/],
      [['compare', scenario, '--calibrations', '3', '--runs', '2'], /^feedlab: compare: --calibrations 3 is more than the 2 replays: each calibration runs just before a replay$/],
      [['compare', scenario, '--calibrations', '0'], /^feedlab: --calibrations must be at least 1, got 0$/],
      [['compare', scenario, '--calibrations', '2', '--runs', '1'], /^feedlab: compare: --calibrations 2 is more than the one replay: each calibration runs just before a replay$/],
      [['compare', ownCalibration(), '--calibrations', '2'], /^feedlab: compare: --calibrations runs feedlab calibrate, but the scenario names its own \(calibration: .*own-cal\.yaml\)$/],
      [['compare', scenario, '--calibration', join(dir, 'none.yaml'), ...saved.slice(0, 2)], /^feedlab: cannot read calibration file ".*none\.yaml": no such file$/],
      [['compare', scenario, ...saved, '--policies', 'rate'], /^feedlab: compare: cannot replay it: the rate policy decides per \(author, reader\) pair/],
      [['compare', scenario, ...saved, '--policies', 'push'], /^feedlab: compare: the replay documents hold none of the policies compared \(push:skip-dormant\)$/],
      [['compare', scenario, '--replays', join(dir, 'nope.json'), '--no-calibrate'], /^feedlab: .*nope\.json: no such file$/],
      [['compare', scenario, ...saved, '--seeds', '0'], /^feedlab: --seeds must be at least 1, got 0$/],
      [['compare', join(dir, 'missing.yaml'), '--no-calibrate'], /^feedlab: cannot read scenario file ".*missing\.yaml": no such file$/],
    ]);
  });

  it('warns when the costs were measured on a contended machine', () => {
    const cal = join(dir, 'busy.yaml');
    writeFileSync(
      cal,
      `calibration:
  machine: { hostname: vm, cpu: Test CPU, cores: 2, memory: 24GB }
  date: 2026-12-04T03:10:00.000Z
  contention: { otherShare: 0.404, contended: true, over: 150s }
infrastructure:
  costs: { rtt: 416us }
`,
    );
    const r = feedlab(['compare', scenario, '--replays', REPLAY_RUNS.join(','), '--calibration', cal, '--seeds', '1', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as CompareDocument).warnings).toEqual([
      `the costs (${cal}, 2026-12-04T03:10:00.000Z) were measured CONTENDED, over a quarter of the machine taken by other processes: the simulated side charges a busy machine's costs; calibrate again on a quiet one`,
    ]);
  });

  it('simulates every calibration given, seed by seed, their spread in the simulated side, and keeps each file with --out', () => {
    const calibration = (name: string, rtt: string, date: string) => {
      const path = join(dir, name);
      writeFileSync(
        path,
        `calibration:
  machine: { hostname: vm, cpu: Test CPU, cores: 2, memory: 24GB }
  date: ${date}
  contention: { otherShare: 0.04, contended: false, over: 150s }
infrastructure:
  costs: { rtt: ${rtt} }
`,
      );
      return path;
    };
    // the replays started at 03:17 and 03:18: the second calibration is of their hour, the first is not
    const a = calibration('cal-a.yaml', '100us', '2026-12-04T01:10:00.000Z');
    const b = calibration('cal-b.yaml', '400us', '2026-12-04T03:10:00.000Z');
    const out = join(dir, 'two-calibrations');
    const r = feedlab(['compare', scenario, '--replays', REPLAY_RUNS.join(','), '--calibration', `${a},${b}`, '--seeds', '2', '--json', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as CompareDocument;
    expect(doc.sides.simulated.label).toBe('simulate (2 calibrations, seeds 9-10 each)');
    expect(doc.sides.simulated.sources).toEqual([`the replay's world simulated (sim/replay/mirror.ts), costs from ${a}, ${b}`]);
    expect(doc.policies[0].documents.simulated.map((d) => d.label)).toEqual(['calibration 1, seed 9', 'calibration 1, seed 10', 'calibration 2, seed 9', 'calibration 2, seed 10']);
    // each calibration is held to the replay it pairs with: the first, two hours before replay 1, is named
    expect(doc.warnings).toEqual([expect.stringMatching(new RegExp(`^the costs \\(${a.replace(/[.]/g, '\\.')}, 2026-12-04T01:10:00\\.000Z\\) were measured 2\\.1 h from the start of the replay it pairs with \\(replay 1\\)`))]);
    // each calibration's costs simulated: two round trips a read, 300 us apart
    const read = doc.figures.find((f) => f.id === 'read_p50')!;
    const [a9, a10, b9, b10] = read.values.simulated as number[];
    expect(Math.min(b9, b10) - Math.max(a9, a10)).toBeGreaterThan(0.4);
    expect(read.spread.simulated).toBeGreaterThan(0.2);
    expect(read.note).toContain('two Redis round trips of 0.10 ms / 0.40 ms');
    // the files given, kept beside the report under their order
    expect(readFileSync(join(out, 'calibration-1.yaml'), 'utf8')).toBe(readFileSync(a, 'utf8'));
    expect(readFileSync(join(out, 'calibration-2.yaml'), 'utf8')).toBe(readFileSync(b, 'utf8'));
    expect(readdirSync(out)).not.toContain('calibration.yaml');
    // the second alone is of their hour
    const one = feedlab(['compare', scenario, '--replays', REPLAY_RUNS.join(','), '--calibration', b, '--seeds', '1', '--json']);
    expect((JSON.parse(one.stdout) as CompareDocument).warnings).toEqual([]);
  });

  it("--replay-stages simulates with each replay's own stages in place of the costs', each swap named", () => {
    const r = feedlab(['compare', scenario, ...saved, '--seeds', '1', '--json', '--replay-stages']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as CompareDocument;
    expect(doc.sides.simulated.label).toBe("simulate (the scenario's costs, the replays' stages swapped in, seed 9)");
    const [, fed] = doc.sides.simulated.sources;
    // one calibration (the scenario's costs) and two replays: the first replay's stages, named
    expect(fed).toMatch(/^threshold:100000:skip-dormant, replay 1's stages: postToLog mean [\d.]+ ms, p99 [\d.]+ ms \(calibrated mean [\d.]+ ms, p99 [\d.]+ ms\); costs\.eventStatements /);
    expect(fed).toContain("api.spread the server's feed handler, p99 ");
    // one calibration (the scenario's costs) pairs with the first replay: the model draws its stages
    const first = savedReplay(0).summary.fanout.stagesSeconds!;
    const simulated = (id: string) => (doc.figures.find((f) => f.id === id)!.values.simulated as number[])[0];
    expect(fed).toContain(`postToLog mean ${(1000 * first.postToLog.mean).toFixed(2)} ms, p99 ${(1000 * quantileAt(atMean(summaryDistribution(first.postToLog, 0), first.postToLog.mean)!, 0.99)).toFixed(2)} ms`);
    expect(fed).toContain(`costs.eventStatements mean`);
    expect(fed).toContain(`p99 ${(1000 * first.statements.p99).toFixed(2)} ms (calibrated mean 2.00 ms, p99 2.00 ms)`);
    const hop = atMean(summaryDistribution(first.postToLog, 0), first.postToLog.mean)!;
    expect(Math.abs(simulated('stage_post_to_log_p50') / quantileAt(hop, 0.5) - 1)).toBeLessThan(0.1);
    // the scenario's statement is a constant 2 ms: without the flag every draw is it, with it the replay's (104 posts)
    const plainRun = feedlab(['compare', scenario, ...saved, '--seeds', '1', '--json']);
    const plain = JSON.parse(plainRun.stdout) as CompareDocument;
    expect((plain.figures.find((f) => f.id === 'stage_statements_p99')!.values.simulated as number[])[0]).toBe(0.002);
    expect(simulated('stage_statements_p99')).toBeGreaterThan(0.004);
    // without the flag the same simulations say whose each gap is: their swaps listed apart, each
    // figure's value with the stages the flag's simulated side, to the bit
    expect(plain.sides.simulated.sources).toHaveLength(1);
    expect(plain.sides.replayStages).toEqual({ label: "simulate (the replays' stages in place of the costs, seed 9)", sources: [fed] });
    for (const f of plain.figures) expect(f.replayStages?.simulated ?? null, f.id).toBe(doc.figures.find((x) => x.id === f.id && x.policy === f.policy)!.simulated);
    const outside = plain.figures.filter((f) => f.verdict === 'outside');
    expect(outside.length).toBeGreaterThan(0);
    for (const f of plain.figures) {
      const judged = f.replayStages?.verdict;
      const stays = figureDef(f.id)?.calibratedOnly ? 'open' : 'model';
      expect(f.gap, f.id).toBe(f.verdict !== 'outside' || judged === undefined || judged === 'n/a' ? undefined : judged === 'outside' ? stays : 'costs');
    }
    expect(plain.gaps!.costs + plain.gaps!.model + plain.gaps!.open).toBe(outside.filter((f) => f.gap).length);
    expect(plain.gaps!.costs).toBeGreaterThan(0);
    // the terminal report: the two columns, the gaps' line, the counts by whose
    const text = feedlab(['compare', scenario, ...saved, '--seeds', '1']).stdout;
    expect(text).toContain(`  gaps:      simulate (the replays' stages in place of the costs, seed 9)\n             ${fed}\n`);
    expect(text).toMatch(/ +verdict +stages ratio +gap\n/);
    expect(text).toContain(`${plain.counts.outside} outside (${plain.gaps!.costs} the costs', ${plain.gaps!.model} the model's, ${plain.gaps!.open} open)`);
  });

  it('warns when the saved replays sent another schedule than the one simulated', () => {
    const other = join(dir, 'other-seed.yaml');
    writeFileSync(other, EVENTS_YAML.replace('seed: 9', 'seed: 10'));
    const r = feedlab(['compare', other, ...saved, '--seeds', '1', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as CompareDocument).warnings[0]).toMatch(/^the replays did not all send the schedule simulated here/);
  });
});
