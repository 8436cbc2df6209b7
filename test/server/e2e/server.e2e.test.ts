// The reference server end to end, as a user runs it: the built CLI (`node dist/cli/main.js`) as
// child processes against this machine's Redis and Postgres. A throwaway schema is migrated
// (`feedlab migrate`), a small generated graph is loaded into it (`feedlab graph generate`, then
// `feedlab load-graph`), `feedlab serve` and a separate `feedlab worker` run on it, tokens come
// from `feedlab token`, and everything else is real HTTP:
//  (a) the documents' pagination exercise: a regular author and a celebrity (over FEED_THRESHOLD)
//      post 15 times each, a follower of both pages 10 at a time: 30 distinct posts, in order;
//  (b) Postgres "down" mid-run: the server and worker reach Postgres through a TCP proxy started
//      here, which is cut (connections reset, new ones refused) for a few seconds while posts keep
//      coming and the worker holds events: every 201 is in Postgres and reaches the follower's feed
//      afterwards, the posts in the outage get a quick 503 (never a 500), the server recovers alone;
//  (d) /readyz 503 while Postgres is cut, 200 after;
//      and /metrics shows the fleet's fan-out lag and batch timing;
//  (c) the worker SIGKILLed in the middle of an 8,000-follower fan-out and another started: every
//      follower ends with the post once.
// Everything lives in its own schema, Redis key prefix and stream prefix, removed afterwards; every
// child is stopped in afterAll, whatever happened. Without Redis or Postgres the test is skipped
// with one loud line, except under CI=true where it fails.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMPTY_SENTINEL, SENTINEL_SCORE } from '../../../server/cache/post-list.js';
import { closeRedis, connectRedis, dropKeyspace, keyspace, redisUrlFromEnv } from '../../../server/cache/redis.js';
import { TimelineCache } from '../../../server/cache/timelines.js';
import { createStore, DEFAULT_DATABASE_URL, probeDatabase, type Store } from '../../../server/store/pool.js';
import { CI, CliChild, ensureBuilt, redisDown, runCli, sample, sleep, FaultProxy, waitFor } from './helpers.js';

const FILE = 'test/server/e2e/server.e2e.test.ts';
const DOWN = [await redisDown(), (await probeDatabase(process.env.DATABASE_URL, 2000)) ?? null].filter((d) => d !== null);
const SKIP = DOWN.length > 0 && !CI;
if (SKIP) console.warn(`\n!!! SKIPPED ${FILE}: ${DOWN.join('; ')} (under CI=true this fails) !!!\n`);

const tag = `${process.pid}_${randomBytes(3).toString('hex')}`;
const schema = `fl_test_e2e_${tag}`;
const keys = keyspace(`feedlab:test:e2e:${tag}:`);
const streamPrefix = `${keys.prefix}events`;
const PARTITIONS = 4;
const THRESHOLD = 9_000;
const USERS = 16_000;
const STAR_FOLLOWERS = 10_000; // over the threshold: pulled on read
const CROWD_FOLLOWERS = 8_000; // under it: pushed, the big fan-out of (c)
const SECRET = randomBytes(32).toString('base64');
const OUTAGE_MS = 4_000;
const DAY = 86_400_000;

const PG_URL = new URL(process.env.DATABASE_URL || DEFAULT_DATABASE_URL);
/** The environment without any FEED_* setting of the machine, then this test's. */
const BASE_ENV: NodeJS.ProcessEnv = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FEED_') && k !== 'KAFKA_BROKERS')),
  REDIS_URL: redisUrlFromEnv(),
  DATABASE_URL: PG_URL.href,
  FEED_TOKEN_SECRET: SECRET,
  FEED_PG_SCHEMA: schema,
  FEED_KEY_PREFIX: keys.prefix,
  FEED_STREAM_PREFIX: streamPrefix,
  FEED_PARTITIONS: String(PARTITIONS),
  FEED_THRESHOLD: String(THRESHOLD),
};

