// The composition root (server/serve.ts): configuration from flags and environment with one-line
// errors and nothing secret printed; and the whole server started on a free port against this
// machine's Redis and Postgres: migrations at start-up, the API over real HTTP, the outbox relay
// publishing what was posted, the fan-out worker in the same process (--with-worker) carrying a
// post into a follower's timeline, a graceful close. Everything lives in a throwaway Postgres
// schema and under a Redis key prefix of its own, both removed afterwards. Without Redis or
// Postgres the server tests are skipped with one loud line, except under CI=true where they fail.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readPullThreshold } from '../../../core/fanout-policy.js';
import { signToken } from '../../../server/auth/token.js';
import { connectRedis, keyspace, redisUrlFromEnv } from '../../../server/cache/redis.js';
import { TimelineCache } from '../../../server/cache/timelines.js';
import {
  deriveCursorSecret,
  describeServeConfig,
  loadServeConfig,
  ServeConfigError,
  startServer,
  type RunningServer,
  type ServeConfig,
} from '../../../server/serve.js';
import { createStore, type Store } from '../../../server/store/pool.js';
import { CI, dropPostgresState, dropRedisState, skipWithoutServices } from '../services.js';

const SECRET = 'serve-test-token-secret-0123456789abcdef-0123';
const ENV = { FEED_TOKEN_SECRET: SECRET };

