// The "why" beside compare's figures (cli/compare/notes.ts): each stage's calibrated input beside
// each replay's own figure, the followee waits the model does not have, and no note from documents
// that did not measure a part.
import { describe, expect, it } from 'vitest';
import { figureNotes } from '../../../cli/compare/notes.js';
import type { RunResult } from '../../../sim/result.js';
import { parseScenario } from '../../../sim/scenario/load.js';
import { constantDistribution } from '../../../sim/scenario/quantiles.js';
import { EVENTS_YAML, savedReplay } from '../../sim/compare/documents.js';

const stage = (p50: number, p99: number, mean = p50) => ({ mean, p50, p90: p99, p99, p999: p99, max: p99 });

/** A saved replay with its stages and the followee loads its reads waited for. */
function measured(i: 0 | 1, scale: number, waited: number): RunResult {
  const r = savedReplay(i);
  r.summary.fanout.stagesSeconds = {
    postToLog: stage(0.004 * scale, 0.03 * scale),
    pickup: stage(0.0005 * scale, 0.003 * scale),
    statements: stage(0.0006 * scale, 0.004 * scale),
    firstPage: stage(0.001 * scale, 0.003 * scale),
    writes: stage(0.0012 * scale, 0.02 * scale),
  };
  r.replay!.reads.counters = { ...r.replay!.reads.counters, followeeLoadsWaited: waited };
  r.replay!.fanout.hop = { count: 40, mean: 0.005 * scale, p50: 0.004 * scale, p90: 0.01 * scale, p99: 0.03 * scale, max: 0.03 * scale };
  r.replay!.fanout.workers.event = { count: 40, mean: 0.005 * scale, p50: 0.004 * scale, p90: 0.01 * scale, p99: 0.03 * scale, p999: 0.03 * scale, max: 0.03 * scale };
  r.replay!.fanout.workers.batch = { count: 40, mean: 0.002 * scale, p50: 0.0011 * scale, p90: 0.01 * scale, p99: 0.029 * scale, p999: 0.03 * scale, max: 0.03 * scale };
  return r;
}

const scenario = () =>
  parseScenario(
    EVENTS_YAML.replace(
      /infrastructure:.*\n/,
      `infrastructure:
  fanoutWorkers: 2
  writesPerSecondPerWorker: 32200
  costs: { rtt: 60us, batch: 380us, expand: 680us, expandPerFollower: 2.1us, pickup: 1ms, eventStatements: { min: 200us, p50: 500us, p99: 3ms, max: 6ms } }
  postToLog: { min: 1ms, p50: 4ms, p99: 40ms, max: 90ms }
`,
    ),
    'events.yaml',
  );