let tmp = '';
let store: Store;
let redis: Redis;
let timelines: TimelineCache;
let proxy: FaultProxy;
let serveEnv: NodeJS.ProcessEnv;
let workerEnv: NodeJS.ProcessEnv;
let server: CliChild;
let worker: CliChild;
let url = '';
const children: CliChild[] = [];
const tokens = new Map<number, string>();

/** Who is who in the loaded graph. */
const who = { reader: 0, regular: 0, star: 0, poster: 0, crowd: 0, sampled: [] as number[] };
let crowdFollowers: number[] = [];

interface PostView {
  id: string;
  authorId: number;
  text: string;
  createdAt: number;
}
interface Answer {
  status: number;
  ms: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** One request over real HTTP with the user's minted token (null: none), bounded. */
async function api(user: number | null, method: string, path: string, body?: unknown, timeoutMs = 15_000, extra: Record<string, string> = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...extra };
  if (user !== null) headers.authorization = `Bearer ${tokens.get(user)}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const began = Date.now();
  const res = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON (/metrics)
  }
  return { status: res.status, ms: Date.now() - began, body: parsed };
}

/** The whole home feed of a user, paged with the cursor (limit per page). */
async function wholeFeed(user: number, limit: number): Promise<{ pages: PostView[][]; posts: PostView[] }> {
  const pages: PostView[][] = [];
  let cursor: string | null = null;
  do {
    const r = await api(user, 'GET', `/v1/feed?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    if (r.status !== 200) throw new Error(`GET /v1/feed answered ${r.status}: ${JSON.stringify(r.body)}`);
    pages.push(r.body.posts);
    cursor = r.body.nextCursor;
  } while (cursor !== null && pages.length < 1000);
  return { pages, posts: pages.flat() };
}

/** Newest first: creation time, then id (the feed's order). */
function newestFirst(a: { id: string; createdAt: number }, b: { id: string; createdAt: number }): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  const x = BigInt(a.id);
  const y = BigInt(b.id);
  return x === y ? 0 : x > y ? -1 : 1;
}

function startWorker(name: string): CliChild {
  const child = new CliChild(name, ['worker'], workerEnv);
  children.push(child);
  return child;
}

/** Entries the fan-out group holds unacknowledged, and entries dead-lettered, over every partition. */
async function logState(): Promise<{ pending: number; dead: number }> {
  let pending = 0;
  let dead = 0;
  for (let p = 0; p < PARTITIONS; p++) {
    const summary = (await redis.xpending(`${streamPrefix}:{p${p}}:log`, 'fanout').catch(() => [0])) as [number];
    pending += Number(summary[0]);
    dead += await redis.xlen(`${streamPrefix}:{p${p}}:dead`);
  }
  return { pending, dead };
}

function failureContext(): string {
  return children.map((c) => c.tail(20)).join('\n');
}

