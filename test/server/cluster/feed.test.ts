// The reference server with its caches on a real 3-master Redis Cluster started for this file, and
// Postgres (DATABASE_URL) in a throwaway schema: the fan-out worker pushing one post into 2,500
// timelines spread over all three masters, home feeds over HTTP (buildApp + inject) merging a
// celebrity's recent list with bodies hydrated from many slots, deletion, the cap, single-flight
// rebuilds; and `feedlab serve --with-worker` pointed at the cluster with its event log on this
// machine's standalone Redis (REDIS_URL), plus the configuration that refuses an event log on the
// cluster. Everything is removed afterwards. Without redis-server the file is skipped with one
// loud line; without this machine's Redis or Postgres likewise (under CI=true it fails).
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parsePolicy } from '../../../core/fanout-policy.js';
import { keySlot } from '../../../core/keys.js';
import { PostIdGenerator, type PostId } from '../../../core/post-id.js';
import { signToken } from '../../../server/auth/token.js';
import { AuthorPostsCache } from '../../../server/cache/author-posts.js';
import { connectRedisCluster, parseClusterNodes } from '../../../server/cache/cluster.js';
import { pipelinePerNode } from '../../../server/cache/node-pipelines.js';
import { PostBodyCache } from '../../../server/cache/post-bodies.js';
import { EMPTY_SENTINEL } from '../../../server/cache/post-list.js';
import { CacheConfigError, connectRedis, keyspace, redisUrlFromEnv } from '../../../server/cache/redis.js';
import { unlinkBySlot } from '../../../server/cache/slots.js';
import { TimelineCache } from '../../../server/cache/timelines.js';
import { EventLogInputError } from '../../../server/events/errors.js';
import type { PostEvent } from '../../../server/events/event-log.js';
import { METRIC_BODY_LOOKUPS } from '../../../server/feed/read-path.js';
import { createFeedService } from '../../../server/feed/service.js';
import { buildApp } from '../../../server/http/app.js';
import { Counter, MetricsRegistry } from '../../../server/http/metrics.js';
import type { PostView } from '../../../server/http/service.js';
import { describeServeConfig, loadServeConfig, ServeConfigError, startServer } from '../../../server/serve.js';
import { migrate } from '../../../server/store/migrate.js';
import { createStore, type Store } from '../../../server/store/pool.js';
import { FeedRepository } from '../../../server/store/repository.js';
import { FanoutWorker } from '../../../server/worker/fanout.js';
import { CliChild, ensureBuilt, runCli } from '../e2e/helpers.js';
import { dropPostgresState, dropRedisState, skipWithoutServices } from '../services.js';
import { clusterUnavailable, startLocalCluster, type LocalCluster } from './local-cluster.js';

const unavailable = clusterUnavailable();
if (unavailable) console.warn(`\n!!! SKIPPED test/server/cluster/feed.test.ts: ${unavailable} !!!\n`);
const SKIP = unavailable !== null || (await skipWithoutServices('test/server/cluster/feed.test.ts'));

const tag = `${process.pid}_${randomBytes(3).toString('hex')}`;
const schema = `fl_test_cluster_${tag}`;
const keys = keyspace(`feedlab:test:clusterfeed:${tag}:`);
const TOKEN_SECRET = 'cluster-test-token-secret-0123456789abcdef-01';
const DAY = 86_400_000;
/** Authors with more followers than this are pulled. */
const THRESHOLD = 3_000;

let lc: LocalCluster;
let cluster: Cluster;
let standalone: Redis;
let store: Store;
let repo: FeedRepository;
let metrics: MetricsRegistry;
let app: FastifyInstance;
let timelines: TimelineCache;
let authorPosts: AuthorPostsCache;
let bodies: PostBodyCache;
let worker: FanoutWorker;
let owner: (slot: number) => number;
let nextUser = 1;
const ids = new PostIdGenerator(9);

