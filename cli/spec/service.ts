// The reference server's commands: serve, worker, migrate, load-graph, token.
import { TOKEN_SECRET_ENV } from '../../server/auth/token.js';
import { DEFAULT_API_PG_POOL, DEFAULT_WORKER_PG_POOL } from '../../core/deployment.js';
import { DEFAULT_DATABASE_URL } from '../../core/service-url.js';
import { SERVICE_SETTINGS, settingHelp, type SettingRow } from '../../server/service-settings.js';
import { command } from './command-spec.js';

/** Where a database command works. */
export const DATABASE_OPTIONS = {
  'database-url': { type: 'string', arg: 'URL', help: `Postgres (default $DATABASE_URL, else ${DEFAULT_DATABASE_URL})` },
  schema: { type: 'string', arg: 'S', help: 'Postgres schema to work in, created if missing (default public)' },
} as const;

/** A shared setting's flag, its help line from its row of the table (variable, default, bounds). */
const setting = (r: SettingRow, arg: string) => ({ type: 'string', arg, help: settingHelp(r) }) as const;
const S = SERVICE_SETTINGS;

/** The flags that point serve and worker at the same services and timeline rules (server/service-settings.ts). */
export const SERVICE_OPTIONS = {
  policy: { ...setting(S.policy, 'P'), short: 'p' },
  threshold: setting(S.threshold, 'T'),
  'timeline-cap': setting(S.timelineCap, 'N'),
  'lease-days': setting(S.leaseDays, 'D'),
  'dormant-days': setting(S.dormantDays, 'D'),
  bus: setting(S.bus, 'redis|kafka'),
  'redis-url': setting(S.redisUrl, 'URL'),
  'redis-cluster': {
    type: 'string',
    arg: 'H:P,H:P',
    help: 'put the caches on a Redis Cluster with these seed nodes (REDIS_CLUSTER_NODES; entries may be redis://[:password@]host:port); the Redis Streams event log stays on the standalone Redis at REDIS_URL (or FEED_BUS=kafka)',
  },
  'database-url': setting(S.databaseUrl, 'URL'),
  schema: setting(S.pgSchema, 'S'),
  'key-prefix': setting(S.keyPrefix, 'P'),
  'stream-prefix': setting(S.streamPrefix, 'P'),
  group: setting(S.group, 'G'),
  quiet: { type: 'boolean', short: 'q', help: 'no configuration or status lines on stderr (errors still)' },
} as const;

/** The shared settings without a flag, one line each, for the notes of serve's and worker's help. */
function environmentOnly(): string {
  const rows = (Object.values(SERVICE_SETTINGS) as SettingRow[]).filter((r) => r.flag === undefined);
  return `Shared with every worker (environment only):\n${rows.map((r) => `  ${r.env.padEnd(20)}${settingHelp(r).replace(` (${r.env}, `, ' (')}`).join('\n')}`;
}

/** Both commands': exit at start-up on an outage instead of waiting for the service (server/start-up.ts). */
const FAIL_FAST_OPTION = {
  type: 'boolean',
  help: 'exit 3 at start-up while Redis, Postgres or the event log is down (FEED_FAIL_FAST=1); by default it waits for them, trying again with backoff (0.5 s doubling to 10 s)',
} as const;

export const SERVE_OPTIONS = {
  port: { type: 'string', arg: 'N', help: '(FEED_PORT, default 8080; 0 picks a free port)' },
  host: { type: 'string', arg: 'H', help: '(FEED_HOST, default 127.0.0.1; 0.0.0.0 for every interface)' },
  'with-worker': { type: 'boolean', help: 'also run a fan-out worker in this process (one machine, one process)' },
  concurrency: { type: 'string', arg: 'N', help: 'with --with-worker: its consumers (FEED_CONCURRENCY, default 1)' },
  'batch-size': { type: 'string', arg: 'N', help: 'with --with-worker: timelines per pipelined batch (FEED_BATCH_SIZE)' },
  'node-id': { type: 'string', arg: 'N', help: "this instance's id in post ids, 0..1023, distinct per instance (FEED_NODE_ID, 0)" },
  'fail-fast': FAIL_FAST_OPTION,
  ...SERVICE_OPTIONS,
} as const;

export const serve = command({
  name: 'serve',
  summary: 'run the reference server: HTTP API, outbox relay, optionally the fan-out worker (--with-worker)',
  description: `Serves the feed API (POST /v1/posts, DELETE /v1/posts/:id, PUT/DELETE /v1/follows/:userId,
GET /v1/feed, GET /v1/users/:id/posts, /healthz, /readyz, /metrics) over Postgres and Redis, and
moves the Postgres outbox onto the event log. Migrations run at start-up. Every /v1 request needs
"Authorization: Bearer $(feedlab token USER)". SIGINT/SIGTERM finish the requests in flight and
exit 0 (a second one exits at once).`,
  options: SERVE_OPTIONS,
  notes: `Secrets come from the environment only (a flag would show in the process list):
  ${TOKEN_SECRET_ENV}   the HS256 secret of the bearer tokens, at least 32 bytes (required)
  FEED_CURSOR_SECRET  the MAC secret of feed cursors (default: derived from the token secret)
${environmentOnly()}
More environment: FEED_PG_POOL (${DEFAULT_API_PG_POOL}), FEED_FOLLOWEE_TTL_MS (300000).`,
  examples: [
    [`${TOKEN_SECRET_ENV}=$(openssl rand -hex 32) feedlab serve --with-worker`, 'API, relay and worker in one process on :8080'],
    ['feedlab serve --port 0 --threshold 10000 -q', 'a free port, authors over 10,000 followers pulled'],
  ],
  run: async () => (await import('../commands/serve.js')).run,
});

