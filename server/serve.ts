// The reference server's composition root: configuration from flags and environment, and one
// process running the HTTP API, the outbox relay and (with --with-worker) the fan-out worker.
//
// Environment (flags win; DESIGN.md: services through REDIS_URL, DATABASE_URL, KAFKA_BROKERS):
//   REDIS_URL, DATABASE_URL, FEED_BUS=redis|kafka, KAFKA_BROKERS
//   REDIS_CLUSTER_NODES  host:port,... of a Redis Cluster for the caches (timelines, recent lists,
//                        bodies); the Redis Streams event log then stays on the standalone Redis
//                        at REDIS_URL (or FEED_BUS=kafka), never on the cluster
//   FEED_TOKEN_SECRET    HS256 secret of the bearer tokens, at least 32 bytes (required)
//   FEED_CURSOR_SECRET   MAC secret of the feed cursors (default: derived from the token secret)
//   FEED_THRESHOLD       authors with more followers are pulled at read time (25000)
//   FEED_POLICY          the worker's policy spec, when not threshold: the read path follows it
//                        (push and reader-cap pull nobody, pull pulls everybody)
//   FEED_TIMELINE_CAP (800), FEED_LIST_LENGTH (100), FEED_LEASE_DAYS (7), FEED_DORMANT_DAYS (14)
//   FEED_NODE_ID         this instance's worker id in post ids, 0..1023 (0); distinct per instance
//   FEED_KEY_PREFIX ('') FEED_STREAM_PREFIX (feedlab:events) FEED_PARTITIONS (16)
//   FEED_PG_SCHEMA (public) FEED_PG_POOL (20) FEED_FOLLOWEE_TTL_MS (300000)
//   FEED_PORT (8080) FEED_HOST (127.0.0.1)
//
// Start-up: migrations (idempotent, under an advisory lock), the Redis or Redis Cluster connection
// (unreachable is a start-up error, which `feedlab serve` waits out unless --fail-fast: exit 3), the event log (unreachable is NOT an error: posts wait
// in the Postgres outbox and the relay moves them once the log answers), then the listener.
// Shutdown (close()): stop accepting and finish the requests in flight, let the relay finish its
// publish and the worker its batch, close the connections.
import { createHmac } from 'node:crypto';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { DEFAULT_API_PG_POOL } from '../core/deployment.js';
import { formatPolicy, readPullThreshold, type FanoutPolicy } from '../core/fanout-policy.js';
import { PostIdGenerator, MAX_WORKER_ID } from '../core/post-id.js';
import { redactUrl } from '../core/service-url.js';
import { SECONDS_PER_DAY } from '../core/timeline-rules.js';
import { checkTokenSecret, TOKEN_SECRET_ENV, TokenConfigError } from './auth/token.js';
import { loadScripts } from './cache/post-list.js';
import { connectRedisCluster, isClusterNode, urlIsClusterNode, type ClusterSpec } from './cache/cluster.js';
import { CacheConfigError, closeRedis, connectRedis, keyspace } from './cache/redis.js';
import type { RedisLike } from './cache/redis-like.js';
import { backoffDelay, sleep } from './events/backoff.js';
import { EventLogInputError } from './events/errors.js';
import type { EventLog } from './events/event-log.js';
import { openKafkaLog } from './events/kafka.js';
import { openRedisStreamsLog } from './events/redis-streams.js';
import { OutboxRelay } from './events/relay.js';
import { createFeedService, type RedisFeedService } from './feed/service.js';
import { DEFAULT_FOLLOWEE_TTL_MS } from './feed/followees.js';
import { buildApp, metricNamesOf } from './http/app.js';
import { FleetMetrics } from './http/fleet-metrics.js';
import { MetricsRegistry } from './http/metrics.js';
import { watchRuntime } from './http/runtime-metrics.js';
import { migrate } from './store/migrate.js';
import { PostgresOutbox } from './store/outbox.js';
import { createStore, type Store } from './store/pool.js';
import { FeedRepository } from './store/repository.js';
import {
  cacheOnClusterNodeMessage,
  describeWithCluster,
  eventLogOnClusterMessage,
  pickSetting,
  readCacheCluster,
  readServiceSettings,
  SettingsReader,
  type Bus,
  type ServiceSettings,
} from './settings.js';

