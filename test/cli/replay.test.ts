// feedlab replay end to end, on this machine's Redis and Postgres: the built CLI against the real
// server and workers it starts. One file, so its replays never run at the same time as each other
// (they measure the machine). Each scenario is small: about half a minute of wall time.
import { readFileSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recommend, type SweepResult } from '../../sim/sweep.js';
import type { RunResult } from '../../sim/result.js';
import { replayMapping } from '../../sim/replay/mapping.js';
import { parseScenario } from '../../sim/scenario/load.js';
import { buildWorld } from '../../cli/replay/world.js';
import { closeRedis, connectRedis } from '../../server/cache/redis.js';
import { createStore, type Store } from '../../server/store/pool.js';
import { DEFAULT_CLAIM_IDLE_MS } from '../../server/worker/config.js';
import type { Redis } from 'ioredis';
import { feedlab, oneLine, ROOT, scratchDir, writeScenario } from './cli-helpers.js';
import { skipWithoutServices } from '../server/services.js';
import { CURSOR_UP, hasScript, onPty } from './pty.js';
import { EVENTS_YAML } from '../sim/compare/documents.js';

const skip = await skipWithoutServices('feedlab replay end to end');

/** Cache loss and a cold-start storm on 1,200 users: 10 simulated minutes in 30 s (a series column is 3 s). */
const EVENTS = EVENTS_YAML;

/** Five celebrities (half the users each) post five times within 20 simulated seconds: a push burst (10 simulated minutes in 20 s). */
const BURST = `name: replay-burst
seed: 4
duration: 10m
population: 100000000
graph:
  generate: { users: 2000, avgFollows: 15, alpha: 2.3, celebrities: [{ count: 5, followers: 0.5, name: star }] }
activity:
  postsPerUserPerDay: 10
  sessionsPerUserPerDay: 4
  pagesPerSession: 1
  dormantShare: 0.3
  diurnal: none
events:
  - at: 5m
    celebrityBurst: { accounts: 5, window: 20s, postsPerAccount: 5 }
infrastructure: { fanoutWorkers: 2, redisShards: 4 }
policy: { kind: threshold, threshold: 25000 }
replay: { timeScale: 30 }
`;

let dir = '';
let redis: Redis | undefined;
let store: Store | undefined;

beforeAll(async () => {
  if (skip) return;
  dir = scratchDir();
  redis = await connectRedis({ reconnect: false });
  store = createStore({ max: 1 });
});

afterAll(async () => {
  if (redis) await closeRedis(redis);
  await store?.pool.end();
});

/** No key, schema or process of this replay is left. */
async function expectNothingLeft(scratch: { database: string; keyPrefix: string; streamPrefix: string }, pids: number[]): Promise<void> {
  const keys = await redis!.scan('0', 'MATCH', `${scratch.keyPrefix}*`, 'COUNT', 100_000);
  expect(keys[1]).toEqual([]);
  const events = await redis!.scan('0', 'MATCH', `${scratch.streamPrefix}*`, 'COUNT', 100_000);
  expect(events[1]).toEqual([]);
  const databases = await store!.pool.query('SELECT datname FROM pg_database WHERE datname = $1', [scratch.database]);
  expect(databases.rows).toEqual([]);
  for (const pid of pids) expect(() => process.kill(pid, 0), `process ${pid} is still running`).toThrow();
}

