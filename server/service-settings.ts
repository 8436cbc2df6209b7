// The settings `feedlab serve` and `feedlab worker` share, as one table: each one's flag (where it
// has one), environment variable, default, bounds and help line. server/settings.ts reads them for
// both (readServiceSettings), and cli/spec/service.ts builds the flags' help lines from the same
// rows, so the two commands cannot disagree on a bound or a default. Nothing here loads a client
// library: the command line's help imports it.
import { DEFAULT_PARTITIONS } from '../core/fanout-worker.js';
import { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL, DEFAULT_STREAM_PREFIX } from '../core/service-url.js';
import {
  DEFAULT_BACKLOG_BOUND,
  DEFAULT_CELEBRITY_LIST_LENGTH,
  DEFAULT_CELEBRITY_THRESHOLD,
  DEFAULT_DORMANT_DAYS,
  DEFAULT_LEASE_DAYS,
  DEFAULT_MIN_THRESHOLD,
  DEFAULT_READER_CAP,
  DEFAULT_TIMELINE_CAP,
  MAX_LIVE_TIMELINE_CAP,
} from '../core/timeline-rules.js';

export const DEFAULT_KAFKA_BROKERS = ['127.0.0.1:9092'];
/** The fan-out workers' consumer group. */
export const DEFAULT_GROUP = 'fanout';

/** How a setting's text is read and bounded. */
export type SettingKind =
  | { readonly kind: 'integer'; readonly min: number; readonly max: number }
  | { readonly kind: 'days' }
  | { readonly kind: 'url'; readonly protocols: readonly string[] }
  | { readonly kind: 'name'; readonly pattern: RegExp; readonly what: string }
  | { readonly kind: 'choice'; readonly values: readonly string[] }
  | { readonly kind: 'hosts' }
  | { readonly kind: 'policy' };

export type SettingRow = SettingKind & {
  /** The command-line flag without `--` (none: the environment only). */
  readonly flag?: string;
  readonly env: string;
  readonly default: string | number;
  /** What the setting does, for the help line ("(ENV, default D)" is added). */
  readonly help: string;
};

const row = <R extends SettingRow>(r: R): R => r;

export const SERVICE_SETTINGS = {
  bus: row({ flag: 'bus', env: 'FEED_BUS', kind: 'choice', values: ['redis', 'kafka'], default: 'redis', help: 'the event log, redis or kafka; Kafka at KAFKA_BROKERS' }),
  kafkaBrokers: row({ env: 'KAFKA_BROKERS', kind: 'hosts', default: DEFAULT_KAFKA_BROKERS.join(','), help: "the Kafka brokers' host:port list" }),
  redisUrl: row({ flag: 'redis-url', env: 'REDIS_URL', kind: 'url', protocols: ['redis:', 'rediss:'], default: DEFAULT_REDIS_URL, help: 'Redis: the caches, and the Redis Streams event log' }),
  databaseUrl: row({ flag: 'database-url', env: 'DATABASE_URL', kind: 'url', protocols: ['postgres:', 'postgresql:'], default: DEFAULT_DATABASE_URL, help: 'Postgres' }),
  pgSchema: row({
    flag: 'schema',
    env: 'FEED_PG_SCHEMA',
    kind: 'name',
    pattern: /^[a-z_][a-z0-9_]{0,62}$/,
    what: 'a schema name is lower-case letters, digits and _, starting with a letter or _',
    default: 'public',
    help: 'the Postgres schema',
  }),
  keyPrefix: row({ flag: 'key-prefix', env: 'FEED_KEY_PREFIX', kind: 'name', pattern: /^[A-Za-z0-9:_.-]{0,100}$/, what: 'up to 100 letters, digits and : _ - . (no braces)', default: '', help: 'the prefix of every cache key' }),
  streamPrefix: row({ flag: 'stream-prefix', env: 'FEED_STREAM_PREFIX', kind: 'name', pattern: /^[A-Za-z0-9._:-]{1,200}$/, what: '1-200 letters, digits and . _ : -', default: DEFAULT_STREAM_PREFIX, help: 'the Redis Streams key prefix' }),
  partitions: row({ env: 'FEED_PARTITIONS', kind: 'integer', min: 1, max: 4096, default: DEFAULT_PARTITIONS, help: "the event log's partitions" }),
  group: row({ flag: 'group', env: 'FEED_GROUP', kind: 'name', pattern: /^[A-Za-z0-9._:@-]{1,200}$/, what: '1-200 letters, digits and . _ : @ -', default: DEFAULT_GROUP, help: "the fan-out workers' consumer group" }),
  threshold: row({ flag: 'threshold', env: 'FEED_THRESHOLD', kind: 'integer', min: 0, max: Number.MAX_SAFE_INTEGER, default: DEFAULT_CELEBRITY_THRESHOLD, help: 'pull authors with more followers than T' }),
  readerCap: row({ env: 'FEED_READER_CAP', kind: 'integer', min: 1, max: Number.MAX_SAFE_INTEGER, default: DEFAULT_READER_CAP, help: 'reader-cap: the most active followers pushed to' }),
  backlogBound: row({ env: 'FEED_BACKLOG_BOUND', kind: 'integer', min: 1, max: Number.MAX_SAFE_INTEGER, default: DEFAULT_BACKLOG_BOUND, help: 'adaptive: the backlog it keeps under' }),
  minThreshold: row({ env: 'FEED_MIN_THRESHOLD', kind: 'integer', min: 0, max: Number.MAX_SAFE_INTEGER, default: DEFAULT_MIN_THRESHOLD, help: "adaptive: the threshold's floor" }),
  policy: row({
    flag: 'policy',
    env: 'FEED_POLICY',
    kind: 'policy',
    default: 'threshold',
    help: 'push | pull | threshold:T | reader-cap:N | adaptive:T, optionally :skip-dormant or :all-followers. At run time, SET the Redis key feed:config:policy (under the key prefix) to a spec to switch every worker',
  }),
  timelineCap: row({ flag: 'timeline-cap', env: 'FEED_TIMELINE_CAP', kind: 'integer', min: 1, max: MAX_LIVE_TIMELINE_CAP, default: DEFAULT_TIMELINE_CAP, help: 'entries per timeline' }),
  listLength: row({ env: 'FEED_LIST_LENGTH', kind: 'integer', min: 1, max: 100_000, default: DEFAULT_CELEBRITY_LIST_LENGTH, help: "entries of an author's recent-post list" }),
  leaseDays: row({ flag: 'lease-days', env: 'FEED_LEASE_DAYS', kind: 'days', default: DEFAULT_LEASE_DAYS, help: 'the timeline TTL lease, in days' }),
  dormantDays: row({ flag: 'dormant-days', env: 'FEED_DORMANT_DAYS', kind: 'days', default: DEFAULT_DORMANT_DAYS, help: 'readers unseen for D days are dormant' }),
} as const;

export type ServiceSettingKey = keyof typeof SERVICE_SETTINGS;

/** A row's help line: what it does, its variable and default (and bounds where they say more). */
export function settingHelp(r: SettingRow): string {
  const shown = r.default === '' ? 'none' : String(r.default);
  const bounds = r.kind === 'integer' && r.max < Number.MAX_SAFE_INTEGER ? `, ${r.min}..${r.max}` : '';
  return `${r.help} (${r.env}, default ${shown}${bounds})`;
}
