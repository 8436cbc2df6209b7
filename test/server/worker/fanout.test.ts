// The fan-out worker against this machine's Redis and Postgres (REDIS_URL, DATABASE_URL): pushes
// reach every non-dormant follower's existing timeline once and no dormant one, celebrities go
// only to their recent list, a threshold changed between two posts moves the second to the other
// path with nothing lost or doubled on read, redelivery writes nothing twice, deletes leave the
// list, the reader-side cap decides the same way every time; and the throughput of one worker.
// Everything lives in a throwaway Postgres schema and under a Redis key prefix of its own, both
// removed afterwards. Without Redis or Postgres the tests are skipped with one loud line, except
// under CI=true where they fail.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePolicy, type FanoutPolicy } from '../../../core/fanout-policy.js';
import { mergeFeed } from '../../../core/feed-merge.js';
import { PostIdGenerator } from '../../../core/post-id.js';
import { AuthorPostsCache } from '../../../server/cache/author-posts.js';
import { PostBodyCache } from '../../../server/cache/post-bodies.js';
import { TIMELINE_WRITES_KEY, TIMELINE_WRITES_RETENTION_MS } from '../../../core/keys.js';
import type { FeedPosition } from '../../../core/cursor.js';
import { EMPTY_SENTINEL, rebuildKeys, SENTINEL_SCORE } from '../../../server/cache/post-list.js';
import { connectRedis, keyspace, redisUrlFromEnv } from '../../../server/cache/redis.js';
import { TimelineCache, type PushOptions, type PushResult, type UserId } from '../../../server/cache/timelines.js';
import type { RedisLike } from '../../../server/cache/redis-like.js';
import type { PostEvent } from '../../../server/events/event-log.js';
import type { CachedBody } from '../../../server/feed/hydration.js';
import { migrate } from '../../../server/store/migrate.js';
import { createStore, type Store } from '../../../server/store/pool.js';
import { FeedRepository } from '../../../server/store/repository.js';
import { FanoutWorker, type FanoutWorkerOptions } from '../../../server/worker/fanout.js';
import { PulledAuthorRegistry } from '../../../server/cache/pulled-authors.js';
import { MemoryMetrics } from '../../../server/worker/metrics.js';
import { CI, dropPostgresState, dropRedisState, skipWithoutServices } from '../services.js';


const SKIP = await skipWithoutServices('test/server/worker/fanout.test.ts');

const tag = `${process.pid}_${randomBytes(3).toString('hex')}`;
const schema = `fl_test_worker_${tag}`;
const keys = keyspace(`feedlab:test:worker:${tag}:`);
const DAY = 86_400_000;
const base: FanoutPolicy = { kind: 'threshold', threshold: 25_000, skipDormant: true, readerCap: 2_000, backlogBound: 1e6, minThreshold: 1_000 };
const policy = (spec: string) => parsePolicy(spec, base);

let store: Store;
let repo: FeedRepository;
let redis: Redis;
let timelines: TimelineCache;
let authorPosts: AuthorPostsCache;
const ids = new PostIdGenerator(7);
let nextUser = 1;

interface Audience {
  author: number;
  followers: number[];
  active: number[];
  dormant: number[];
  /** Active followers given no cached timeline. */
  uncached: number[];
}

/**
 * An author with n followers; every dormantEvery-th follower last seen 30 days ago; every
 * uncachedEvery-th active one without a timeline; the others with an existing (empty) timeline.
 */