/** A configuration mistake: one line, exit 2. */
export class ServeConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ServeConfigError';
  }
}

export type { Bus } from './settings.js';

export interface ServeConfig {
  port: number;
  host: string;
  withWorker: boolean;
  /** --batch-size and --concurrency for the worker of --with-worker (checked by its own config). */
  workerFlags: { 'batch-size'?: string; concurrency?: string };
  /** The settings it shares with the fan-out workers, as read: --with-worker's worker takes them as they are. */
  shared: ServiceSettings;
  /** The environment this configuration was read from: the worker of --with-worker reads its own settings there. */
  env: NodeJS.ProcessEnv;
  /** The Redis of the caches, and of a Redis Streams event log (with a cluster: of the event log only). */
  redisUrl: string;
  /** The Redis Cluster holding the caches (REDIS_CLUSTER_NODES, --redis-cluster); absent or null: REDIS_URL holds them. */
  redisCluster?: ClusterSpec | null;
  databaseUrl: string;
  pgSchema: string;
  pgPoolMax: number;
  bus: Bus;
  kafkaBrokers: string[];
  streamPrefix: string;
  partitions: number;
  keyPrefix: string;
  /** The fan-out policy the workers run (FEED_POLICY over FEED_THRESHOLD). */
  policy: FanoutPolicy;
  /** Followees with more followers than this are pulled on read (from the policy). */
  readThreshold: number;
  timelineCap: number;
  listLength: number;
  leaseDays: number;
  dormantDays: number;
  /** Worker id of this instance's post-id generator. */
  nodeId: number;
  /** The fan-out workers' consumer group, whose backlog /metrics shows. */
  group: string;
  followeeTtlMs: number;
  tokenSecret: string;
  cursorSecret: string | Buffer;
  /** Where the cursor secret came from, for the start-up lines. */
  cursorSecretFrom: 'FEED_CURSOR_SECRET' | 'derived';
  /** Exit at start-up while a service is down, instead of waiting for it (server/start-up.ts). */
  failFast: boolean;
}

/** The flags `feedlab serve` takes (strings as parseArgs gives them). */
export interface ServeFlags {
  port?: string;
  host?: string;
  'with-worker'?: boolean;
  'batch-size'?: string;
  concurrency?: string;
  threshold?: string;
  policy?: string;
  'timeline-cap'?: string;
  'lease-days'?: string;
  'dormant-days'?: string;
  bus?: string;
  'redis-url'?: string;
  'redis-cluster'?: string;
  'database-url'?: string;
  schema?: string;
  'key-prefix'?: string;
  'stream-prefix'?: string;
  group?: string;
  'node-id'?: string;
  'fail-fast'?: boolean;
}

export const DEFAULT_PORT = 8080;
export const METRIC_FANOUT_BACKLOG = 'feedlab_fanout_backlog_events';
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PG_POOL = DEFAULT_API_PG_POOL;
/** The label mixed into the token secret to derive the cursor secret. */
export const CURSOR_SECRET_LABEL = 'feedlab/cursor-secret/v1';

/** The cursor secret derived from the token secret (a different key, so neither MAC serves for the other). */
export function deriveCursorSecret(tokenSecret: string): Buffer {
  return createHmac('sha256', tokenSecret).update(CURSOR_SECRET_LABEL).digest();
}