describe('compare notes', () => {
  it("puts Redis's own time a timeline write in the replays beside the calibrated one", () => {
    const runs = [measured(0, 1, 0), measured(1, 1, 0)];
    runs[0].replay!.fanout.writes.redisSecondsPerWrite = 16.04e-6;
    runs[1].replay!.fanout.writes.redisSecondsPerWrite = 15.5e-6;
    const sc = scenario();
    sc.infrastructure.costs.zadd = 10.1e-6;
    expect(figureNotes(runs, [sc]).stage_writes_p99).toBe(
      "the same line for the largest posts; the replays' 20.0 ms, 20.0 ms; Redis's own time a timeline write 10.1 us as calibrated (costs.zadd), the replays' 16.0 us, 15.5 us (their scripts' commandstats over the window)",
    );
  });

  it("puts a large post's writes per timeline beside the model's line, in its figure and the tail's", () => {
    const runs = [measured(0, 1, 0), measured(1, 1, 0)];
    runs[0].summary.fanout.stagesSeconds!.largeWritesPerTimeline = stage(31.4e-6, 44e-6);
    runs[0].replay!.fanout.writes.redisSecondsPerWrite = 20.2e-6;
    const sc = scenario();
    sc.infrastructure.costs.zadd = 10.1e-6;
    const notes = figureNotes(runs, [sc]);
    // 1 / 32,200 s a write, a round trip and the batch's overhead; the second document older, without the figure
    expect(notes.stage_large_writes_per_timeline_p50).toMatch(
      /^the same line over a large post's timelines: 31\.06 us a follower \(the scenario's\) and 0\.44 ms a batch of up to \d+; the replays' 31\.40 us, none; Redis's own time a timeline write 10\.1 us as calibrated \(costs\.zadd\), the replays' 20\.2 us \(their scripts' commandstats over the window\)$/,
    );
    expect(notes.lag_p99).toMatch(/; its posts of 300 timelines or more wrote them at p50 31\.40 us a timeline measured, against the model's 31\.06 us a follower and its batches' share \(stage_large_writes_per_timeline_p50\)$/);
    // no document with the figure: the tail's note says nothing of it
    expect(figureNotes([measured(0, 1, 0)], [sc]).lag_p99).not.toMatch(/timelines or more/);
  });

  it("splits a replay's script time by the commands the script calls, each command's time a call over the window", () => {
    const runs = [measured(0, 1, 0), measured(1, 1, 0)];
    runs[0].replay!.fanout.writes.redisSecondsPerWrite = 20.2e-6;
    // EXISTS and PEXPIRE called by others too: each one's time a call is every caller's
    runs[0].replay!.fanout.redisCommands = {
      evalsha: { calls: 1000, usec: 20_200 },
      zadd: { calls: 1000, usec: 5_270 },
      exists: { calls: 2000, usec: 2_140 },
      zrem: { calls: 1000, usec: 740 },
      zremrangebyrank: { calls: 1000, usec: 880 },
      pexpire: { calls: 4000, usec: 5_000 },
      get: { calls: 10, usec: 10 },
    };
    const sc = scenario();
    sc.infrastructure.costs.zadd = 10.1e-6;
    expect(figureNotes(runs, [sc]).stage_writes_p99).toBe(
      "the same line for the largest posts; the replays' 20.0 ms, 20.0 ms; Redis's own time a timeline write 10.1 us as calibrated (costs.zadd), the replays' 20.2 us (their scripts' commandstats over the window)" +
        "; of it, the script's 5 commands for a timeline, every caller's over the window: 9.2 us (ZADD 5.3 us, PEXPIRE 1.3 us, EXISTS 1.1 us, ZREMRANGEBYRANK 0.9 us, ZREM 0.7 us), the rest Lua's own",
    );
    // an older document without the figure: its commandstats give it (20,200 us over 1,000 trims)
    delete runs[0].replay!.fanout.writes.redisSecondsPerWrite;
    expect(figureNotes(runs, [sc]).stage_writes_p99).toMatch(/the replays' 20\.2 us \(their scripts' commandstats/);
    // a replay whose window lacks one of the commands: nothing made up
    delete runs[0].replay!.fanout.redisCommands!.zrem;
    expect(figureNotes(runs, [sc]).stage_writes_p99).not.toMatch(/commands for a timeline/);
  });

  it("puts calibrate's running worker's scripts, split the same way, between the calibrated cost and the replays'", () => {
    const runs = [measured(0, 1, 0), measured(1, 1, 0)];
    runs[0].replay!.fanout.writes.redisSecondsPerWrite = 34.9e-6;
    const sc = scenario();
    sc.infrastructure.costs.zadd = 11.7e-6;
    const calibrated = { evalsha: { calls: 200, usec: 214_700 }, zadd: { calls: 10_100, usec: 53_530 }, exists: { calls: 10_000, usec: 19_000 }, zrem: { calls: 10_000, usec: 6_000 }, zremrangebyrank: { calls: 10_000, usec: 9_000 }, pexpire: { calls: 10_000, usec: 12_000 } };
    sc.calibration = { file: 'cal.yaml', machine: 'lab', date: '2026-12-05', contended: false, workerRedisCommands: calibrated };
    // 214,700 us over 200 calls of 50 timelines (10,000 trims); ZADD 53,530 over 10,100 calls (a rebuild's too); 9.9 us in all
    expect(figureNotes(runs, [sc]).stage_writes_p99).toBe(
      "the same line for the largest posts; the replays' 20.0 ms, 20.0 ms; Redis's own time a timeline write 11.7 us as calibrated (costs.zadd), " +
        "21.5 us (of it, the script's 5 commands for a timeline 9.9 us (ZADD 5.3 us, EXISTS 1.9 us, PEXPIRE 1.2 us, ZREMRANGEBYRANK 0.9 us, ZREM 0.6 us), the rest Lua's own) a write over calibrate's running worker's posts by size, " +
        "the replays' 34.9 us (their scripts' commandstats over the window)",
    );
    // two calibrations, the second's file older: each one's in their order, as the costs are
    const older = scenario();
    older.infrastructure.costs.zadd = 11.7e-6;
    older.calibration = { file: 'old.yaml', machine: 'lab', date: '2026-12-04', contended: false };
    expect(figureNotes(runs, [sc, older]).stage_writes_p99).toMatch(/costs\.zadd\), 21\.5 us \(of it, [^)]+\), the rest Lua's own\) \/ none a write over calibrate's running worker's posts by size, the replays'/);
    // a calibration that kept the scripts and their trims but not the other commands: the time a write alone
    sc.calibration.workerRedisCommands = { evalsha: calibrated.evalsha, zremrangebyrank: calibrated.zremrangebyrank };
    expect(figureNotes(runs, [sc]).stage_writes_p99).toMatch(/costs\.zadd\), 21\.5 us a write over calibrate's running worker's posts by size, the replays'/);
    // the scripts alone: their calls are not timelines, so nothing is made up
    sc.calibration.workerRedisCommands = { evalsha: calibrated.evalsha };
    expect(figureNotes(runs, [sc]).stage_writes_p99).not.toMatch(/running worker/);
    // an older calibration file: nothing of calibrate's running worker
    delete sc.calibration.workerRedisCommands;
    expect(figureNotes(runs, [sc]).stage_writes_p99).not.toMatch(/running worker/);
  });

  it("puts each stage's calibrated input beside each replay's own figure", () => {
    const notes = figureNotes([measured(0, 1, 7), measured(1, 2, 9)], [scenario()]);
    expect(notes.stage_post_to_log_p50).toBe("the scenario's postToLog p50 4.00 ms, drawn per post; the replays' 4.00 ms, 8.00 ms, 1.50x the input, which the model draws from unchanged (millisecond clocks: a quantile is a whole number of ms)");
    expect(notes.stage_post_to_log_p99).toBe("the scenario's postToLog p99 40.0 ms, drawn per post; the replays' 30.0 ms, 60.0 ms, 1.13x the input, which the model draws from unchanged (millisecond clocks: a quantile is a whole number of ms)");
    expect(notes.stage_statements_p99).toBe("the scenario's eventStatements p99 3.00 ms, drawn per event; the replays' 4.00 ms, 8.00 ms, 2.00x the input, which the model draws from unchanged");
    expect(notes.stage_pickup_mean).toBe("the scenario's pickup 1.00 ms (its draws' mean) to an idle worker, plus any wait behind its batch; the replays' 0.50 ms, 1.00 ms");
    expect(notes.stage_first_page_p50).toBe("the scenario's 0.68 ms + 2.10 us a follower (at least a round trip); the replays' 1.00 ms, 2.00 ms");
    // a round trip and the batch's overhead, and 1 / 32,200 s a write
    expect(notes.stage_writes_p50).toMatch(/^the scenario's 0\.44 ms a batch \(up to \d+ followers, \d in flight\) \+ 31\.06 us a follower, behind the consumer's other writes; the replays' 1\.20 ms, 2\.40 ms$/);
    // older documents without Redis's own time per script: nothing said of it
    expect(notes.stage_writes_p99).toBe("the same line for the largest posts; the replays' 20.0 ms, 40.0 ms");
    // a post's lag tail and its one largest post are the large posts' writes
    expect(notes.post_lag_p99).toBe(notes.lag_p99);
    expect(notes.post_lag_max).toBe(`one post: ${notes.lag_max}`);
    expect(notes.lag_p99).toMatch(/^the tail is the large posts' writes: measured, a worker's batch of timeline writes p50 /);
    // the reads that waited for Postgres, each run's
    expect(notes.read_p99).toMatch(/; 7 of \d+, 9 of \d+ reads waited for their followee set from Postgres \(not modelled\)(;|$)/);
  });

  it('gives no write-tail note, and does not fail, when every post was pulled (no batches)', () => {
    const runs = [measured(0, 1, 0), measured(1, 1, 0)];
    for (const r of runs) r.replay!.fanout.workers.batch = { count: 0, mean: NaN, p50: NaN, p90: NaN, p99: NaN, p999: NaN, max: NaN };
    const notes = figureNotes(runs, [scenario()]);
    expect(notes.lag_p99).toBeUndefined();
    expect(notes.post_lag_max).toBeUndefined();
    expect(notes.lag_p50).toMatch(/^measured: commit to the event log p50 /);
  });

  it("puts a pulled post's time to its author's list, the server's Server-Timing, beside the model's api.postListed", () => {
    const runs = [measured(0, 1, 0), measured(1, 1, 0)];
    runs.forEach((r, i) => {
      r.replay!.fanout.workers.batch = { count: 0, mean: NaN, p50: NaN, p90: NaN, p99: NaN, p999: NaN, max: NaN };
      Object.assign(r.replay!.fanout.probes, {
        pulledPosts: 30,
        pulledTimed: 29 - i,
        pulledPostLag: { count: 30, mean: 0.004, p50: 0.003 + i * 0.001, p90: 0.006, p99: 0.01, p999: 0.01, max: 0.01 },
        pulledFollowerLag: { count: 9000, mean: 0.005, p50: 0.004, p90: 0.008, p99: 0.02, p999: 0.02, max: 0.02 },
      });
    });
    const sc = scenario();
    sc.infrastructure.api = { ...sc.infrastructure.api!, cpuPerWrite: 0.0007, postListed: { points: [{ p: 0, value: 0.002 }, { p: 0.5, value: 0.0035 }, { p: 0.99, value: 0.012 }, { p: 1, value: 0.02 }] } };
    const notes = figureNotes(runs, [sc]);
    const head = "pulled posts (delivered when their author's list holds them, before the 201; the server's Server-Timing for 29 of 30, 28 of 30, the others bounded by the 201): ";
    const model = "; modelled, api.postListed p50 3.50 ms, p99 12.0 ms (the post's CPU 0.70 ms at least)";
    // no post pushed: the pulled posts are the whole tail, per follower weighted by audience, per post once each
    expect(notes.lag_p99).toBe(`${head}measured per follower, creation to the list p50 4.00 ms, p99 20.0 ms${model}`);
    expect(notes.lag_max).toBe(notes.lag_p99);
    expect(notes.post_lag_max).toBe(`${head}measured, creation to the list p50 3.50 ms, p99 10.0 ms${model}`);
    // and follow the hop's and the worker's note at p50
    expect(notes.lag_p50).toMatch(/^measured: commit to the event log p50 .*\. Pulled posts \(delivered when/);
    expect(notes.lag_p50!.endsWith(notes.lag_p99!.slice(1))).toBe(true);
    // an older document (no Server-Timing count) says so
    delete runs[1].replay!.fanout.probes.pulledTimed;
    expect(figureNotes(runs, [sc]).lag_p99).toContain('Server-Timing for 29 of 30, none, the others');
  });

  it('says nothing of the first page and the writes when no replay pushed a post (pull)', () => {
    const pulled = [measured(0, 1, 0), measured(1, 1, 0)];
    for (const r of pulled) {
      const s = r.summary.fanout.stagesSeconds!;
      s.firstPage = stage(0, 0);
      s.writes = stage(0, 0);
      r.replay!.fanout.writes.redisSecondsPerWrite = 47e-6;
    }
    const notes = figureNotes(pulled, [scenario()]);
    for (const id of ['stage_first_page_p50', 'stage_writes_p50', 'stage_writes_p99'] as const) expect(notes, id).not.toHaveProperty(id);
    expect(notes.stage_statements_p50).toContain("the replays' 0.60 ms, 0.60 ms");
    // one replay that pushed one is enough
    pulled[1].summary.fanout.stagesSeconds!.writes = stage(0.001, 0.002);
    expect(figureNotes(pulled, [scenario()]).stage_writes_p99).toMatch(/^the same line for the largest posts; the replays' 0\.00 us, 2\.00 ms/);
  });

  it("says how far a post's writes scatter about the line when the scenario draws them", () => {
    const sc = parseScenario(EVENTS_YAML.replace(/infrastructure:.*\n/, `infrastructure:
  fanoutWorkers: 2
  writesPerSecondPerWorker: 32200
  costs: { rtt: 60us, batch: 380us, eventWritesSpread: { min: 0.7, p50: 1, p90: 1.4, max: 2.3 } }
`), 'events.yaml');
    const notes = figureNotes([measured(0, 1, 0)], [sc]);
    expect(notes.stage_writes_p99).toBe(
      "the same line for the largest posts, each post's per-follower part scaled by a draw of eventWritesSpread (p50 1.00x, p90 1.40x, max 2.30x); the replays' 20.0 ms",
    );
    expect(notes.stage_writes_p50).toMatch(/behind the consumer's other writes, each post's per-follower part scaled by a draw of eventWritesSpread \(p50 1\.00x, p90 1\.40x, max 2\.30x\); the replays' 1\.20 ms$/);
    // a constant other than 1 is said as one
    const twice = parseScenario(EVENTS_YAML.replace(/infrastructure:.*\n/, 'infrastructure: { fanoutWorkers: 2, costs: { eventWritesSpread: 2 } }\n'), 'events.yaml');
    expect(figureNotes([measured(0, 1, 0)], [twice]).stage_writes_p99).toBe("the same line for the largest posts, every post at 2x it; the replays' 20.0 ms");
  });

  it("says how the worker's idle time moves each stage, with each curve's points", () => {
    const sc = scenario();
    sc.infrastructure.costs.eventStatementsByIdle = [
      { gap: 0.014, value: 0.0007 },
      { gap: 0.056, value: 0.0008 },
      { gap: 0.225, value: 0.0015 },
    ];
    sc.infrastructure.costs.eventFirstPageByIdle = [
      { gap: 0.056, value: 0.0009 },
      { gap: 0.225, value: 0.0014 },
    ];
    sc.infrastructure.costs.eventStatementsGap = 0.056;
    const notes = figureNotes([measured(0, 1, 0), measured(1, 2, 0)], [sc]);
    expect(notes.stage_first_page_p50).toContain('(at least a round trip), moved by the worker\'s idle time before it (measured at 56.0 ms; median 0.90 ms after 56.0 ms, 1.40 ms after 225.0 ms); the replays\'');
    // no writes curve: the writes are not moved
    expect(notes.stage_writes_p50).not.toContain('idle time');
    sc.infrastructure.costs.eventWritesByIdle = [
      { gap: 0.056, value: 0.0011 },
      { gap: 0.225, value: 0.0012 },
    ];
    expect(figureNotes([measured(0, 1, 0)], [sc]).stage_writes_p50).toContain("behind the consumer's other writes, plus once the move of a small post's writes by the worker's idle time before it (measured at 56.0 ms; median 1.10 ms after 56.0 ms, 1.20 ms after 225.0 ms)");
    expect(figureNotes([measured(0, 1, 0)], [scenario()]).stage_first_page_p50).not.toContain('idle time');
    expect(notes.stage_statements_p50).toBe(
      "the scenario's eventStatements p50 0.50 ms, drawn per event, moved by the worker's idle time before it (measured at 56.0 ms; median 0.70 ms after 14.0 ms, 0.80 ms after 56.0 ms, 1.50 ms after 225.0 ms); the replays' 0.60 ms, 1.20 ms",
    );
  });

  it("sets the server's own read tail beside the calibrated spread's, which is the model's tail", () => {
    const runs = [measured(0, 1, 0), measured(1, 1, 0)];
    runs.forEach((r, i) => (r.replay!.reads.server = { ...r.replay!.reads.server!, p50Ms: 1, p99Ms: 5 - i }));
    const spread = (p99: string) => parseScenario(EVENTS_YAML.replace(/infrastructure:.*\n/, `infrastructure:\n  api: { spread: { min: 0.4, p50: 1, p99: ${p99}, max: 4 } }\n`), 'events.yaml');
    const tails = "; the server's own p99 5.00x, 4.00x its p50, where the calibrated spread of a read one at a time, which the model draws a read's service from, has its p99";
    expect(figureNotes(runs, [spread('2.5')]).read_p99).toContain(`${tails} 2.50x;`);
    expect(figureNotes(runs, [spread('2.5'), spread('1.8')]).read_p99).toContain(`${tails} 2.50x / 1.80x;`);
    expect(figureNotes(runs, [spread('2.5')]).read_p50).not.toContain("the server's own p99");
    // without an API tier the model has no spread to set beside it
    const noApi = parseScenario(EVENTS_YAML.replace(/infrastructure:.*\n/, 'infrastructure:\n  api: none\n'), 'events.yaml');
    expect(figureNotes(runs, [noApi]).read_p99).toContain("; the server's own p99 5.00x, 4.00x its p50;");
  });

  it("puts the replays' pickup of an idle worker, calibrate's kind, beside every event's", () => {
    const runs = [measured(0, 1, 0), measured(1, 1, 0)];
    runs[0].replay!.fanout.workers.pickupIdle = { count: 1_204, mean: 0.00062, p50: 0.001, p90: 0.001, p99: 0.002, p999: 0.003, max: 0.004 };
    runs[1].replay!.fanout.workers.pickupIdle = { count: 1_150, mean: 0.00071, p50: 0.001, p90: 0.001, p99: 0.002, p999: 0.003, max: 0.004 };
    expect(figureNotes(runs, [scenario()]).stage_pickup_mean).toBe(
      "the scenario's pickup 1.00 ms (its draws' mean) to an idle worker, plus any wait behind its batch; the replays' 0.50 ms, 0.50 ms; of the events that found their worker waiting, 0.62 ms (1,204 events), 0.71 ms (1,150 events)",
    );
    // a run whose worker saw none (or an older document) is left out, not read as 0
    runs[1].replay!.fanout.workers.pickupIdle = { count: 0, mean: NaN, p50: NaN, p90: NaN, p99: NaN, p999: NaN, max: NaN };
    expect(figureNotes(runs, [scenario()]).stage_pickup_mean).toMatch(/; of the events that found their worker waiting, 0\.62 ms \(1,204 events\), none$/);
    // no replay kept it: nothing said
    delete runs[0].replay!.fanout.workers.pickupIdle;
    expect(figureNotes(runs, [scenario()]).stage_pickup_mean).not.toContain('found their worker waiting');
  });

  it("quotes the server's and the workers' event-loop waits and the server's GC pauses beside the read and pickup tails", () => {
    const runs = [measured(0, 1, 0), measured(1, 1, 0)];
    runs.forEach((r, i) => {
      r.replay!.reads.server = { ...r.replay!.reads.server, loopDelay: { p50Ms: 0.5 + i, p99Ms: 3.2 + i, probes: 23_553 }, gc: { pauses: 186 + i, totalMs: 572.9, p99Ms: 9.7 } };
      r.replay!.fanout.workers.loopDelay = { count: 48_000, mean: 0.0006, p50: 0.0004, p90: 0.001, p99: 0.0021 * (i + 1), p999: 0.01, max: 0.02 };
    });
    const notes = figureNotes(runs, [scenario()]);
    expect(notes.read_p99).toMatch(
      /; the server's event loop ran a timer due every 10 ms late by p50 0\.50 ms, 1\.50 ms, p99 3\.20 ms, 4\.20 ms \(a read arriving then waited as long\); its GC paused it 186 times for 572\.9 ms, 187 times for 572\.9 ms, p99 9\.70 ms, 9\.70 ms(;|$)/,
    );
    expect(notes.read_p50).not.toMatch(/the server's event loop/);
    expect(notes.stage_pickup_p99).toMatch(/; the workers' event loops ran a timer due every 10 ms late by p50 0\.40 ms, 0\.40 ms, p99 2\.10 ms, 4\.20 ms$/);
  });

  it("says how much of a read the load generator's late sends made, and a session's first page beside its later ones", () => {
    const runs = [measured(0, 1, 0), measured(1, 1, 0)];
    runs.forEach((r, i) => {
      const d = r.replay!.driver;
      const q = (p50Ms: number, p99Ms: number) => ({ count: 100, p50Ms, p90Ms: p99Ms, p99Ms, p999Ms: p99Ms, maxMs: p99Ms, meanMs: p50Ms });
      d.latency.reads.fromSent = q(1.1 + i, 7 + i);
      d.latency.firstPages.fromIntended = q(1.5, 10.9);
      d.latency.laterPages.fromIntended = q(0.9, 6.1);
      d.latency.sendDelay = { ...q(0, 1.56), maxMs: 18.7 + i };
      d.totals.reads = { ...d.totals.reads, sent: 6874, lateGenerator: 100 + i };
      d.driver = { ...d.driver, loopDelayP99Ms: 1.03 + i, cpuMicrosPerRequest: 477.5 };
    });
    const notes = figureNotes(runs, [scenario()]);
    const late =
      'the load generator sent 100 of 6874, 101 of 6874 reads over 1 ms late (the send delay of all its requests p99 1.56 ms, 1.56 ms, max 18.7 ms, 19.7 ms; ' +
      'its own event loop late by p99 1.03 ms, 2.03 ms, an answer arriving then read as late, at 478 us, 478 us of its CPU a request)';
    expect(notes.read_p99!.endsWith(`; from the actual send, p99 7.00 ms, 8.00 ms: ${late}; first pages 10.9 ms, 10.9 ms, later pages 6.10 ms, 6.10 ms`)).toBe(true);
    expect(notes.read_p50!.endsWith(`; from the actual send, p50 1.10 ms, 2.10 ms: ${late}; first pages 1.50 ms, 1.50 ms, later pages 0.90 ms, 0.90 ms`)).toBe(true);
  });

  it("puts the server process's CPU a request beside what the model charges one, its idle CPU included", () => {
    const sc = scenario();
    sc.infrastructure.api = { ...sc.infrastructure.api!, idleOverhead: 0.001, idleCpu: 0.0005 };
    const docs = [measured(0, 1, 0), measured(1, 1, 0)];
    const notes = figureNotes(docs, [sc]);
    const per = docs.map((r) => {
      const share = r.replay!.cpu.share!;
      const t = r.replay!.driver.totals;
      return `${(((share.server / 100) * share.wallSeconds) / (t.reads.sent + t.posts.sent) * 1000).toFixed(2)} ms`;
    });
    expect(notes.api_cpu).toMatch(new RegExp(`^measured, the server process's CPU over the window ${per.join(', ')} a request sent \\(its relay, timers and scrapes included\\); modelled, .* 0\\.50 ms more CPU for a request that finds the tier idle \\(none at full load\\), and 0 cores a process keeps busy with no request$`));
    expect(notes.read_p99).toMatch(/more on an idle API \(0\.50 ms of it CPU holding the core\)/);
  });

  it("puts the replays' waits for a core beside what the model's shared cores charge at their load", () => {
    const runs = [measured(0, 1, 0), measured(1, 1, 0)];
    const w = (runSeconds: number, waitSeconds: number, slices: number) => ({ runSeconds, waitSeconds, slices });
    runs.forEach((r, i) => {
      // 100% of a core busy of 200%: rho 0.5 on two cores
      r.replay!.cpu.share = {
        generator: 20, server: 40, processes: { server: 40, 'worker 1': 10, 'worker 2': 10 }, redis: 10, postgres: 10, other: 0, idle: 100, wallSeconds: 100, cores: 2,
        coreWaits: { 'worker 1': w(1, 0.3, 10_000), 'worker 2': w(1, 0.5 + i * 0.2, 10_000), postgres: w(2, 1, 10_000), server: w(4, 1.6, 20_000), driver: w(2, 0.2, 4_000) },
      };
    });
    const sc = scenario();
    sc.infrastructure.cores = 2;
    const waits =
      "; on the machine's shared cores each process waited for a core as it woke: its mean wait each time it was put on one (and all its waits over its CPU time) " +
      "the workers 40.0 us, 50.0 us (0.40, 0.50), Postgres's backends 100.0 us, 100.0 us (0.50, 0.50), the server 80.0 us, 80.0 us (0.40, 0.40), the driver 50.0 us, 50.0 us (0.10, 0.10); " +
      // an M/M/2 station's wait over its service at rho: rho^2 / (1 - rho^2), 1/3 at 0.5
      "the machine 50%, 50% busy on 2, 2 cores, where the model's 2 shared cores add 0.33, 0.33 of a stage's CPU time (an M/M/c station's wait)";
    const notes = figureNotes(runs, [sc]);
    for (const id of ['stage_statements_p50', 'stage_statements_p99', 'stage_first_page_p50', 'stage_writes_p50', 'read_p50', 'read_p99'] as const) expect(notes[id]!.endsWith(waits)).toBe(true);
    // the stages inside one process (the hop's commit, the writes' tail) and the lag figures do not get it
    for (const id of ['stage_post_to_log_p50', 'stage_writes_p99', 'lag_p99'] as const) expect(notes[id]).not.toMatch(/waited for a core/);
    sc.infrastructure.cores = null;
    expect(figureNotes(runs, [sc]).read_p50!.endsWith('on 2, 2 cores, where the model has no shared cores (infrastructure.cores)')).toBe(true);
    // the calibration's own waits, from its running worker's measurements, beside the replays'
    sc.calibration = { file: 'cal.yaml', machine: 'lab', date: '2026-12-05', contended: false, coreWaits: { worker: { perSlice: 25e-6, ofCpu: 0.2 }, postgres: { perSlice: 70e-6, ofCpu: 0.41 } } };
    expect(figureNotes(runs, [sc]).stage_statements_p50).toMatch(
      /the driver 50\.0 us, 50\.0 us \(0\.10, 0\.10\); while calibrate measured its running worker, the worker 25\.0 us \(0\.20\), Postgres's backends 70\.0 us \(0\.41\); the machine 50%/,
    );
  });

  it("gives each calibration's input where they differ, in their order, and one where they agree", () => {
    const runs = [measured(0, 1, 0), measured(1, 2, 0)];
    const [a, b] = [scenario(), scenario()];
    a.calibration = { file: 'a.yaml', machine: 'lab', date: '2026-12-05T16:43:12.106Z', contended: false };
    b.calibration = { file: 'b.yaml', machine: 'lab', date: '2026-12-05T16:59:33.957Z', contended: false };
    b.infrastructure.costs.pickup = constantDistribution(0.0008);
    b.infrastructure.costs.expand = 0.00035;
    b.infrastructure.costs.eventFirstPageByIdle = [
      { gap: 0.056, value: 0.0009 },
      { gap: 0.225, value: 0.0014 },
    ];
    b.infrastructure.costs.eventStatementsGap = 0.056;
    const notes = figureNotes(runs, [a, b]);
    const from = 'calibrated (a.yaml, 2026-12-05T16:43:12.106Z; b.yaml, 2026-12-05T16:59:33.957Z)';
    expect(notes.stage_pickup_mean).toBe(`${from} pickup 1.00 ms / 0.80 ms (its draws' mean) to an idle worker, plus any wait behind its batch; the replays' 0.50 ms, 1.00 ms`);
    // the same hop in both: once; the ratio is to the calibrations' mean input
    expect(notes.stage_post_to_log_p50).toMatch(new RegExp(`^${from.replace(/[().]/g, '\\$&')} postToLog p50 4\\.00 ms, drawn per post; the replays' 4\\.00 ms, 8\\.00 ms, 1\\.50x the input`));
    // a clause only one calibration has is said of each
    expect(notes.stage_first_page_p50).toBe(
      `${from} 0.68 ms + 2.10 us / 0.35 ms + 2.10 us a follower (at least a round trip); calibration 1, none; calibration 2, moved by the worker's idle time before it (measured at 56.0 ms; median 0.90 ms after 56.0 ms, 1.40 ms after 225.0 ms); the replays' 1.00 ms, 2.00 ms`,
    );
    expect(notes.lag_p50).toContain('first follower page 0.68 ms + 2.10 us / 0.35 ms + 2.10 us a follower before its writes at 32200/s');
    // three calibrations, the first and the third alike: each one's in its place
    const c = scenario();
    expect(figureNotes(runs, [a, b, c]).stage_pickup_mean).toContain("pickup 1.00 ms / 0.80 ms / 1.00 ms (its draws' mean) to an idle worker");
    // one scenario: nothing of calibrations
    expect(figureNotes(runs, [a]).stage_pickup_mean).toBe("calibrated (a.yaml, 2026-12-05T16:43:12.106Z) pickup 1.00 ms (its draws' mean) to an idle worker, plus any wait behind its batch; the replays' 0.50 ms, 1.00 ms");
    expect(() => figureNotes(runs, [])).toThrow(/no scenario the model ran/);
  });

  it('says nothing of what the documents did not measure', () => {
    // documents of a replay before the stages, the followee waits and the runtime's waits were read
    const older = [savedReplay(0), savedReplay(1)].map((r) => {
      delete r.summary.fanout.stagesSeconds;
      (r.replay!.reads.counters as { followeeLoadsWaited?: number }).followeeLoadsWaited = undefined;
      delete r.replay!.reads.server!.loopDelay;
      delete r.replay!.reads.server!.gc;
      delete (r.replay!.driver.latency as { sendDelay?: unknown }).sendDelay;
      return r;
    });
    const notes = figureNotes(older, [scenario()]);
    expect(Object.keys(notes).filter((k) => k.startsWith('stage_'))).toEqual([]);
    expect(notes.read_p99 ?? '').not.toMatch(/followee|event loop|GC|actual send|waited for a core/);
  });
});
