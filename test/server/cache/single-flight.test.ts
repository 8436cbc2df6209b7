// One rebuild per missing timeline on this machine's Redis: concurrent readers in one process share
// one load, two processes (two connections) contending for the Redis lock rebuild once, a dead
// holder's lock expires and a waiter takes over. Keys live under a prefix unique to this run and
// are removed afterwards. Without a reachable Redis the tests are skipped with one loud line,
// except under CI=true where they fail.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedPosition } from '../../../core/cursor.js';
import { timelineKey } from '../../../core/keys.js';
import { makePostId } from '../../../core/post-id.js';
import { closeRedis, connectRedis, dropKeyspace, keyspace } from '../../../server/cache/redis.js';
import { RebuildCoordinator, RebuildTimeoutError, SingleFlight, tryLock } from '../../../server/cache/single-flight.js';
import { TimelineCache } from '../../../server/cache/timelines.js';
import { CI, REDIS_URL, redisUnreachable } from './reachable.js';

const unreachable = await redisUnreachable('test/server/cache/single-flight.test.ts');

const ks = keyspace(`feedlab:test:${process.pid}-${randomUUID().slice(0, 8)}:single-flight:`);
const T0 = Date.UTC(2025, 5, 15, 12, 0, 0);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const posts: FeedPosition[] = Array.from({ length: 20 }, (_, i) => ({ createdAt: T0 + i, id: makePostId(T0 + i) }));

describe('SingleFlight', () => {
  it('shares one call among concurrent callers of a key, and runs anew once it settled', async () => {
    const flight = new SingleFlight<number>();
    let calls = 0;
    const fn = async () => {
      calls++;
      await sleep(20);
      return calls;
    };
    const results = await Promise.all([...Array.from({ length: 10 }, () => flight.run('a', fn)), flight.run('b', fn)]);
    expect(calls).toBe(2);
    expect(new Set(results.slice(0, 10)).size).toBe(1);
    expect(flight.size).toBe(0);
    await flight.run('a', fn);
    expect(calls).toBe(3);
    // A failure reaches every caller and does not stick.
    const failing = () => Promise.reject(new Error('boom'));
    await expect(Promise.all([flight.run('c', failing), flight.run('c', failing)])).rejects.toThrow('boom');
    expect(await flight.run('c', async () => 7)).toBe(7);
  });
});

