// Timelines and authors' recent-post lists on this machine's Redis (REDIS_URL, default
// 127.0.0.1:6379): trimming to the cap, writes only into present lists, idempotent redelivery,
// leases, cursor paging through same-millisecond posts, the empty sentinel, rebuilds. Every key
// lives under a prefix unique to this run and is removed afterwards. Without a reachable Redis the
// tests are skipped with one loud line, except under CI=true where they fail.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { compareNewestFirst, decodeCursor, encodeCursor, type FeedPosition } from '../../../core/cursor.js';
import { mergeFeed } from '../../../core/feed-merge.js';
import { makePostId } from '../../../core/post-id.js';
import { AuthorPostsCache } from '../../../server/cache/author-posts.js';
import { EMPTY_SENTINEL, rebuildKeys, TIE_SLACK } from '../../../server/cache/post-list.js';
import { closeRedis, connectRedis, dropKeyspace, keyspace } from '../../../server/cache/redis.js';
import { DEFAULT_TIMELINE_LEASE_MS, TimelineCache } from '../../../server/cache/timelines.js';
import { CI, REDIS_URL, redisUnreachable } from './reachable.js';

const unreachable = await redisUnreachable('test/server/cache/timelines.test.ts');

const ks = keyspace(`feedlab:test:${process.pid}-${randomUUID().slice(0, 8)}:timelines:`);
const T0 = Date.UTC(2025, 5, 15, 12, 0, 0);
const SECRET = 'test-secret';

/** Post `i` of a run: one per ms from T0 (so ids and scores both ascend with i). */
function post(i: number, worker = 0, sequence = 0): FeedPosition {
  return { createdAt: T0 + i, id: makePostId(T0 + i, worker, sequence) };
}

/** The whole sorted set, oldest first, with scores (the sentinel included). */
async function raw(redis: Redis, key: string): Promise<string[]> {
  return redis.zrange(key, 0, -1, 'WITHSCORES');
}

