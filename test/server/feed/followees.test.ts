// FolloweeCache's batched loads: one statement and one marks MGET for the loads asked together,
// each reader's pulled set still its over-threshold followees plus the marked ones.
import { describe, expect, it } from 'vitest';
import { keyspace } from '../../../server/cache/redis.js';
import type { RedisLike } from '../../../server/cache/redis-like.js';
import { FolloweeCache, MAX_BATCH, pulledMarkKey } from '../../../server/feed/followees.js';
import { BadRequestError, type FeedRepository, type Followees } from '../../../server/store/repository.js';

const keys = keyspace('t:');

/** Reader -> followees; authors over the threshold; marked authors. */
function world(follows: Record<number, number[]>, over: number[], marked: number[], opts: { redisDown?: boolean } = {}) {
  const statements: number[][] = [];
  const mgets: string[][] = [];
  const repo = {
    async followeesOfMany(ids: readonly number[]): Promise<Map<number, Followees>> {
      statements.push([...ids]);
      await new Promise((r) => setTimeout(r, 2));
      return new Map(ids.map((id) => [id, { all: [...(follows[id] ?? [])], over: (follows[id] ?? []).filter((a) => over.includes(a)) }]));
    },
  } as unknown as FeedRepository;
  const markKeys = new Set(marked.map((a) => pulledMarkKey(keys, a)));
  const redis = {
    status: opts.redisDown ? 'reconnecting' : 'ready',
    async mget(k: string[]) {
      mgets.push(k);
      if (opts.redisDown) throw new Error('Connection is closed.');
      return k.map((key) => (markKeys.has(key) ? '1' : null));
    },
  } as unknown as RedisLike;
  const cache = new FolloweeCache({ repo, redis, keys, threshold: 10 });
  return { cache, statements, mgets };
}

describe('FolloweeCache', () => {
  it('loads the readers asked together in one statement and one MGET, marks honoured per reader', async () => {
    const { cache, statements, mgets } = world({ 1: [10, 11, 12], 2: [11, 13], 3: [], 4: [12, 14] }, [10], [12, 13]);
    const [a, b, c, d] = await Promise.all([1, 2, 3, 4].map((id) => cache.get(id)));
    expect(statements).toEqual([[1, 2, 3, 4]]);
    expect(mgets).toHaveLength(1);
    expect(new Set(mgets[0])).toEqual(new Set([11, 12, 13, 14].map((x) => pulledMarkKey(keys, x)))); // each author once, not the over ones
    expect(mgets[0]).toHaveLength(4);
    expect([...a.all]).toEqual([10, 11, 12]);
    expect(a.pulled).toEqual([10, 12]); // over the threshold, and marked
    expect(b.pulled).toEqual([13]);
    expect(c.pulled).toEqual([]);
    expect(d.pulled).toEqual([12]);
    expect([a, b, c, d].every((f) => f.marks)).toBe(true);
    // Cached: no statement for the next reads.
    await Promise.all([1, 2, 3, 4].map((id) => cache.get(id)));
    expect(statements).toHaveLength(1);
  });

  it('splits a burst into batches of at most MAX_BATCH readers', async () => {
    const n = 3 * MAX_BATCH + 5;
    const follows: Record<number, number[]> = {};
    for (let i = 1; i <= n; i++) follows[i] = [100_000 + i];
    const { cache, statements } = world(follows, [], [100_001]);
    const loaded = await Promise.all(Array.from({ length: n }, (_, i) => cache.get(i + 1)));
    expect(statements.every((s) => s.length <= MAX_BATCH)).toBe(true);
    expect(statements.flat().sort((x, y) => x - y)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(loaded[0].pulled).toEqual([100_001]);
    expect(loaded[1].pulled).toEqual([]);
  });

  it('without Redis: Postgres only, not kept; a Postgres-only load asks no marks', async () => {
    const down = world({ 1: [10, 11] }, [10], [11], { redisDown: true });
    const f = await down.cache.get(1);
    expect(f.marks).toBe(false);
    expect(f.pulled).toEqual([10]);
    expect(down.cache.size).toBe(0);
    const up = world({ 1: [10, 11] }, [10], [11]);
    const pgOnly = await up.cache.get(1, false);
    expect(pgOnly.pulled).toEqual([10]);
    expect(up.mgets).toHaveLength(0);
  });

  it('refuses a bad user id alone, not the batch it would join', async () => {
    const { cache } = world({ 1: [10] }, [], []);
    const [bad, good] = await Promise.allSettled([cache.get(-1), cache.get(1)]);
    expect(bad.status === 'rejected' && bad.reason).toBeInstanceOf(BadRequestError);
    expect(good.status === 'fulfilled' && [...good.value.all]).toEqual([10]);
  });
});