/** The configuration from flags over environment over defaults; ServeConfigError on the first bad value. */
export function loadServeConfig(flags: ServeFlags = {}, env: NodeJS.ProcessEnv = process.env): ServeConfig {
  const get = (flag: keyof ServeFlags | null, variable: string) => pickSetting(flags, env, flag, variable);
  const fail = (m: string) => new ServeConfigError(m);
  const read = new SettingsReader(fail);
  // what the workers share with the server, read as `feedlab worker` reads it
  const shared = readServiceSettings(flags, env, fail);

  const tokenSecret = env[TOKEN_SECRET_ENV] ?? '';
  if (tokenSecret === '') {
    throw new ServeConfigError(`${TOKEN_SECRET_ENV} is not set: the HS256 secret bearer tokens are signed with, at least 32 bytes (e.g. "openssl rand -base64 32")`);
  }
  try {
    checkTokenSecret(tokenSecret, TOKEN_SECRET_ENV);
  } catch (err) {
    if (err instanceof TokenConfigError) throw new ServeConfigError(err.message);
    throw err;
  }
  const cursorEnv = env.FEED_CURSOR_SECRET ?? '';
  const redisCluster = readCacheCluster(flags, env, 'redis-cluster', read, fail, { bus: shared.bus, redisUrl: shared.redisUrl, where: shared.redisUrlFrom });

  const port = read.integer(get('port', 'FEED_PORT'), DEFAULT_PORT, 0, 65_535);
  const host = read.name(get('host', 'FEED_HOST'), DEFAULT_HOST, /^[A-Za-z0-9.:_-]{1,255}$/, 'a host name or address, e.g. 127.0.0.1 or 0.0.0.0');

  const withWorker = flags['with-worker'] === true;
  const workerFlags = { 'batch-size': flags['batch-size'], concurrency: flags.concurrency };
  for (const [name, value] of Object.entries(workerFlags)) {
    if (value !== undefined && !withWorker) throw new ServeConfigError(`--${name} sets the fan-out worker: it needs --with-worker (or give it to feedlab worker)`);
  }

  return {
    ...shared,
    shared,
    port,
    host,
    withWorker,
    workerFlags,
    env,
    redisCluster,
    pgPoolMax: read.integer(get(null, 'FEED_PG_POOL'), DEFAULT_PG_POOL, 1, 1000),
    readThreshold: readPullThreshold(shared.policy),
    nodeId: read.integer(get('node-id', 'FEED_NODE_ID'), 0, 0, MAX_WORKER_ID),
    followeeTtlMs: read.integer(get(null, 'FEED_FOLLOWEE_TTL_MS'), DEFAULT_FOLLOWEE_TTL_MS, 0, 86_400_000),
    tokenSecret,
    cursorSecret: cursorEnv !== '' ? cursorEnv : deriveCursorSecret(tokenSecret),
    cursorSecretFrom: cursorEnv !== '' ? 'FEED_CURSOR_SECRET' : 'derived',
    failFast: read.bool(flags['fail-fast'], get(null, 'FEED_FAIL_FAST')),
  };
}

const dayMs = (d: number) => Math.round(d * SECONDS_PER_DAY * 1000);

/** The configuration as lines to print at start-up: passwords and secrets never shown. */
export function describeServeConfig(c: ServeConfig): string[] {
  const bus =
    c.bus === 'redis'
      ? `redis streams "${c.streamPrefix}" (${c.partitions} partitions) at ${redactUrl(c.redisUrl)}`
      : `kafka at ${c.kafkaBrokers.join(',')}`;
  const pulled =
    c.readThreshold === Number.MAX_SAFE_INTEGER ? 'nobody pulled' : c.readThreshold === 0 ? 'every followee pulled' : `followees over ${c.readThreshold} followers pulled`;
  const cursor = c.cursorSecretFrom === 'derived' ? 'derived from the token secret' : `set by FEED_CURSOR_SECRET (${Buffer.byteLength(c.cursorSecret)} bytes)`;
  const lines = [
    `listen    http://${c.host.includes(':') ? `[${c.host}]` : c.host}:${c.port}`,
    `postgres  ${redactUrl(c.databaseUrl)} (schema ${c.pgSchema}, pool ${c.pgPoolMax}), migrating at start-up`,
    `redis     ${redactUrl(c.redisUrl)}${c.keyPrefix ? ` (key prefix "${c.keyPrefix}")` : ''}`,
    `bus       ${bus}; outbox relay in this process; fan-out backlog of group ${c.group} in /metrics`,
    `policy    ${formatPolicy(c.policy)} (${pulled} on read)`,
    `timelines cap ${c.timelineCap}, lease ${c.leaseDays} d, dormant after ${c.dormantDays} d; recent lists ${c.listLength}; followee sets cached ${c.followeeTtlMs} ms`,
    `post ids  node ${c.nodeId} (give every API instance its own FEED_NODE_ID)`,
    `secrets   ${TOKEN_SECRET_ENV} set (${Buffer.byteLength(c.tokenSecret)} bytes); cursor secret ${cursor}`,
    `worker    ${c.withWorker ? 'fan-out worker in this process (--with-worker)' : 'not in this process (run feedlab worker)'}`,
  ];
  return describeWithCluster(lines, c.redisCluster, c.keyPrefix);
}

