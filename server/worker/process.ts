// A fan-out worker process: N consumers of the post-event log (one consumer group, names
// `<host>-<pid>-1..N`), each with its own Redis connection and FanoutWorker, optionally the outbox
// relay (Postgres outbox -> event log) in the same process, a runtime policy read from Redis, the
// metrics published for the HTTP layer and for replay (core/keys.ts WORKER_METRICS_KEY; each
// consumer also counts its timeline writes per second at TIMELINE_WRITES_KEY, see fanout.ts), and
// a status line now and then.
//
// Stopping (the signal aborts, e.g. on SIGINT/SIGTERM): every consumer finishes the batch in hand
// (acknowledging it when its handling succeeded), the relay finishes the publish in flight, then
// every connection is closed and runWorker resolves. A process killed outright (SIGKILL) leaves its
// unacknowledged batch pending in the log: a consumer restarted under the same name gets it back at
// once, any other consumer of the group claims it after FEED_CLAIM_IDLE_MS, and handling it again
// writes nothing twice.
//
// With a Redis Cluster for the caches (WorkerRunOptions.redisCluster: REDIS_CLUSTER_NODES or
// --redis-cluster) every consumer's connection is a cluster client, and a Redis Streams event log
// stays on the standalone Redis at REDIS_URL (refused in one line if that is a cluster node).
import { formatPolicy } from '../../core/fanout-policy.js';
import { WORKER_METRICS_KEY } from '../../core/keys.js';
import { METRICS_INTERVAL_MS, parseExportedMetrics } from '../../core/worker-metrics.js';
import { AuthorPostsCache } from '../cache/author-posts.js';
import { loadScripts } from '../cache/post-list.js';
import { PostBodyCache } from '../cache/post-bodies.js';
import type { CachedBody } from '../feed/hydration.js';
import { connectRedisCluster, isClusterNode, urlIsClusterNode, type ClusterSpec } from '../cache/cluster.js';
import { CacheConfigError, closeRedis, connectRedis, keyspace, type Keyspace } from '../cache/redis.js';
import type { RedisLike } from '../cache/redis-like.js';
import { TimelineCache } from '../cache/timelines.js';
import { EventLogInputError } from '../events/errors.js';
import type { BatchHandler, DeadLetter, EventLog } from '../events/event-log.js';
import { openKafkaLog } from '../events/kafka.js';
import { openRedisStreamsLog, RedisStreamsLog } from '../events/redis-streams.js';
import { OutboxRelay, type RelayStats } from '../events/relay.js';
import { SchemaMismatchError } from '../store/errors.js';
import { migrate } from '../store/migrate.js';
import { FanoutLedger } from '../store/fanout-ledger.js';
import { PostgresOutbox } from '../store/outbox.js';
import { createStore, type Store } from '../store/pool.js';
import { FeedRepository, runStatement } from '../store/repository.js';
import { cacheOnClusterNodeMessage, eventLogOnClusterMessage } from '../settings.js';
import { leaseMs, policyFromSpec, RUNTIME_POLICY_KEY, type WorkerConfig } from './config.js';
import { FanoutWorker } from './fanout.js';
import { MemoryMetrics, type HistogramSummary } from './metrics.js';
import { probeEventLoop } from '../runtime-probe.js';

/** Where the workers publish their metrics (a hash: consumer base name -> ExportedMetrics JSON). */
export { WORKER_METRICS_KEY as METRICS_KEY } from '../../core/keys.js';
export { METRICS_INTERVAL_MS } from '../../core/worker-metrics.js';

export interface WorkerRunOptions {
  /** Aborting stops the worker gracefully. */
  readonly signal: AbortSignal;
  /** Lines for stderr (start-up, status, errors). Default: nothing. */
  readonly log?: (line: string) => void;
  /** Called once every consumer is running. */
  readonly onReady?: () => void;
  /** The process's metrics (default: a new MemoryMetrics). */
  readonly metrics?: MemoryMetrics;
  /** The Redis Cluster holding the caches (server/settings.ts readCacheCluster); absent or null: the Redis at config.redisUrl. */
  readonly redisCluster?: ClusterSpec | null;
  /** A `publish` event on it publishes the figures at once (`feedlab worker` on SIGUSR2), beside the interval's. */
  readonly publishRequests?: EventTarget;
}