/** An author and n followers (last seen now), the counts set as the repository keeps them. */
async function audience(n: number): Promise<{ author: number; followers: number[] }> {
  const author = nextUser;
  const first = author + 1;
  nextUser += n + 1;
  await store.pool.query(
    `INSERT INTO users (id, handle, last_seen_at, follower_count, followee_count)
     SELECT $1::int8, 'u' || $1::int8, now(), $2::int8, 0
     UNION ALL SELECT g, 'u' || g, now(), 0, 1 FROM generate_series($3::int8, $3::int8 + $2::int8 - 1) g`,
    [author, n, first],
  );
  await store.pool.query(`INSERT INTO follows (follower_id, followee_id) SELECT g, $1 FROM generate_series($2::int8, $2::int8 + $3::int8 - 1) g`, [author, first, n]);
  return { author, followers: Array.from({ length: n }, (_, i) => first + i) };
}

/** Existing (empty) timelines, as a rebuild leaves them. */
async function emptyTimelines(users: readonly number[]): Promise<void> {
  const replies = await pipelinePerNode(cluster, users.length, (i) => timelines.key(users[i]), (p, i) => p.zadd(timelines.key(users[i]), -1, EMPTY_SENTINEL).pexpire(timelines.key(users[i]), 7 * DAY), 2);
  expect(replies.filter(([err]) => err)).toEqual([]);
}

/** How many of these keys each master holds, read from the nodes themselves. */
async function keysPerNode(list: readonly string[]): Promise<number[]> {
  return Promise.all(
    lc.ports.map(async (port) => {
      const mine = list.filter((k) => owner(keySlot(k)) === port);
      if (mine.length === 0) return 0;
      const p = lc.node(port).pipeline();
      for (const k of mine) p.exists(k);
      return ((await p.exec()) ?? []).filter(([, v]) => v === 1).length;
    }),
  );
}

async function call(user: number, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: Record<string, unknown>) {
  const res = await app.inject({ method, url, headers: { authorization: `Bearer ${signToken(user, TOKEN_SECRET)}` }, ...(payload ? { payload } : {}) });
  return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined };
}