/** Start the CLI without waiting; `until` resolves once stderr matches. */
function start(args: string[]): { proc: ChildProcess; stderr: () => string; stdout: () => string; exited: Promise<number>; until(re: RegExp, ms: number): Promise<RegExpExecArray> } {
  const proc = spawn(process.execPath, [join(ROOT, 'dist/cli/main.js'), ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } });
  let err = '';
  let out = '';
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number>((resolve) => proc.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : -1))));
  return {
    proc,
    stderr: () => err,
    stdout: () => out,
    exited,
    async until(re, ms) {
      const deadline = Date.now() + ms;
      for (;;) {
        const m = re.exec(err);
        if (m) return m;
        if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`never saw ${re} (exit ${proc.exitCode}):\n${err.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}

describe.skipIf(skip)('feedlab replay', () => {
  it('measures a small scenario for real through every fault: a worker and the API killed, Redis reset, Postgres hung, the event log lost, Redis flushed; cold reads and rebuilds; reconciles; leaves nothing behind', async () => {
    // replay-events with faults: worker 1 killed at 2 simulated minutes (6 s), started again after 1
    // (3 s); Redis's connections reset from 3.5 (10.5 s) for 30 s (1.5 s); Redis flushed at 4 (12 s);
    // Postgres hung from 6 (18 s) for 30 s; the API killed at 8 (24 s) for 30 s; the event log's
    // keys lost at 9 (27 s)
    const CRASHING = EVENTS.replace(
      'events:\n',
      'events:\n  - at: 2m\n    workerCrash: { workers: 1, down: 1m }\n  - at: 210s\n    redisOutage: { window: 30s }\n  - at: 4m\n    redisFlush: {}\n' +
        '  - at: 6m\n    postgresOutage: { window: 30s, mode: hang }\n  - at: 8m\n    apiCrash: { down: 30s }\n  - at: 9m\n    eventLogLoss: {}\n',
    );
    expect(CRASHING).not.toBe(EVENTS);
    const path = writeScenario(dir, 'events.yaml', CRASHING);
    const out = join(dir, 'events-out');
    const r = feedlab(['replay', path, '--json', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as RunResult;
    expect(doc.schema).toBe('feedlab.result/1');
    expect(doc.source).toBe('replay');
    const x = doc.replay!;
    expect(x.mode).toBe('self-contained');

    // the schedule is the one the scenario and seed make, byte for byte
    const sc = parseScenario(CRASHING, 'events.yaml');
    const world = await buildWorld(replayMapping(sc, {}, 2));
    expect(x.schedule.digest).toBe(world.digest);
    expect(x.schedule.digest).toBe((await buildWorld(replayMapping(sc, {}, 2))).digest);
    expect(x.schedule.posts).toBe(world.schedule.posts.at.length);

    // every scheduled request was offered, sent and answered
    const t = x.driver.totals;
    expect(t.posts.offered).toBe(world.schedule.posts.at.length);
    expect(t.posts.completed).toBeGreaterThan(0.9 * t.posts.offered); // the faults' failures below
    // (on failure: how the reads failed, the first error, and each fault's reads, to tell a fault's from a stray one)
    const readsFailedWhy = JSON.stringify({ reads: t.reads, firstError: x.driver.firstError, faults: [...x.faults, ...x.outages].map((f) => ({ kind: f.kind, at: f.atSeconds, reads: f.reads })), keyLosses: x.keyLosses.map((l) => [l.kind, l.atSeconds]) });
    // most reads answered; those that failed are the faults' own (below). The API killed while slow
    // cold reads are out fails reads due seconds before the kill: a CI run (2026-12-06) failed 43 of
    // 345 ("connection closed"), of which the kill's window held 3 when it counted reads by due time only
    expect(t.reads.completed, readsFailedWhy).toBeGreaterThan(0.5 * t.reads.offered);
    expect(t.reads.dropped + t.reads.timeouts).toBe(0);
    expect(doc.summary.posts.total).toBe(t.posts.completed);

    // fan-out measured twice, and nothing acknowledged went missing
    const s = doc.summary;
    expect(s.fanout.lagSeconds.p50).toBeGreaterThan(0);
    expect(s.fanout.lagSeconds.p50).toBeLessThan(10);
    // the events the killed worker had taken wait for a living one to claim them, once idle for
    // DEFAULT_CLAIM_IDLE_MS (30 s): on a slow machine its last batch held over 1% of the posts
    // (a CI run, 2026-12-06: p99 30.2 s), so the p99 is bounded by the claim, not by 10 s
    expect(s.fanout.lagSeconds.p99).toBeLessThan(DEFAULT_CLAIM_IDLE_MS / 1000 + 10);
    expect(s.fanout.followerLagSeconds.p99).toBeGreaterThan(0);
    expect(x.fanout.probes.pairs).toBeGreaterThan(20);
    expect(x.fanout.probes.notSeen).toBe(0);
    expect(x.fanout.probes.followerLag.p50).toBeGreaterThan(0);
    // timeline writes counted at Redis; the workers' own count misses what the killed one had not
    // yet published (at most its last 5 s): never more than the fleet wrote before the kill, at 2
    // simulated minutes (6 s of wall time; the series is by wall second, counted at Redis), itself
    // well under all of them. A bound of a fifth of all failed in CI once (127 of 547 missing; in a
    // run after it 98 of 547, with 222 written before the kill)
    expect(s.fanout.deliveries).toBeGreaterThan(100);
    expect(x.fanout.writes.workersCounter).toBeLessThanOrEqual(x.fanout.writes.counted);
    const killedAt = 120 / x.mapping.timeScale;
    const step = doc.series.intervalSeconds;
    const beforeKill = doc.series.writesPerSecond.reduce((a, w, i) => a + (doc.series.startSeconds[i] < killedAt ? w * step : 0), 0);
    expect(beforeKill).toBeLessThan(0.75 * x.fanout.writes.counted);
    expect(x.fanout.writes.counted - x.fanout.writes.workersCounter).toBeLessThanOrEqual(beforeKill + 1);

    // the worker crash: killed at 6 s, started again 3 s later (a new consumer), posts acknowledged meanwhile
    expect(x.faults.map((f) => f.kind)).toEqual(['workerCrash', 'apiCrash']);
    const crash = x.faults[0];
    expect(crash.workers).toEqual([1]);
    expect(crash.atSeconds).toBeGreaterThanOrEqual(6);
    expect(crash.atSeconds).toBeLessThan(7);
    expect(crash.restartedAtSeconds - crash.atSeconds).toBeGreaterThanOrEqual(3);
    expect(crash.readyAfterSeconds).toBeLessThan(10);
    // the API was up: every post sent while the worker was down was acknowledged
    expect(crash.posts.acknowledged).toBeGreaterThan(0);
    expect(crash.posts.failed).toBe(0);
    expect(crash.kind).toBe('workerCrash');
    // the API crash: killed at 24 s, back on its port; what fell due meanwhile was held or failed, and served after
    const api = x.faults[1];
    expect(api.atSeconds).toBeGreaterThanOrEqual(24);
    expect(api.restartedAtSeconds - api.atSeconds).toBeGreaterThanOrEqual(1.5);
    expect(api.posts.due).toBeGreaterThan(0);
    expect(api.posts.acknowledged + api.posts.failed).toBe(api.posts.due);
    expect(api.firstAckAfterSeconds).toBeLessThan(10);
    expect(Number.isFinite(crash.recoveredAfterSeconds)).toBe(true);
    // the outages, through the replay's own proxies: Redis's connections reset (and new ones
    // refused), then Postgres's hung; each back, its backlog drained, and what it cost counted
    expect(x.outages.map((o) => [o.kind, o.mode])).toEqual([
      ['redisOutage', 'reset'],
      ['postgresOutage', 'hang'],
    ]);
    const [redisDown, pgHung] = x.outages;
    expect(redisDown.atSeconds).toBeGreaterThanOrEqual(10.5);
    expect(redisDown.endedAtSeconds - redisDown.atSeconds).toBeGreaterThanOrEqual(1.5);
    expect(redisDown.connections.open).toBeGreaterThan(0);
    expect(pgHung.atSeconds).toBeGreaterThanOrEqual(18);
    expect(pgHung.connections.open).toBeGreaterThan(0);
    for (const o of x.outages) {
      expect(Number.isFinite(o.recoveredAfterSeconds), o.kind).toBe(true);
      expect(o.firstAckAfterSeconds, o.kind).toBeLessThan(10);
      expect(o.posts.acknowledged + o.posts.failed).toBe(o.posts.due);
      expect(o.reads.due).toBeGreaterThan(0);
    }
    // a hang holds posts (they wait for Postgres) and fails none; the reads do not need it
    expect(pgHung.posts.failed).toBe(0);
    expect(pgHung.posts.maxWaitSeconds).toBeGreaterThan(1);
    // every post and read that failed in the whole run was due during a fault (or in flight at one)
    const faults = [...x.faults, ...x.outages];
    // and the reconciliation's share of each fault: nothing lost, duplicated or undelivered
    for (const f of faults) expect(f.reconciled, f.kind).toEqual({ lost: 0, duplicated: 0, missingDeliveries: 0 });
    expect(t.posts.offered - t.posts.completed).toBe(faults.reduce((a, f) => a + f.posts.failed, 0));
    expect(t.reads.offered - t.reads.completed, readsFailedWhy).toBeLessThanOrEqual(faults.reduce((a, f) => a + f.reads.due - f.reads.ok, 0) + 2);
    // the event log lost: the workers made their group again and counted the loss
    expect(x.keyLosses.map((l) => l.kind)).toEqual(['redisFlush', 'eventLogLoss']);
    expect(x.keyLosses[0].atSeconds).toBeGreaterThanOrEqual(12);
    expect(x.keyLosses[1].atSeconds).toBeGreaterThanOrEqual(27);
    for (const l of x.keyLosses) {
      expect(l.keys).toBeGreaterThan(0);
      expect(l.groupBackAfterSeconds).toBeLessThan(10);
    }
    expect(x.fanout.workers.counters.eventLogLosses).toBeGreaterThanOrEqual(2);
    // and the reconciliation: every acknowledged post stored once, in every reached follower's timeline
    const rec = x.reconciliation!;
    expect(rec).toMatchObject({ settled: true, ok: true, lost: 0, duplicated: 0, acknowledged: t.posts.completed, stored: t.posts.completed });
    expect(rec.deliveries.delivered).toBe(rec.deliveries.checked);
    // the flush at 12 s left timelines to be rebuilt on read: those are apart, the rest checked
    expect(rec.deliveries.checked).toBeGreaterThan(50);
    expect(rec.deliveries.rebuiltOnRead).toBeGreaterThan(50);
    expect(s.fanout.writesPerSecond.peak).toBeGreaterThanOrEqual(s.fanout.writesPerSecond.mean);

    // memory by key class: the simulator's model of the timelines within 5% of MEMORY USAGE
    const tl = x.memory.classes.timelines;
    expect(tl.keys).toBeGreaterThan(100);
    expect(tl.modelBytes! / tl.bytes).toBeGreaterThan(0.95);
    expect(tl.modelBytes! / tl.bytes).toBeLessThan(1.05);
    expect(x.memory.classes.bodies.keys).toBeGreaterThan(0);
    expect(s.redis.memoryBytes.end).toBeGreaterThan(tl.bytes);

    // reads: client percentiles from the intended send, the server's own, commands per read
    expect(s.reads.latencyMs.p50).toBeGreaterThan(0);
    expect(s.reads.latencyMs.p99).toBeGreaterThanOrEqual(s.reads.latencyMs.p50);
    // the server's own count spans both API processes (what the killed one answered after its last scrape is lost)
    expect(x.reads.server.answered).toBeGreaterThanOrEqual(0.97 * t.reads.completed);
    expect(x.reads.commandsPerRead!.total).toBeGreaterThan(3);
    expect(x.reads.commandsPerRead!.byCommand.mget).toBeGreaterThan(0.9);

    // the flush took every cache key at 12 s, the cache loss half the shards' at 15 s (5 simulated
    // minutes at 20x); cold reads came after them, and the storm rebuilt more
    expect(x.cacheLosses.map((l) => l.atSeconds)).toEqual([12, 15]);
    expect(x.cacheLosses[0].timelines).toBeGreaterThan(10);
    expect(s.reads.coldReads).toBeGreaterThan(10);
    expect(s.reads.rebuilds).toBeGreaterThan(10);
    const iv = doc.series.intervalSeconds;
    const coldBefore = doc.series.coldReadsPerSecond.slice(0, Math.floor(12 / iv)).reduce((a, b) => a + b, 0);
    const coldAfter = doc.series.coldReadsPerSecond.slice(Math.ceil(12 / iv)).reduce((a, b) => a + b, 0);
    expect(coldBefore).toBe(0);
    expect(coldAfter).toBeGreaterThan(0);
    expect(doc.events.map((e) => [e.kind, e.at])).toEqual([
      ['workerCrash', 6],
      ['redisOutage', 10.5],
      ['redisFlush', 12],
      ['cacheLoss', 15],
      ['postgresOutage', 18],
      ['coldStartStorm', 21],
      ['apiCrash', 24],
      ['eventLogLoss', 27],
    ]);

    // Postgres's own statistics of the replay's own database
    expect(x.postgres.own).toBe(true);
    expect(x.postgres.database).toBe(x.scratch!.database);
    expect(x.postgres.transactions).toBeGreaterThan(t.posts.completed);
    expect(x.postgres.rowsWritten).toBeGreaterThanOrEqual(2 * t.posts.completed);
    // CPU per process, and the files of --out
    expect(Object.keys(x.cpu.share!.processes).sort()).toEqual(['server', 'worker 1', 'worker 2']);
    expect(JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')).replay.schedule.digest).toBe(x.schedule.digest);
    await expectNothingLeft(x.scratch!, x.processes.map((p) => p.pid));
  });

  it('shows a push burst as a lag peak that the threshold policy does not have, and a live sweep recommends from its measured rows', async () => {
    const path = writeScenario(dir, 'burst.yaml', BURST);
    const r = feedlab(['replay', path, '--policies', 'push,threshold:25000', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as SweepResult;
    expect(doc.schema).toBe('feedlab.sweep/1');
    expect(doc.runs.map((x) => x.policy)).toEqual(['push:skip-dormant', 'threshold:25000:skip-dormant']);
    expect(doc.recommended).toEqual(recommend(doc.rows));
    const [push, threshold] = doc.runs;
    // the same schedule both times
    expect(push.replay!.schedule.digest).toBe(threshold.replay!.schedule.digest);
    // the burst: 25 posts to ~700 active readers each under push; pulled once each under the threshold
    expect(push.summary.posts.pulled).toBe(0);
    expect(threshold.summary.posts.pulled).toBeGreaterThanOrEqual(25);
    // pulled posts are in their authors' lists by the time the 201 arrives: probed, and counted per post
    const pulled = threshold.replay!.fanout.probes;
    expect(pulled.pulledPosts).toBeGreaterThanOrEqual(25);
    expect(pulled.pulledPostLag.count).toBe(pulled.pulledPosts);
    expect(pulled.pulledPostLag.p99).toBeLessThan(0.5);
    expect(pulled.pulledFollowerLag.count).toBeGreaterThan(25 * 500);
    expect(pulled.pulledFollowerLag.count).toBeLessThan(25 * 1000);
    expect(push.summary.fanout.deliveries).toBeGreaterThan(threshold.summary.fanout.deliveries + 25 * 500);
    // the pickup of the events that found their worker waiting (calibrate's kind), some of every event's
    const idle = push.replay!.fanout.workers.pickupIdle!;
    expect(idle.count).toBeGreaterThan(0);
    expect(idle.count).toBeLessThanOrEqual(push.replay!.fanout.workers.event.count);
    expect(idle.max).toBeLessThanOrEqual(push.summary.fanout.stagesSeconds!.pickup.max);
    // Redis's own time of the scripts a list trimmed over the window (a timeline write trims one): some microseconds
    const perWrite = push.replay!.fanout.writes.redisSecondsPerWrite!;
    expect(perWrite).toBeGreaterThan(0.5e-6);
    expect(perWrite).toBeLessThan(1e-3);
    // the window's commandstats kept whole: the same EVALSHAs, and the script's trim once a timeline
    // write (and a list add) within the window's edges (its writes counted by the second)
    const stats = push.replay!.fanout.redisCommands!;
    // (the document writes 6 significant digits)
    expect(Math.abs(stats.evalsha.usec / stats.zremrangebyrank.calls / 1e6 / perWrite - 1)).toBeLessThan(1e-5);
    expect(stats.zremrangebyrank.calls).toBeGreaterThan(0.95 * push.summary.fanout.deliveries);
    const iv = push.series.intervalSeconds;
    // a series column is one simulated minute: the burst's fifth
    const burstAt = Math.floor((5 * 60) / 30 / iv);
    const around = (xs: number[]) => Math.max(...xs.slice(burstAt, burstAt + 3).map((v) => v ?? 0));
    const elsewhere = (xs: number[]) => {
      const rest = xs.filter((_, i) => i < burstAt - 1 || i > burstAt + 3).filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
      return rest[Math.floor(rest.length / 2)];
    };
    expect(around(push.series.lagP99Seconds)).toBeGreaterThan(3 * elsewhere(push.series.lagP99Seconds));
    expect(around(push.series.lagP99Seconds)).toBeGreaterThan(2 * around(threshold.series.lagP99Seconds));
    expect(push.summary.fanout.writesPerSecond.peak).toBeGreaterThan(2 * threshold.summary.fanout.writesPerSecond.peak);
    for (const run of doc.runs) await expectNothingLeft(run.replay!.scratch!, run.replay!.processes.map((p) => p.pid));
  }, 600_000);

  it('Ctrl-C stops the window: a partial report, exit 130, nothing left behind; a cold start reads cold', async () => {
    const path = writeScenario(dir, 'events-stop.yaml', EVENTS.replace('replay: { timeScale: 20 }', 'replay: { timeScale: 20, warm: false }'));
    // 300 users: the cold stack's read ceiling stays clear of the schedule's peak, which replay would
    // refuse (correctly) over 90% of it: 1,200 users offered 61/s against 65/s measured once, and 600
    // offered 29.8/s against 33/s on a slower afternoon (2026-12-03)
    const run = start(['replay', path, '--json', '--users', '300']);
    await run.until(/window: 30 s of the schedule/, 120_000);
    await new Promise((r) => setTimeout(r, 8_000));
    const stoppedAt = Date.now();
    run.proc.kill('SIGINT');
    expect(await run.exited).toBe(130);
    // the settling after a stop is bounded (10 s), the reads-only window skipped
    expect(Date.now() - stoppedAt).toBeLessThan(30_000);
    const doc = JSON.parse(run.stdout()) as RunResult;
    expect(doc.partial!.stoppedAtSeconds).toBeGreaterThan(6);
    expect(doc.partial!.stoppedAtSeconds).toBeLessThan(15);
    expect(doc.scenario.durationSeconds).toBe(doc.replay!.mapping.wallSeconds);
    expect(doc.partial!.stoppedAtSeconds).toBeLessThan(doc.scenario.durationSeconds);
    // commands per read are measured before the window, on the warm steady state
    expect(doc.replay!.reads.commandsPerRead!.reads).toBeGreaterThan(0);
    expect(doc.summary.reads.total).toBeGreaterThan(0);
    // replay.warm false: the checks before the window are forgotten (caches emptied, the stack restarted), so first reads rebuild
    expect(doc.replay!.mapping.warm).toBe(false);
    expect(run.stderr()).toMatch(/caches emptied and the stack restarted: the window starts cold/);
    expect(doc.summary.reads.coldReads).toBeGreaterThan(doc.summary.reads.total * 0.1);
    expect(doc.summary.reads.rebuilds).toBe(doc.summary.reads.coldReads);
    expect(run.stderr()).toMatch(/replay stopped; the report above is partial \(exit 130\)/);
    await expectNothingLeft(doc.replay!.scratch!, doc.replay!.processes.map((p) => p.pid));
  });

  it.skipIf(!hasScript)('on a terminal the live dashboard shows the replay, q stops it, and the partial report is the last frame', async () => {
    const path = writeScenario(dir, 'events-pty.yaml', EVENTS);
    // 300 users: what is tested is the terminal, and a smaller world loads and warms sooner
    const r = await onPty(['replay', path, '--users', '300'], { keys: [(out) => (/replayed 0:00:(0[6-9]|1\d)/.test(out) ? 'q' : null)], timeoutMs: 240_000 });
    expect(r.code, r.output.slice(-3000)).toBe(130);
    expect(r.output).toContain(CURSOR_UP);
    expect(r.output).toMatch(/feedlab replay · replay-events · policy threshold:100000:skip-dormant/);
    expect(r.output).toMatch(/replayed 0:00:\d\d \/ 0:00:30 \(x20\)/);
    expect(r.output).toMatch(/read p99 .*PASS/);
    // the report comes after the last dashboard frame, and says it is partial
    const tail = r.output.slice(r.output.lastIndexOf('q or Ctrl-C'));
    expect(tail).toMatch(/partial: stopped at [0-9.]+ s of 30 s/);
    expect(tail).toMatch(/Replay: what ran/);
    const [, database, tag] = /database (replay_([^,\s]+)), key prefix/.exec(tail)!;
    await expectNothingLeft({ database, keyPrefix: `feedlab:replay:${tag}:`, streamPrefix: `feedlab:replay-events:${tag}` }, []);
  }, 300_000);

  it('a driver killed outright leaves nothing behind: the watchdog stops the stack and removes the scratch space', async () => {
    const path = writeScenario(dir, 'events-kill.yaml', EVENTS);
    // 300 users: what is tested is the clean-up, and a smaller world loads and warms sooner
    const run = start(['replay', path, '--users', '300']);
    const [, database, keyPrefix, streamPrefix] = await run.until(/scratch space: database (\S+), keys under (\S+) and (\S+) /, 60_000);
    const [, server] = await run.until(/server \(pid (\d+)\)/, 120_000);
    await run.until(/window: 30 s of the schedule/, 120_000);
    run.proc.kill('SIGKILL');
    await run.exited;
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        await expectNothingLeft({ database, keyPrefix, streamPrefix }, [Number(server)]);
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  });

  it('refuses a read rate over what the server sustains in one line, with the largest that fits (its bad options: replay/refusals.test.ts)', () => {
    // about 24k feed pages a second at its peak, 4.5x the 5.4k a second the server sustained here (20,000
    // sessions a day offered about 6k, under 90% of what a fast run of this machine measured)
    const path = writeScenario(dir, 'heavy.yaml', EVENTS.replace('sessionsPerUserPerDay: 15', 'sessionsPerUserPerDay: 80000'));
    const heavy = feedlab(['replay', path, '--quiet']);
    expect(heavy.code, heavy.stderr).toBe(2);
    expect(oneLine(heavy.stderr)).toMatch(/^feedlab: replay: the schedule offers up to .* feed pages\/s .* the largest that fits is --time-scale [0-9.]+ \(or --users \d+ at time scale 20\)$/);
  });
});
