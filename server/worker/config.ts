// The fan-out worker's configuration: flags over environment over defaults, every value validated
// with a one-line error naming where it came from and what would be valid, and a description to
// print at start-up with any password redacted.
//
// Environment (DESIGN.md: services through REDIS_URL, DATABASE_URL, KAFKA_BROKERS):
//   REDIS_URL, DATABASE_URL, FEED_BUS=redis|kafka, KAFKA_BROKERS
//   FEED_POLICY          a core policy spec (threshold:25000, push, pull, adaptive:T, reader-cap:N,
//                        each optionally :skip-dormant or :all-followers); default threshold
//   FEED_THRESHOLD       the follower threshold (pull when followers > it); default 25000
//   FEED_READER_CAP, FEED_BACKLOG_BOUND, FEED_MIN_THRESHOLD   reader-cap and adaptive settings
//   FEED_TIMELINE_CAP (800), FEED_LIST_LENGTH (100), FEED_LEASE_DAYS (7), FEED_DORMANT_DAYS (14)
//   FEED_BATCH_SIZE      followers per pipelined round trip (1000)
//   FEED_PAGE_SIZE       followers per Postgres page (10000)
//   FEED_PIPELINES       pipelined batches in flight per fan-out (2)
//   FEED_CONCURRENCY     consumers in this process (1)
//   FEED_EVENT_CONCURRENCY  authors handled at once within a consumer's batch (8)
//   FEED_EVENT_BATCH     events per read from the log (100)
//   FEED_GROUP (fanout), FEED_CONSUMER (host-pid), FEED_CLAIM_IDLE_MS (30000)
//   FEED_KEY_PREFIX ('') and FEED_STREAM_PREFIX (feedlab:events), FEED_PARTITIONS (16)
//   FEED_PG_SCHEMA (public), FEED_PG_POOL (10), FEED_RELAY (0/1), FEED_MIGRATE (0/1)
//   FEED_POLICY_POLL_MS  how often the runtime policy key is read (1000; 0: never)
//   FEED_STATUS_MS       status line interval on stderr (10000; 0: none)
import { hostname } from 'node:os';
import { formatPolicy, type FanoutPolicy } from '../../core/fanout-policy.js';
import { DEFAULT_EVENT_BATCH, DEFAULT_EVENT_CONCURRENCY, DEFAULT_FANOUT_BATCH, DEFAULT_FOLLOWER_PAGE, DEFAULT_PIPELINES } from '../../core/fanout-worker.js';
import { SECONDS_PER_DAY } from '../../core/timeline-rules.js';
import { redactRedisUrl } from '../cache/redis.js';
import { redactUrl } from '../store/pool.js';
import { DEFAULT_WORKER_PG_POOL } from '../../core/deployment.js';
import { DEFAULT_GROUP } from '../service-settings.js';
import { livePolicy, pickSetting, readServiceSettings, SettingsReader, type Bus, type ServiceSettings } from '../settings.js';

/** A configuration mistake: one line, exit 2. */
export class WorkerConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkerConfigError';
  }
}

export type { Bus } from '../settings.js';

export interface WorkerConfig {
  redisUrl: string;
  databaseUrl: string;
  pgSchema: string;
  pgPoolMax: number;
  bus: Bus;
  kafkaBrokers: string[];
  /** Prefix of every cache key (timelines, recent lists, bodies, the runtime policy). */
  keyPrefix: string;
  /** Prefix of the Redis Streams event log's keys. */
  streamPrefix: string;
  partitions: number;
  group: string;
  /** Base consumer name; consumer i of this process is `${consumer}-${i}`. */
  consumer: string;
  concurrency: number;
  eventConcurrency: number;
  eventBatch: number;
  claimIdleMs: number;
  relay: boolean;
  migrate: boolean;
  /** Exit at start-up while a service is down, instead of waiting for it (server/start-up.ts). */
  failFast: boolean;
  policy: FanoutPolicy;
  timelineCap: number;
  listLength: number;
  leaseDays: number;
  dormantDays: number;
  batchSize: number;
  pageSize: number;
  pipelines: number;
  policyPollMs: number;
  statusMs: number;
}

/** The flags `feedlab worker` takes (strings as parseArgs gives them; booleans for switches). */
export interface WorkerFlags {
  concurrency?: string;
  relay?: boolean;
  migrate?: boolean;
  'fail-fast'?: boolean;
  policy?: string;
  threshold?: string;
  'batch-size'?: string;
  'page-size'?: string;
  pipelines?: string;
  'timeline-cap'?: string;
  'lease-days'?: string;
  'dormant-days'?: string;
  bus?: string;
  group?: string;
  consumer?: string;
  'redis-url'?: string;
  'database-url'?: string;
  schema?: string;
  'key-prefix'?: string;
  'stream-prefix'?: string;
}

export { DEFAULT_GROUP };
export const DEFAULT_PAGE_SIZE = DEFAULT_FOLLOWER_PAGE;
export const DEFAULT_CLAIM_IDLE_MS = 30_000;
/** Largest follower page a query may ask for (the repository's MAX_PAGE). */
const MAX_PAGE = 100_000;

/** A consumer name from the host and pid, in the characters the event logs accept. */
export function defaultConsumerName(): string {
  return `${hostname()}-${process.pid}`.replace(/[^A-Za-z0-9._:@-]/g, '_').slice(0, 180);
}