describe('serve configuration', () => {
  it('takes defaults, environment and flags, flags first', () => {
    const c = loadServeConfig({}, ENV);
    expect(c).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      withWorker: false,
      bus: 'redis',
      readThreshold: 25_000,
      timelineCap: 800,
      listLength: 100,
      leaseDays: 7,
      dormantDays: 14,
      nodeId: 0,
      pgSchema: 'public',
      keyPrefix: '',
      cursorSecretFrom: 'derived',
    });
    expect(c.cursorSecret).toEqual(deriveCursorSecret(SECRET));
    expect(Buffer.from(c.cursorSecret).toString()).not.toBe(SECRET);

    const env = { ...ENV, FEED_PORT: '9000', FEED_THRESHOLD: '10k', FEED_TIMELINE_CAP: '500', FEED_LEASE_DAYS: '3', FEED_DORMANT_DAYS: '30', FEED_BUS: 'kafka', KAFKA_BROKERS: 'k1:9092, k2:9093', FEED_CURSOR_SECRET: 'c-secret', FEED_NODE_ID: '7' };
    const e = loadServeConfig({}, env);
    expect(e).toMatchObject({ port: 9000, readThreshold: 10_000, timelineCap: 500, leaseDays: 3, dormantDays: 30, bus: 'kafka', kafkaBrokers: ['k1:9092', 'k2:9093'], cursorSecret: 'c-secret', cursorSecretFrom: 'FEED_CURSOR_SECRET', nodeId: 7 });
    const f = loadServeConfig({ port: '9100', host: '0.0.0.0', threshold: '500', 'with-worker': true, 'node-id': '3' }, env);
    expect(f).toMatchObject({ port: 9100, host: '0.0.0.0', readThreshold: 500, withWorker: true, nodeId: 3 });
  });

  it('reads with the workers\' policy: push pulls nobody, pull everybody', () => {
    expect(loadServeConfig({}, { ...ENV, FEED_POLICY: 'push' }).readThreshold).toBe(Number.MAX_SAFE_INTEGER);
    expect(loadServeConfig({}, { ...ENV, FEED_POLICY: 'pull' }).readThreshold).toBe(0);
    expect(loadServeConfig({ policy: 'adaptive:5000' }, ENV).readThreshold).toBe(5_000);
    expect(readPullThreshold(loadServeConfig({ policy: 'reader-cap:100' }, ENV).policy)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('refuses a bad setting in one line naming where it came from', () => {
    const bad: Array<[Record<string, string>, Record<string, string | boolean>, RegExp]> = [
      [{}, {}, /FEED_TOKEN_SECRET is not set/],
      [{ FEED_TOKEN_SECRET: 'short' }, {}, /FEED_TOKEN_SECRET is 5 bytes; HS256 needs at least 32/],
      [{ ...ENV, FEED_BUS: 'nats' }, {}, /FEED_BUS="nats": must be redis or kafka/],
      [{ ...ENV }, { bus: 'nats' }, /--bus="nats"/],
      [{ ...ENV, FEED_TIMELINE_CAP: '0' }, {}, /FEED_TIMELINE_CAP="0": must be a whole number from 1/],
      // the same bound as the worker's (they once took 100,000 and 1,000,000)
      [{ ...ENV, FEED_TIMELINE_CAP: '100001' }, {}, /FEED_TIMELINE_CAP="100001": must be a whole number from 1 to 100000/],
      // refused here as the worker refuses it (serve --with-worker --policy rate passed serve's check)
      [{ ...ENV }, { policy: 'rate' }, /^--policy: the rate policy decides per \(author, reader\) pair/],
      [{ ...ENV, FEED_LEASE_DAYS: '-1' }, {}, /FEED_LEASE_DAYS="-1": must be a number of days/],
      [{ ...ENV }, { 'node-id': '1024' }, /--node-id="1024": must be a whole number from 0 to 1023/],
      [{ ...ENV }, { port: '70000' }, /--port="70000"/],
      [{ ...ENV, REDIS_URL: 'http://x:1' }, {}, /REDIS_URL="http:\/\/x:1\/?": must start with redis:\/\//],
      [{ ...ENV, DATABASE_URL: 'nope' }, {}, /DATABASE_URL="nope": not a URL/],
      [{ ...ENV, KAFKA_BROKERS: 'k1' }, {}, /KAFKA_BROKERS: "k1" is not host:port/],
      [{ ...ENV, FEED_POLICY: 'sometimes' }, {}, /FEED_POLICY: unknown policy "sometimes"/],
      [{ ...ENV, FEED_POLICY: 'threshold:100' }, { threshold: '200' }, /disagree on the threshold/],
      [{ ...ENV, FEED_KEY_PREFIX: 'a{b}' }, {}, /FEED_KEY_PREFIX="a\{b\}": up to 100 letters/],
      [{ ...ENV }, { concurrency: '4' }, /^--concurrency sets the fan-out worker: it needs --with-worker/],
      [{ ...ENV }, { 'batch-size': '500' }, /^--batch-size sets the fan-out worker: it needs --with-worker/],
      [{ ...ENV, FEED_FOLLOWEE_TTL_MS: '-1' }, {}, /FEED_FOLLOWEE_TTL_MS="-1": must be a whole number from 0 to 86400000/],
      [{ ...ENV, FEED_FOLLOWEE_TTL_MS: '86400001' }, {}, /FEED_FOLLOWEE_TTL_MS="86400001": must be a whole number from 0 to 86400000/],
    ];
    for (const [env, flags, message] of bad) {
      let error: unknown;
      try {
        loadServeConfig(flags, env);
      } catch (err) {
        error = err;
      }
      expect(error, JSON.stringify({ env, flags })).toBeInstanceOf(ServeConfigError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain('\n');
    }
  });

  it('prints the configuration without passwords or secrets', () => {
    const c = loadServeConfig({}, { ...ENV, REDIS_URL: 'redis://:hunter2@cache:6379', DATABASE_URL: 'postgres://feed:pg-pass@db:5432/feed', FEED_CURSOR_SECRET: 'cursor-secret-value' });
    const text = describeServeConfig(c).join('\n');
    expect(text).toContain('redis://:***@cache:6379');
    expect(text).toContain('postgres://feed:***@db:5432/feed');
    for (const secret of ['hunter2', 'pg-pass', SECRET, 'cursor-secret-value']) expect(text).not.toContain(secret);
    expect(text).toMatch(/FEED_TOKEN_SECRET set \(45 bytes\)/);
    expect(text).toMatch(/threshold:25000/);
  });
});

const SKIP = await skipWithoutServices('the server runs of test/server/feed/serve.test.ts');

const tag = `${process.pid}_${randomBytes(3).toString('hex')}`;
const schema = `fl_test_serve_${tag}`;
const keys = keyspace(`feedlab:test:serve:${tag}:`);

let store: Store;
let redis: Redis;

beforeAll(async () => {
  if (SKIP) return;
  store = createStore({ schema, max: 4 });
  redis = await connectRedis({ url: redisUrlFromEnv() });
});

afterAll(async () => {
  await dropRedisState(redis, keys);
  await dropPostgresState(store, schema);
});

function testConfig(extra: Record<string, string> = {}, flags: Record<string, string | boolean> = {}): ServeConfig {
  return loadServeConfig(
    { port: '0', schema, 'key-prefix': keys.prefix, 'stream-prefix': `${keys.prefix}events`, threshold: '2', ...flags },
    { ...process.env, ...ENV, FEED_PARTITIONS: '4', ...extra },
  );
}

async function http(server: RunningServer, user: number | null, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const headers: Record<string, string> = {};
  if (user !== null) headers.authorization = `Bearer ${signToken(user, SECRET)}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(server.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? (path === '/metrics' ? text : JSON.parse(text)) : undefined };
}

describe.skipIf(SKIP)('feedlab serve, started in this process', () => {
  it('migrates, serves over HTTP, relays the outbox to the event log, and closes gracefully', async () => {
    const lines: string[] = [];
    const server = await startServer(testConfig(), { log: (l) => lines.push(l) });
    try {
      expect(lines.some((l) => /^migrations: applied/.test(l))).toBe(true);
      expect(lines.some((l) => l.startsWith(`listening on ${server.url}`))).toBe(true);
      await store.pool.query(`INSERT INTO users (id, handle) VALUES (1, 'one'), (2, 'two')`);

      expect((await http(server, null, 'GET', '/healthz')).status).toBe(200);
      expect(await http(server, null, 'GET', '/readyz')).toEqual({ status: 200, body: { status: 'ready', redis: true, postgres: true } });
      expect((await http(server, null, 'GET', '/v1/feed')).status).toBe(401);

      const made = await http(server, 1, 'POST', '/v1/posts', { text: 'hello over HTTP' });
      expect(made.status).toBe(201);
      expect((await http(server, 1, 'GET', '/v1/feed')).body.posts).toEqual([{ id: made.body.id, authorId: 1, text: 'hello over HTTP', createdAt: made.body.createdAt }]);

      // The relay (nudged by the post) publishes the outbox row to the author's partition.
      await vi.waitFor(
        async () => {
          const r = await store.pool.query(`SELECT published_at FROM outbox WHERE post_id = $1`, [made.body.id]);
          expect(r.rows[0]?.published_at).not.toBeNull();
        },
        { timeout: 5_000, interval: 50 },
      );
      const entries = await redis.xrange(`${keys.prefix}events:{p1}:log`, '-', '+');
      expect(entries.map(([, fields]) => JSON.parse(fields[1]).postId)).toContain(made.body.id);

      // No worker runs: the fan-out backlog (sampled every 5 s) shows the event waiting.
      await vi.waitFor(
        async () => expect(((await http(server, null, 'GET', '/metrics')).body as string).match(/^feedlab_fanout_backlog_events (\d+)$/m)?.[1]).toBe('1'),
        { timeout: 8_000, interval: 250 },
      );
      const metrics = (await http(server, null, 'GET', '/metrics')).body as string;
      expect(metrics).toMatch(/feedlab_feed_rebuilds_total\{list="timeline"\} 1/);
      expect(metrics).toMatch(/feedlab_feed_latency_seconds_count 1/);
    } finally {
      await server.close();
      await server.close(); // idempotent
    }
    await expect(fetch(server.url + '/healthz')).rejects.toThrow();
  });

  it('with --with-worker, carries a post through outbox, relay, log and worker into a follower\'s timeline', async () => {
    const lines: string[] = [];
    const server = await startServer(testConfig({ FEED_STATUS_MS: '0', FEED_POLICY_POLL_MS: '0', FEED_CONSUMER: `t${tag}` }, { 'with-worker': true, concurrency: '2', 'batch-size': '250' }), { log: (l) => lines.push(l) });
    try {
      await store.pool.query(`INSERT INTO users (id, handle) VALUES (11, 'eleven'), (12, 'twelve') ON CONFLICT DO NOTHING`);
      expect((await http(server, 12, 'PUT', '/v1/follows/11')).status).toBe(200);
      expect((await http(server, 12, 'GET', '/v1/feed')).body.posts).toEqual([]); // the timeline exists now
      const made = await http(server, 11, 'POST', '/v1/posts', { text: 'fanned out' });
      expect(made.status).toBe(201);
      const timelines = new TimelineCache(redis, keys);
      await vi.waitFor(async () => expect(await redis.zscore(timelines.key(12), made.body.id)).toBe(String(made.body.createdAt)), { timeout: 10_000, interval: 50 });
      expect((await http(server, 12, 'GET', '/v1/feed')).body.posts.map((p: { id: string }) => p.id)).toEqual([made.body.id]);
      expect(lines.some((l) => /^worker: ready/.test(l))).toBe(true);
      expect(lines.some((l) => new RegExp(`^worker: .*consumers t${tag}-1\\.\\.2`).test(l)), lines.join('\n')).toBe(true);
      expect(lines.some((l) => /^worker: .*\b250\b/.test(l)), lines.join('\n')).toBe(true);
      // The fan-out backlog (sampled every 5 s): the post was handled, nothing waits.
      await vi.waitFor(
        async () => expect((await fetch(`${server.url}/metrics`).then((r) => r.text())).match(/^feedlab_fanout_backlog_events (\d+)$/m)?.[1]).toBe('0'),
        { timeout: 8_000, interval: 250 },
      );
    } finally {
      await server.close();
    }
  });

  it('starts while the event log is unreachable, keeps posts in the outbox, and refuses a log of another shape', async () => {
    const server = await startServer(testConfig({ FEED_BUS: 'kafka', KAFKA_BROKERS: '127.0.0.1:1' }), { log: () => {} });
    try {
      await store.pool.query(`INSERT INTO users (id, handle) VALUES (21, 'twentyone') ON CONFLICT DO NOTHING`);
      const made = await http(server, 21, 'POST', '/v1/posts', { text: 'waits in the outbox' });
      expect(made.status).toBe(201);
      const r = await store.pool.query(`SELECT published_at FROM outbox WHERE post_id = $1`, [made.body.id]);
      expect(r.rows[0].published_at).toBeNull();
      expect((await http(server, 21, 'GET', '/v1/feed')).body.posts.map((p: { id: string }) => p.id)).toEqual([made.body.id]);
    } finally {
      await server.close();
    }
    // The streams were created with 4 partitions: 8 is a configuration error at start-up.
    await expect(startServer(testConfig({ FEED_PARTITIONS: '8' }), { log: () => {} })).rejects.toThrow(/has 4 partitions, not 8/);
  });
});