/** The event on WorkerRunOptions.publishRequests that asks for the figures now. */
export const PUBLISH_REQUEST = 'publish';

export interface WorkerRunSummary {
  schema: 'feedlab.worker/1';
  consumers: string[];
  seconds: number;
  policy: string;
  relay: RelayStats | null;
  counters: Record<string, number>;
  histograms: Record<string, HistogramSummary>;
  /** Timeline writes per second over the run. */
  writesPerSecond: number;
}

/** Set (or with null, clear) the policy every running worker of this key space switches to within
 * FEED_POLICY_POLL_MS. The spec is checked first (WorkerConfigError). */
export async function setRuntimePolicy(redis: RedisLike, keys: Keyspace, spec: string | null, base?: WorkerConfig['policy']): Promise<void> {
  if (spec === null) {
    await redis.del(keys.key(RUNTIME_POLICY_KEY));
    return;
  }
  if (base) policyFromSpec(spec, base, RUNTIME_POLICY_KEY);
  await redis.set(keys.key(RUNTIME_POLICY_KEY), spec);
}

/** The workers' published metrics merged into one (entries older than maxAgeMs left out). */
export async function readFleetMetrics(redis: RedisLike, keys: Keyspace, maxAgeMs = 6 * METRICS_INTERVAL_MS): Promise<MemoryMetrics> {
  const all = await redis.hgetall(keys.key(WORKER_METRICS_KEY));
  const merged = new MemoryMetrics();
  const now = Date.now();
  for (const text of Object.values(all)) {
    const doc = parseExportedMetrics(text); // null: not ours, or torn
    if (!doc || now - doc.at > maxAgeMs) continue;
    try {
      merged.merge(doc);
    } catch {
      // a histogram that does not decode: skip
    }
  }
  return merged;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message || err.name : String(err);
}

/**
 * Remove the group's consumers that hold nothing and have been idle for idleMs (processes that
 * exited or were killed: a restarted process has a new pid, so a new name). A consumer holding
 * pending entries is never removed (that would drop its entries from the group); the living claim
 * them. Resolves with how many were removed.
 */
export async function pruneIdleConsumers(log: RedisStreamsLog, group: string, idleMs: number): Promise<number> {
  let removed = 0;
  for (let p = 0; p < log.partitions; p++) {
    const stream = log.streamKey(p);
    let consumers: unknown[][];
    try {
      consumers = (await log.redis.xinfo('CONSUMERS', stream, group)) as unknown[][];
    } catch {
      continue; // no stream or no group yet
    }
    for (const info of consumers) {
      const f = new Map<string, unknown>();
      for (let i = 0; i + 1 < info.length; i += 2) f.set(String(info[i]), info[i + 1]);
      // `idle`: since the consumer's last attempted interaction; a live one reads every few seconds
      // (an empty blocking read counts), so only the departed reach idleMs.
      if (Number(f.get('pending')) === 0 && Number(f.get('idle')) >= idleMs) {
        await log.redis.xgroup('DELCONSUMER', stream, group, String(f.get('name')));
        removed++;
      }
    }
  }
  return removed;
}

/** Consumers idle this long with nothing pending are removed from the group at start-up. */
export const PRUNE_IDLE_CONSUMERS_MS = 3_600_000;

/** Checks that the schema holds the tables the worker reads (one line when it does not). */
async function checkSchema(store: Store): Promise<void> {
  const r = await runStatement<{ users: string | null; outbox: string | null; groups: string | null }>(
    store,
    `SELECT to_regclass('users')::text AS users, to_regclass('outbox')::text AS outbox, to_regclass('event_log_groups')::text AS groups`,
    [],
  );
  if (!r.rows[0]?.users || !r.rows[0]?.outbox) {
    throw new SchemaMismatchError(`schema ${store.schema} at ${store.url} has no feedlab tables: run feedlab migrate (or start the worker with --migrate)`);
  }
  if (!r.rows[0].groups) throw new SchemaMismatchError(`schema ${store.schema} at ${store.url} is at an older migration: run feedlab migrate (or start the worker with --migrate)`);
}