export interface ServeOptions {
  /** Lines for stderr: start-up, survivable trouble (throttled), shutdown. */
  log?: (line: string) => void;
  /** fastify/pino logger options (default: warnings and errors only). */
  logger?: FastifyServerOptions['logger'];
  /** The process's registry (default: a new one). */
  metrics?: MetricsRegistry;
  /** The environment the fan-out worker (--with-worker) reads its own settings from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Called once everything is up, just before the listener opens (to free the port of what answered meanwhile). */
  beforeListen?: () => Promise<void>;
}

export interface RunningServer {
  readonly app: FastifyInstance;
  /** Where it listens, e.g. http://127.0.0.1:8080. */
  readonly url: string;
  readonly service: RedisFeedService;
  readonly store: Store;
  /** The cache connection: a Redis, or a Cluster client with REDIS_CLUSTER_NODES. */
  readonly redis: RedisLike;
  readonly metrics: MetricsRegistry;
  /** Rejects when a background part (the relay, the worker) cannot go on. */
  readonly failed: Promise<never>;
  /** Graceful stop; resolves once every connection is closed. Idempotent. */
  close(): Promise<void>;
}

/** What --with-worker uses of server/worker (imported at run time: it may not be built). */
interface WorkerModules {
  loadWorkerConfig(flags: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv, shared: ServiceSettings): unknown;
  describeWorkerConfig?(config: unknown): string[];
  runWorker(config: unknown, options: { signal: AbortSignal; log?: (line: string) => void; redisCluster?: ClusterSpec | null }): Promise<unknown>;
}

/** The fan-out worker's modules, or null when this build has none. */
async function importWorker(): Promise<WorkerModules | null> {
  // Specifiers in variables: the compiler does not require the modules to exist.
  const configPath = './worker/config.js';
  const processPath = './worker/process.js';
  try {
    const [config, proc] = await Promise.all([import(configPath), import(processPath)]);
    if (typeof config.loadWorkerConfig !== 'function' || typeof proc.runWorker !== 'function') return null;
    return { loadWorkerConfig: config.loadWorkerConfig, describeWorkerConfig: config.describeWorkerConfig, runWorker: proc.runWorker };
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') return null;
    throw err;
  }
}