describe.skipIf(unreachable !== null && !CI)('rebuild coordination on this machine\'s Redis', () => {
  let redis: Redis;
  let other: Redis; // a second process's connection
  let user = 0;
  const nextUser = () => ++user;

  beforeAll(async () => {
    redis = await connectRedis({ url: REDIS_URL });
    other = await connectRedis({ url: REDIS_URL });
  });

  afterAll(async () => {
    if (!redis) return;
    await dropKeyspace(redis, ks);
    await closeRedis(redis);
    if (other) await closeRedis(other);
  });

  it('runs the loader once for 50 concurrent rebuild requests in one process', async () => {
    const timelines = new TimelineCache(redis, ks);
    const coordinator = new RebuildCoordinator(redis, ks);
    const u = nextUser();
    let loads = 0;
    const load = async () => {
      loads++;
      await sleep(100); // the Postgres query
      return posts;
    };
    const outcomes = await Promise.all(Array.from({ length: 50 }, () => coordinator.ensure(timelineKey(u), () => timelines.rebuild(u, load))));
    expect(loads).toBe(1);
    expect(outcomes.filter((o) => o === 'rebuilt')).toHaveLength(1); // one rebuild, counted once
    expect(outcomes.filter((o) => o === 'joined')).toHaveLength(49);
    expect(await timelines.size(u)).toBe(posts.length);
    expect(await redis.exists(coordinator.lockKey(timelineKey(u)))).toBe(0);
    // Present now: no further load.
    expect(await coordinator.ensure(timelineKey(u), () => timelines.rebuild(u, load))).toBe('present');
    expect(loads).toBe(1);
  });

  it('rebuilds once when two processes contend for the Redis lock; the other waits for the key', async () => {
    const u = nextUser();
    let loads = 0;
    const load = async () => {
      loads++;
      await sleep(150);
      return posts.slice(0, 5);
    };
    const processes = [redis, other].map((conn) => ({
      timelines: new TimelineCache(conn, ks),
      coordinator: new RebuildCoordinator(conn, ks, { pollMinMs: 5, pollMaxMs: 20 }),
    }));
    // 25 readers in each process.
    const outcomes = await Promise.all(
      processes.flatMap(({ timelines, coordinator }) =>
        Array.from({ length: 25 }, () => coordinator.ensure(timelineKey(u), () => timelines.rebuild(u, load))),
      ),
    );
    expect(loads).toBe(1);
    expect([...new Set(outcomes)].sort()).toEqual(['joined', 'rebuilt', 'waited']);
    expect(outcomes.filter((o) => o === 'rebuilt')).toHaveLength(1);
    expect(await processes[1].timelines.readPage(u, { limit: 10 })).toEqual({ entries: posts.slice(0, 5).reverse(), more: false });
  });

  it('releases the lock after a failed rebuild so the next reader retries', async () => {
    const timelines = new TimelineCache(redis, ks);
    const coordinator = new RebuildCoordinator(redis, ks);
    const u = nextUser();
    const failing = () => timelines.rebuild(u, () => Promise.reject(new Error('postgres down')));
    await expect(Promise.all([coordinator.ensure(timelineKey(u), failing), coordinator.ensure(timelineKey(u), failing)])).rejects.toThrow('postgres down');
    expect(await redis.exists(coordinator.lockKey(timelineKey(u)))).toBe(0);
    expect(await coordinator.ensure(timelineKey(u), () => timelines.rebuild(u, () => []))).toBe('rebuilt');
    expect(await timelines.exists(u)).toBe(true);
  });

  it('takes over from a holder that died (its lock expires), and gives up waiting with RebuildTimeoutError', async () => {
    const timelines = new TimelineCache(redis, ks);
    const u = nextUser();
    const lockKey = new RebuildCoordinator(redis, ks).lockKey(timelineKey(u));
    // A process took the lock and died.
    expect(await tryLock(other, lockKey, 200)).not.toBeNull();
    const patient = new RebuildCoordinator(redis, ks, { waitMs: 5_000, pollMinMs: 5, pollMaxMs: 20 });
    const started = Date.now();
    expect(await patient.ensure(timelineKey(u), () => timelines.rebuild(u, () => posts))).toBe('rebuilt');
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);

    const v = nextUser();
    expect(await tryLock(other, patient.lockKey(timelineKey(v)), 10_000)).not.toBeNull();
    const impatient = new RebuildCoordinator(redis, ks, { waitMs: 100, pollMinMs: 5, pollMaxMs: 20 });
    await expect(impatient.ensure(timelineKey(v), () => timelines.rebuild(v, () => posts))).rejects.toThrow(RebuildTimeoutError);
    expect(await timelines.exists(v)).toBe(false);
  });

  it('lets only the owner release or extend a lock, and extends it while a long rebuild runs', async () => {
    const key = ks.key('lock-test');
    const mine = await tryLock(redis, key, 10_000);
    expect(mine).not.toBeNull();
    expect(await tryLock(other, key, 10_000)).toBeNull();
    // The lock expired and someone else took it: ours must not release theirs.
    await redis.set(key, 'someone-else', 'PX', 10_000);
    expect(await mine!.release()).toBe(false);
    expect(await mine!.extend(20_000)).toBe(false);
    expect(await redis.get(key)).toBe('someone-else');
    await redis.del(key);
    const again = await tryLock(redis, key, 10_000);
    expect(await again!.extend(20_000)).toBe(true);
    expect(await redis.pttl(key)).toBeGreaterThan(15_000);
    expect(await again!.release()).toBe(true);
    expect(await redis.exists(key)).toBe(0);

    // A rebuild longer than the lock's TTL keeps the lock (heartbeat), so nobody rebuilds twice.
    const timelines = new TimelineCache(redis, ks);
    const u = nextUser();
    let loads = 0;
    const slow = async () => {
      loads++;
      await sleep(400);
      return posts;
    };
    const a = new RebuildCoordinator(redis, ks, { lockTtlMs: 150, pollMinMs: 5, pollMaxMs: 20 });
    const b = new RebuildCoordinator(other, ks, { lockTtlMs: 150, pollMinMs: 5, pollMaxMs: 20 });
    const first = a.ensure(timelineKey(u), () => timelines.rebuild(u, slow));
    await sleep(50);
    const second = b.ensure(timelineKey(u), () => new TimelineCache(other, ks).rebuild(u, slow));
    expect(await Promise.all([first, second])).toEqual(['rebuilt', 'waited']);
    expect(loads).toBe(1);
  });
});