describe.skipIf(unreachable !== null && !CI)('timelines on this machine\'s Redis', () => {
  let redis: Redis;
  let user = 0;
  /** A user id no other test of this file uses. */
  const nextUser = () => ++user;

  beforeAll(async () => {
    redis = await connectRedis({ url: REDIS_URL });
  });

  afterAll(async () => {
    if (!redis) return;
    await dropKeyspace(redis, ks);
    const [, left] = await redis.scan('0', 'MATCH', `${ks.prefix}*`, 'COUNT', 10_000);
    expect(left).toEqual([]);
    await closeRedis(redis);
  });

  it('keeps exactly the cap when a full timeline is pushed once more, dropping the oldest (Mastodon)', async () => {
    const timelines = new TimelineCache(redis, ks); // the real cap, 800
    const u = nextUser();
    const full = Array.from({ length: 800 }, (_, i) => post(i));
    expect(await timelines.rebuild(u, () => full)).toEqual({ written: true, entries: 800 });
    expect(await redis.zcard(timelines.key(u))).toBe(800);
    const result = await timelines.push([u], post(800));
    expect(result).toMatchObject({ timelines: 1, written: 1, missing: 0, duplicates: 0, batches: 1 });
    expect(await redis.zcard(timelines.key(u))).toBe(800);
    expect(await redis.zscore(timelines.key(u), post(0).id)).toBeNull();
    expect(await redis.zscore(timelines.key(u), post(800).id)).toBe(String(post(800).createdAt));
  });

  it('with cap 6 and batch 1, trims every timeline to the newest 6 and pipelines one follower per batch', async () => {
    const timelines = new TimelineCache(redis, ks, { cap: 6, batchSize: 1 });
    const present = [nextUser(), nextUser(), nextUser()];
    const missing = nextUser();
    for (const u of present) await timelines.rebuild(u, () => []);
    const batches: number[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await timelines.push([...present, missing], post(i), { onBatch: (t) => batches.push(t.followers) });
      expect(r).toEqual({ timelines: 4, written: 3, duplicates: 0, pending: 0, missing: 1, batches: 4 });
    }
    expect(batches).toEqual(new Array(40).fill(1));
    const newest6 = Array.from({ length: 6 }, (_, i) => post(9 - i));
    for (const u of present) {
      expect(await redis.zcard(timelines.key(u))).toBe(6);
      expect((await timelines.readPage(u, { limit: 100 }))?.entries).toEqual(newest6);
    }
    // A post older than everything kept is trimmed away at once.
    await timelines.push(present, post(-5));
    for (const u of present) expect((await timelines.readPage(u, { limit: 100 }))?.entries).toEqual(newest6);
    // Batches of 2 over 5 followers: 3 round trips.
    const wide = new TimelineCache(redis, ks, { cap: 6, batchSize: 2 });
    const r = await wide.push(Int32Array.from([...present, missing, nextUser()]), post(20));
    expect(r).toMatchObject({ timelines: 5, written: 3, missing: 2, batches: 3 });
  });

  it('writes a batch of mixed timelines in calls of 50, each answered in its place', async () => {
    const timelines = new TimelineCache(redis, ks, { cap: 6 });
    // 130 followers in turn: present, missing, under a rebuild (its marker set), already holding the post
    const users = Array.from({ length: 130 }, () => nextUser());
    const kind = (i: number) => (['present', 'missing', 'rebuilding', 'holding'] as const)[i % 4];
    for (const [i, u] of users.entries()) {
      if (kind(i) === 'present') await timelines.rebuild(u, () => [post(1)]);
      if (kind(i) === 'holding') await timelines.rebuild(u, () => [post(1), post(2)]);
      if (kind(i) === 'rebuilding') await redis.set(rebuildKeys(timelines.key(u)).marker, '1', 'PX', 60_000);
    }
    const calls = vi.spyOn(redis, 'evalsha');
    try {
      const r = await timelines.push(users, post(2));
      // 33 present and 33 missing, 32 under a rebuild and 32 holding it; one batch of three calls (50, 50, 30)
      expect(r).toEqual({ timelines: 130, written: 33, duplicates: 32, pending: 32, missing: 33, batches: 1 });
      expect(calls).toHaveBeenCalledTimes(3);
      expect(calls.mock.calls.map((c) => c[1])).toEqual([150, 150, 90]);
    } finally {
      calls.mockRestore();
    }
    for (const [i, u] of users.entries()) {
      const key = timelines.key(u);
      const { pending } = rebuildKeys(key);
      if (kind(i) === 'present' || kind(i) === 'holding') expect(await redis.zrange(key, 0, -1), `${i}`).toEqual([post(1).id, post(2).id]);
      else expect(await redis.exists(key), `${i}`).toBe(0);
      expect(await redis.zrange(pending, 0, -1), `${i}`).toEqual(kind(i) === 'rebuilding' ? [post(2).id] : []);
    }
  });

  it('creates nothing when pushing to a missing timeline', async () => {
    const timelines = new TimelineCache(redis, ks);
    const u = nextUser();
    const r = await timelines.push([u], post(1));
    expect(r).toMatchObject({ written: 0, missing: 1 });
    expect(await redis.exists(timelines.key(u), ...Object.values(rebuildKeys(timelines.key(u))))).toBe(0);
    expect(await timelines.readPage(u, { limit: 10 })).toBeNull();
    expect((await timelines.add(u, [post(2), post(3)])).state).toBe('missing');
    expect(await timelines.exists(u)).toBe(false);
  });

  it('writes nothing twice when the same push is redelivered', async () => {
    const timelines = new TimelineCache(redis, ks, { cap: 6 });
    const u = nextUser();
    await timelines.rebuild(u, () => [post(1), post(2)]);
    expect((await timelines.push([u], post(3))).written).toBe(1);
    const before = await raw(redis, timelines.key(u));
    // Shorten the lease: a redelivery must not even renew it.
    await redis.pexpire(timelines.key(u), 50_000);
    for (let i = 0; i < 3; i++) expect(await timelines.push([u], post(3))).toMatchObject({ written: 0, duplicates: 1 });
    expect(await raw(redis, timelines.key(u))).toEqual(before);
    expect(await redis.pttl(timelines.key(u))).toBeLessThanOrEqual(50_000);
    // A backfill repeating posts adds only the new ones.
    expect(await timelines.add(u, [post(2), post(3), post(4)])).toEqual({ state: 'written', added: 1 });
  });

  it('sets the lease on rebuild and push, and renews it on read', async () => {
    const leaseMs = 60_000;
    const timelines = new TimelineCache(redis, ks, { leaseMs });
    const u = nextUser();
    const key = timelines.key(u);
    const near = async (ms: number) => {
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(ms - 2_000);
      expect(ttl).toBeLessThanOrEqual(ms);
    };
    await timelines.rebuild(u, () => [post(1)]);
    await near(leaseMs);
    await redis.pexpire(key, 5_000);
    await timelines.push([u], post(2));
    await near(leaseMs);
    await redis.pexpire(key, 5_000);
    expect((await timelines.readPage(u, { limit: 1, renew: false }))?.entries).toEqual([post(2)]);
    await near(5_000);
    await timelines.readPage(u, { limit: 1 });
    await near(leaseMs);
    await redis.pexpire(key, 5_000);
    expect(await timelines.renewLease(u)).toBe(true);
    await near(leaseMs);
    expect(await timelines.renewLease(nextUser())).toBe(false);
    // The defaults: 7 days.
    expect(new TimelineCache(redis, ks).shape).toEqual({ cap: 800, leaseMs: DEFAULT_TIMELINE_LEASE_MS });
    expect(DEFAULT_TIMELINE_LEASE_MS).toBe(7 * 24 * 3600 * 1000);
  });

  it('keeps an empty rebuilt timeline present with the sentinel, which never appears in pages', async () => {
    const timelines = new TimelineCache(redis, ks, { cap: 6, leaseMs: 60_000 });
    const u = nextUser();
    const key = timelines.key(u);
    expect(await timelines.rebuild(u, async () => [])).toEqual({ written: true, entries: 0 });
    expect(await timelines.exists(u)).toBe(true);
    expect(await raw(redis, key)).toEqual([EMPTY_SENTINEL, '-1']);
    expect(await timelines.readPage(u, { limit: 10 })).toEqual({ entries: [], more: false });
    expect(await timelines.size(u)).toBe(0);
    // The first push replaces the sentinel.
    await timelines.push([u], post(1));
    expect(await raw(redis, key)).toEqual([post(1).id, String(post(1).createdAt)]);
    // Removing the last post leaves the sentinel, with the lease kept.
    await redis.pexpire(key, 30_000);
    expect(await timelines.removeEntries(u, [post(1).id])).toBe(1);
    expect(await raw(redis, key)).toEqual([EMPTY_SENTINEL, '-1']);
    expect(await redis.pttl(key)).toBeGreaterThan(25_000);
    expect(await redis.pttl(key)).toBeLessThanOrEqual(30_000);
    // Paging from a cursor never reaches it either.
    expect(await timelines.readPage(u, { limit: 10, cursor: post(5) })).toEqual({ entries: [], more: false });
  });

  it('removes one author\'s entries (unfollow) and leaves the rest', async () => {
    const timelines = new TimelineCache(redis, ks);
    const u = nextUser();
    const a = [post(1, 1), post(3, 1), post(5, 1)];
    const b = [post(2, 2), post(4, 2)];
    await timelines.rebuild(u, () => [...a, ...b]);
    expect(await timelines.removeEntries(u, a.map((e) => e.id))).toBe(3);
    expect((await timelines.readPage(u, { limit: 10 }))?.entries).toEqual([post(4, 2), post(2, 2)]);
    expect(await timelines.removeEntries(u, a.map((e) => e.id))).toBe(0);
    expect(await timelines.removeEntries(nextUser(), [post(1).id])).toBeNull();
  });

  it('rebuilds atomically, keeping posts pushed while Postgres was being read', async () => {
    const timelines = new TimelineCache(redis, ks, { cap: 6 });
    const u = nextUser();
    const key = timelines.key(u);
    const { marker, pending } = rebuildKeys(key);
    const result = await timelines.rebuild(u, async () => {
      // The query's snapshot predates post 9, fanned out meanwhile.
      const r = await timelines.push([u], post(9));
      expect(r).toMatchObject({ pending: 1, missing: 0 });
      expect(await redis.exists(key)).toBe(0); // still missing: nobody reads a partial timeline
      return Array.from({ length: 8 }, (_, i) => post(i));
    });
    expect(result).toEqual({ written: true, entries: 6 });
    expect((await timelines.readPage(u, { limit: 10 }))?.entries).toEqual([9, 7, 6, 5, 4, 3].map((i) => post(i)));
    expect(await redis.exists(marker, pending)).toBe(0);
    // A second rebuild that lost the race keeps the present timeline; replace overwrites it.
    expect(await timelines.rebuild(u, () => [post(100)])).toEqual({ written: false, entries: 6 });
    expect(await timelines.rebuild(u, () => [post(100)], { replace: true })).toEqual({ written: true, entries: 1 });
    // A failed load leaves no timeline behind.
    const v = nextUser();
    await expect(timelines.rebuild(v, async () => Promise.reject(new Error('postgres down')))).rejects.toThrow('postgres down');
    expect(await timelines.exists(v)).toBe(false);
  });

  it('pages through many same-millisecond posts by cursor: every post once, in order, at any page size', async () => {
    const timelines = new TimelineCache(redis, ks);
    const authors = new AuthorPostsCache(redis, ks);
    const u = nextUser();
    const celebrity = 1_000_000 + u;
    const ms = T0 + 500;
    // The documents' exercise: 15 posts each from a regular author and a celebrity in one ms,
    // plus a burst larger than the tie slack, and posts around them.
    const regular = Array.from({ length: 15 }, (_, i) => ({ createdAt: ms, id: makePostId(ms, 1, i) }));
    const burst = Array.from({ length: 3 * TIE_SLACK }, (_, i) => ({ createdAt: ms, id: makePostId(ms, 3, i) }));
    const around = [post(100), post(400), post(600), post(900)];
    const celeb = [...Array.from({ length: 15 }, (_, i) => ({ createdAt: ms, id: makePostId(ms, 2, i) })), post(450, 2), post(700, 2)];
    await timelines.rebuild(u, () => []);
    for (const p of [...regular, ...burst, ...around]) await timelines.push([u], p);
    await authors.rebuild(celebrity, () => []);
    for (const p of celeb) expect((await authors.add(celebrity, p)).state).toBe('written');
    const everything = [...regular, ...burst, ...around, ...celeb].sort(compareNewestFirst);

    /** One feed page the way the read path builds it: slices, merge, refill while a slice ran short. */
    const page = async (cursor: FeedPosition | null, limit: number) => {
      const entries: FeedPosition[] = [];
      let at = cursor;
      for (let refills = 0; refills < 100; refills++) {
        const want = limit - entries.length;
        const tl = await timelines.readPage(u, { cursor: at, limit: want });
        const [cl] = await authors.readSlices([celebrity], { cursor: at, limit: want });
        const p = mergeFeed(tl!, [cl!], { cursor: at, limit: want });
        entries.push(...p.entries);
        if (!p.needsMore) return { entries, next: p.next };
        at = p.next;
      }
      throw new Error('refilling the page did not end');
    };
    const all = async (limit: number) => {
      const out: FeedPosition[] = [];
      let text: string | null = null;
      for (let pages = 0; pages < 1000; pages++) {
        const p = await page(text === null ? null : decodeCursor(text, SECRET), limit);
        out.push(...p.entries);
        if (p.next === null) return out;
        text = encodeCursor(p.next, SECRET); // opaque on the wire
      }
      throw new Error('paging did not end');
    };
    const onePage = (await page(null, 1000)).entries;
    expect(onePage).toEqual(everything);
    // Ties beyond the slack take further fetches (by offset, outside the first pipeline).
    const extra = vi.spyOn(redis, 'zrevrangebyscore');
    for (const limit of [1, 3, 10, 25]) {
      const paged = await all(limit);
      if (limit === 1) expect(extra).toHaveBeenCalled();
      expect(paged.map((e) => e.id), `limit ${limit}`).toEqual(everything.map((e) => e.id));
      expect(new Set(paged.map((e) => e.id)).size).toBe(everything.length);
    }
    extra.mockRestore();
  });

  it('marks a slice with more only when the fetch hit its limit', async () => {
    const timelines = new TimelineCache(redis, ks);
    const u = nextUser();
    await timelines.rebuild(u, () => Array.from({ length: 5 }, (_, i) => post(i)));
    expect(await timelines.readPage(u, { limit: 3 })).toEqual({ entries: [post(4), post(3), post(2)], more: true });
    expect(await timelines.readPage(u, { limit: 5 })).toEqual({ entries: [4, 3, 2, 1, 0].map((i) => post(i)), more: true });
    expect(await timelines.readPage(u, { limit: 6 })).toEqual({ entries: [4, 3, 2, 1, 0].map((i) => post(i)), more: false });
    expect(await timelines.readPage(u, { limit: 2, cursor: post(2) })).toEqual({ entries: [post(1), post(0)], more: false });
    await expect(timelines.readPage(u, { limit: 0 })).rejects.toThrow(RangeError);
  });

  it('keeps each author\'s recent posts capped, only in a present list, older-than-cursor slices', async () => {
    const authors = new AuthorPostsCache(redis, ks, { length: 5, leaseMs: 60_000 });
    const a = nextUser();
    expect((await authors.add(a, post(0))).state).toBe('missing');
    expect(await authors.exists(a)).toBe(false);
    expect(await authors.readSlice(a, { limit: 3 })).toBeNull();
    await authors.rebuild(a, () => [post(0), post(1)]);
    for (let i = 2; i < 8; i++) await authors.add(a, post(i));
    expect(await authors.add(a, post(7))).toEqual({ state: 'written', added: 0 });
    expect(await authors.size(a)).toBe(5);
    expect(await authors.readSlice(a, { limit: 10 })).toEqual({ entries: [7, 6, 5, 4, 3].map((i) => post(i)), more: false });
    expect(await authors.readSlice(a, { limit: 2, cursor: post(6) })).toEqual({ entries: [post(5), post(4)], more: true });
    expect(await authors.remove(a, [post(5).id])).toBe(1);
    const b = nextUser();
    const slices = await authors.readSlices([a, b], { limit: 2, cursor: post(7) });
    expect(slices).toEqual([{ entries: [post(6), post(4)], more: true }, null]);
    const ttl = await redis.pttl(authors.key(a));
    expect(ttl).toBeGreaterThan(55_000);
  });
});
