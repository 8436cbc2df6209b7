// The measured window of one policy's replay: the schedule sent by the open-model driver, with the
// fan-out probes, the interval samplers (Redis memory, the event log's backlog, cold reads, CPU) and
// the scenario's cache losses at their instants; then the settling (the backlog drained, the probes
// seen) and the figures read at the end. Commands per read are measured before the window
// (commands-per-read.ts), on the warm steady state.
import type { Redis } from 'ioredis';
import { pullsAuthor, type FanoutPolicy } from '../../core/fanout-policy.js';
import type { Store } from '../../server/store/pool.js';
import { PostgresOutbox } from '../../server/store/outbox.js';
import { loseShards } from '../../sim/replay/cache-loss.js';
import { reconcile, reconciliationLine } from '../../sim/replay/reconcile.js';
import type { CpuMeter, CpuSnapshot } from '../../sim/replay/cpu.js';
import { runSchedule, type DriverResult, type IntervalFigures } from '../../sim/replay/driver.js';
import { FanoutProbe } from '../../sim/replay/fanout-probe.js';
import { openConnections, request, type KeepAliveConnection } from '../../sim/replay/http-client.js';
import { seriesIntervalSeconds } from '../../sim/replay/mapping.js';
import { memoryByClass } from '../../sim/replay/memory-classes.js';
import { commandTimes, eventBacklog, fleetDelta, fleetFigures, liveOldestAt, postToLogLags, timelineWritesBySecond, timesDelta, usedMemory } from '../../sim/replay/redis-figures.js';
import type { IntervalSample, ReplayMeasurements } from '../../sim/replay/result.js';
import { FaultInjector } from './faults.js';
import type { RunningStack } from './stack.js';
import { parseMetrics, serverCounters, type ServerCounters } from '../../sim/replay/server-metrics.js';
import { mix32 } from '../../core/random.js';
import { postText } from '../../sim/workload/history.js';
import { REPLAY } from './settings.js';
import { METRIC_COLD_STARTS } from '../../server/feed/read-path.js';
import type { LiveWorld } from './world.js';
import { askWorkersToPublish, type ServiceProcess } from './processes.js';

export interface MeasureContext {
  world: LiveWorld;
  policy: FanoutPolicy;
  host: string;
  port: number;
  token: (user: number) => string;
  redis: Redis;
  /** The replay's database (the reconciliation reads the posts from it). */
  store: Store;
  /** The stack's fault controls, for the scenario's workerCrash events (null against a target). */
  faults: RunningStack['faults'];
  /** Where the database's statistics are read from: another database of the same server for a scratch one. */
  statsStore: Store;
  database: string;
  keyPrefix: string;
  streamPrefix: string;
  partitions: number;
  group: string;
  cpu: CpuMeter;
  workerNames: string[];
  /** The stack's processes (empty against a target): its workers are asked to publish once the fan-out settled. */
  processes: readonly ServiceProcess[];
  /** Whether the database is the replay's scratch one (its statistics are only the replay's). */
  ownDatabase: boolean;
  /** A connection for /metrics scrapes. */
  metricsConn: KeepAliveConnection;
  signal: AbortSignal;
  onInterval?: (bucket: IntervalFigures, sample: IntervalSample) => void;
  onProgress?: (fraction: number, detail: string) => void;
  log: (line: string) => void;
}

export type WindowFigures = Omit<
  ReplayMeasurements,
  'scenario' | 'mapping' | 'graph' | 'population' | 'schedule' | 'digest' | 'offered' | 'policy' | 'target' | 'world' | 'baselineUsedMemory' | 'saturation' | 'events' | 'commands' | 'host'
> & { commandsWindow: Record<string, number>; commandsUsecWindow: Record<string, number> };

/** A connection of our own for /metrics once the given one closed (the API killed and started again). */
const metricsConns = new WeakMap<MeasureContext, KeepAliveConnection>();
/** The scrapes of one window, one at a time (the samplers and a fault's scrape share the connection). */
const scrapes = new WeakMap<MeasureContext, Promise<unknown>>();
/** Windows whose server refused a scrape of named metrics (one without the metric): they scrape whole. (An older server ignores ?name= and answers everything.) */
const namesRefused = new WeakSet<MeasureContext>();
/**
 * What the series samples every interval: the cold starts alone. A whole scrape held the server's
 * event loop for milliseconds once a second (the workers' histograms read and every metric
 * rendered), and a push replay's read p99 came out 14.4 ms with it against 9.5 ms with one scrape
 * in ten seconds (2026-12-04, threshold-sweep).
 */