/**
 * The worker's configuration from flags and environment. Throws WorkerConfigError (one line) on
 * the first invalid setting.
 */
export function loadWorkerConfig(flags: WorkerFlags = {}, env: NodeJS.ProcessEnv = process.env, shared?: ServiceSettings): WorkerConfig {
  const get = (flag: keyof WorkerFlags | null, variable: string) => pickSetting(flags, env, flag, variable);
  const fail = (m: string) => new WorkerConfigError(m);
  const read = new SettingsReader(fail);
  // `serve --with-worker` hands over the settings it has read; `feedlab worker` reads them here
  const { redisUrlFrom: _from, ...settings } = shared ?? readServiceSettings(flags, env, fail);
  return {
    ...settings,
    pgPoolMax: read.integer(get(null, 'FEED_PG_POOL'), DEFAULT_WORKER_PG_POOL, 1, 1000),
    consumer: read.name(get('consumer', 'FEED_CONSUMER'), defaultConsumerName(), /^[A-Za-z0-9._:@-]{1,190}$/, '1-190 letters, digits and . _ : @ -'),
    concurrency: read.integer(get('concurrency', 'FEED_CONCURRENCY'), 1, 1, 256),
    eventConcurrency: read.integer(get(null, 'FEED_EVENT_CONCURRENCY'), DEFAULT_EVENT_CONCURRENCY, 1, 256),
    eventBatch: read.integer(get(null, 'FEED_EVENT_BATCH'), DEFAULT_EVENT_BATCH, 1, 10_000),
    claimIdleMs: read.integer(get(null, 'FEED_CLAIM_IDLE_MS'), DEFAULT_CLAIM_IDLE_MS, 100, 86_400_000),
    relay: read.bool(flags.relay, get(null, 'FEED_RELAY')),
    failFast: read.bool(flags['fail-fast'], get(null, 'FEED_FAIL_FAST')),
    migrate: read.bool(flags.migrate, get(null, 'FEED_MIGRATE')),
    batchSize: read.integer(get('batch-size', 'FEED_BATCH_SIZE'), DEFAULT_FANOUT_BATCH, 1, 100_000),
    pageSize: read.integer(get('page-size', 'FEED_PAGE_SIZE'), DEFAULT_PAGE_SIZE, 1, MAX_PAGE),
    pipelines: read.integer(get('pipelines', 'FEED_PIPELINES'), DEFAULT_PIPELINES, 1, 64),
    policyPollMs: read.integer(get(null, 'FEED_POLICY_POLL_MS'), 1_000, 0, 3_600_000),
    statusMs: read.integer(get(null, 'FEED_STATUS_MS'), 10_000, 0, 3_600_000),
  };
}

/** A policy from a spec over a base (livePolicy), refused as a WorkerConfigError. */
export function policyFromSpec(spec: string, base: FanoutPolicy, where = 'policy'): FanoutPolicy {
  return livePolicy(spec, base, where, (m) => new WorkerConfigError(m));
}

/** The lease in ms (timelines and recent lists). */
export function leaseMs(c: Pick<WorkerConfig, 'leaseDays'>): number {
  return Math.round(c.leaseDays * SECONDS_PER_DAY * 1000);
}

/** The dormancy window in ms. */
export function dormantMs(c: Pick<WorkerConfig, 'dormantDays'>): number {
  return Math.round(c.dormantDays * SECONDS_PER_DAY * 1000);
}

/** The configuration as lines to print at start-up, passwords redacted. */
export function describeWorkerConfig(c: WorkerConfig): string[] {
  const bus =
    c.bus === 'redis'
      ? `redis streams "${c.streamPrefix}" (${c.partitions} partitions) at ${redactRedisUrl(c.redisUrl)}`
      : `kafka at ${c.kafkaBrokers.join(',')}`;
  const consumers = c.concurrency === 1 ? `${c.consumer}-1` : `${c.consumer}-1..${c.concurrency}`;
  return [
    `bus       ${bus}; group ${c.group}, consumers ${consumers}, ${c.eventBatch} events per read, claim after ${c.claimIdleMs} ms idle`,
    `redis     ${redactRedisUrl(c.redisUrl)}${c.keyPrefix ? ` (key prefix "${c.keyPrefix}")` : ''}`,
    `postgres  ${redactUrl(c.databaseUrl)} (schema ${c.pgSchema}, pool ${c.pgPoolMax})${c.migrate ? ', migrating at start-up' : ''}`,
    `policy    ${formatPolicy(c.policy)}${c.policy.kind === 'adaptive' ? ` (floor ${c.policy.minThreshold}, backlog bound ${c.policy.backlogBound})` : ''}; runtime override key ${c.keyPrefix}${RUNTIME_POLICY_KEY}${c.policyPollMs > 0 ? ` every ${c.policyPollMs} ms` : ' (not read)'}`,
    `timelines cap ${c.timelineCap}, lease ${c.leaseDays} d, dormant after ${c.dormantDays} d; recent lists ${c.listLength}`,
    `fan-out   ${c.pageSize} followers per page, ${c.batchSize} per pipeline, ${c.pipelines} pipelines in flight, ${c.eventConcurrency} authors at once per consumer`,
    `relay     ${c.relay ? 'on (Postgres outbox -> event log, in this process)' : 'off'}`,
  ];
}

/** The Redis key (under the key prefix) a running fleet reads its policy override from. */
export const RUNTIME_POLICY_KEY = 'feed:config:policy';