async function audience(n: number, opts: { dormantEvery?: number; uncachedEvery?: number; followeeCount?: number } = {}): Promise<Audience> {
  const author = nextUser;
  const first = author + 1;
  nextUser += n + 1;
  const now = Date.now();
  const dormantEvery = opts.dormantEvery ?? 0;
  await store.pool.query(
    `INSERT INTO users (id, handle, last_seen_at, follower_count, followee_count)
     SELECT $1::int8, 'u' || $1::int8, now(), $2::int8, 0
     UNION ALL
     SELECT g, 'u' || g, CASE WHEN $3::int > 0 AND (g - $4::int8) % $3::int = $3::int - 1 THEN $5::timestamptz ELSE now() END, 0, $6::int8
     FROM generate_series($4::int8, $4::int8 + $2::int8 - 1) g`,
    [author, n, dormantEvery, first, new Date(now - 30 * DAY), opts.followeeCount ?? 1],
  );
  await store.pool.query(`INSERT INTO follows (follower_id, followee_id) SELECT g, $1 FROM generate_series($2::int8, $2::int8 + $3::int8 - 1) g`, [author, first, n]);
  const followers = Array.from({ length: n }, (_, i) => first + i);
  const dormant = followers.filter((_, i) => dormantEvery > 0 && i % dormantEvery === dormantEvery - 1);
  const dormantSet = new Set(dormant);
  const activeAll = followers.filter((f) => !dormantSet.has(f));
  const uncached = opts.uncachedEvery ? activeAll.filter((_, i) => i % opts.uncachedEvery! === 0) : [];
  const uncachedSet = new Set(uncached);
  // Existing (empty) timelines, as a rebuild leaves them: the sentinel, with the lease.
  const p = redis.pipeline();
  for (const f of followers) if (!uncachedSet.has(f)) p.zadd(timelines.key(f), SENTINEL_SCORE, EMPTY_SENTINEL).pexpire(timelines.key(f), 7 * DAY);
  await p.exec();
  return { author, followers, active: activeAll, dormant, uncached };
}

async function post(author: number, text = 'hello'): Promise<PostEvent> {
  const created = await repo.createPost(author, text, ids);
  return { kind: 'PostCreated', postId: created.id, authorId: author, createdAt: created.createdAt };
}

/** Which of these users' timelines hold the post: a score per user, null when absent. */
async function scores(users: number[], postId: string): Promise<(string | null)[]> {
  const p = redis.pipeline();
  for (const u of users) p.zscore(timelines.key(u), postId);
  return ((await p.exec()) ?? []).map(([, v]) => v as string | null);
}

async function cards(users: number[]): Promise<number[]> {
  const p = redis.pipeline();
  for (const u of users) p.zcard(timelines.key(u));
  return ((await p.exec()) ?? []).map(([, v]) => Number(v));
}

function worker(extra: Partial<FanoutWorkerOptions> = {}): FanoutWorker {
  return new FanoutWorker({ repo, timelines, authorPosts, policy: policy('threshold:25000'), dormantDays: 14, ...extra });
}

/** The home feed of a reader as the read path merges it: timeline + the given authors' lists. */
async function feed(reader: number, listAuthors: number[]): Promise<string[]> {
  const tl = await timelines.readPage(reader, { limit: 100, renew: false });
  const lists = await authorPosts.readSlices(listAuthors, { limit: 100, renew: false });
  const page = mergeFeed(tl ?? [], lists.map((l) => l ?? []), { limit: 100 });
  return page.entries.map((e) => e.id);
}

/** A timeline cache whose clock steps `stepMs` as each batch's replies arrive (before the worker
 * hears of the batch), so that every batch lands at a known time. */
class SteppingTimelines extends TimelineCache {
  constructor(
    redis: RedisLike,
    private readonly clock: { now: number },
    private readonly stepMs: number,
    batchSize: number,
  ) {
    super(redis, keys, { batchSize });
  }

  override pushEntries(ids: ArrayLike<UserId>, entries: readonly FeedPosition[], options: PushOptions = {}): Promise<PushResult> {
    return super.pushEntries(ids, entries, {
      onBatch: (t) => {
        this.clock.now += this.stepMs;
        options.onBatch?.(t);
      },
    });
  }
}

/** This keyspace's per-second timeline writes: second -> writes. */
async function writesBySecond(): Promise<Record<string, number>> {
  const all = await redis.hgetall(keys.key(TIMELINE_WRITES_KEY));
  return Object.fromEntries(Object.entries(all).map(([s, n]) => [s, Number(n)]));
}