beforeAll(async () => {
  if (SKIP) return;
  ensureBuilt();
  tmp = mkdtempSync(join(tmpdir(), 'feedlab-e2e-'));
  redis = await connectRedis({ url: redisUrlFromEnv() });
  timelines = new TimelineCache(redis, keys);
  store = createStore({ databaseUrl: PG_URL.href, schema, max: 4 });

  // The graph and the schema, by the commands a user runs.
  const graph = join(tmp, 'e2e.fgraph');
  const generated = await runCli(
    ['graph', 'generate', '--users', String(USERS), '--avg-follows', '4', '--alpha', '2.2', '--seed', '7', '--celebrity', `star=${STAR_FOLLOWERS}`, '--celebrity', `crowd=${CROWD_FOLLOWERS}`, '--out', graph, '--quiet'],
    BASE_ENV,
  );
  expect(generated.code, generated.stderr).toBe(0);
  const migrated = await runCli(['migrate', '--schema', schema], BASE_ENV);
  expect(migrated.code, migrated.stderr).toBe(0);
  expect(migrated.stdout).toMatch(/applied \d+ migration/);
  const loaded = await runCli(['load-graph', graph, '--schema', schema, '--quiet', '--json'], BASE_ENV);
  expect(loaded.code, loaded.stderr).toBe(0);
  expect(JSON.parse(loaded.stdout)).toMatchObject({ schema: 'feedlab.load-graph/1', pgSchema: schema, users: USERS });

  const named = await store.pool.query<{ id: string; handle: string; follower_count: string }>(`SELECT id::text, handle, follower_count::text FROM users WHERE handle IN ('star', 'crowd')`);
  const byHandle = new Map(named.rows.map((r) => [r.handle, r]));
  who.star = Number(byHandle.get('star')!.id);
  who.crowd = Number(byHandle.get('crowd')!.id);
  expect(Number(byHandle.get('star')!.follower_count)).toBeGreaterThan(THRESHOLD);
  expect(Number(byHandle.get('crowd')!.follower_count)).toBeLessThanOrEqual(THRESHOLD);
  crowdFollowers = (await store.pool.query<{ id: string }>(`SELECT follower_id::text AS id FROM follows WHERE followee_id = $1 ORDER BY follower_id`, [who.crowd])).rows.map((r) => Number(r.id));
  expect(crowdFollowers.length).toBe(CROWD_FOLLOWERS);
  // The reader, the regular author and the poster: ordinary accounts that do not follow the crowd
  // account (so their feeds hold only what this test posts for them).
  const crowdSet = new Set(crowdFollowers);
  const ordinary = (await store.pool.query<{ id: string }>(`SELECT id::text FROM users WHERE follower_count BETWEEN 1 AND 100 AND handle NOT IN ('star', 'crowd') ORDER BY id LIMIT 200`)).rows
    .map((r) => Number(r.id))
    .filter((id) => id > 0 && !crowdSet.has(id));
  [who.reader, who.regular, who.poster] = ordinary;
  who.sampled = [crowdFollowers[1]!, crowdFollowers[Math.floor(CROWD_FOLLOWERS / 2)]!, crowdFollowers[CROWD_FOLLOWERS - 1]!];

  // Postgres behind a proxy this test can cut; the server and the worker go through it.
  proxy = new FaultProxy(PG_URL.hostname, Number(PG_URL.port || 5432));
  await proxy.start();
  const proxied = new URL(PG_URL.href);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  serveEnv = { ...BASE_ENV, DATABASE_URL: proxied.href, FEED_PG_POOL: '8' };
  // Small batches, one in flight: an 8,000-follower fan-out lasts long enough to be caught in the
  // middle; a dead worker's events are claimed by the living after 1.5 s.
  workerEnv = { ...BASE_ENV, DATABASE_URL: proxied.href, FEED_PG_POOL: '4', FEED_BATCH_SIZE: '10', FEED_PIPELINES: '1', FEED_PAGE_SIZE: '2000', FEED_CLAIM_IDLE_MS: '1500', FEED_STATUS_MS: '0' };

  server = new CliChild('serve', ['serve', '--port', '0', '--schema', schema], serveEnv);
  children.push(server);
  worker = startWorker('worker 1');
  const users = [who.reader, who.regular, who.star, who.poster, who.crowd, ...who.sampled];
  const [listening] = await Promise.all([
    server.line(/listening on (http:\/\/\S+)/, 30_000),
    worker.line(/ready: \d+ consumer/, 30_000),
    ...users.map(async (u) => {
      const minted = await runCli(['token', String(u)], BASE_ENV);
      expect(minted.code, minted.stderr).toBe(0);
      tokens.set(u, minted.stdout.trim());
    }),
  ]);
  url = listening[1]!;
  expect((await api(null, 'GET', '/readyz')).status).toBe(200);
}, 90_000);

afterAll(async () => {
  // Every child stopped (continued first if paused), whatever happened; then the proxy, the data.
  await Promise.allSettled(children.map((c) => c.stop(5_000)));
  if (proxy) await proxy.close();
  if (redis) {
    await dropKeyspace(redis, keys).catch(() => {});
    await closeRedis(redis);
  }
  if (store) {
    await store.pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
    await store.pool.end();
  }
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}, 30_000);

