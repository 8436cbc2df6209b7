// The registry of pulled authors on this machine's Redis: marks renewed but never shortened, a
// clear that loses to a pull made meanwhile, lapsed marks ignored and dropped, the version moving
// exactly when the membership does, and an API instance's copy re-read only when it moved.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PulledAuthorRegistry, PulledAuthorsView } from '../../../server/cache/pulled-authors.js';
import { closeRedis, connectRedis, dropKeyspace, keyspace, type Keyspace } from '../../../server/cache/redis.js';
import { CI, REDIS_URL, redisUnreachable } from './reachable.js';

const unreachable = await redisUnreachable('test/server/cache/pulled-authors.test.ts');

const run = `feedlab:test:${process.pid}-${randomUUID().slice(0, 8)}:pulled`;
let n = 0;
/** A key space of its own per test: the registry is one key per space. */
const fresh = (): Keyspace => keyspace(`${run}:${n++}:`);

describe.skipIf(unreachable !== null && !CI)('the registry of pulled authors on this machine\'s Redis', () => {
  let redis: Redis;
  let now = 1_800_000_000_000;
  const clock = () => now;

  beforeAll(async () => {
    redis = await connectRedis({ url: REDIS_URL });
  });

  afterAll(async () => {
    if (!redis) return;
    for (let i = 0; i < n; i++) await dropKeyspace(redis, keyspace(`${run}:${i}:`));
    await closeRedis(redis);
  });

  it('marks an author until a time, renews but never shortens it (every mark changes it), and moves the version only for a new member', async () => {
    const r = new PulledAuthorRegistry(redis, fresh(), clock);
    expect(await r.version()).toBeNull();
    expect(await r.mark(7, now + 1_000)).toBe(true);
    expect(await r.version()).toBe('1');
    expect(await r.markOf(7)).toBe(now + 1_000);
    expect(await r.mark(7, now + 5_000)).toBe(false);
    expect(await r.mark(7, now + 2_000)).toBe(false); // an older pull handled late: moved on by 1 ms
    expect(await r.markOf(7)).toBe(now + 5_001);
    expect(await r.version()).toBe('1');
    expect(await r.mark(9, now + 1_000)).toBe(true);
    expect(await r.version()).toBe('2');
    expect(await r.members()).toEqual(new Set([7, 9]));
    expect(await r.marked([1, 7, 8, 9])).toEqual(new Set([7, 9]));
  });

  it('clears only with the score read before: a pull renewed meanwhile keeps its mark', async () => {
    const r = new PulledAuthorRegistry(redis, fresh(), clock);
    await r.mark(7, now + 1_000);
    const read = (await r.markOf(7)) as number;
    await r.mark(7, now + 3_000); // a pull handled by another consumer during the backfill
    expect(await r.clear(7, read)).toBe(false);
    expect(await r.markOf(7)).toBe(now + 3_000);
    expect(await r.version()).toBe('1');
    expect(await r.clear(7, now + 3_000)).toBe(true);
    expect(await r.markOf(7)).toBeNull();
    expect(await r.version()).toBe('2');
    expect(await r.clear(7, now + 3_000)).toBe(false);
    expect(await r.version()).toBe('2');
  });

  it('keeps a mark made after the backfill read it, also by a consumer whose clock is behind or in the same ms', async () => {
    for (const behindMs of [20, 0]) {
      const ks = fresh();
      const w1 = new PulledAuthorRegistry(redis, ks, clock);
      const w2 = new PulledAuthorRegistry(redis, ks, () => now - behindMs);
      await w1.mark(7, now + 60_000); // a pull
      const read = (await w1.markOf(7)) as number; // a push reads the mark and backfills
      await w2.mark(7, now - behindMs + 60_000); // another consumer pulls the next post meanwhile
      expect(await w1.clear(7, read)).toBe(false);
      expect(await w1.markOf(7)).toBe(read + 1);
    }
  });

  it('ignores a lapsed mark, and the next mark drops it (moving the version)', async () => {
    const r = new PulledAuthorRegistry(redis, fresh(), clock);
    await r.mark(7, now + 1_000);
    await r.mark(8, now + 10_000);
    now += 1_000;
    expect(await r.markOf(7)).toBeNull();
    expect(await r.marked([7, 8])).toEqual(new Set([8]));
    expect(await r.members()).toEqual(new Set([8]));
    expect(await redis.zcard(r.key)).toBe(2);
    expect(await r.mark(8, now + 10_000)).toBe(false);
    expect(await redis.zcard(r.key)).toBe(1);
    expect(await r.version()).toBe('3');
    // A lapsed author marked again is a new member.
    expect(await r.mark(7, now + 1_000)).toBe(true);
  });

  it('an instance\'s copy asks for the version at most once per poll interval and reads marks again only when it moved', async () => {
    const r = new PulledAuthorRegistry(redis, fresh(), clock);
    await r.mark(7, now + 60_000);
    const view = new PulledAuthorsView(r, { pollMs: 1_000, clock });
    const versions = vi.spyOn(r, 'version');
    const reads = vi.spyOn(r, 'markedAfter');
    // Concurrent reads share one poll.
    const [a, b] = await Promise.all([view.current(), view.current()]);
    expect(a).toEqual(new Set([7]));
    expect(b).toBe(a);
    expect([versions.mock.calls.length, reads.mock.calls.length]).toEqual([1, 1]);

    await r.mark(9, now + 60_000);
    now += 999;
    expect(await view.current()).toEqual(new Set([7])); // within the interval: the copy
    now += 1;
    expect(await view.current()).toEqual(new Set([7, 9]));
    expect([versions.mock.calls.length, reads.mock.calls.length]).toEqual([2, 2]);
    now += 1_000;
    await view.current(); // version unchanged: no marks read
    expect([versions.mock.calls.length, reads.mock.calls.length]).toEqual([3, 2]);
  });

  it('reads only the marks made since the latest it saw (a worker\'s clock up to 10 s behind included); clears reach it at the next whole read', async () => {
    const ks = fresh();
    const r = new PulledAuthorRegistry(redis, ks, clock);
    const late = new PulledAuthorRegistry(redis, ks, () => now - 9_000);
    const t0 = now;
    await r.mark(7, now + 600_000);
    const view = new PulledAuthorsView(r, { pollMs: 0, resyncMs: 60_000, clock });
    const reads = vi.spyOn(r, 'markedAfter');
    expect(await view.current()).toEqual(new Set([7]));
    expect(reads.mock.calls[0][0]).toBe(t0); // the whole registry: every mark not lapsed

    now += 1_000;
    await late.mark(9, now - 9_000 + 600_000); // a consumer whose clock is 9 s behind
    expect(await view.current()).toEqual(new Set([7, 9]));
    expect(reads.mock.calls[1][0]).toBe(t0 + 600_000 - 10_000); // from the latest lapse time seen, less the skew

    // Cleared: still in the copy (a list merged for nothing) until the next whole read.
    await r.clear(9, (await r.markOf(9)) as number);
    expect(await view.current()).toEqual(new Set([7, 9]));
    now += 60_000;
    expect(await view.current()).toEqual(new Set([7]));
  });

  it('refuses a negative poll or resync interval', () => {
    expect(() => new PulledAuthorsView(new PulledAuthorRegistry(redis, fresh()), { pollMs: -1 })).toThrow('poll interval -1 ms must be 0 or more');
    expect(() => new PulledAuthorsView(new PulledAuthorRegistry(redis, fresh()), { resyncMs: -1 })).toThrow('resync interval -1 ms must be 0 or more');
  });
});
