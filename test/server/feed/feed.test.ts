// The read path and the FeedService end to end, through buildApp + fastify.inject with the real
// service, against this machine's Redis and Postgres (REDIS_URL, DATABASE_URL): the documents'
// pagination exercise, deletes and unfollows filtered with the page refilled, the reader's own
// post at once, cold starts rebuilt from Postgres with single-flight, Redis flushed or down, the
// worker's pulled mark honoured, and the auth matrix. The fan-out worker is replaced by a small
// in-test fan-out doing what the worker does (push into the followers' existing timelines at or
// under the threshold, the author's recent list always). Everything lives in a throwaway Postgres
// schema and under a Redis key prefix of its own, both removed afterwards. Without Redis or
// Postgres the tests are skipped with one loud line, except under CI=true where they fail.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { compareNewestFirst, type FeedPosition } from '../../../core/cursor.js';
import { PostIdGenerator, type PostId } from '../../../core/post-id.js';
import { LISTED_TIMING, serverTimingDuration } from '../../../core/server-timing.js';
import { signToken } from '../../../server/auth/token.js';
import { AuthorPostsCache } from '../../../server/cache/author-posts.js';
import { closeRedis, connectRedis, dropKeyspace, keyspace, redisUrlFromEnv } from '../../../server/cache/redis.js';
import { TimelineCache } from '../../../server/cache/timelines.js';
import { PulledAuthorRegistry } from '../../../server/cache/pulled-authors.js';
import { LOAD_REASONS } from '../../../server/feed/followees.js';
import { METRIC_BODY_LOOKUPS, METRIC_FALLBACK_READS, METRIC_FOLLOWEE_LOADS, METRIC_REBUILDS, METRIC_REFILLS } from '../../../server/feed/read-path.js';
import { createFeedService, type RedisFeedService } from '../../../server/feed/service.js';
import { buildApp } from '../../../server/http/app.js';
import { Counter, MetricsRegistry } from '../../../server/http/metrics.js';
import type { PostView } from '../../../server/http/service.js';
import { migrate } from '../../../server/store/migrate.js';
import { createStore, type Store } from '../../../server/store/pool.js';
import { FeedRepository } from '../../../server/store/repository.js';
import { CI, dropPostgresState, dropRedisState, skipWithoutServices } from '../services.js';


const SKIP = await skipWithoutServices('test/server/feed/feed.test.ts');

const tag = `${process.pid}_${randomBytes(3).toString('hex')}`;
const schema = `fl_test_feed_${tag}`;
const keys = keyspace(`feedlab:test:feed:${tag}:`);
const TOKEN_SECRET = 'feed-test-token-secret-0123456789abcdef-0123';
const CURSOR_SECRET = 'feed-test-cursor-secret';
const DAY = 86_400_000;
/** Authors with more followers than this are celebrities (pulled). */
const THRESHOLD = 3;
const LEASE_MS = 7 * DAY;

let store: Store;
let repo: FeedRepository;
let redis: Redis;
let metrics: MetricsRegistry;
let service: RedisFeedService;
let app: FastifyInstance;
let timelines: TimelineCache;
let authorPosts: AuthorPostsCache;
let nextUser = 1;
let nextWorkerId = 100;

function newService(client: Redis, registry: MetricsRegistry): RedisFeedService {
  return createFeedService({
    repo,
    redis: client,
    keys,
    ids: new PostIdGenerator(1),
    threshold: THRESHOLD,
    timelineCap: 800,
    listLength: 100,
    leaseMs: LEASE_MS,
    dormantMs: 14 * DAY,
    metrics: registry,
    // Every read checks the registry of pulled authors (a deployment checks it once a second).
    pulledPollMs: 0,
  });
}

beforeAll(async () => {
  if (SKIP) return;
  store = createStore({ schema, max: 12 });
  await migrate(store);
  repo = new FeedRepository(store);
  redis = await connectRedis({ url: redisUrlFromEnv(), commandTimeoutMs: 2_000 });
  metrics = new MetricsRegistry();
  service = newService(redis, metrics);
  app = buildApp({ service, tokenSecret: TOKEN_SECRET, cursorSecret: CURSOR_SECRET, metrics, logger: false });
  timelines = new TimelineCache(redis, keys, { leaseMs: LEASE_MS });
  authorPosts = new AuthorPostsCache(redis, keys, { leaseMs: LEASE_MS });
});

afterAll(async () => {
  await app?.close();
  await dropRedisState(redis, keys);
  await dropPostgresState(store, schema);
});

// ---- helpers ----

/** Fresh users, last seen at lastSeenMs. */
async function users(n: number, lastSeenMs = Date.now()): Promise<number[]> {
  const ids = Array.from({ length: n }, () => nextUser++);
  await store.pool.query(`INSERT INTO users (id, handle, last_seen_at) SELECT id, 'u' || id, $2 FROM unnest($1::int8[]) id`, [ids, new Date(lastSeenMs)]);
  return ids;
}