const SERIES_METRICS = [METRIC_COLD_STARTS];

/** The server's counters: every metric, or only those named (the rest then read as none). */
function scrape(ctx: MeasureContext, names?: readonly string[]): Promise<ServerCounters> {
  const next = (scrapes.get(ctx) ?? Promise.resolve())
    .catch(() => {})
    .then(async () => {
      let conn = metricsConns.get(ctx) ?? ctx.metricsConn;
      if (conn.closed) {
        [conn] = await openConnections(ctx.host, ctx.port, 1);
        metricsConns.set(ctx, conn);
      }
      const get = (query: string) => request(conn, Buffer.from(`GET /metrics${query} HTTP/1.1\r\nHost: ${ctx.host}:${ctx.port}\r\n\r\n`, 'latin1'));
      let r = names && !namesRefused.has(ctx) ? await get(`?${names.map((n) => `name=${n}`).join('&')}`) : await get('');
      if (r.status === 400 && names && !namesRefused.has(ctx)) {
        namesRefused.add(ctx);
        r = await get('');
      }
      return serverCounters(parseMetrics(r.body.toString('utf8')));
    });
  scrapes.set(ctx, next);
  return next;
}

/** The database's statistics, read through another database's connection when it is the scratch one (so these reads are not in them). */
async function databaseStats(statsStore: Store, database: string): Promise<{ transactions: number; rowsRead: number; rowsWritten: number }> {
  const r = await statsStore.pool.query<{ xacts: string; read: string; written: string }>(
    `SELECT (xact_commit + xact_rollback)::text AS xacts, (tup_returned + tup_fetched)::text AS read, (tup_inserted + tup_updated + tup_deleted)::text AS written
     FROM pg_stat_database WHERE datname = $1`,
    [database],
  );
  const row = r.rows[0];
  return row ? { transactions: Number(row.xacts), rowsRead: Number(row.read), rowsWritten: Number(row.written) } : { transactions: NaN, rowsRead: NaN, rowsWritten: NaN };
}

/** The followers of `author` a probe watches: active readers (the fan-out's eligible ones), some at random and the last by id. */
function probedFollowers(ctx: MeasureContext, author: number, post: number, active: Uint8Array): number[] {
  const g = ctx.world.graph;
  const eligible: number[] = [];
  for (let e = g.followerOffsets[author]; e < g.followerOffsets[author + 1]; e++) {
    const u = g.followerIds[e];
    if (!active[u]) continue;
    // a reader-capped reader may be dropped by design: not probed
    if (readerCapped(ctx, u)) continue;
    eligible.push(u);
  }
  const want = REPLAY.probeFollowers + REPLAY.lastBatchProbes;
  if (eligible.length <= want) return eligible;
  eligible.sort((a, b) => a - b);
  const picked = new Set<number>(eligible.slice(-REPLAY.lastBatchProbes));
  for (let k = 0; picked.size < want; k++) picked.add(eligible[mix32(post * 31 + k) % eligible.length]);
  return [...picked];
}