async function feed(user: number, limit = 50): Promise<PostView[]> {
  const res = await call(user, 'GET', `/v1/feed?limit=${limit}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.posts;
}

/** A post over HTTP, then handed to the worker as the event log would. */
async function posted(author: number, text: string): Promise<{ id: PostId; createdAt: number }> {
  const res = await call(author, 'POST', '/v1/posts', { text });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const event: PostEvent = { kind: 'PostCreated', postId: res.body.id, authorId: author, createdAt: res.body.createdAt };
  await worker.handleBatch([event]);
  return res.body;
}

const counter = async (name: string, labels?: Record<string, string>) => (await (metrics.get(name) as Counter | undefined)?.get(labels)) ?? 0;

describe.skipIf(SKIP)('the reference server on a 3-master Redis Cluster', () => {
  let regular: { author: number; followers: number[] };
  let celebrity: { author: number; followers: number[] };
  let reader: number;

  beforeAll(async () => {
    lc = await startLocalCluster(3);
    cluster = await connectRedisCluster({ spec: parseClusterNodes(lc.seeds), commandTimeoutMs: 2_000 });
    const ranges = (await cluster.cluster('SLOTS')) as unknown as Array<[number, number, [string, number]]>;
    owner = (slot) => (ranges.find(([a, b]) => slot >= a && slot <= b) as [number, number, [string, number]])[2][1];
    standalone = await connectRedis({ url: redisUrlFromEnv() });
    store = createStore({ schema, max: 10 });
    await migrate(store);
    repo = new FeedRepository(store);
    metrics = new MetricsRegistry();
    const service = createFeedService({
      repo,
      redis: cluster,
      keys,
      ids,
      threshold: THRESHOLD,
      timelineCap: 800,
      listLength: 100,
      leaseMs: 7 * DAY,
      dormantMs: 14 * DAY,
      metrics,
    });
    app = buildApp({ service, tokenSecret: TOKEN_SECRET, cursorSecret: 'cluster-cursor-secret', metrics, logger: false });
    timelines = new TimelineCache(cluster, keys);
    authorPosts = new AuthorPostsCache(cluster, keys);
    bodies = new PostBodyCache(cluster, keys);
    const base = { kind: 'threshold', threshold: THRESHOLD, skipDormant: true, readerCap: 2_000, backlogBound: 1e6, minThreshold: 1_000 } as const;
    worker = new FanoutWorker({ repo, timelines, authorPosts, bodies, policy: parsePolicy(`threshold:${THRESHOLD}`, base), dormantDays: 14 });
    regular = await audience(2_500);
    celebrity = await audience(THRESHOLD + 1);
    reader = regular.followers[0];
    await store.pool.query(`INSERT INTO follows (follower_id, followee_id) VALUES ($1, $2)`, [reader, celebrity.author]);
    await store.pool.query(`UPDATE users SET follower_count = follower_count + 1 WHERE id = $1`, [celebrity.author]);
  });

  afterAll(async () => {
    try {
      await app?.close();
      await dropRedisState(cluster, keys);
      await dropRedisState(standalone, keys);
      await dropPostgresState(store, schema);
    } finally {
      await lc?.stop();
    }
  });

  it('fans a post out to 2,500 followers whose timelines are spread over all three masters', async () => {
    await emptyTimelines(regular.followers);
    const made = await repo.createPost(regular.author, 'to everyone', ids);
    const [outcome] = await worker.handleBatch([{ kind: 'PostCreated', postId: made.id, authorId: regular.author, createdAt: made.createdAt }]);
    expect(outcome).toMatchObject({ path: 'push', followers: 2_500, written: 2_500, missing: 0, duplicates: 0, batches: 3 });
    const perNode = await keysPerNode(regular.followers.map((f) => timelines.key(f)));
    expect(perNode.reduce((a, b) => a + b, 0)).toBe(2_500);
    for (const n of perNode) expect(n).toBeGreaterThan(600); // a third each, give or take
    for (const [i, port] of lc.ports.entries()) {
      const f = regular.followers.find((u) => owner(keySlot(timelines.key(u))) === port) as number;
      expect(await lc.node(port).zscore(timelines.key(f), made.id), `node ${i}`).toBe(String(made.createdAt));
    }
    // Delivered again: nothing written twice.
    const [again] = await worker.handleBatch([{ kind: 'PostCreated', postId: made.id, authorId: regular.author, createdAt: made.createdAt }]);
    expect(again).toMatchObject({ written: 0, duplicates: 2_500 });
  });

  it('serves a home feed merging a celebrity\'s list, with bodies hydrated from many slots; deletes drop out', async () => {
    // The first read makes the reader's followee set and the celebrity's list exist.
    const first = await feed(reader);
    expect(first).toHaveLength(1);
    const pushed: PostId[] = [];
    const pulled: PostId[] = [];
    for (let i = 0; i < 12; i++) {
      pushed.push((await posted(regular.author, `regular ${i}`)).id);
      pulled.push((await posted(celebrity.author, `celebrity ${i}`)).id);
    }
    // The celebrity's posts went only to their list (on its own slot), not to 3,001 timelines.
    expect(await authorPosts.size(celebrity.author)).toBe(12);
    expect(await timelines.size(celebrity.followers[5])).toBe(0);
    const expected = [...pushed, ...pulled, first[0].id].sort((a, b) => (BigInt(b) > BigInt(a) ? 1 : -1));

    // Forget some bodies: the page is hydrated from the cache (one MGET per slot) and Postgres.
    await unlinkBySlot(cluster, [...pushed.slice(0, 4), ...pulled.slice(0, 4)].map((id) => bodies.key(id)));
    const hits0 = (await counter(METRIC_BODY_LOOKUPS, { result: 'hit' }));
    const misses0 = (await counter(METRIC_BODY_LOOKUPS, { result: 'miss' }));
    const page = await feed(reader);
    expect(page.map((p) => p.id)).toEqual(expected);
    expect(page.find((p) => p.id === pulled[3])).toMatchObject({ authorId: celebrity.author, text: 'celebrity 3' });
    expect((await counter(METRIC_BODY_LOOKUPS, { result: 'miss' })) - misses0).toBe(8);
    expect((await counter(METRIC_BODY_LOOKUPS, { result: 'hit' })) - hits0).toBe(17);
    // The misses were written back; all 25 bodies now come from the cache, spread over the masters.
    await vi.waitFor(async () => expect((await bodies.getMany(expected)).missing).toEqual([]), { timeout: 2_000 });
    const spread = await keysPerNode(expected.map((id) => bodies.key(id)));
    expect(spread.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
    const hits1 = (await counter(METRIC_BODY_LOOKUPS, { result: 'hit' }));
    expect((await feed(reader)).map((p) => p.id)).toEqual(expected);
    expect((await counter(METRIC_BODY_LOOKUPS, { result: 'hit' })) - hits1).toBe(25);

    // Deletes: the author's own request leaves a tombstone; the worker takes it out of the list.
    expect((await call(regular.author, 'DELETE', `/v1/posts/${pushed[11]}`)).status).toBe(204);
    expect((await call(celebrity.author, 'DELETE', `/v1/posts/${pulled[11]}`)).status).toBe(204);
    await worker.handleBatch([{ kind: 'PostDeleted', postId: pulled[11], authorId: celebrity.author, createdAt: Date.now() }]);
    expect(await authorPosts.size(celebrity.author)).toBe(11);
    const after = (await feed(reader)).map((p) => p.id);
    expect(after).toEqual(expected.filter((id) => id !== pushed[11] && id !== pulled[11]));
  });

  it('holds the cap on a full timeline pushed once more', async () => {
    const small = new TimelineCache(cluster, keys, { cap: 5 });
    const capped = new FanoutWorker({ repo, timelines: small, authorPosts, policy: parsePolicy('push', { kind: 'threshold', threshold: THRESHOLD, skipDormant: true, readerCap: 2_000, backlogBound: 1e6, minThreshold: 1_000 }), dormantDays: 14 });
    const { author, followers } = await audience(40);
    await emptyTimelines(followers);
    for (let i = 0; i < 6; i++) {
      const made = await repo.createPost(author, `capped ${i}`, ids);
      await capped.handleBatch([{ kind: 'PostCreated', postId: made.id, authorId: author, createdAt: made.createdAt }]);
      expect(await Promise.all(followers.map((f) => small.size(f)))).toEqual(followers.map(() => Math.min(i + 1, 5)));
    }
  });

  it('rebuilds a missing timeline once for ten concurrent reads', async () => {
    const other = regular.followers[7];
    const before = await feed(other);
    expect(await timelines.drop(other)).toBe(true);
    const spy = vi.spyOn(repo, 'rebuildTimeline');
    try {
      const pages = await Promise.all(Array.from({ length: 10 }, () => feed(other)));
      expect(spy).toHaveBeenCalledTimes(1);
      for (const p of pages) expect(p.map((x) => x.id)).toEqual(before.map((x) => x.id));
    } finally {
      spy.mockRestore();
    }
    expect(await timelines.size(other)).toBe(before.length);
  });

  it('refuses an event log on the cluster: a REDIS_URL among the seeds, or found to be a cluster node at start-up', async () => {
    const env = { FEED_TOKEN_SECRET: TOKEN_SECRET, REDIS_CLUSTER_NODES: lc.seeds };
    const err = (() => {
      try {
        loadServeConfig({ 'redis-url': `redis://:pw@127.0.0.1:${lc.ports[1]}` }, env);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ServeConfigError);
    expect((err as Error).message).toMatch(/^--redis-url="redis:\/\/:\*\*\*@127\.0\.0\.1:\d+\/?" is one of the REDIS_CLUSTER_NODES nodes: the Redis Streams event log needs a standalone Redis/);
    expect(() => loadServeConfig({}, { ...env, REDIS_CLUSTER_NODES: 'nope' })).toThrow(/REDIS_CLUSTER_NODES="nope": "nope" is not host:port/);
    // Kafka for the log: REDIS_URL is not used, so nothing to refuse.
    expect(loadServeConfig({ bus: 'kafka', 'redis-url': `redis://127.0.0.1:${lc.ports[1]}` }, env).redisCluster?.nodes).toHaveLength(3);
    const c = loadServeConfig({ 'redis-cluster': `redis://:s3cret@127.0.0.1:${lc.ports[0]}` }, { FEED_TOKEN_SECRET: TOKEN_SECRET });
    const text = describeServeConfig(c).join('\n');
    expect(text).toMatch(new RegExp(`redis {5}cluster 127\\.0\\.0\\.1:${lc.ports[0]} \\(password set\\): timelines, recent lists, post bodies`));
    expect(text).toMatch(/bus {7}redis streams .* at redis:\/\/127\.0\.0\.1:6379\/? \(standalone Redis: the event log never goes on the cluster\); outbox relay/);
    expect(text).not.toContain('s3cret');

    // Seeds name one node; REDIS_URL another node of the same cluster: found at start-up.
    const config = loadServeConfig(
      { port: '0', schema, 'key-prefix': keys.prefix, 'stream-prefix': `${keys.prefix}events`, 'redis-cluster': `127.0.0.1:${lc.ports[0]}`, 'redis-url': `redis://127.0.0.1:${lc.ports[2]}` },
      { ...process.env, FEED_TOKEN_SECRET: TOKEN_SECRET, REDIS_CLUSTER_NODES: '' },
    );
    const refused = await startServer(config, { log: () => {} }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(EventLogInputError);
    expect((refused as Error).message).toMatch(/^the event log's REDIS_URL redis:\/\/127\.0\.0\.1:\d+\/? is a Redis Cluster node: Redis Streams needs a standalone Redis there/);
    // No cluster configured, REDIS_URL a cluster node: the caches would fail on MOVED; say what to set.
    const single = loadServeConfig({ port: '0', schema, 'key-prefix': keys.prefix, 'redis-url': `redis://127.0.0.1:${lc.ports[0]}` }, { ...process.env, FEED_TOKEN_SECRET: TOKEN_SECRET, REDIS_CLUSTER_NODES: '' });
    const wrong = await startServer(single, { log: () => {} }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(CacheConfigError);
    expect((wrong as Error).message).toMatch(/is a Redis Cluster node: set REDIS_CLUSTER_NODES \(or --redis-cluster\)/);
  });

  it('feedlab serve --with-worker on the cluster, its event log on this machine\'s Redis: a post reaches a follower\'s feed', async () => {
    const lines: string[] = [];
    const config = loadServeConfig(
      { port: '0', schema, 'key-prefix': keys.prefix, 'stream-prefix': `${keys.prefix}events`, threshold: String(THRESHOLD), 'with-worker': true, 'redis-cluster': lc.seeds },
      { ...process.env, FEED_TOKEN_SECRET: TOKEN_SECRET, FEED_PARTITIONS: '4' },
    );
    const workerEnv = { ...process.env, FEED_STATUS_MS: '0', FEED_POLICY_POLL_MS: '0', FEED_CONSUMER: `c${tag}` };
    const server = await startServer(config, { log: (l) => lines.push(l), env: workerEnv });
    try {
      const http = async (user: number | null, method: string, path: string, body?: unknown) => {
        const headers: Record<string, string> = {};
        if (user !== null) headers.authorization = `Bearer ${signToken(user, TOKEN_SECRET)}`;
        if (body !== undefined) headers['content-type'] = 'application/json';
        const res = await fetch(server.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
        const t = await res.text();
        return { status: res.status, body: t ? JSON.parse(t) : undefined };
      };
      expect(await http(null, 'GET', '/readyz')).toEqual({ status: 200, body: { status: 'ready', redis: true, postgres: true } });
      const { author, followers } = await audience(30);
      // Their timelines exist (a first read each), so the worker writes into them.
      for (const f of followers) expect((await http(f, 'GET', '/v1/feed')).status).toBe(200);
      const made = await http(author, 'POST', '/v1/posts', { text: 'through the log' });
      expect(made.status).toBe(201);
      await vi.waitFor(async () => expect(await cluster.zscore(timelines.key(followers[29]), made.body.id)).toBe(String(made.body.createdAt)), { timeout: 10_000, interval: 50 });
      for (const f of [followers[0], followers[29]]) expect((await http(f, 'GET', '/v1/feed')).body.posts.map((p: PostView) => p.id)).toEqual([made.body.id]);
      const holders = await keysPerNode(followers.map((f) => timelines.key(f)));
      expect(holders.filter((n) => n > 0).length).toBe(3);
      // The event went through this machine's standalone Redis, not the cluster.
      expect(await standalone.exists(...Array.from({ length: 4 }, (_, p) => `${keys.prefix}events:{p${p}}:log`))).toBeGreaterThan(0);
      expect(lines.some((l) => /^worker: ready/.test(l))).toBe(true);
      // /metrics reads the workers' published figures from the cluster (one hash, one slot).
      const scrape = await fetch(server.url + '/metrics');
      expect(scrape.status).toBe(200);
    } finally {
      await server.close();
    }
    // The worker published its metrics on the way out (MULTI on one key of the cluster), without complaint.
    expect(lines.filter((l) => /metrics|redis cluster/.test(l) && !/^worker: (ready|redis )/.test(l))).toEqual([]);
    expect(await cluster.hexists(keys.key('feed:metrics:fanout'), `c${tag}`)).toBe(1);
  });

  it('feedlab worker --redis-cluster: prints the cluster, runs and stops on SIGTERM; an unreachable cluster exits 3 in one line (--fail-fast)', async () => {
    ensureBuilt();
    const args = ['worker', '--schema', schema, '--key-prefix', keys.prefix, '--stream-prefix', `${keys.prefix}events`];
    const env = { ...process.env, FEED_TOKEN_SECRET: TOKEN_SECRET, FEED_PARTITIONS: '4', FEED_STATUS_MS: '0', FEED_POLICY_POLL_MS: '0', REDIS_CLUSTER_NODES: '' };
    const down = await runCli([...args, '--redis-cluster', '127.0.0.1:1', '--fail-fast'], env);
    expect(down.code).toBe(3);
    expect(down.stderr.trim().split('\n').at(-1)).toMatch(/^feedlab: worker: Redis Cluster at 127\.0\.0\.1:1 is unusable \(.*\); start it or set REDIS_CLUSTER_NODES$/);
    const misplaced = await runCli([...args, '--redis-url', `redis://127.0.0.1:${lc.ports[1]}`], { ...env, REDIS_CLUSTER_NODES: lc.seeds });
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toMatch(/--redis-url="redis:\/\/127\.0\.0\.1:\d+\/?" is one of the REDIS_CLUSTER_NODES nodes/);
    const child = new CliChild('feedlab worker', [...args, '--consumer', `w${tag}`], { ...env, REDIS_CLUSTER_NODES: lc.seeds });
    try {
      await child.line(/ready: 1 consumer/, 20_000);
      expect(child.lines.some((l) => /^feedlab worker: redis {5}cluster 127\.0\.0\.1:\d+,127\.0\.0\.1:\d+,127\.0\.0\.1:\d+ \(key prefix "[^"]+"\): timelines/.test(l)), child.tail()).toBe(true);
      expect(child.lines.some((l) => /^feedlab worker: bus .*\(standalone Redis: the event log never goes on the cluster\)/.test(l)), child.tail()).toBe(true);
    } finally {
      expect((await child.stop()).code, child.tail()).toBe(0);
    }
  });
});
