// The measured window of one policy's replay: the schedule sent by the open-model driver, with the
// fan-out probes, the interval samplers (Redis memory, the event log's backlog, cold reads, CPU), the
// scenario's cache losses at their instants, then the settling (the backlog drained, the probes
// seen), a reads-only window for Redis commands per read, and the figures read at the end.
import type { Redis } from 'ioredis';
import { pullsAuthor, type FanoutPolicy } from '../../core/fanout-policy.js';
import type { Store } from '../../server/store/pool.js';
import { loseShards } from '../../sim/replay/cache-loss.js';
import type { CpuMeter, CpuShare, CpuSnapshot } from '../../sim/replay/cpu.js';
import { runSchedule, type DriverResult, type IntervalFigures } from '../../sim/replay/driver.js';
import { FanoutProbe } from '../../sim/replay/fanout-probe.js';
import { request, type KeepAliveConnection } from '../../sim/replay/http-client.js';
import { memoryByClass } from '../../sim/replay/memory-classes.js';
import { callsDelta, commandCalls, eventBacklog, fleetFigures, timelineWritesBySecond, usedMemory } from '../../sim/replay/redis-figures.js';
import type { IntervalSample, ReplayMeasurements } from '../../sim/replay/result.js';
import { counterDelta, parseMetrics, serverCounters, type ServerCounters } from '../../sim/replay/server-metrics.js';
import { mix32 } from '../../sim/random.js';
import { postText } from '../../sim/workload/history.js';
import type { LiveWorld } from './world.js';

/** The measurement settings, one table. */
export const MEASURE = {
  /** Keep-alive connections the driver may open. */
  maxConnections: 256,
  /** A request not sent within this of its time is dropped (counted). */
  dropAfterMs: 10_000,
  /** After the last scheduled send, how long answers are waited for. */
  drainMs: 30_000,
  /** Share of ordinary posts probed (every celebrity-burst post is). */
  probeShare: 0.25,
  /** Followers probed per post, drawn at random, plus the last LAST_BATCH_PROBES by id (the worker's last batch). */
  probeFollowers: 6,
  lastBatchProbes: 3,
  probePollMs: 25,
  probeMaxPending: 20_000,
  /** After the window, how long the backlog may take to drain before the run says it did not. */
  settleMaxMs: 120_000,
  /** A pair not seen this long after its post is given up (counted as not delivered). */
  probeGiveUpMs: 60_000,
  /** The reads-only window: how long, at the run's mean read rate (at least this many reads/s). */
  readsOnlyMs: 5_000,
  readsOnlyMinRate: 50,
} as const;

export interface MeasureContext {
  world: LiveWorld;
  policy: FanoutPolicy;
  host: string;
  port: number;
  token: (user: number) => string;
  redis: Redis;
  store: Store;
  keyPrefix: string;
  streamPrefix: string;
  partitions: number;
  group: string;
  cpu: CpuMeter;
  workerNames: string[];
  /** A connection for /metrics scrapes. */
  metricsConn: KeepAliveConnection;
  signal: AbortSignal;
  onInterval?: (bucket: IntervalFigures, sample: IntervalSample) => void;
  onProgress?: (fraction: number, detail: string) => void;
  log: (line: string) => void;
}

export type WindowFigures = Omit<
  ReplayMeasurements,
  'scenario' | 'mapping' | 'graph' | 'population' | 'schedule' | 'digest' | 'offered' | 'policy' | 'target' | 'world' | 'baselineUsedMemory' | 'saturation' | 'events'
>;

async function scrape(ctx: MeasureContext): Promise<ServerCounters> {
  const r = await request(ctx.metricsConn, Buffer.from(`GET /metrics HTTP/1.1\r\nHost: ${ctx.host}:${ctx.port}\r\n\r\n`, 'latin1'));
  return serverCounters(parseMetrics(r.body.toString('utf8')));
}

async function tableStats(store: Store): Promise<{ scans: number; rowsWritten: number }> {
  const r = await store.pool.query<{ scans: string; written: string }>(
    `SELECT coalesce(sum(seq_scan + coalesce(idx_scan, 0)), 0)::text AS scans, coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::text AS written
     FROM pg_stat_user_tables WHERE schemaname = $1`,
    [store.schema],
  );
  return { scans: Number(r.rows[0].scans), rowsWritten: Number(r.rows[0].written) };
}