/** A reader following more than the reader-cap policy's cap: a push may drop it by design. */
function readerCapped(ctx: MeasureContext, u: number): boolean {
  const g = ctx.world.graph;
  return ctx.policy.kind === 'reader-cap' && g.followeeOffsets[u + 1] - g.followeeOffsets[u] > ctx.policy.readerCap;
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
  const iv = seriesIntervalSeconds(tau);
  const intervalMs = iv * 1000;
  const active = new Uint8Array(world.graph.users);
  for (const u of world.population.activeUsers) active[u] = 1;
  const adaptive = ctx.policy.kind === 'adaptive';
  if (adaptive) ctx.log('probes: not run under the adaptive policy (its pull decisions move at run time); the workers\' own figures stand alone');

  const [callsBefore, statsBefore, serverBefore, fleetBefore] = await Promise.all([commandTimes(ctx.redis), databaseStats(ctx.statsStore, ctx.database), scrape(ctx), fleetFigures(ctx.redis, ctx.keyPrefix)]);
  const cpuStart: CpuSnapshot = await ctx.cpu.snapshot();

  const startedAt = Date.now();
  const probe = new FanoutProbe({
    redis: ctx.redis,
    keyPrefix: ctx.keyPrefix,
    pollMs: REPLAY.probePollMs,
    giveUpMs: REPLAY.probeGiveUpMs,
    maxPending: REPLAY.probeMaxPending,
    intervalMs,
    startedAtMs: startedAt,
  });
  probe.start();

  // interval samples, taken as each interval closes (and on through the settling)
  const samples: IntervalSample[] = [];
  let lastCpu = cpuStart;
  let sampling: Promise<void> = Promise.resolve();
  let lastSampleAt = startedAt;
  const sample = async (): Promise<IntervalSample> => {
    const [mem, backlog, counters, cpuNow, writesBySecond] = await Promise.all([
      usedMemory(ctx.redis),
      eventBacklog(ctx.redis, ctx.streamPrefix, ctx.partitions, ctx.group).catch(() => NaN),
      scrape(ctx, SERIES_METRICS).catch(() => null),
      ctx.cpu.snapshot(),
      ctx.onInterval ? timelineWritesBySecond(ctx.redis, ctx.keyPrefix).catch(() => new Map<number, number>()) : Promise.resolve(new Map<number, number>()),
    ]);
    const now = Date.now();
    const cpu = ctx.cpu.share(lastCpu, cpuNow);
    lastCpu = cpuNow;
    let writes = 0;
    for (const [second, n] of writesBySecond) if (second >= Math.floor(lastSampleAt / 1000) && second < Math.floor(now / 1000)) writes += n;
    const s: IntervalSample = {
      atMs: now - startedAt,
      usedMemory: mem,
      backlogEvents: backlog,
      coldStarts: counters?.coldStarts ?? NaN,
      writesPerSecond: (writes * 1000) / Math.max(1000, Math.floor(now / 1000) * 1000 - Math.floor(lastSampleAt / 1000) * 1000),
      lagP99Seconds: probe.takeRecentP99(),
      followerLagP99SoFar: probe.followerP99SoFar,
      cpu,
      residentBytes: ctx.cpu.resident(),
    };
    lastSampleAt = now;
    samples.push(s);
    return s;
  };
  const lastBucket: { b: IntervalFigures | null } = { b: null };
  const ticker = setInterval(() => {
    sampling = sampling.then(async () => {
      const s = await sample().catch(() => null);
      if (s && lastBucket.b) ctx.onInterval?.(lastBucket.b, s);
    });
  }, intervalMs);

  // the scenario's cache losses, at their instants
  const cacheLosses: ReplayMeasurements['cacheLosses'] = [];
  const losses: Promise<void>[] = [];
  const lossTimers = world.schedule.cacheLosses.map((loss) =>
    setTimeout(() => {
      losses.push(
        loseShards(ctx.redis, ctx.keyPrefix, ctx.streamPrefix, loss.shards, sc.infrastructure.redisShards).then(
          (f) => {
            cacheLosses.push({ atSeconds: loss.at / tau, keys: f.keys, timelines: f.timelines });
            ctx.log(`cache loss: ${f.keys} keys on ${loss.shards} of ${sc.infrastructure.redisShards} shards removed (${f.timelines} timelines)`);
          },
          (err) => ctx.log(`cache loss failed: ${(err as Error).message}`),
        ),
      );
    }, (loss.at / tau) * 1000),
  );

  // the scenario's faults, at their instants (faults.ts)
  const faults = new FaultInjector(ctx, tau, startedAt, () => scrape(ctx), serverBefore);
  faults.start();

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
      maxConnections: REPLAY.maxConnections,
      dropAfterMs: REPLAY.dropAfterMs,
      drainMs: REPLAY.drainMs,
      intervalMs,
      signal: ctx.signal,
      onPostCreated: (i, created) => {
        if (adaptive) return;
        const author = created.authorId;
        const pulled = pullsAuthor(ctx.policy, world.followerCounts[author], ctx.policy.threshold);
        // every pulled and every burst post is probed, a share of the others
        if (!pulled && s.posts.burst[i] !== 1 && mix32(i ^ 0x5bd1e995) / 4294967296 >= REPLAY.probeShare) return;
        const answeredAt = Date.now(); // this is called as the 201 arrives
        if (pulled) probe.watch(created.id, created.createdAt, author, [], true, audienceOf(ctx, author, active), answeredAt, created.listedAfterMs);
        else probe.watch(created.id, created.createdAt, author, probedFollowers(ctx, author, i, active), false);
      },
      onInterval: (b) => {
        lastBucket.b = b;
        ctx.onProgress?.(Math.min(1, b.endMs / 1000 / world.mapping.wallSeconds), `${Math.round(b.endMs / 1000)}/${Math.round(world.mapping.wallSeconds)} s`);
      },
    });
  } catch (err) {
    clearInterval(ticker);
    for (const t of lossTimers) clearTimeout(t);
    faults.cancel();
    probe.abandon();
    throw err;
  }
  for (const t of lossTimers) clearTimeout(t);
  await Promise.all(losses);
  // a restart due after the window still happens (the settling needs the processes back)
  await faults.done(driver);
  const stoppedInWindow = ctx.signal.aborted;
  const windowSeconds = stoppedInWindow ? Math.min(world.mapping.wallSeconds, driver.wallMs / 1000) : world.mapping.wallSeconds;

  // settling: the fan-out catches up with what was acknowledged (a stop cuts it short)
  // what is still to fan out: the log's backlog and the outbox's unpublished rows (after an event
  // log loss the log is empty while rows wait to be published again)
  // the outbox's rows not yet published (NaN: Postgres did not say) wait for the fan-out too
  const outbox = new PostgresOutbox(ctx.store);
  const backlogNow = async () => (await eventBacklog(ctx.redis, ctx.streamPrefix, ctx.partitions, ctx.group).catch(() => NaN)) + (await outbox.backlog().catch(() => NaN));
  const endBacklog = await backlogNow();
  let drainedAtSeconds = endBacklog === 0 ? windowSeconds : NaN;
  const settleEnd = (stopped: boolean) => Date.now() + (stopped ? REPLAY.stopSettleMs : REPLAY.settleMaxMs);
  let settleUntil = settleEnd(stoppedInWindow);
  const onStop = () => (settleUntil = Math.min(settleUntil, settleEnd(true)));
  ctx.signal.addEventListener('abort', onStop, { once: true });
  for (let b = endBacklog; b !== 0 && Date.now() < settleUntil; ) {
    ctx.onProgress?.(1, `settling: ${Number.isFinite(b) ? b : '?'} post events still to fan out`);
    await new Promise((r) => setTimeout(r, REPLAY.settlePollMs));
    b = await backlogNow();
    if (b === 0) drainedAtSeconds = (Date.now() - startedAt) / 1000;
  }
  clearInterval(ticker);
  await sampling;
  await sample().catch(() => null);
  if (!Number.isFinite(drainedAtSeconds)) ctx.log(`settling: the fan-out backlog did not drain before the replay went on`);
  // the probes wait for what is pending unless the run was stopped
  if (ctx.signal.aborted) probe.abandon();
  const probeFinish = probe.finish();
  ctx.signal.addEventListener('abort', () => probe.abandon(), { once: true });
  const probeFigures = await probeFinish;
  const faultFigures = faults.figures(probeFigures.lagP99ByBucket, iv);
  ctx.signal.removeEventListener('abort', onStop);

  const cpu = ctx.cpu.share(cpuStart, await ctx.cpu.snapshot());
  const callsWindow = timesDelta(callsBefore, await commandTimes(ctx.redis));
  // the server's counters now, before anything else reads through it
  const serverAfter = await scrape(ctx);
  await new Promise((r) => setTimeout(r, REPLAY.statsFlushMs));
  // every one of the workers to have published since the settling ended: ours asked to at once, a
  // deployment's publishing every few seconds
  const settledAt = Date.now();
  askWorkersToPublish(ctx.processes);
  let fleetAfter = await fleetFigures(ctx.redis, ctx.keyPrefix);
  // the running workers (a killed one's last figures stay as they were)
  const published = () => liveOldestAt(fleetAfter, ctx.workerNames.length) >= settledAt;
  for (const until = settledAt + REPLAY.workerPublishWaitMs; !published() && Date.now() < until && !ctx.signal.aborted; ) {
    await new Promise((r) => setTimeout(r, REPLAY.settlePollMs));
    fleetAfter = await fleetFigures(ctx.redis, ctx.keyPrefix);
  }
  if (!published()) ctx.log('workers: not every worker published its figures after the settling; theirs end a few seconds early');
  const [writesBySecond, statsAfter, hop] = await Promise.all([
    timelineWritesBySecond(ctx.redis, ctx.keyPrefix),
    databaseStats(ctx.statsStore, ctx.database),
    postToLogLags(ctx.redis, ctx.streamPrefix, ctx.partitions, driver.t0EpochMs),
  ]);
  const fleet = fleetDelta(fleetBefore, fleetAfter);
  if (!fleet.exact) ctx.log('workers: a worker restarted during the window; its figures are taken whole, not less what it had before');
  ctx.onProgress?.(1, 'reconciling: every acknowledged post in Postgres and with every follower it reaches');
  const reconciliation = await reconcile({
    redis: ctx.redis,
    store: ctx.store,
    keyPrefix: ctx.keyPrefix,
    posts: driver.posts,
    textOf: (i) => postText(seed, 'live', i),
    followersOf: (a) => world.graph.followerIds.subarray(world.graph.followerOffsets[a], world.graph.followerOffsets[a + 1]),
    // the adaptive policy moves its pull decisions at run time: its deliveries are not checked
    pushed: (a) => (adaptive ? null : !pullsAuthor(ctx.policy, world.followerCounts[a], ctx.policy.threshold)),
    reached: (u) => (!ctx.policy.skipDormant || active[u] === 1) && !readerCapped(ctx, u),
    timelineCap: sc.policy.timelineCap,
    listCap: sc.policy.celebrityListLength,
    sinceMs: driver.t0EpochMs,
    settled: Number.isFinite(drainedAtSeconds),
  }).catch((err: Error) => {
    ctx.log(`reconciliation failed: ${err.message}`);
    return null;
  });
  if (reconciliation && !reconciliation.ok) ctx.log(`reconciliation: ${reconciliationLine(reconciliation)}`);
  if (reconciliation) faults.attribute(faultFigures, driver, reconciliation);
  ctx.onProgress?.(1, 'measuring Redis memory by key class');
  const memory = await memoryByClass(ctx.redis, {
    keyPrefix: ctx.keyPrefix,
    streamPrefix: ctx.streamPrefix,
    pulled: (a) => pullsAuthor(ctx.policy, world.followerCounts[a], ctx.policy.threshold),
    shards: sc.infrastructure.redisShards,
  });
  metricsConns.get(ctx)?.close();
  return {
    intervalSeconds: iv,
    windowSeconds,
    windowStartEpochMs: driver.t0EpochMs,
    driver,
    probe: { ...probeFigures, share: REPLAY.probeShare },
    fleet,
    hop,
    writesBySecond,
    samples,
    memory,
    server: faults.serverDelta(serverAfter),
    serverBefore,
    commandsWindow: Object.fromEntries([...callsWindow].map(([cmd, t]) => [cmd, t.calls])),
    commandsUsecWindow: Object.fromEntries([...callsWindow].map(([cmd, t]) => [cmd, t.usec])),
    postgres: {
      database: ctx.database,
      own: ctx.ownDatabase,
      transactions: statsAfter.transactions - statsBefore.transactions,
      rowsRead: statsAfter.rowsRead - statsBefore.rowsRead,
      rowsWritten: statsAfter.rowsWritten - statsBefore.rowsWritten,
    },
    cpu,
    workerProcesses: ctx.workerNames,
    cacheLosses,
    faults: faultFigures.crashes,
    keyLosses: faultFigures.keyLosses,
    outages: faultFigures.outages,
    reconciliation,
    drainedAtSeconds,
    endBacklogEvents: Number.isFinite(endBacklog) ? endBacklog : NaN,
    stoppedAtSeconds: ctx.signal.aborted ? windowSeconds : null,
  };
}