/** Start everything; rejects (after closing what it opened) with a one-line error on a start-up failure. */
export async function startServer(config: ServeConfig, options: ServeOptions = {}): Promise<RunningServer> {
  const say = options.log ?? (() => {});
  const lastSaid = new Map<string, number>();
  const report = (what: string) => (err: unknown) => {
    const text = `${what}: ${(err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').slice(0, 300)}`;
    const now = Date.now();
    if ((lastSaid.get(text) ?? 0) + 10_000 > now) return;
    if (lastSaid.size > 1000) lastSaid.clear();
    lastSaid.set(text, now);
    say(text);
  };
  const metrics = options.metrics ?? new MetricsRegistry();
  const stop = new AbortController();
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  const background: Promise<unknown>[] = [];
  let fail: (err: unknown) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  failed.catch(() => {});
  // The event loop's waits and the GC's pauses, for /metrics (replay quotes them beside the read tail).
  cleanups.push(watchRuntime(metrics));

  let app: FastifyInstance | null = null;
  const closeAll = async () => {
    // Stop accepting and finish the requests in flight, then the relay's publish and the worker's
    // batch, then the connections.
    if (app) await app.close().catch(() => {});
    stop.abort();
    await Promise.allSettled(background);
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch {
        // closing what is already broken
      }
    }
  };

  try {
    const store = createStore({ databaseUrl: config.databaseUrl, schema: config.pgSchema, max: config.pgPoolMax, applicationName: 'feedlab-serve' });
    cleanups.push(() => store.pool.end());
    const m = await migrate(store);
    say(`migrations: ${m.applied.length === 0 ? 'up to date' : `applied ${m.applied.map((a) => `${a.version} ${a.name}`).join(', ')}`} (version ${m.version})`);
    const repo = new FeedRepository(store);

    const cluster = config.redisCluster ?? null;
    let redis: RedisLike;
    if (cluster) {
      const client = await connectRedisCluster({ spec: cluster, connectionName: 'feedlab-serve', commandTimeoutMs: 2_000, onError: report('redis cluster') });
      cleanups.push(() => closeRedis(client));
      redis = client;
    } else {
      const client = await connectRedis({ url: config.redisUrl, connectionName: 'feedlab-serve', commandTimeoutMs: 2_000, onError: report('redis') });
      cleanups.push(() => closeRedis(client));
      // A standalone client on a cluster node would fail on most keys (MOVED): say what to set instead.
      if (await isClusterNode(client)) throw new CacheConfigError(cacheOnClusterNodeMessage(config.redisUrl));
      redis = client;
    }
    await loadScripts(redis);
    const keys = keyspace(config.keyPrefix);

    // The outbox relay, once the event log answers (at start-up or later).
    let relay: OutboxRelay | null = null;
    const outbox = new PostgresOutbox(store);
    const openLog = async (): Promise<EventLog> => {
      if (config.bus === 'kafka') return openKafkaLog({ brokers: config.kafkaBrokers, partitions: config.partitions, logLevel: 'nothing' });
      // The caches are on the cluster; the log must not be (unreachable: retried like the log itself).
      if (cluster && (await urlIsClusterNode(config.redisUrl))) throw new EventLogInputError(eventLogOnClusterMessage(config.redisUrl));
      return openRedisStreamsLog({ url: config.redisUrl, prefix: config.streamPrefix, partitions: config.partitions });
    };
    let log: EventLog | null = null;
    try {
      log = await openLog();
    } catch (err) {
      if (err instanceof EventLogInputError) throw err;
      say(`event log unreachable (${(err as Error).message}); posts wait in the outbox and are relayed once it answers`);
    }
    let relayLog: EventLog | null = null;
    const startRelay = (eventLog: EventLog) => {
      relayLog = eventLog;
      cleanups.push(() => eventLog.close());
      relay = new OutboxRelay({ source: outbox, log: eventLog, idleMs: 250, onError: report('outbox relay') });
      return relay.run(stop.signal);
    };
    background.push(
      (async () => {
        let eventLog = log;
        for (let failures = 1; eventLog === null && !stop.signal.aborted; failures++) {
          await sleep(backoffDelay(failures, { initialMs: 500, maxMs: 10_000 }), stop.signal);
          if (stop.signal.aborted) return;
          try {
            eventLog = await openLog();
            say('event log reachable: relaying the outbox');
          } catch (err) {
            if (err instanceof EventLogInputError) throw err;
            report('event log')(err);
          }
        }
        if (eventLog) await startRelay(eventLog);
      })().catch((err) => {
        say(`outbox relay stopped: ${err instanceof Error ? err.message : String(err)}`);
        fail(err);
      }),
    );

    // Relay and outbox figures for /metrics, sampled every 5 s.
    const backlog = metrics.gauge('feedlab_outbox_backlog', 'Outbox rows not yet published to the event log (posts and deletes waiting for fan-out)');
    const published = metrics.counter('feedlab_relay_published_total', 'Outbox rows this process published to the event log');
    const fanoutBacklog = metrics.gauge(
      METRIC_FANOUT_BACKLOG,
      'Post events in the event log not yet handled by the fan-out workers\' consumer group (waiting or in hand)',
    );
    const relayFailures = metrics.counter('feedlab_relay_failures_total', 'Failed claims, publishes and marks of the outbox relay (each retried)');
    let seen = { published: 0, failures: 0 };
    const sample = async () => {
      const r = relay as OutboxRelay | null;
      if (r) {
        published.inc(undefined, r.stats.published - seen.published);
        relayFailures.inc(undefined, r.stats.failures - seen.failures);
        seen = { published: r.stats.published, failures: r.stats.failures };
      }
      try {
        backlog.set(await outbox.backlog());
      } catch {
        // Postgres down: keep the last value
      }
      const l = relayLog as EventLog | null;
      if (l) {
        try {
          const waiting = await l.backlog(config.group);
          if (waiting !== null) fanoutBacklog.set(waiting);
        } catch {
          // The log is unreachable: keep the last value (the relay reports the outage)
        }
      }
    };
    const sampler = setInterval(() => void sample(), 5_000);
    sampler.unref();
    cleanups.push(() => clearInterval(sampler));

    const service = createFeedService({
      repo,
      redis,
      keys,
      ids: new PostIdGenerator(config.nodeId),
      threshold: config.readThreshold,
      timelineCap: config.timelineCap,
      listLength: config.listLength,
      leaseMs: dayMs(config.leaseDays),
      dormantMs: dayMs(config.dormantDays),
      followeeTtlMs: config.followeeTtlMs,
      metrics,
      onCommitted: () => (relay as OutboxRelay | null)?.nudge(),
      onWarning: (line) => report('feed')(line),
    });

    // Queued last-seen touches are written before the pool closes (cleanups run in reverse).
    cleanups.push(() => service.reads.activity.flush());
    cleanups.push(() => service.reads.hydrator.close());
    const api = buildApp({ service, tokenSecret: config.tokenSecret, cursorSecret: config.cursorSecret, metrics, logger: options.logger ?? { level: 'warn' } });
    app = api;

    // The fan-out workers' lag, batch timing and counters, read from Redis when /metrics is
    // scraped. A worker in this process (--with-worker) publishes there like any other and records
    // nothing into this registry, so it is counted once.
    const fleet = new FleetMetrics({ registry: metrics, redis, keys });
    api.addHook('onRequest', async (request) => {
      if (request.method !== 'GET' || request.url.split('?', 1)[0] !== '/metrics') return;
      const names = metricNamesOf(request.query as { name?: string | string[] });
      if (!names || names.some((n) => fleet.covers(n))) await fleet.refresh();
    });

    if (config.withWorker) {
      const worker = await importWorker();
      if (!worker) {
        say('--with-worker: this build has no fan-out worker (server/worker); run `feedlab worker` beside the server');
      } else {
        // The shared settings are handed over as read here; the rest (concurrency, batch sizes, the
        // consumer name...) the worker reads from the environment as `feedlab worker` does. This
        // process runs the relay and has migrated already.
        const workerConfig = worker.loadWorkerConfig({ ...config.workerFlags }, { ...(options.env ?? config.env), FEED_RELAY: '0', FEED_MIGRATE: '0' }, config.shared);
        for (const line of describeWithCluster(worker.describeWorkerConfig?.(workerConfig) ?? [], cluster, config.keyPrefix)) say(`worker: ${line}`);
        background.push(
          worker.runWorker(workerConfig, { signal: stop.signal, log: (line) => say(`worker: ${line}`), redisCluster: cluster }).catch((err) => {
            say(`worker stopped: ${err instanceof Error ? err.message : String(err)}`);
            fail(err);
          }),
        );
      }
    }

    await options.beforeListen?.();
    const address = await api.listen({ port: config.port, host: config.host });
    say(`listening on ${address}`);

    let closing: Promise<void> | null = null;
    return {
      app: api,
      url: address,
      service,
      store,
      redis,
      metrics,
      failed,
      close: () => (closing ??= closeAll()),
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