/** An author with more than THRESHOLD followers besides `readers`. */
async function celebrity(): Promise<number> {
  const [c, ...fans] = await users(THRESHOLD + 2);
  for (const f of fans) await repo.follow(f, c);
  return c;
}

interface Answer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  headers: Record<string, unknown>;
}

async function call(user: number | null, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, token?: string): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  else if (user !== null) headers.authorization = `Bearer ${signToken(user, TOKEN_SECRET)}`;
  const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined, headers: res.headers };
}

async function page(user: number, limit: number, cursor?: string | null): Promise<{ posts: PostView[]; nextCursor: string | null }> {
  const q = `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
  const res = await call(user, 'GET', `/v1/feed?${q}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Every post of the reader's feed, paging `limit` at a time; and the page sizes. */
async function pageAll(user: number, limit: number): Promise<{ ids: PostId[]; sizes: number[] }> {
  const ids: PostId[] = [];
  const sizes: number[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 1000; i++) {
    const p = await page(user, limit, cursor);
    ids.push(...p.posts.map((x) => x.id));
    sizes.push(p.posts.length);
    cursor = p.nextCursor;
    if (cursor === null) return { ids, sizes };
  }
  throw new Error('paging did not end');
}

async function follow(user: number, followee: number): Promise<void> {
  const res = await call(user, 'PUT', `/v1/follows/${followee}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** What the fan-out worker does with a committed post (at-least-once, idempotent): push at or
 * under the threshold, the recent list always (when present), the pulled mark when pulled. */
async function fanout(authorId: number, post: FeedPosition): Promise<void> {
  const followers = (await repo.followersPage(authorId, null, 100_000)).ids;
  if ((await repo.followerCount(authorId)) <= THRESHOLD) await timelines.push(followers, post);
  else await new PulledAuthorRegistry(redis, keys).mark(authorId, Date.now() + LEASE_MS);
  await authorPosts.add(authorId, post);
}

/** A post made through the repository with its own generator (a fixed clock when given), fanned out. */
async function posted(authorId: number, text: string, clock?: () => number): Promise<FeedPosition> {
  const created = await repo.createPost(authorId, text, new PostIdGenerator(nextWorkerId++ % 1024, clock));
  const post = { id: created.id, createdAt: created.createdAt };
  await fanout(authorId, post);
  return post;
}

/** Every live post of the reader and the authors they follow, newest first: what the feed must show. */
async function truth(user: number): Promise<PostId[]> {
  const r = await store.pool.query<{ id: string }>(
    `SELECT id::text AS id FROM posts
     WHERE deleted_at IS NULL AND (author_id = $1 OR author_id IN (SELECT followee_id FROM follows WHERE follower_id = $1))
     ORDER BY created_at DESC, id DESC`,
    [user],
  );
  return r.rows.map((row) => row.id);
}

async function counter(name: string, labels?: Record<string, string>): Promise<number> {
  return (await (metrics.get(name) as Counter | undefined)?.get(labels)) ?? 0;
}

/** Followee sets loaded from Postgres so far, whatever the reason. */
const followeeLoads = async () => { let n = 0; for (const reason of LOAD_REASONS) n += await counter(METRIC_FOLLOWEE_LOADS, { reason }); return n; };

const sortNewestFirst = (posts: FeedPosition[]) => [...posts].sort(compareNewestFirst).map((p) => p.id);

// ---- tests ----

describe.skipIf(SKIP)('home feed through the real service', () => {
  describe.each([
    ['pairwise in the same millisecond', false],
    ['all thirty in one millisecond', true],
  ])('the documents\' pagination exercise, %s', (_name, oneMs) => {
    it('pages 15 pushed and 15 pulled posts 10 at a time: 30 distinct posts in order, none repeated or skipped', async () => {
      const [reader, regular] = await users(2);
      const celeb = await celebrity();
      await follow(reader, regular);
      await follow(reader, celeb);
      expect(await repo.followerCount(regular)).toBeLessThanOrEqual(THRESHOLD);
      expect(await repo.followerCount(celeb)).toBeGreaterThan(THRESHOLD);
      // The first read makes the timeline and the lists exist, so the fan-out below writes into them.
      expect((await page(reader, 10)).posts).toEqual([]);

      const base = Date.now() - 60_000;
      let now = base;
      const clock = () => now;
      const posts: FeedPosition[] = [];
      for (let i = 0; i < 15; i++) {
        now = oneMs ? base : base + i;
        posts.push(await posted(regular, `regular ${i}`, clock));
        posts.push(await posted(celeb, `celebrity ${i}`, clock));
      }
      const expected = sortNewestFirst(posts);
      expect(new Set(posts.map((p) => p.createdAt)).size).toBe(oneMs ? 1 : 15);
      // The regular author's posts went into the timeline, the celebrity's only into its list.
      expect(await timelines.size(reader)).toBe(15);
      expect(await authorPosts.size(celeb)).toBe(15);

      const byTen = await pageAll(reader, 10);
      expect(byTen.ids).toEqual(expected);
      expect(new Set(byTen.ids).size).toBe(30);
      expect(byTen.sizes.slice(0, 3)).toEqual([10, 10, 10]);
      expect(byTen.sizes.slice(3).every((n) => n === 0)).toBe(true);

      const large = await page(reader, 100);
      expect(large.posts.map((p) => p.id)).toEqual(expected);
      expect(large.nextCursor).toBeNull();
      expect((await pageAll(reader, 1)).ids).toEqual(expected);
      expect((await pageAll(reader, 7)).ids).toEqual(expected);

      // Hydrated: every post carries its author and text.
      const texts = new Map(large.posts.map((p) => [p.id, `${p.authorId}:${p.text}`]));
      expect(texts.get(posts[0].id)).toBe(`${regular}:regular 0`);
      expect(texts.get(posts[1].id)).toBe(`${celeb}:celebrity 0`);
    });
  });

  it('drops a deleted post and refills the page, from the tombstone and from Postgres alike', async () => {
    const [reader, author] = await users(2);
    await follow(reader, author);
    await page(reader, 10);
    const posts: FeedPosition[] = [];
    for (let i = 0; i < 30; i++) posts.push(await posted(author, `post ${i}`));
    const expected = sortNewestFirst(posts);
    expect((await page(reader, 10)).posts.map((p) => p.id)).toEqual(expected.slice(0, 10));

    // One deleted through the API: the page holds the next post instead.
    const gone = expected[2];
    expect((await call(author, 'DELETE', `/v1/posts/${gone}`)).status).toBe(204);
    expect(await redis.zscore(timelines.key(reader), gone)).not.toBeNull(); // still in the timeline
    const after = await page(reader, 10);
    expect(after.posts.map((p) => p.id)).toEqual(expected.filter((id) => id !== gone).slice(0, 10));

    // Without the tombstone (bodies evicted), Postgres says it is deleted.
    await redis.del(...expected.map((id) => `${keys.prefix}post:${id}`));
    expect((await page(reader, 10)).posts.map((p) => p.id)).toEqual(expected.filter((id) => id !== gone).slice(0, 10));

    // Fifteen of the newest twenty deleted: the slices run out, the lists are read on, and the
    // page is still full and in order.
    const many = expected.slice(0, 20).filter((_, i) => i % 4 !== 0);
    for (const id of many) if (id !== gone) await service.deletePost(author, id);
    const refillsBefore = (await counter(METRIC_REFILLS));
    const live = expected.filter((id) => id !== gone && !many.includes(id));
    const full = await page(reader, 10);
    expect(full.posts.map((p) => p.id)).toEqual(live.slice(0, 10));
    expect((await counter(METRIC_REFILLS))).toBeGreaterThan(refillsBefore);
    expect((await pageAll(reader, 4)).ids).toEqual(live);
    expect((await pageAll(reader, 1)).ids).toEqual(live);
  });

  it('drops a deleted celebrity post from the celebrity\'s list', async () => {
    const [reader] = await users(1);
    const celeb = await celebrity();
    await follow(reader, celeb);
    await page(reader, 5);
    const posts: FeedPosition[] = [];
    for (let i = 0; i < 6; i++) posts.push(await posted(celeb, `c ${i}`));
    const expected = sortNewestFirst(posts);
    expect((await call(celeb, 'DELETE', `/v1/posts/${expected[0]}`)).status).toBe(204);
    expect(await redis.zscore(authorPosts.key(celeb), expected[0])).toBeNull();
    expect((await page(reader, 5)).posts.map((p) => p.id)).toEqual(expected.slice(1, 6));
  });

  it('shows a follow or unfollow made through another API instance on the next read here, with the followee set cached', async () => {
    const [reader, regular] = await users(2);
    const celeb = await celebrity();
    await follow(reader, regular);
    const c1 = await posted(celeb, 'c1');
    const r1 = await posted(regular, 'r1');
    expect((await page(reader, 10)).posts.map((p) => p.id)).toEqual([r1.id]);

    // Another instance (its own process-local caches), the default 5-minute followee TTL here.
    const other = newService(redis, new MetricsRegistry());
    const loads = () => counter(METRIC_FOLLOWEE_LOADS, { reason: 'token' });
    const before = await loads();
    await other.follow(reader, celeb);
    expect((await page(reader, 10)).posts.map((p) => p.id)).toEqual(sortNewestFirst([r1, c1]));
    expect(await loads()).toBe(before + 1);
    // Unchanged token: the set stays cached.
    await page(reader, 10);
    expect(await loads()).toBe(before + 1);

    // An unfollow there: the celebrity's list is no longer merged here, and an entry of the
    // regular author pushed after the other instance's cleanup is filtered out.
    await other.unfollow(reader, celeb);
    await other.unfollow(reader, regular);
    const late = await repo.createPost(regular, 'late', new PostIdGenerator(nextWorkerId++ % 1024));
    await timelines.push([reader], late);
    expect((await page(reader, 10)).posts).toEqual([]);
  });

  it('stops showing an unfollowed author\'s posts, pushed or pulled, also one pushed during the unfollow', async () => {
    const [reader, regular] = await users(2);
    const celeb = await celebrity();
    await follow(reader, regular);
    await follow(reader, celeb);
    await page(reader, 10);
    const r1 = await posted(regular, 'r1');
    const c1 = await posted(celeb, 'c1');
    const made = (await call(reader, 'POST', '/v1/posts', { text: 'mine' })).body;
    const mine = made.id as PostId;
    const minePos = { id: mine, createdAt: made.createdAt as number };
    expect((await page(reader, 10)).posts.map((p) => p.id)).toEqual(sortNewestFirst([r1, c1, minePos]));

    expect((await call(reader, 'DELETE', `/v1/follows/${regular}`)).body).toEqual({ followeeId: regular, following: false, changed: true });
    expect(await redis.zscore(timelines.key(reader), r1.id)).toBeNull(); // removed from the timeline
    expect((await page(reader, 10)).posts.map((p) => p.id)).toEqual(sortNewestFirst([c1, minePos]));

    // A fan-out that read the follower list before the unfollow writes after it.
    const late = await repo.createPost(regular, 'late', new PostIdGenerator(nextWorkerId++ % 1024));
    await timelines.push([reader], late);
    const shown = (await page(reader, 10)).posts.map((p) => p.id);
    expect(shown).not.toContain(late.id);
    // ... and the stale entry is taken out of the timeline once a fresh followee set confirms it.
    await vi.waitFor(async () => expect(await redis.zscore(timelines.key(reader), late.id)).toBeNull(), { timeout: 2_000 });

    expect((await call(reader, 'DELETE', `/v1/follows/${celeb}`)).status).toBe(200);
    expect((await page(reader, 10)).posts.map((p) => p.id)).toEqual([mine]);
    // Idempotent.
    expect((await call(reader, 'DELETE', `/v1/follows/${celeb}`)).body.changed).toBe(false);
  });

  it('shows the reader\'s own new post at once, with no fan-out, whether their list exists or not', async () => {
    const [reader, author] = await users(2);
    await follow(reader, author);
    const a1 = await posted(author, 'a1');
    await page(reader, 10); // the lists exist now

    const first = await call(reader, 'POST', '/v1/posts', { text: 'hello, me' });
    expect(first.status).toBe(201);
    expect(first.body.authorId).toBe(reader);
    const feed1 = await page(reader, 10);
    expect(feed1.posts[0]).toEqual({ id: first.body.id, authorId: reader, text: 'hello, me', createdAt: first.body.createdAt });
    expect(feed1.posts.map((p) => p.id)).toEqual([first.body.id, a1.id]);

    // The own list missing (expired, evicted): rebuilt from Postgres, the post in it.
    await redis.del(authorPosts.key(reader));
    const second = await call(reader, 'POST', '/v1/posts', { text: 'again' });
    expect((await page(reader, 10)).posts.map((p) => p.id)).toEqual([second.body.id, first.body.id, a1.id]);
  });

  it("says in each 201 how long after the post's creation its author's list held it, and nothing when the list is missing", async () => {
    const [author] = await users(1);
    await page(author, 10); // the own list exists now
    const before = Date.now();
    const listed = await call(author, 'POST', '/v1/posts', { text: 'timed' });
    const wall = Date.now() - before;
    expect(listed.status).toBe(201);
    const ms = serverTimingDuration(String(listed.headers['server-timing']), LISTED_TIMING);
    // the commit and the list add took some time, no more than the whole request
    expect(ms).toBeGreaterThan(0);
    expect(ms).toBeLessThanOrEqual(wall + 1);
    expect(await redis.zscore(authorPosts.key(author), listed.body.id)).not.toBeNull();
    // no list, nothing added: the post is not delivered through it, and no time is claimed
    await redis.del(authorPosts.key(author));
    const unlisted = await call(author, 'POST', '/v1/posts', { text: 'not timed' });
    expect(unlisted.status).toBe(201);
    expect(unlisted.headers['server-timing']).toBeUndefined();
  });

  it('rebuilds a missing timeline from Postgres with no acknowledged post missing', async () => {
    const [reader, a, b] = await users(3);
    const celeb = await celebrity();
    for (const f of [a, b, celeb]) await follow(reader, f);
    await page(reader, 10);
    for (let i = 0; i < 12; i++) {
      await posted(a, `a${i}`);
      await posted(b, `b${i}`);
      if (i % 3 === 0) await posted(celeb, `c${i}`);
    }
    await call(reader, 'POST', '/v1/posts', { text: 'mine' });
    const want = await truth(reader);
    expect((await pageAll(reader, 10)).ids).toEqual(want);

    const rebuilds = (await counter(METRIC_REBUILDS, { list: 'timeline' }));
    await redis.del(timelines.key(reader));
    expect((await pageAll(reader, 10)).ids).toEqual(want);
    expect((await counter(METRIC_REBUILDS, { list: 'timeline' }))).toBe(rebuilds + 1);
    expect(await timelines.size(reader)).toBe(24);
    expect(await redis.pttl(timelines.key(reader))).toBeGreaterThan(LEASE_MS - 60_000); // leased

    // A missing celebrity list likewise.
    await redis.del(authorPosts.key(celeb));
    expect((await pageAll(reader, 10)).ids).toEqual(want);
    expect(await authorPosts.size(celeb)).toBe(4);
  });

  it('makes one rebuild for 20 concurrent reads of a missing timeline', async () => {
    const [reader, a] = await users(2);
    await follow(reader, a);
    await page(reader, 5);
    for (let i = 0; i < 8; i++) await posted(a, `a${i}`);
    const want = await truth(reader);
    await redis.del(timelines.key(reader));

    const spy = vi.spyOn(repo, 'rebuildTimeline');
    const rebuilds = (await counter(METRIC_REBUILDS, { list: 'timeline' }));
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, () => page(reader, 5)));
      expect(spy).toHaveBeenCalledTimes(1);
      expect((await counter(METRIC_REBUILDS, { list: 'timeline' }))).toBe(rebuilds + 1); // the metric counts it once too
      for (const answer of answers) {
        expect(answer.posts.map((p) => p.id)).toEqual(want.slice(0, 5));
        expect(answer.nextCursor).toBe(answers[0].nextCursor);
      }
    } finally {
      spy.mockRestore();
    }
  });

  it('brings every feed back from Postgres after Redis lost everything (only this test\'s prefix flushed)', async () => {
    const readers = await users(THRESHOLD); // a and b stay under the threshold: pushed
    const [a, b] = await users(2);
    const celeb = await celebrity();
    for (const [i, r] of readers.entries()) {
      await follow(r, a);
      if (i % 2 === 0) await follow(r, b);
      if (i < 3) await follow(r, celeb);
      await page(r, 10);
    }
    for (let i = 0; i < 10; i++) {
      await posted(a, `a${i}`);
      await posted(b, `b${i}`);
      await posted(celeb, `c${i}`);
    }
    await call(readers[1], 'POST', '/v1/posts', { text: 'own post' });
    const gone = (await truth(readers[0]))[3];
    const author = (await repo.getPosts([gone])).get(gone)!.authorId;
    await call(author, 'DELETE', `/v1/posts/${gone}`);

    const want = new Map<number, PostId[]>();
    for (const r of readers) {
      want.set(r, await truth(r));
      expect((await pageAll(r, 6)).ids).toEqual(want.get(r));
    }
    expect(await dropKeyspace(redis, keys)).toBeGreaterThan(0);
    for (const r of readers) expect((await pageAll(r, 6)).ids).toEqual(want.get(r));
    for (const r of readers) expect((await page(r, 100)).posts.map((p) => p.id)).toEqual(want.get(r));
  });

  it('answers from Postgres alone while Redis is down, with the same pages and cursors', async () => {
    const [reader, a] = await users(2);
    const celeb = await celebrity();
    await follow(reader, a);
    await follow(reader, celeb);
    await page(reader, 5);
    for (let i = 0; i < 7; i++) {
      await posted(a, `a${i}`);
      await posted(celeb, `c${i}`);
    }
    await call(reader, 'POST', '/v1/posts', { text: 'mine' });
    const deleted = (await truth(reader))[1];
    await call((await repo.getPosts([deleted])).get(deleted)!.authorId, 'DELETE', `/v1/posts/${deleted}`);
    const want = await truth(reader);

    // A second instance whose Redis connection is gone.
    const down = await connectRedis({ url: redisUrlFromEnv(), reconnect: false });
    const registry = new MetricsRegistry();
    const offline = newService(down, registry);
    const offlineApp = buildApp({ service: offline, tokenSecret: TOKEN_SECRET, cursorSecret: CURSOR_SECRET, metrics: registry, logger: false });
    down.disconnect();
    try {
      const ids: PostId[] = [];
      let cursor: string | null = null;
      do {
        const res = await offlineApp.inject({
          method: 'GET',
          url: `/v1/feed?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          headers: { authorization: `Bearer ${signToken(reader, TOKEN_SECRET)}` },
        });
        expect(res.statusCode, res.body).toBe(200);
        const body = res.json() as { posts: PostView[]; nextCursor: string | null };
        ids.push(...body.posts.map((p) => p.id));
        cursor = body.nextCursor;
      } while (cursor !== null);
      expect(ids).toEqual(want);
      expect(await (registry.get(METRIC_FALLBACK_READS) as Counter).get()).toBeGreaterThan(0);

      // A cursor issued by the cached path goes on in the fallback, and back.
      const first = await page(reader, 3);
      const res = await offlineApp.inject({
        method: 'GET',
        url: `/v1/feed?limit=3&cursor=${encodeURIComponent(first.nextCursor!)}`,
        headers: { authorization: `Bearer ${signToken(reader, TOKEN_SECRET)}` },
      });
      expect((res.json() as { posts: PostView[] }).posts.map((p) => p.id)).toEqual(want.slice(3, 6));

      // Posting still works (Postgres), and the post is in the fallback feed.
      const made = await offlineApp.inject({
        method: 'POST',
        url: '/v1/posts',
        headers: { authorization: `Bearer ${signToken(reader, TOKEN_SECRET)}` },
        payload: { text: 'while Redis is down' },
      });
      expect(made.statusCode).toBe(201);
      expect(await offline.homeFeed(reader, { limit: 1, cursor: null })).toMatchObject({ posts: [{ id: made.json().id }] });

      // Readiness tells.
      expect(await offline.ready()).toEqual({ redis: false, postgres: true });
      expect((await offlineApp.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
    } finally {
      await offlineApp.close();
    }
  });

  it('falls back to Postgres when Redis fails in the middle of a read', async () => {
    const [reader, a] = await users(2);
    await follow(reader, a);
    await page(reader, 5);
    for (let i = 0; i < 4; i++) await posted(a, `a${i}`);
    const want = await truth(reader);

    const flaky = await connectRedis({ url: redisUrlFromEnv(), reconnect: false });
    const registry = new MetricsRegistry();
    const warnings: string[] = [];
    const other = createFeedService({
      repo, redis: flaky, keys, ids: new PostIdGenerator(2), threshold: THRESHOLD, timelineCap: 800, listLength: 100,
      leaseMs: LEASE_MS, dormantMs: 14 * DAY, metrics: registry, onWarning: (l) => warnings.push(l),
    });
    try {
      // Connected, but every command dies as on a dropped connection.
      vi.spyOn(flaky, 'sendCommand').mockImplementation((command) => {
        command.reject(new Error('Connection is closed.'));
        return command.promise;
      });
      const answer = await other.homeFeed(reader, { limit: 10, cursor: null });
      expect(answer.posts.map((p) => p.id)).toEqual(want);
      expect(await (registry.get(METRIC_FALLBACK_READS) as Counter).get()).toBe(1);
      expect(warnings.some((w) => /Redis unavailable \(Connection is closed\.\): answering home feeds from Postgres/.test(w))).toBe(true);
      // The next reads within the back-off do not try Redis at all.
      const tries = vi.mocked(flaky.sendCommand).mock.calls.length;
      expect((await other.homeFeed(reader, { limit: 2, cursor: null })).posts.map((p) => p.id)).toEqual(want.slice(0, 2));
      expect(vi.mocked(flaky.sendCommand).mock.calls.length).toBe(tries);
    } finally {
      vi.restoreAllMocks();
      await closeRedis(flaky);
    }
  });

  it('answers 503 with Retry-After, quickly, when Postgres is down', async () => {
    const deadStore = createStore({ schema, databaseUrl: 'postgres://root@127.0.0.1:1/postgres', max: 2, connectTimeoutMs: 500 });
    const deadRepo = new FeedRepository(deadStore);
    const registry = new MetricsRegistry();
    const dead = createFeedService({
      repo: deadRepo, redis, keys, ids: new PostIdGenerator(3), threshold: THRESHOLD, timelineCap: 800, listLength: 100,
      leaseMs: LEASE_MS, dormantMs: 14 * DAY, metrics: registry,
    });
    const deadApp = buildApp({ service: dead, tokenSecret: TOKEN_SECRET, cursorSecret: CURSOR_SECRET, metrics: registry, logger: false });
    try {
      const auth = { authorization: `Bearer ${signToken(1, TOKEN_SECRET)}` };
      const began = Date.now();
      const posting = await deadApp.inject({ method: 'POST', url: '/v1/posts', headers: auth, payload: { text: 'lost?' } });
      expect(posting.statusCode).toBe(503);
      expect(posting.headers['retry-after']).toBe('1');
      expect(posting.json()).toEqual({ error: 'the database is unavailable; retry shortly' });
      expect((await deadApp.inject({ method: 'GET', url: '/v1/feed', headers: auth })).statusCode).toBe(503);
      expect(Date.now() - began).toBeLessThan(3_000);
      expect(await dead.ready()).toEqual({ redis: true, postgres: false });
    } finally {
      await deadApp.close();
      await deadStore.pool.end();
    }
  });

  it('drops a returning dormant reader\'s stale timeline and rebuilds it', async () => {
    const [author] = await users(1);
    const [dormant] = await users(1, Date.now() - 30 * DAY);
    await repo.follow(dormant, author);
    const old = await posted(author, 'before'); // no timeline: nothing pushed
    // A timeline still leased but stale: the worker skipped the dormant reader since.
    await timelines.rebuild(dormant, () => [old]);
    const missed = await repo.createPost(author, 'while away', new PostIdGenerator(nextWorkerId++ % 1024));
    expect((await page(dormant, 10)).posts.map((p) => p.id)).toEqual([missed.id, old.id]);
    const seen = (await repo.getUser(dormant))!.lastSeenAt;
    expect(Date.now() - seen).toBeLessThan(60_000);
  });

  it('backfills a pushed followee\'s recent posts into the timeline on follow', async () => {
    const [reader, a] = await users(2);
    await page(reader, 5); // the timeline exists (empty)
    const posts: FeedPosition[] = [];
    for (let i = 0; i < 4; i++) posts.push(await posted(a, `a${i}`));
    await follow(reader, a);
    expect(await timelines.size(reader)).toBe(4);
    expect((await page(reader, 10)).posts.map((p) => p.id)).toEqual(sortNewestFirst(posts));
  });

  it('keeps a follow\'s backfill that another instance wrote just after this instance loaded the followee set', async () => {
    const [reader, author] = await users(2);
    const post = await posted(author, 'before the follow');
    await page(reader, 5); // this instance caches the reader's (empty) followee set
    const other = newService(redis, new MetricsRegistry());
    await other.follow(reader, author); // another instance: commit, then backfill
    expect(await timelines.size(reader)).toBe(1);
    // Within a second this instance's set predates the follow: the entry may be left off this page,
    // but it must not be removed from the timeline for good.
    await page(reader, 5);
    expect(await timelines.size(reader)).toBe(1);
    const fresh = newService(redis, new MetricsRegistry());
    expect((await fresh.homeFeed(reader, { limit: 5, cursor: null })).posts.map((p) => p.id)).toEqual([post.id]);
  });

  it('backfills a follow made while the reader\'s timeline is being rebuilt', async () => {
    const [reader, author] = await users(2);
    const post = await posted(author, 'followed mid-rebuild');
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // A rebuild whose Postgres snapshot was taken before the follow, held before it writes.
    const rebuilding = timelines.rebuild(reader, async () => {
      await gate;
      return [];
    });
    await new Promise((r) => setTimeout(r, 50));
    await follow(reader, author);
    release();
    await rebuilding;
    expect(await redis.zrange(timelines.key(reader), 0, -1)).toContain(post.id);
    expect((await page(reader, 5)).posts.map((p) => p.id)).toEqual([post.id]);
  });

  it('merges the list of an author the worker marked pulled although under the threshold, into a followee set cached before the mark', async () => {
    const [reader, author] = await users(2);
    await follow(reader, author);
    await page(reader, 5);
    const loads = (await followeeLoads());
    // The post went only into the author's recent list (pulled when the threshold was lower),
    // and the author carries the worker's mark until its next push backfills.
    const created = await repo.createPost(author, 'pulled', new PostIdGenerator(nextWorkerId++ % 1024));
    await authorPosts.add(author, created);
    const registry = new PulledAuthorRegistry(redis, keys);
    await registry.mark(author, Date.now() + LEASE_MS);
    expect((await page(reader, 5)).posts.map((p) => p.id)).toEqual([created.id]);
    // The reader's followee set, loaded before the mark, was not loaded again.
    expect((await followeeLoads())).toBe(loads);
  });

  it('at threshold 0 (the pull policy) merges every followee\'s list without asking the registry of pulled authors', async () => {
    const [reader, author] = await users(2);
    await follow(reader, author);
    const created = await repo.createPost(author, 'only in the list', new PostIdGenerator(nextWorkerId++ % 1024));
    const pullAll = createFeedService({
      repo, redis, keys, ids: new PostIdGenerator(4), threshold: 0, timelineCap: 800, listLength: 100,
      leaseMs: LEASE_MS, dormantMs: 14 * DAY, metrics: new MetricsRegistry(),
    });
    const registry = vi.spyOn(pullAll.reads.pulledAuthors, 'current');
    const page = await pullAll.homeFeed(reader, { limit: 5, cursor: null });
    expect(page.posts.map((p) => p.id)).toEqual([created.id]);
    expect(registry).not.toHaveBeenCalled();
    registry.mockRestore();
  });

  it('hydrates from the body cache after the first read', async () => {
    const [reader, a] = await users(2);
    await follow(reader, a);
    await page(reader, 5);
    for (let i = 0; i < 5; i++) await posted(a, `a${i}`);
    await page(reader, 5);
    const hits = (await counter(METRIC_BODY_LOOKUPS, { result: 'hit' }));
    const misses = (await counter(METRIC_BODY_LOOKUPS, { result: 'miss' }));
    await page(reader, 5);
    expect((await counter(METRIC_BODY_LOOKUPS, { result: 'hit' }))).toBe(hits + 5);
    expect((await counter(METRIC_BODY_LOOKUPS, { result: 'miss' }))).toBe(misses);
  });

  it('pages an author\'s posts by cursor', async () => {
    const [author, viewer] = await users(2);
    const posts: FeedPosition[] = [];
    const ms = Date.now() - 10_000;
    for (let i = 0; i < 7; i++) posts.push(await posted(author, `p${i}`, () => ms));
    const ids: PostId[] = [];
    let cursor: string | null = null;
    do {
      const res = await call(viewer, 'GET', `/v1/users/${author}/posts?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      ids.push(...(res.body.posts as PostView[]).map((p) => p.id));
      cursor = res.body.nextCursor;
    } while (cursor !== null);
    expect(ids).toEqual(sortNewestFirst(posts));
    expect((await call(viewer, 'GET', `/v1/users/999999999/posts`)).status).toBe(404);
  });

  it('is ready when Redis and Postgres answer', async () => {
    expect(await call(null, 'GET', '/readyz')).toMatchObject({ status: 200, body: { status: 'ready', redis: true, postgres: true } });
  });
});

describe.skipIf(SKIP)('the auth matrix through the real service', () => {
  it('lets nobody post, read or delete as someone else', async () => {
    const [alice, bob] = await users(2);
    const stranger = 987_654_321; // a valid token for a user that does not exist
    const made = await call(alice, 'POST', '/v1/posts', { text: 'alice writes' });
    expect(made.status).toBe(201);
    const id = made.body.id as PostId;

    // No token, a bad token, a token of another secret: 401 on every /v1 route.
    const forged = signToken(alice, 'another-secret-0123456789abcdef-0123456789');
    for (const [method, url, payload] of [
      ['GET', '/v1/feed', undefined],
      ['POST', '/v1/posts', { text: 'x' }],
      ['DELETE', `/v1/posts/${id}`, undefined],
      ['PUT', `/v1/follows/${bob}`, undefined],
      ['DELETE', `/v1/follows/${bob}`, undefined],
      ['GET', `/v1/users/${alice}/posts`, undefined],
    ] as const) {
      expect((await call(null, method, url, payload)).status, `${method} ${url} without a token`).toBe(401);
      expect((await call(null, method, url, payload, 'not.a.token')).status).toBe(401);
      expect((await call(null, method, url, payload, forged)).status).toBe(401);
    }

    // Bob cannot delete Alice's post; it stays.
    const del = await call(bob, 'DELETE', `/v1/posts/${id}`);
    expect(del.status).toBe(403);
    expect(del.body.error).toMatch(/not yours/);
    expect((await call(bob, 'GET', `/v1/users/${alice}/posts`)).body.posts.map((p: PostView) => p.id)).toEqual([id]);

    // Nobody posts as someone else: the author is the token's subject, an authorId field is refused.
    expect((await call(bob, 'POST', '/v1/posts', { text: 'as alice?', authorId: alice })).status).toBe(400);
    const bobs = await call(bob, 'POST', '/v1/posts', { text: 'bob writes' });
    expect(bobs.body.authorId).toBe(bob);

    // Each reads only their own home feed: Bob (not following Alice) does not see her post.
    expect((await page(bob, 10)).posts.map((p) => p.id)).toEqual([bobs.body.id]);
    expect((await page(alice, 10)).posts.map((p) => p.id)).toEqual([id]);
    expect((await call(bob, 'GET', `/v1/feed?user=${alice}`)).status).toBe(400);

    // Unknown users and posts, self-follows, bad cursors.
    expect((await call(stranger, 'GET', '/v1/feed')).status).toBe(404);
    expect((await call(stranger, 'POST', '/v1/posts', { text: 'ghost' })).status).toBe(404);
    expect((await call(alice, 'PUT', `/v1/follows/${stranger}`)).status).toBe(404);
    expect((await call(alice, 'PUT', `/v1/follows/${alice}`)).status).toBe(400);
    expect((await call(alice, 'DELETE', '/v1/posts/1')).status).toBe(404);
    expect((await call(alice, 'GET', '/v1/feed?cursor=AAAA')).status).toBe(400);

    // Alice deletes her own; twice is a 404.
    expect((await call(alice, 'DELETE', `/v1/posts/${id}`)).status).toBe(204);
    expect((await call(alice, 'DELETE', `/v1/posts/${id}`)).status).toBe(404);
    expect((await page(alice, 10)).posts).toEqual([]);
  });
});