/** The followers of `author` a probe watches: active readers (the fan-out's eligible ones), some at random and the last by id. */
function probedFollowers(ctx: MeasureContext, author: number, post: number, active: Uint8Array): number[] {
  const g = ctx.world.graph;
  const from = g.followerOffsets[author];
  const to = g.followerOffsets[author + 1];
  const eligible: number[] = [];
  for (let e = from; e < to; e++) {
    const u = g.followerIds[e];
    if (!active[u]) continue;
    // a reader-capped reader may be dropped by design: not probed
    if (ctx.policy.kind === 'reader-cap' && g.followeeOffsets[u + 1] - g.followeeOffsets[u] > ctx.policy.readerCap) continue;
    eligible.push(u);
  }
  if (eligible.length <= MEASURE.probeFollowers + MEASURE.lastBatchProbes) return eligible;
  eligible.sort((a, b) => a - b);
  const picked = new Set<number>(eligible.slice(-MEASURE.lastBatchProbes));
  for (let k = 0; picked.size < MEASURE.probeFollowers + MEASURE.lastBatchProbes; k++) picked.add(eligible[mix32(post * 31 + k) % eligible.length]);
  return [...picked];
}

/** The live readers a pulled post of `author` reaches: its followers the fan-out counts (the active, unless dormant ones are not skipped). */
function audienceOf(ctx: MeasureContext, author: number, active: Uint8Array): number {
  const g = ctx.world.graph;
  if (!ctx.policy.skipDormant) return g.followerOffsets[author + 1] - g.followerOffsets[author];
  let n = 0;
  for (let e = g.followerOffsets[author]; e < g.followerOffsets[author + 1]; e++) n += active[g.followerIds[e]];
  return n;
}