/** Six followers with timelines at ids 0..5 of the audience: 0 without a timeline (missing), 3 with
 * a rebuild under way (its write goes to the pending set), the others present. */
async function handMadeAudience(): Promise<Audience> {
  const a = await audience(6, { uncachedEvery: 3 }); // uncached: followers 0 and 3
  await redis.set(rebuildKeys(timelines.key(a.followers[3])).marker, 'rebuilding', 'PX', 60_000);
  return a;
}

beforeAll(async () => {
  if (SKIP) return;
  store = createStore({ schema, max: 8 });
  await migrate(store);
  repo = new FeedRepository(store);
  redis = await connectRedis({ url: redisUrlFromEnv() });
  timelines = new TimelineCache(redis, keys);
  authorPosts = new AuthorPostsCache(redis, keys);
});

afterAll(async () => {
  await dropRedisState(redis, keys);
  await dropPostgresState(store, schema);
});

describe.skipIf(SKIP)('fan-out worker', () => {
  it('pushes a post of an author with 3,000 followers into every non-dormant follower\'s existing timeline once, and no dormant one', async () => {
    const a = await audience(3_000, { dormantEvery: 10, uncachedEvery: 50 });
    const metrics = new MemoryMetrics();
    const w = worker({ metrics, pageSize: 700 }); // several pages, pipelined
    const e = await post(a.author);
    const [outcome] = await w.handleBatch([e]);
    const cached = a.active.filter((f) => !a.uncached.includes(f));

    expect(outcome).toMatchObject({ path: 'push', followers: 3_000, visited: 2_700, written: cached.length, missing: a.uncached.length, duplicates: 0 });
    expect(await scores(cached, e.postId)).toEqual(cached.map(() => String(e.createdAt)));
    expect(await cards(cached)).toEqual(cached.map(() => 1)); // the post, once (the sentinel gone)
    expect(await scores(a.dormant, e.postId)).toEqual(a.dormant.map(() => null));
    expect(await cards(a.dormant)).toEqual(a.dormant.map(() => 1)); // still only the sentinel
    expect(await cards(a.uncached)).toEqual(a.uncached.map(() => 0)); // missing stays missing

    expect(metrics.counter('timelineWrites')).toBe(cached.length);
    expect(metrics.counter('dormantSkipped')).toBe(300);
    expect(metrics.summary('fanoutLagPushMs').count).toBe(1);
    expect(metrics.summary('batchMs').count).toBe(outcome.batches);
    expect(outcome.batches).toBeGreaterThanOrEqual(3);
  });

  it("records a large post's writes per 1,000 timelines it wrote: 300 written, not 297", async () => {
    const big = await audience(300);
    const metrics = new MemoryMetrics();
    await worker({ metrics }).handleBatch([await post(big.author)]);
    const per = metrics.summary('largeWritesPerThousandMs');
    expect(per.count).toBe(1);
    expect(per.mean).toBeCloseTo((metrics.summary('eventWritesMs').mean * 1_000) / 300, 6);
    // three of the 300 without a timeline: 297 written, under the line
    const fewer = await audience(300, { uncachedEvery: 100 });
    const under = new MemoryMetrics();
    const [outcome] = await worker({ metrics: under }).handleBatch([await post(fewer.author)]);
    expect(outcome).toMatchObject({ path: 'push', written: 297, missing: 3 });
    expect(under.summary('eventWritesMs').count).toBe(1);
    expect(under.summary('largeWritesPerThousandMs').count).toBe(0);
  });

  it("records an event's stages: the pickup of a first delivery from the log's ms, statements, first page and writes that add up to the event", async () => {
    const a = await audience(300);
    const metrics = new MemoryMetrics();
    const clock = { now: 1_700_000_000_000 };
    const w = worker({ metrics, clock: () => clock.now });
    const e = await post(a.author);
    // the log took it 7 ms before the worker's clock; a redelivery's wait is its failure's, no pickup
    await w.handleBatch([{ event: e, partition: 0, position: `${clock.now - 7}-0`, deliveries: 1, loggedAt: clock.now - 7 }]);
    await w.handleBatch([{ event: e, partition: 0, position: `${clock.now - 9000}-0`, deliveries: 2, loggedAt: clock.now - 9000 }]);
    const pickup = metrics.summary('eventPickupMs');
    expect(pickup.count).toBe(1);
    expect(pickup.max).toBeCloseTo(7, 1);
    // an idle worker's pickup is that of an event the log took while the read that delivered it
    // waited (logged at or after the read began); one logged before waited behind the worker's work
    const idle = new MemoryMetrics();
    const wi = worker({ metrics: idle, clock: () => clock.now });
    await wi.handleBatch([{ event: e, partition: 0, position: `${clock.now - 3}-0`, deliveries: 1, loggedAt: clock.now - 3, readSince: clock.now - 3 }]);
    await wi.handleBatch([{ event: e, partition: 0, position: `${clock.now - 20}-0`, deliveries: 1, loggedAt: clock.now - 20, readSince: clock.now - 19 }]);
    await wi.handleBatch([{ event: e, partition: 0, position: `${clock.now - 5}-0`, deliveries: 1, loggedAt: clock.now - 5 }]);
    expect(idle.summary('eventPickupMs').count).toBe(3);
    expect(idle.summary('eventPickupIdleMs').count).toBe(1);
    expect(idle.summary('eventPickupIdleMs').max).toBeCloseTo(3, 1);
    for (const stage of ['eventStatementsMs', 'eventFirstPageMs', 'eventWritesMs'] as const) expect(metrics.summary(stage).count, stage).toBe(2);
    const parts = metrics.summary('eventStatementsMs').mean + metrics.summary('eventFirstPageMs').mean + metrics.summary('eventWritesMs').mean;
    const event = metrics.summary('eventMs').mean;
    expect(parts).toBeLessThanOrEqual(event * 1.001);
    expect(parts).toBeGreaterThan(event * 0.8);
    // a pulled post has statements only
    const pulled = new MemoryMetrics();
    await worker({ metrics: pulled, policy: policy('threshold:100') }).handleBatch([await post(a.author)]);
    expect([pulled.summary('eventStatementsMs').count, pulled.summary('eventFirstPageMs').count, pulled.summary('eventWritesMs').count]).toEqual([1, 0, 0]);
  });

  it('with :all-followers, pushes to the dormant followers too', async () => {
    const a = await audience(200, { dormantEvery: 4 });
    const e = await post(a.author);
    const [outcome] = await worker({ policy: policy('threshold:25000:all-followers') }).handleBatch([e]);
    expect(outcome).toMatchObject({ path: 'push', visited: 200, written: 200 });
    expect((await scores(a.dormant, e.postId)).every((s) => s === String(e.createdAt))).toBe(true);
  });

  it('writes a celebrity\'s post (over the threshold) only into its recent list', async () => {
    const a = await audience(1_500);
    await authorPosts.rebuild(a.author, () => []); // the list is present (a reader merged it)
    const metrics = new MemoryMetrics();
    const e = await post(a.author);
    const [outcome] = await worker({ metrics, policy: policy('threshold:1000') }).handleBatch([e]);
    expect(outcome).toMatchObject({ path: 'pull', followers: 1_500, written: 0, listAdded: true });
    expect(await scores(a.followers, e.postId)).toEqual(a.followers.map(() => null));
    expect((await authorPosts.readSlice(a.author, { limit: 10 }))?.entries).toEqual([{ id: e.postId, createdAt: e.createdAt }]);
    expect(metrics.counter('postsPulled')).toBe(1);
    expect(metrics.summary('fanoutLagPullMs').count).toBe(1);
    // Per follower: the list write, once for each of the author's followers.
    const perFollower = metrics.summary('fanoutFollowerLagPullMs');
    expect(perFollower.count).toBe(1_500);
    expect(perFollower.mean).toBe(metrics.summary('fanoutLagPullMs').mean);
    expect(metrics.summary('fanoutFollowerLagPushMs').count).toBe(0);
    expect(await new PulledAuthorRegistry(redis, keys).marked([a.author])).toEqual(new Set([a.author]));
  });

  it('moves the next post to the other path when the threshold changes, and a read of both paths shows each post once', async () => {
    const a = await audience(1_200);
    await authorPosts.rebuild(a.author, () => []);
    const w = worker({ policy: policy('threshold:5000') });
    const readers = [a.followers[0], a.followers[599], a.followers[1_199]];

    // Under the threshold: pushed.
    const p1 = await post(a.author, 'one');
    expect((await w.handleBatch([p1]))[0]).toMatchObject({ path: 'push', written: 1_200 });

    // Threshold lowered under the author's 1,200 followers: the next post is pulled.
    w.setPolicy(policy('threshold:1000'));
    const p2 = await post(a.author, 'two');
    expect((await w.handleBatch([p2]))[0]).toMatchObject({ path: 'pull', written: 0, listAdded: true });
    expect(await scores(a.followers, p2.postId)).toEqual(a.followers.map(() => null));
    for (const r of readers) expect(await feed(r, [a.author])).toEqual([p2.postId, p1.postId]);

    // Raised again: the next post is pushed, and carries the pulled post along into the timelines,
    // so a reader that no longer merges the author's list misses nothing either.
    w.setPolicy(policy('threshold:5000'));
    const p3 = await post(a.author, 'three');
    expect((await w.handleBatch([p3]))[0]).toMatchObject({ path: 'push', written: 1_200, backfilled: 2 });
    for (const r of readers) {
      expect(await feed(r, [a.author])).toEqual([p3.postId, p2.postId, p1.postId]);
      expect(await feed(r, [])).toEqual([p3.postId, p2.postId, p1.postId]);
    }
    expect(await cards(a.followers)).toEqual(a.followers.map(() => 3));
    expect(await new PulledAuthorRegistry(redis, keys).marked([a.author])).toEqual(new Set());

    // A later push carries nothing extra.
    const p4 = await post(a.author, 'four');
    expect((await w.handleBatch([p4]))[0]).toMatchObject({ path: 'push', written: 1_200, backfilled: 0 });
  });

  it('writes nothing twice when the same events are delivered again (also twice in one batch)', async () => {
    const a = await audience(1_000, { dormantEvery: 5 });
    const c = await audience(1_200);
    await authorPosts.rebuild(c.author, () => []);
    const metrics = new MemoryMetrics();
    const w = worker({ metrics, policy: policy('threshold:1000') }); // at the threshold: pushed
    const pushed = await post(a.author);
    const pulled = await post(c.author);

    const first = await w.handleBatch([pushed, pulled]);
    const snapshot = await redis.zrange(timelines.key(a.active[0]), 0, -1, 'WITHSCORES');
    const again = await w.handleBatch([pushed, pulled, pushed]);

    expect(first.map((o) => [o.path, o.written, o.duplicates])).toEqual([['push', 800, 0], ['pull', 0, 0]]);
    expect(again.map((o) => [o.path, o.written, o.duplicates, o.listAdded])).toEqual([
      ['push', 0, 800, false],
      ['pull', 0, 0, false],
      ['push', 0, 800, false],
    ]);
    expect(await cards(a.active)).toEqual(a.active.map(() => 1));
    expect(await redis.zrange(timelines.key(a.active[0]), 0, -1, 'WITHSCORES')).toEqual(snapshot);
    expect(await authorPosts.size(c.author)).toBe(1);
    expect(metrics.counter('timelineWrites')).toBe(800);
    expect(metrics.counter('timelineDuplicates')).toBe(1_600);
    expect(metrics.summary('fanoutLagPushMs').count).toBe(1); // redeliveries that wrote nothing are no lag sample
    expect(metrics.summary('fanoutFollowerLagPushMs').count).toBe(800); // nor a per-follower one
    expect(metrics.summary('fanoutFollowerLagPullMs').count).toBe(1_200);
  });

  it('removes a deleted post from its author\'s recent list and leaves its body cached as a tombstone', async () => {
    const a = await audience(10);
    await authorPosts.rebuild(a.author, () => []);
    const bodies = new PostBodyCache<CachedBody>(redis, keys);
    const w = worker({ policy: policy('pull'), bodies });
    const e = await post(a.author);
    await w.handleBatch([e]);
    expect(await authorPosts.size(a.author)).toBe(1);
    const [outcome] = await w.handleBatch([{ kind: 'PostDeleted', postId: e.postId, authorId: a.author, createdAt: e.createdAt }]);
    expect(outcome.path).toBe('delete');
    expect(await authorPosts.size(a.author)).toBe(0);
    expect(await authorPosts.exists(a.author)).toBe(true); // present and empty, not missing
    // Not removed: a read that fetched the live body before the delete cannot write it back (SET NX).
    expect((await bodies.getMany([e.postId])).hits.get(e.postId)).toEqual({ deleted: true });
    expect(await redis.pttl(bodies.key(e.postId))).toBeGreaterThan(bodies.ttlMs - 60_000);
  });

  it("handles a batch's deletes before its fan-out, and fans out nothing of a post deleted in the same batch", async () => {
    const a = await audience(300);
    await authorPosts.rebuild(a.author, () => []);
    const bodies = new PostBodyCache<CachedBody>(redis, keys);
    const metrics = new MemoryMetrics();
    const w = worker({ metrics, policy: policy('push'), bodies });
    const old = await post(a.author, 'deleted while Redis was down');
    await w.handleBatch([old]);
    const fresh = await post(a.author, 'made after');
    const gone = await post(a.author, 'made and deleted');
    const del = (e: PostEvent): PostEvent => ({ kind: 'PostDeleted', postId: e.postId, authorId: a.author, createdAt: e.createdAt });
    // the log's order: a create, the older post's delete, a create and its own delete
    const order: string[] = [];
    const removing = authorPosts.remove.bind(authorPosts);
    authorPosts.remove = async (...args) => (order.push(`delete ${args[1][0]}`), removing(...args));
    const adding = authorPosts.add.bind(authorPosts);
    authorPosts.add = async (...args) => (order.push(`add ${args[1].id}`), adding(...args));
    try {
      const outcomes = await w.handleBatch([fresh, del(old), gone, del(gone)]);
      expect(outcomes.map((o) => [o.postId, o.path])).toEqual([
        [fresh.postId, 'push'],
        [old.postId, 'delete'],
        [gone.postId, 'skip'],
        [gone.postId, 'delete'],
      ]);
    } finally {
      authorPosts.remove = removing;
      authorPosts.add = adding;
    }
    // both deletes before the one fan-out, which is the fresh post's
    expect(order.slice(0, 2).sort()).toEqual([`delete ${old.postId}`, `delete ${gone.postId}`].sort());
    expect(order.slice(2)).toEqual([`add ${fresh.postId}`]);
    expect((await scores(a.active, gone.postId)).every((x) => x === null)).toBe(true);
    expect((await scores(a.active, fresh.postId)).every((x) => x !== null)).toBe(true);
    expect((await bodies.getMany([gone.postId, old.postId])).hits).toEqual(new Map([[gone.postId, { deleted: true }], [old.postId, { deleted: true }]]));
    expect(metrics.counter('eventsDeleted')).toBe(2);
    expect(metrics.counter('timelineWrites')).toBe(300 * 2); // the old post's and the fresh one's
  });

  it('with reader-cap, keeps a delivery to a reader following more than the cap with probability cap/follows, the same way every time', async () => {
    const a = await audience(2_000, { followeeCount: 4_000 }); // cap 1000: keep about 1 in 4
    const w = worker({ policy: policy('reader-cap:1000') });
    const e = await post(a.author);
    const [first] = await w.handleBatch([e]);
    const [again] = await w.handleBatch([e]);
    expect(first.path).toBe('push');
    expect(first.written).toBeGreaterThan(400);
    expect(first.written).toBeLessThan(600);
    expect(first.readerCapDropped).toBe(2_000 - first.written);
    expect(again).toMatchObject({ written: 0, duplicates: first.written, readerCapDropped: first.readerCapDropped });
  });

  it('with adaptive, halves the threshold while the backlog is over its bound, and restores it once drained', async () => {
    const a = await audience(1_500);
    let backlog = 5e6; // bound 1e6
    let now = Date.now();
    const w = worker({ policy: policy('adaptive:2000'), backlog: () => backlog, clock: () => now });
    const e1 = await post(a.author);
    expect((await w.handleBatch([e1]))[0]).toMatchObject({ path: 'pull', threshold: 1_000 });
    backlog = 0;
    now += 1_000;
    const e2 = await post(a.author);
    expect((await w.handleBatch([e2]))[0]).toMatchObject({ path: 'push', threshold: 2_000, written: 1_500, backfilled: 1 });
  });

  it('records the lag of each batch once per timeline it wrote (written + pending), and adds its writes at Redis in the second its replies came', async () => {
    const a = await handMadeAudience();
    const e = await post(a.author);
    const clock = { now: e.createdAt };
    const metrics = new MemoryMetrics();
    // Batches of 2, one in flight, 600 ms a batch: [0 missing, 1], [2, 3 pending], [4, 5].
    const w = worker({ metrics, timelines: new SteppingTimelines(redis, clock, 600, 2), pipelines: 1, clock: () => clock.now });
    await redis.del(keys.key(TIMELINE_WRITES_KEY)); // other tests' fan-outs counted into the same seconds
    const [outcome] = await w.handleBatch([e]);
    await w.countsSettled();

    expect(outcome).toMatchObject({ path: 'push', written: 4, pending: 1, missing: 1, batches: 3 });
    const perFollower = metrics.summary('fanoutFollowerLagPushMs');
    expect(perFollower.count).toBe(5); // 1 + 2 + 2
    expect(perFollower.mean).toBe((600 * 1 + 1_200 * 2 + 1_800 * 2) / 5);
    expect(perFollower.max).toBeCloseTo(1_800, 0);
    const perPost = metrics.summary('fanoutLagPushMs');
    expect([perPost.count, perPost.mean]).toEqual([1, 1_800]);

    const second = (lagMs: number) => String(Math.floor((e.createdAt + lagMs) / 1000));
    const expected: Record<string, number> = {};
    for (const [lagMs, writes] of [[600, 1], [1_200, 2], [1_800, 2]]) expected[second(lagMs)] = (expected[second(lagMs)] ?? 0) + writes;
    expect(Object.keys(expected).length).toBeGreaterThan(1); // 1.2 s: at least two seconds
    expect(await writesBySecond()).toEqual(expected);
    const ttl = await redis.pttl(keys.key(TIMELINE_WRITES_KEY));
    expect(ttl).toBeGreaterThan(TIMELINE_WRITES_RETENTION_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(TIMELINE_WRITES_RETENTION_MS);

    // A redelivery writes nothing: nothing more counted, at Redis or in the histogram.
    await w.handleBatch([e]);
    await w.countsSettled();
    expect(await writesBySecond()).toEqual(expected);
    expect(metrics.summary('fanoutFollowerLagPushMs').count).toBe(5);
  });

  it('trims the per-second fields that left the hour, a minute at a time', async () => {
    const a = await audience(3);
    const e = await post(a.author);
    const clock = { now: e.createdAt };
    const w = worker({ timelines: new SteppingTimelines(redis, clock, 0, 1_000), clock: () => clock.now });
    const key = keys.key(TIMELINE_WRITES_KEY);
    const now = Math.floor(e.createdAt / 1000);
    const minute = Math.floor(now / 60);
    // Fields from 2 h ago (beyond what is trimmed), the minute just out of the window, and the hour kept.
    const old = String((minute - 125) * 60);
    const stale = [String((minute - 61) * 60), String((minute - 61) * 60 + 59)];
    const kept = [String((minute - 60) * 60), String(now - 1)];
    await redis.del(key);
    await redis.hset(key, Object.fromEntries([old, ...stale, ...kept].map((f) => [f, '7'])));
    await w.handleBatch([e]);
    await w.countsSettled();
    expect(Object.keys(await writesBySecond()).sort()).toEqual([old, ...kept, String(now)].sort());
  });

  it('goes on fanning out when the per-second count fails at Redis, and reports it', async () => {
    const a = await audience(50);
    const key = keys.key(TIMELINE_WRITES_KEY);
    const errors: unknown[] = [];
    const outages: unknown[] = [];
    const metrics = new MemoryMetrics();
    const w = worker({ metrics, onCounterError: (err) => errors.push(err), onOutage: (err) => outages.push(err) });

    // The hash's key holds another type: every count fails (WRONGTYPE) at Redis.
    await redis.set(key, 'not a hash');
    const e1 = await post(a.author);
    await w.handler()([{ event: e1, partition: 0, position: '1-0', deliveries: 1 }], new AbortController().signal);
    await w.countsSettled();
    expect(await scores(a.followers, e1.postId)).toEqual(a.followers.map(() => String(e1.createdAt)));
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/WRONGTYPE/);
    expect(outages).toHaveLength(0);
    expect(metrics.counter('handlerFailures')).toBe(0);
    expect(metrics.counter('timelineWrites')).toBe(50);
    await redis.del(key);
  });

  it('does not wait for the per-second count: an unanswered one neither holds up nor fails the event', async () => {
    const a = await audience(20);
    let fail: (err: Error) => void = () => {};
    const exec = new Promise<never>((_, reject) => (fail = reject));
    // The worker's connection, except that MULTI (only the counter uses it) never answers until told.
    const chain: unknown = new Proxy({}, { get: (_, p) => (p === 'exec' ? () => exec : () => chain) });
    const stalled = new Proxy(redis, {
      get: (target, p) => {
        if (p === 'multi') return () => chain;
        const v = Reflect.get(target, p, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    }) as RedisLike;
    const errors: unknown[] = [];
    const w = worker({ timelines: new TimelineCache(stalled, keys), onCounterError: (err) => errors.push(err) });
    const e = await post(a.author);
    const [outcome] = await w.handleBatch([e]);
    expect(outcome).toMatchObject({ path: 'push', written: 20 });
    expect(await scores(a.followers, e.postId)).toEqual(a.followers.map(() => String(e.createdAt)));
    let settled = false;
    const counts = w.countsSettled().then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBe(false);
    fail(new Error('Connection is closed.'));
    await counts;
    expect(errors.map(String)).toEqual(['Error: Connection is closed.']);
  });

  it('measures one worker\'s push rate: 50,000 followers', async () => {
    const a = await audience(50_000);
    const metrics = new MemoryMetrics();
    const w = worker({ metrics, policy: policy('push') });
    const e = await post(a.author);
    const began = performance.now();
    const [outcome] = await w.handleBatch([e]);
    const seconds = (performance.now() - began) / 1000;
    expect(outcome.written).toBe(50_000);
    const batch = metrics.summary('batchMs');
    console.log(
      `fan-out of one post to 50,000 timelines: ${seconds.toFixed(2)} s, ${Math.round(50_000 / seconds)} timeline writes/s ` +
        `(batches of ${timelines.batchSize}, 2 in flight: p50 ${batch.p50.toFixed(1)} ms, p99 ${batch.p99.toFixed(1)} ms; lag ${outcome.lagMs} ms)`,
    );
  });
});