export const WORKER_OPTIONS = {
  concurrency: { type: 'string', arg: 'N', help: 'consumers in this process (FEED_CONCURRENCY, default 1)' },
  relay: { type: 'boolean', help: 'also move the Postgres outbox onto the event log (FEED_RELAY=1)' },
  'batch-size': { type: 'string', arg: 'N', help: 'followers per pipelined round trip (FEED_BATCH_SIZE, default 1000)' },
  'page-size': { type: 'string', arg: 'N', help: 'followers per Postgres page (FEED_PAGE_SIZE, default 10000)' },
  pipelines: { type: 'string', arg: 'N', help: 'round trips in flight per fan-out (FEED_PIPELINES, default 2)' },
  consumer: { type: 'string', arg: 'NAME', help: 'consumer name base (FEED_CONSUMER, default host-pid); consumers are NAME-1..N' },
  migrate: { type: 'boolean', help: 'apply pending migrations at start-up (FEED_MIGRATE=1)' },
  'fail-fast': FAIL_FAST_OPTION,
  json: { type: 'boolean', help: 'print a feedlab.worker/1 summary on stdout when stopped' },
  ...SERVICE_OPTIONS,
} as const;

export const worker = command({
  name: 'worker',
  summary: 'run fan-out workers: post events -> follower timelines / celebrity lists (--concurrency N, --relay)',
  description: `Consumes post events (Redis Streams, or Kafka with FEED_BUS=kafka) and fans them out: authors at or
under the threshold into their followers' timelines (dormant followers skipped), authors over it
once into their own recent-post list. At-least-once and idempotent. SIGINT/SIGTERM finish the batch
in hand and exit 0 (a second one exits at once).`,
  options: WORKER_OPTIONS,
  notes: `${environmentOnly()}
More environment: FEED_EVENT_CONCURRENCY, FEED_EVENT_BATCH, FEED_CLAIM_IDLE_MS, FEED_PG_POOL (${DEFAULT_WORKER_PG_POOL}),
FEED_POLICY_POLL_MS, FEED_STATUS_MS.`,
  examples: [
    ['feedlab worker --concurrency 4', 'four consumers of the event log'],
    ['feedlab worker --relay --policy push:skip-dormant', 'with the outbox relay, every post pushed'],
  ],
  run: async () => (await import('../commands/worker.js')).run,
});

export const MIGRATE_OPTIONS = {
  ...DATABASE_OPTIONS,
  json: { type: 'boolean', help: 'print a feedlab.migrate/1 document on stdout' },
} as const;

export const migrate = command({
  name: 'migrate',
  summary: "create or update the reference server's Postgres tables (idempotent)",
  description: `Applies the pending migrations (users, follows, posts, outbox) in order, each in its own
transaction; a second run applies nothing. Several processes may migrate at once: they take turns
on an advisory lock.`,
  options: MIGRATE_OPTIONS,
  examples: [
    ['feedlab migrate', 'the local Postgres, schema public'],
    ['feedlab migrate --schema feed_test --json', 'another schema, the result as JSON'],
  ],
  run: async () => (await import('../commands/migrate.js')).run,
});

export const LOAD_GRAPH_OPTIONS = {
  ...DATABASE_OPTIONS,
  truncate: {
    type: 'boolean',
    help: 'replace the users and follows already there (and the posts and outbox rows that belong to them); without it the tables must be empty',
  },
  json: { type: 'boolean', help: 'print a feedlab.load-graph/1 document on stdout' },
  quiet: { type: 'boolean', short: 'q', help: 'no progress on stderr' },
} as const;

export const loadGraph = command({
  name: 'load-graph',
  summary: 'bulk-load a follower graph (.fgraph) into Postgres users and follows',
  description: `Loads a generated or imported graph into the reference server's tables with COPY: account a
becomes user id a, with handle "u<a>" (or the celebrity's name) and its follower and followee
counts. Migrates the schema first. The load is one transaction: if it fails or is interrupted,
the database is left as it was.`,
  args: [{ name: '<graph>', help: 'a .fgraph file (feedlab graph generate or import)' }],
  options: LOAD_GRAPH_OPTIONS,
  examples: [['feedlab load-graph soc-Slashdot0902.fgraph --truncate', 'the Slashdot graph, replacing what is there']],
  run: async () => (await import('../commands/load-graph.js')).run,
});

export const TOKEN_OPTIONS = {
  ttl: { type: 'string', arg: 'D', help: 'lifetime: seconds, or a number with s, m, h or d (default 1h, at most 365d)' },
  secret: { type: 'string', arg: 'S', help: `the signing secret, at least 32 bytes (default $${TOKEN_SECRET_ENV}; prefer the variable: a flag shows in the process list)` },
  json: { type: 'boolean', help: 'print a feedlab.token/1 document: {schema, token, userId, expiresAt}' },
} as const;

export const token = command({
  name: 'token',
  summary: 'mint an HS256 bearer token for a user of the reference server (load tests)',
  description: "Prints a bearer token whose subject is USER (a user id), signed HS256 with the server's secret.",
  args: [{ name: '<user>', help: 'the user id' }],
  options: TOKEN_OPTIONS,
  examples: [
    ['curl -H "Authorization: Bearer $(feedlab token 42)" localhost:8080/v1/feed', "user 42's home feed"],
    ['feedlab token 42 --ttl 7d --json', 'a week-long token, as JSON'],
  ],
  run: async () => (await import('../commands/token.js')).run,
});