export async function measureWindow(ctx: MeasureContext): Promise<WindowFigures> {
  const { world } = ctx;
  const sc = world.mapping.scenario;
  const tau = world.mapping.timeScale;
  const iv = Math.max(1, 60 / tau);
  const intervalMs = iv * 1000;
  const active = new Uint8Array(world.graph.users);
  for (const u of world.population.activeUsers) active[u] = 1;
  const adaptive = ctx.policy.kind === 'adaptive';
  if (adaptive) ctx.log('probes: not run under the adaptive policy (its pull decisions move at run time); the workers\' own figures stand alone');

  const callsBefore = await commandCalls(ctx.redis);
  const statsBefore = await tableStats(ctx.store);
  const serverBefore = await scrape(ctx);
  const cpuStart: CpuSnapshot = await ctx.cpu.snapshot();

  const startedAt = Date.now();
  const probe = new FanoutProbe({
    redis: ctx.redis,
    keyPrefix: ctx.keyPrefix,
    pollMs: MEASURE.probePollMs,
    giveUpMs: MEASURE.probeGiveUpMs,
    maxPending: MEASURE.probeMaxPending,
    intervalMs,
    startedAtMs: startedAt,
  });
  probe.start();

  // interval samples, taken as each interval closes (and on through the settling)
  const samples: IntervalSample[] = [];
  let lastCpu = cpuStart;
  let sampling: Promise<void> = Promise.resolve();
  let lastSampleAt = Date.now();
  let writesSeen = new Map<number, number>();
  const sample = async (): Promise<IntervalSample> => {
    const [mem, backlog, counters, cpuNow, writesBySecond] = await Promise.all([
      usedMemory(ctx.redis),
      eventBacklog(ctx.redis, ctx.streamPrefix, ctx.partitions, ctx.group).catch(() => NaN),
      scrape(ctx).catch(() => null),
      ctx.cpu.snapshot(),
      ctx.onInterval ? timelineWritesBySecond(ctx.redis, ctx.keyPrefix).catch(() => new Map<number, number>()) : Promise.resolve(new Map<number, number>()),
    ]);
    writesSeen = writesBySecond;
    const cpu = ctx.cpu.share(lastCpu, cpuNow);
    lastCpu = cpuNow;
    let writes = 0;
    for (const [second, n] of writesSeen) if (second >= (lastSampleAt - 1) / 1000 && second < (Date.now() - 1) / 1000) writes += n;
    const s: IntervalSample = {
      atMs: Date.now() - startedAt,
      usedMemory: mem,
      backlogEvents: backlog,
      coldStarts: counters?.coldStarts ?? NaN,
      writesPerSecond: (writes * 1000) / Math.max(1, Date.now() - lastSampleAt),
      lagP99Seconds: probe.takeRecentP99(),
      followerLagP99SoFar: probe.followerP99SoFar,
      cpu,
    };
    lastSampleAt = Date.now();
    samples.push(s);
    return s;
  };
  const lastBucket: { b: IntervalFigures | null } = { b: null };
  const timers: NodeJS.Timeout[] = [];
  const ticker = setInterval(() => {
    sampling = sampling.then(async () => {
      const s = await sample().catch(() => null);
      if (s && lastBucket.b) ctx.onInterval?.(lastBucket.b, s);
    });
  }, intervalMs);
  timers.push(ticker);

  // the scenario's cache losses, at their instants
  const cacheLosses: ReplayMeasurements['cacheLosses'] = [];
  for (const loss of world.schedule.cacheLosses) {
    timers.push(
      setTimeout(() => {
        void loseShards(ctx.redis, ctx.keyPrefix, loss.shards, sc.infrastructure.redisShards).then(
          (f) => {
            cacheLosses.push({ atSeconds: loss.at / tau, keys: f.keys, timelines: f.timelines });
            ctx.log(`cache loss: ${f.keys} keys on ${loss.shards} of ${sc.infrastructure.redisShards} shards removed (${f.timelines} timelines)`);
          },
          (err) => ctx.log(`cache loss failed: ${(err as Error).message}`),
        );
      }, (loss.at / tau) * 1000),
    );
  }

  const s = world.schedule;
  const toMs = (at: Float64Array) => Float64Array.from(at, (t) => (t / tau) * 1000);
  const seed = sc.seed;
  let driver: DriverResult;
  try {
    driver = await runSchedule({
      host: ctx.host,
      port: ctx.port,
      posts: { atMs: toMs(s.posts.at), author: s.posts.author, burst: s.posts.burst },
      sessions: { atMs: toMs(s.sessions.at), user: s.sessions.user, pages: s.sessions.pages },
      pageSize: sc.activity.pageSize,
      token: ctx.token,
      postText: (i) => postText(seed, 'live', i),
      maxConnections: MEASURE.maxConnections,
      dropAfterMs: MEASURE.dropAfterMs,
      drainMs: MEASURE.drainMs,
      intervalMs,
      signal: ctx.signal,
      onPostCreated: (i, created) => {
        if (adaptive) return;
        const author = created.authorId;
        const pulled = pullsAuthor(ctx.policy, world.followerCounts[author], ctx.policy.threshold);
        // every pulled and every burst post is probed, a share of the others
        if (!pulled && s.posts.burst[i] !== 1 && mix32(i ^ 0x5bd1e995) / 4294967296 >= MEASURE.probeShare) return;
        if (pulled) probe.watch(created.id, created.createdAt, author, [], true, audienceOf(ctx, author, active));
        else probe.watch(created.id, created.createdAt, author, probedFollowers(ctx, author, i, active), false);
      },
      onInterval: (b) => {
        lastBucket.b = b;
        ctx.onProgress?.(Math.min(1, b.endMs / 1000 / world.mapping.wallSeconds), `${Math.round(b.endMs / 1000)}/${Math.round(world.mapping.wallSeconds)} s`);
      },
    });
  } catch (err) {
    for (const t of timers) clearInterval(t);
    probe.abandon();
    throw err;
  }
  const stopped = ctx.signal.aborted;
  const windowSeconds = stopped ? Math.min(world.mapping.wallSeconds, driver.wallMs / 1000) : world.mapping.wallSeconds;
  for (const t of timers.slice(1)) clearTimeout(t);

  // settling: the fan-out catches up with what was acknowledged
  const endBacklog = await eventBacklog(ctx.redis, ctx.streamPrefix, ctx.partitions, ctx.group).catch(() => NaN);
  let drainedAtSeconds = endBacklog === 0 ? windowSeconds : NaN;
  const settleUntil = Date.now() + (stopped ? 10_000 : MEASURE.settleMaxMs);
  for (let b = endBacklog; b !== 0 && Date.now() < settleUntil; ) {
    ctx.onProgress?.(1, `settling: ${Number.isFinite(b) ? b : '?'} post events still to fan out`);
    await new Promise((r) => setTimeout(r, 200));
    b = await eventBacklog(ctx.redis, ctx.streamPrefix, ctx.partitions, ctx.group).catch(() => NaN);
    if (b === 0) drainedAtSeconds = (Date.now() - startedAt) / 1000;
  }
  clearInterval(ticker);
  await sampling;
  await sample().catch(() => null);
  if (!Number.isFinite(drainedAtSeconds)) ctx.log(`settling: the fan-out backlog did not drain within ${MEASURE.settleMaxMs / 1000} s of the window's end`);
  if (stopped) probe.abandon();
  const probeFigures = await probe.finish();
  const cpuEnd = await ctx.cpu.snapshot();
  const cpu: CpuShare = ctx.cpu.share(cpuStart, cpuEnd);
  const callsWindow = callsDelta(callsBefore, await commandCalls(ctx.redis));

  // Redis commands per read: a short window of nothing but first-page reads once fan-out is idle,
  // less what an idle window as long saw (the workers' and the API's polls, metrics publishing)
  let readsOnly: WindowFigures['commands']['readsOnly'] = null;
  if (!stopped && world.population.activeUsers.length > 0) {
    const idleFrom = await commandCalls(ctx.redis);
    await new Promise((r) => setTimeout(r, MEASURE.readsOnlyMs));
    const idle = callsDelta(idleFrom, await commandCalls(ctx.redis));
    const rate = Math.max(MEASURE.readsOnlyMinRate, driver.totals.reads.completed / Math.max(1, windowSeconds));
    const n = Math.max(1, Math.round((rate * MEASURE.readsOnlyMs) / 1000));
    const users = Int32Array.from({ length: n }, (_, i) => world.population.activeUsers[mix32(i + 7919) % world.population.activeUsers.length]);
    const before = await commandCalls(ctx.redis);
    const r = await runSchedule({
      host: ctx.host,
      port: ctx.port,
      posts: { atMs: new Float64Array(0), author: new Int32Array(0), burst: new Uint8Array(0) },
      sessions: { atMs: Float64Array.from({ length: n }, (_, i) => (i * 1000) / rate), user: users, pages: new Uint16Array(n).fill(1) },
      pageSize: sc.activity.pageSize,
      token: ctx.token,
      postText: () => '',
      maxConnections: 64,
      dropAfterMs: MEASURE.dropAfterMs,
      drainMs: 10_000,
      intervalMs: MEASURE.readsOnlyMs,
      signal: ctx.signal,
    });
    const seconds = r.wallMs / 1000;
    const calls = callsDelta(before, await commandCalls(ctx.redis));
    const net: Record<string, number> = {};
    for (const [cmd, n] of calls) {
      if (cmd === 'info') continue; // this process's own INFO reads around the windows
      const background = ((idle.get(cmd) ?? 0) * seconds * 1000) / MEASURE.readsOnlyMs;
      if (n - background > 0) net[cmd] = n - background;
    }
    readsOnly = { reads: r.totals.reads.completed, seconds, calls: net };
  }

  await new Promise((r) => setTimeout(r, 1_200)); // Postgres flushes its statistics within a second
  const [fleet, writesBySecond, serverAfter, statsAfter] = await Promise.all([
    fleetFigures(ctx.redis, ctx.keyPrefix),
    timelineWritesBySecond(ctx.redis, ctx.keyPrefix),
    scrape(ctx),
    tableStats(ctx.store),
  ]);
  ctx.onProgress?.(1, 'measuring Redis memory by key class');
  const memory = await memoryByClass(ctx.redis, {
    keyPrefix: ctx.keyPrefix,
    streamPrefix: ctx.streamPrefix,
    pulled: (a) => pullsAuthor(ctx.policy, world.followerCounts[a], ctx.policy.threshold),
    shards: sc.infrastructure.redisShards,
  });
  return {
    intervalSeconds: iv,
    windowSeconds,
    windowStartEpochMs: driver.t0EpochMs,
    driver,
    probe: probeFigures,
    fleet,
    writesBySecond,
    samples,
    memory,
    server: counterDelta(serverBefore, serverAfter),
    commands: { window: Object.fromEntries(callsWindow), readsOnly },
    postgres: { scans: statsAfter.scans - statsBefore.scans, rowsWritten: statsAfter.rowsWritten - statsBefore.rowsWritten },
    cpu,
    workerProcesses: ctx.workerNames,
    cacheLosses,
    drainedAtSeconds,
    endBacklogEvents: Number.isFinite(endBacklog) ? endBacklog : NaN,
    stoppedAtSeconds: stopped ? windowSeconds : null,
  };
}