/**
 * Run the worker until the signal aborts; resolves with a summary once everything is closed.
 * Rejects at start-up with a one-line error (WorkerConfigError, InfrastructureError,
 * DatabaseUnavailableError, EventLogUnavailableError, SchemaMismatchError ...), or when a consumer
 * cannot go on at all.
 */
export async function runWorker(config: WorkerConfig, options: WorkerRunOptions): Promise<WorkerRunSummary> {
  const say = options.log ?? (() => {});
  const metrics = options.metrics ?? new MemoryMetrics();
  const started = Date.now();
  const cleanups: Array<() => Promise<unknown> | void> = [];
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  if (options.signal.aborted) stop.abort();
  else options.signal.addEventListener('abort', onAbort, { once: true });
  const timers: NodeJS.Timeout[] = [];

  // Errors the worker survives: one line each, the same text at most once per 10 s.
  const lastSaid = new Map<string, number>();
  const report = (what: string) => (err: unknown) => {
    const text = `${what}: ${message(err)}`;
    const now = Date.now();
    if ((lastSaid.get(text) ?? 0) + 10_000 > now) return;
    if (lastSaid.size > 1000) lastSaid.clear();
    lastSaid.set(text, now);
    say(text);
  };

  let relayStats: RelayStats | null = null;
  const consumerNames = Array.from({ length: config.concurrency }, (_, i) => `${config.consumer}-${i + 1}`);
  try {
    const keys = keyspace(config.keyPrefix);
    const store = createStore({ databaseUrl: config.databaseUrl, schema: config.pgSchema, max: config.pgPoolMax, applicationName: 'feedlab-worker' });
    cleanups.push(() => store.pool.end());
    if (config.migrate) {
      const m = await migrate(store);
      say(`migrations: ${m.applied.length === 0 ? 'up to date' : `applied ${m.applied.map((a) => a.version).join(', ')}`} (version ${m.version})`);
    }
    await checkSchema(store);
    const repo = new FeedRepository(store);
    // Marks each event's outbox row fanned out, and republishes the unfinished rows when the log is
    // found to have lost its entries (fanout-ledger.ts). Closed before the pool (cleanups run reversed).
    const ledger = new FanoutLedger(store, {
      streamPrefix: config.streamPrefix,
      group: config.group,
      onError: report('fan-out ledger'),
      onRepublished: (n, deleted) => {
        metrics.count('eventLogLosses');
        metrics.count('eventsRepublished', n);
        say(`event log lost its entries (group ${config.group} had to be created again): ${n} outbox rows whose fan-out was not done are published again${deleted > 0 ? `, ${deleted} of deleted posts marked done` : ''}`);
      },
    });
    ledger.start();
    cleanups.push(() => ledger.close());

    const cluster = options.redisCluster ?? null;
    const redises: RedisLike[] = [];
    for (const name of consumerNames) {
      let redis: RedisLike;
      if (cluster) {
        const client = await connectRedisCluster({ spec: cluster, connectionName: `feedlab-worker-${name}`, onError: report('redis cluster') });
        cleanups.push(() => closeRedis(client));
        redis = client;
      } else {
        const client = await connectRedis({ url: config.redisUrl, connectionName: `feedlab-worker-${name}`, onError: report('redis') });
        cleanups.push(() => closeRedis(client));
        // A standalone client on a cluster node would fail on most keys (MOVED): say what to set instead.
        if (redises.length === 0 && (await isClusterNode(client))) throw new CacheConfigError(cacheOnClusterNodeMessage(config.redisUrl));
        redis = client;
      }
      await loadScripts(redis);
      redises.push(redis);
    }
    // The caches are on the cluster; the event log must not be.
    if (cluster && config.bus === 'redis' && (await urlIsClusterNode(config.redisUrl))) throw new EventLogInputError(eventLogOnClusterMessage(config.redisUrl));

    const log: EventLog =
      config.bus === 'redis'
        ? await openRedisStreamsLog({
            url: config.redisUrl,
            prefix: config.streamPrefix,
            partitions: config.partitions,
            batchSize: config.eventBatch,
            minIdleMs: config.claimIdleMs,
          })
        : // kafkajs's own logging is JSON on stdout; failures reach us as errors (one line each).
          await openKafkaLog({ brokers: config.kafkaBrokers, partitions: config.partitions, logLevel: 'nothing' });
    cleanups.push(() => log.close());
    if (log instanceof RedisStreamsLog) {
      await ledger.groupCreated((await log.ensureGroup(config.group)).length > 0);
      await pruneIdleConsumers(log, config.group, PRUNE_IDLE_CONSUMERS_MS).catch(report('pruning idle consumers'));
    }

    // Backlog for the adaptive policy: events waiting in the log times the writes an event costs.
    let backlogWrites: number | undefined;
    if (config.policy.kind === 'adaptive') {
      const sample = async () => {
        try {
          const waiting = await log.backlog(config.group);
          if (waiting === null) return;
          const events = metrics.counter('eventsCreated');
          const writes = metrics.counter('timelineWrites') + metrics.counter('timelineDuplicates') + metrics.counter('timelinesMissing');
          backlogWrites = waiting * (events > 0 ? writes / events : 1);
        } catch (err) {
          report('backlog')(err);
        }
      };
      timers.push(setInterval(sample, 1_000));
    }

    const workers = redises.map((redis, i) => {
      const timelines = new TimelineCache(redis, keys, { cap: config.timelineCap, leaseMs: leaseMs(config), batchSize: config.batchSize });
      return new FanoutWorker({
        repo,
        timelines,
        authorPosts: new AuthorPostsCache(redis, keys, { length: config.listLength, leaseMs: leaseMs(config) }),
        bodies: new PostBodyCache<CachedBody>(redis, keys),
        policy: config.policy,
        dormantDays: config.dormantDays,
        pageSize: config.pageSize,
        pipelines: config.pipelines,
        eventConcurrency: config.eventConcurrency,
        metrics,
        backlog: () => backlogWrites,
        onOutage: (err) => report(`consumer ${consumerNames[i]}: retrying its batch`)(err),
        onCounterError: (err) => report(`consumer ${consumerNames[i]}: timeline writes counter`)(err),
      });
    });

    // The runtime policy: a spec in Redis overrides the configured one; removing it restores it.
    if (config.policyPollMs > 0) {
      let current: string | null = null;
      const poll = async () => {
        let raw: string | null;
        try {
          raw = await redises[0].get(keys.key(RUNTIME_POLICY_KEY));
        } catch (err) {
          report('policy key')(err);
          return;
        }
        if (raw === current) return;
        current = raw;
        try {
          const policy = raw === null ? config.policy : policyFromSpec(raw, config.policy, `${keys.key(RUNTIME_POLICY_KEY)}`);
          for (const w of workers) w.setPolicy(policy);
          say(`policy now ${formatPolicy(policy)}${raw === null ? ' (configured)' : ` (from ${keys.key(RUNTIME_POLICY_KEY)})`}`);
        } catch (err) {
          say(`${message(err)}; keeping ${formatPolicy(workers[0].policy)}`);
        }
      };
      await poll();
      timers.push(setInterval(poll, config.policyPollMs));
    }

    // Metrics for the HTTP layer (merged across workers by readFleetMetrics).
    const publishMetrics = async () => {
      try {
        const key = keys.key(WORKER_METRICS_KEY);
        await redises[0].multi().hset(key, config.consumer, JSON.stringify(metrics.exportMetrics(config.consumer))).pexpire(key, 10 * METRICS_INTERVAL_MS).exec();
      } catch (err) {
        report('metrics')(err);
      }
    };
    timers.push(setInterval(publishMetrics, METRICS_INTERVAL_MS));
    // asked by the process that reads them (replay, calibrate) once the work is done: it waits for
    // an answer, not for the interval (2.5 s on average, every wait of a calibration or a replay)
    const onPublishRequest = () => void publishMetrics();
    options.publishRequests?.addEventListener(PUBLISH_REQUEST, onPublishRequest);
    cleanups.push(() => options.publishRequests?.removeEventListener(PUBLISH_REQUEST, onPublishRequest));
    // How late this event loop runs what is due: an event's pickup waits as long (compare quotes it).
    cleanups.push(probeEventLoop((ms) => metrics.observe('eventLoopDelayMs', ms)));

    if (config.statusMs > 0) {
      let lastWrites = 0;
      let lastAt = Date.now();
      timers.push(
        setInterval(() => {
          const now = Date.now();
          const writes = metrics.counter('timelineWrites');
          say(statusLine(metrics, ((writes - lastWrites) * 1000) / Math.max(1, now - lastAt)));
          lastWrites = writes;
          lastAt = now;
        }, config.statusMs),
      );
    }

    const running: Promise<unknown>[] = [];
    let fatal: unknown;
    const fail = (err: unknown) => {
      fatal ??= err;
      stop.abort();
    };
    workers.forEach((worker, i) => {
      running.push(
        log
          .consume({
            group: config.group,
            consumer: consumerNames[i],
            handler: markingDone(worker.handler(), ledger),
            signal: stop.signal,
            onError: report(`consumer ${consumerNames[i]}`),
            onDeadLetter: (d: DeadLetter) => say(`dead letter: partition ${d.partition} ${d.position} after ${d.deliveries} deliveries: ${d.reason}`),
            onGroupCreated: () => void ledger.groupCreated(true),
          })
          .catch(fail),
      );
    });
    if (config.relay) {
      const relay = new OutboxRelay({ source: new PostgresOutbox(store), log, idleMs: 100, onError: report('relay') });
      running.push(relay.run(stop.signal).then((s) => (relayStats = s), fail));
    }
    say(`ready: ${consumerNames.length} consumer${consumerNames.length === 1 ? '' : 's'} of group ${config.group}${config.relay ? ', relay on' : ''}`);
    options.onReady?.();

    await Promise.all(running);
    for (const t of timers.splice(0)) clearInterval(t);
    await Promise.all(workers.map((w) => w.countsSettled()));
    await publishMetrics();
    if (fatal) throw fatal;
  } finally {
    for (const t of timers) clearInterval(t);
    options.signal.removeEventListener('abort', onAbort);
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch {
        // closing what is already broken
      }
    }
  }

  const seconds = (Date.now() - started) / 1000;
  const snap = metrics.snapshot();
  return {
    schema: 'feedlab.worker/1',
    consumers: consumerNames,
    seconds,
    policy: formatPolicy(config.policy),
    relay: relayStats,
    counters: snap.counters,
    histograms: snap.histograms,
    writesPerSecond: snap.counters.timelineWrites / Math.max(seconds, 1e-3),
  };
}

/** The handler, then the batch's outbox rows marked fanned out (only once it resolved: a batch that
 * failed is delivered again). */
function markingDone(handler: BatchHandler, ledger: FanoutLedger): BatchHandler {
  return async (batch, signal) => {
    await handler(batch, signal);
    ledger.done(batch.map((d) => d.event));
  };
}

/** One status line: events, writes and their rate, lag and batch percentiles. */
export function statusLine(m: MemoryMetrics, writesPerSecond: number): string {
  const lag = m.summary('fanoutLagPushMs');
  const batch = m.summary('batchMs');
  const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
  return (
    `${m.counter('eventsCreated')} posts (${m.counter('postsPushed')} pushed, ${m.counter('postsPulled')} pulled), ${m.counter('eventsDeleted')} deletes; ` +
    `${m.counter('timelineWrites')} timeline writes (${Math.round(writesPerSecond)}/s); ` +
    `lag p50 ${ms(lag.p50)} ms p99 ${ms(lag.p99)} ms; batch p50 ${ms(batch.p50)} ms p99 ${ms(batch.p99)} ms`
  );
}