describe.skipIf(SKIP)('feedlab serve + feedlab worker, end to end over HTTP', () => {
  it('(a) pages 15 posts each of a regular author and a celebrity 10 at a time: 30 distinct posts in order, none repeated or skipped', async () => {
    const { reader, regular, star } = who;
    for (const followee of [regular, star]) expect((await api(reader, 'PUT', `/v1/follows/${followee}`)).status).toBe(200);
    const first = await api(reader, 'GET', '/v1/feed');
    expect(first.status).toBe(200);
    expect(first.body.posts).toEqual([]);

    const made: PostView[] = [];
    for (let i = 0; i < 15; i++) {
      for (const author of [regular, star]) {
        const r = await api(author, 'POST', '/v1/posts', { text: `${author === star ? 'celebrity' : 'regular'} post ${i}` });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        made.push({ id: r.body.id, authorId: author, text: `${author === star ? 'celebrity' : 'regular'} post ${i}`, createdAt: r.body.createdAt });
      }
    }
    const expected = [...made].sort(newestFirst);

    // The regular author's posts arrive by fan-out (the reader's timeline exists); the celebrity's
    // are merged from their recent list on read.
    await waitFor('all 30 posts in the reader\'s feed', async () => (await api(reader, 'GET', '/v1/feed?limit=100')).body.posts.length === 30 || false, 20_000, 100);
    const one = await api(reader, 'GET', '/v1/feed?limit=100');
    expect(one.body.posts).toEqual(expected);
    expect(one.body.nextCursor).toBeNull();

    const { pages, posts } = await wholeFeed(reader, 10);
    expect(pages.slice(0, 3).map((p) => p.length)).toEqual([10, 10, 10]);
    expect(pages.slice(3).flat()).toEqual([]);
    expect(posts.map((p) => p.id)).toEqual(expected.map((p) => p.id));
    expect(new Set(posts.map((p) => p.id)).size).toBe(30);

    // Hybrid: the regular author's posts are in the reader's timeline, the celebrity's are not.
    const timeline = new Set(await redis.zrange(timelines.key(reader), 0, -1));
    expect(made.filter((p) => p.authorId === regular).every((p) => timeline.has(p.id))).toBe(true);
    expect(made.filter((p) => p.authorId === star).some((p) => timeline.has(p.id))).toBe(false);
  });

  it('(b, d) Postgres cut mid-run: every 201 is durable and reaches the feed, the outage answers 503 quickly, /readyz follows, the server recovers alone', async () => {
    const { reader, poster } = who;
    expect((await api(reader, 'PUT', `/v1/follows/${poster}`)).status).toBe(200);
    expect((await api(reader, 'GET', '/v1/feed?limit=1')).status).toBe(200);

    interface Result {
      i: number;
      startedAt: number;
      endedAt: number;
      status: number;
      id?: string;
      error?: string;
    }
    const results: Result[] = [];
    const readiness: Array<{ at: number; status: number }> = [];
    let running = true;
    const posting = (async () => {
      for (let i = 0; running; i++) {
        const startedAt = Date.now();
        try {
          // keyed, as a client that retries must: a post lost mid-statement is a 503 to retry
          const r = await api(poster, 'POST', '/v1/posts', { text: `outage run ${i}` }, 10_000, { 'idempotency-key': `outage-${i}` });
          results.push({ i, startedAt, endedAt: Date.now(), status: r.status, id: r.status === 201 ? r.body.id : undefined, error: r.status === 201 ? undefined : r.body?.error });
        } catch (err) {
          results.push({ i, startedAt, endedAt: Date.now(), status: -1, error: (err as Error).message });
        }
        await sleep(25);
      }
    })();
    const probing = (async () => {
      while (running) {
        const at = Date.now();
        try {
          readiness.push({ at, status: (await api(null, 'GET', '/readyz', undefined, 5_000)).status });
        } catch {
          readiness.push({ at, status: -1 });
        }
        await sleep(100);
      }
    })();

    let cutAt = 0;
    let restoredAt = 0;
    let held: string[] = [];
    try {
      await waitFor('posts acknowledged before the outage', () => results.filter((r) => r.status === 201).length >= 5 || false, 15_000, 20);
      // The worker paused, so that when Postgres goes it holds events it has not handled yet.
      worker.proc.kill('SIGSTOP');
      const pausedAt = Date.now();
      held = await waitFor(
        'posts acknowledged and relayed while the worker is paused',
        async () => {
          const ids = results.filter((r) => r.status === 201 && r.startedAt >= pausedAt).map((r) => r.id!);
          if (ids.length < 3) return false;
          const r = await store.pool.query<{ n: string }>(`SELECT count(*)::text AS n FROM outbox WHERE post_id = ANY($1::int8[]) AND published_at IS NOT NULL`, [ids]);
          return Number(r.rows[0]!.n) >= 3 ? ids : false;
        },
        10_000,
        50,
      );
      expect(held.length).toBeGreaterThanOrEqual(3);

      cutAt = Date.now();
      proxy.cut();
      worker.proc.kill('SIGCONT');
      await sleep(OUTAGE_MS);
      restoredAt = Date.now();
      proxy.restore();
      await waitFor('a post acknowledged after the outage', () => results.some((r) => r.status === 201 && r.startedAt >= restoredAt) || false, 15_000, 50);
      await waitFor('/readyz 200 after the outage', () => readiness.some((r) => r.at >= restoredAt && r.status === 200) || false, 10_000, 50);
      await sleep(500);
    } catch (err) {
      const tail = results.slice(-8).map((r) => `${r.i}: ${r.status} in ${r.endedAt - r.startedAt} ms at ${r.startedAt - cutAt} ms from the cut ${r.error ?? ''}`);
      throw new Error(`${(err as Error).message}\nlast posts:\n  ${tail.join('\n  ')}\n${failureContext()}`);
    } finally {
      running = false;
      worker.proc.kill('SIGCONT');
      if (!proxy.isUp) proxy.restore();
      await Promise.all([posting, probing]);
    }

    const summary = () => {
      const byStatus = new Map<number, number>();
      for (const r of results) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
      return `${results.length} posts, by status: ${JSON.stringify([...byStatus])}\n${failureContext()}`;
    };
    // Every answer a 201 or a 503; never a 500, never a hang.
    expect(results.filter((r) => r.status !== 201 && r.status !== 503), summary()).toEqual([]);
    // The outage answered 503, each quickly.
    const inOutage = results.filter((r) => r.startedAt >= cutAt + 50 && r.endedAt <= restoredAt);
    expect(inOutage.length, summary()).toBeGreaterThanOrEqual(5);
    expect(inOutage.filter((r) => r.status !== 503), summary()).toEqual([]);
    const slow = results.filter((r) => r.status === 503 && r.endedAt - r.startedAt >= 2_000);
    expect(slow, summary()).toEqual([]);
    expect(inOutage[0]!.error).toMatch(/the database is unavailable/);
    // Service resumed by itself within a few seconds.
    const firstAfter = results.find((r) => r.status === 201 && r.startedAt >= restoredAt)!;
    expect(firstAfter.endedAt - restoredAt, summary()).toBeLessThan(10_000);
    expect(server.running, failureContext()).toBe(true);
    expect(worker.running, failureContext()).toBe(true);
    // (d) /readyz: 200 before, 503 while Postgres was cut, 200 after.
    const readyDuring = readiness.filter((r) => r.at >= cutAt + 50 && r.at <= restoredAt - 2_100);
    expect(readyDuring.length).toBeGreaterThanOrEqual(3);
    expect(readyDuring.every((r) => r.status === 503), JSON.stringify(readyDuring)).toBe(true);
    expect(readiness.filter((r) => r.at < cutAt - 1_000).every((r) => r.status === 200)).toBe(true);
    expect(readiness[readiness.length - 1]!.status).toBe(200);

    // Each 503 retried with its key: a 201, and one post of its text, whether or not the first had committed.
    for (const r of results.filter((x) => x.status === 503)) {
      const retry = await api(poster, 'POST', '/v1/posts', { text: `outage run ${r.i}` }, 10_000, { 'idempotency-key': `outage-${r.i}` });
      expect(retry.status, JSON.stringify(retry.body)).toBe(201);
      r.status = 201;
      r.id = retry.body.id;
    }
    const texts = await store.pool.query<{ body: string; n: string }>(`SELECT body, count(*)::text AS n FROM posts WHERE author_id = $1 AND body LIKE 'outage run %' GROUP BY body HAVING count(*) > 1`, [poster]);
    expect(texts.rows, 'a post made twice').toEqual([]);

    // Every acknowledged post is in Postgres (read directly, not through the proxy) ...
    const acknowledged = results.filter((r) => r.status === 201).map((r) => r.id!);
    expect(acknowledged.length).toBeGreaterThanOrEqual(10);
    const stored = await store.pool.query<{ id: string }>(`SELECT id::text FROM posts WHERE id = ANY($1::int8[])`, [acknowledged]);
    expect(stored.rows.map((r) => r.id).sort()).toEqual([...acknowledged].sort());
    // ... and reaches the follower's feed, once, including those the worker held during the outage.
    const feed = await waitFor(
      'every acknowledged post in the reader\'s feed',
      async () => {
        const { posts } = await wholeFeed(reader, 100);
        const ids = new Set(posts.map((p) => p.id));
        return acknowledged.every((id) => ids.has(id)) ? posts : false;
      },
      30_000,
      250,
    ).catch(async (err: Error) => {
      const { posts } = await wholeFeed(reader, 100);
      const ids = new Set(posts.map((p) => p.id));
      const absent = acknowledged.filter((id) => !ids.has(id));
      throw new Error(`${err.message}: ${absent.length} of ${acknowledged.length} missing (held by the paused worker: ${held.filter((id) => !ids.has(id)).length}); log ${JSON.stringify(await logState())}\n${failureContext()}`);
    });
    expect(new Set(feed.map((p) => p.id)).size).toBe(feed.length);
    expect(feed.filter((p) => p.authorId === poster).length).toBeGreaterThanOrEqual(acknowledged.length);
    await waitFor('the log drained', async () => (await logState()).pending === 0 || false, 15_000, 200);
    expect(await logState()).toEqual({ pending: 0, dead: 0 });
  });

  it('/metrics shows the fleet\'s fan-out lag histogram and batch timing beside the API\'s own figures', async () => {
    // The worker publishes every 5 s.
    const text = await waitFor(
      'the worker\'s fan-outs in /metrics',
      async () => {
        const r = await api(null, 'GET', '/metrics');
        return r.status === 200 && sample(r.body, 'feedlab_fanout_lag_seconds_count{path="push"}') >= 25 ? (r.body as string) : false;
      },
      15_000,
      250,
    );
    expect(text).toMatch(/^# TYPE feedlab_fanout_lag_seconds histogram$/m);
    expect(sample(text, 'feedlab_fanout_lag_seconds_bucket{path="push",le="+Inf"}')).toBe(sample(text, 'feedlab_fanout_lag_seconds_count{path="push"}'));
    expect(sample(text, 'feedlab_fanout_lag_seconds_sum{path="push"}')).toBeGreaterThan(0);
    expect(sample(text, 'feedlab_fanout_batch_seconds_count')).toBeGreaterThanOrEqual(25);
    expect(sample(text, 'feedlab_fanout_events_created_total')).toBeGreaterThanOrEqual(30);
    expect(sample(text, 'feedlab_fanout_workers')).toBe(1);
    expect(sample(text, 'feedlab_feed_latency_seconds_count')).toBeGreaterThan(0);
    expect(text).toMatch(/^feedlab_feed_rebuilds_total\{list="timeline"\} \d+$/m);
    expect(text).toMatch(/^feedlab_outbox_backlog \d+$/m);
  });

  it('(c) a worker SIGKILLed in the middle of an 8,000-follower fan-out, and another started: every follower ends with the post once', async () => {
    const { crowd, sampled } = who;
    // The followers are active readers: each has a timeline (as after a recent read).
    const exists = await redis.pipeline(crowdFollowers.map((f) => ['exists', timelines.key(f)])).exec();
    const fresh = crowdFollowers.filter((_, i) => exists![i]![1] === 0);
    expect(fresh.length).toBe(CROWD_FOLLOWERS);
    const prefill = redis.pipeline();
    for (const f of fresh) prefill.zadd(timelines.key(f), SENTINEL_SCORE, EMPTY_SENTINEL).pexpire(timelines.key(f), 7 * DAY);
    await prefill.exec();

    const census = async (postId: string) => {
      const replies = (await redis.pipeline(crowdFollowers.map((f) => ['zrange', timelines.key(f), '0', '-1'])).exec())!;
      let holding = 0;
      let notExactlyIt = 0;
      for (const [, members] of replies) {
        const m = members as string[];
        if (m.includes(postId)) holding++;
        if (m.length !== 1 || m[0] !== postId) notExactlyIt++;
      }
      return { holding, notExactlyIt };
    };

    const made = await api(crowd, 'POST', '/v1/posts', { text: 'for eight thousand followers' });
    expect(made.status).toBe(201);
    const postId: string = made.body.id;
    // Followers are written in id order: kill the worker once the tenth percentile has the post.
    const probe = timelines.key(crowdFollowers[Math.floor(CROWD_FOLLOWERS / 10)]!);
    await waitFor('the fan-out to be under way', async () => (await redis.zscore(probe, postId)) !== null || false, 20_000, 2);
    worker.proc.kill('SIGKILL');
    expect((await worker.exited).signal).toBe('SIGKILL');
    const atKill = await census(postId);
    expect(atKill.holding).toBeGreaterThanOrEqual(CROWD_FOLLOWERS / 10);
    expect(atKill.holding, 'the fan-out had finished before the kill').toBeLessThan(CROWD_FOLLOWERS);

    // Another worker (another pid, another consumer name) claims the dead one's event.
    const restartedAt = Date.now();
    worker = startWorker('worker 2');
    await worker.line(/ready: \d+ consumer/, 20_000);
    await waitFor('every follower to hold the post', async () => (await census(postId)).holding === CROWD_FOLLOWERS || false, 40_000, 250).catch((err: Error) => {
      throw new Error(`${err.message}\n${failureContext()}`);
    });
    expect(await census(postId)).toEqual({ holding: CROWD_FOLLOWERS, notExactlyIt: 0 });
    console.log(`e2e: SIGKILL at ${atKill.holding} of ${CROWD_FOLLOWERS} timelines; the second worker completed the fan-out ${Date.now() - restartedAt} ms after its start`);

    // Over HTTP, each sampled follower sees it once.
    for (const f of sampled) {
      const feed = await api(f, 'GET', '/v1/feed?limit=100');
      expect(feed.status).toBe(200);
      expect(feed.body.posts.filter((p: PostView) => p.id === postId)).toHaveLength(1);
    }
    await waitFor('the event acknowledged', async () => (await logState()).pending === 0 || false, 15_000, 200);
    expect(await logState()).toEqual({ pending: 0, dead: 0 });
  });

  it('stops on SIGTERM with exit 0: the worker finishing its batch, the server its requests', async () => {
    expect(await worker.stop(10_000)).toEqual({ code: 0, signal: null });
    expect(await server.stop(10_000)).toEqual({ code: 0, signal: null });
  });
});
