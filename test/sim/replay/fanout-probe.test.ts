// The replay's fan-out probe on this machine's Redis: a pushed post's lag is the middle of the
// interval its polls bound, a pulled post's is the server's own Server-Timing when it sent one (the
// list held the post before the 201, which no poll can time), else the middle of creation to the 201.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { authorPostsKey, timelineKey } from '../../../core/keys.js';
import { keyspace } from '../../../server/cache/redis.js';
import { FanoutProbe } from '../../../sim/replay/fanout-probe.js';
import { CI, redisUnreachable, useRedis } from '../../server/cache/reachable.js';

const unreachable = await redisUnreachable('test/sim/replay/fanout-probe.test.ts');
const prefix = `feedlab:test:probe:${process.pid}-${randomUUID().slice(0, 8)}:`;

describe.skipIf(unreachable !== null && !CI)("the fan-out probe on this machine's Redis", () => {
  let redis: Redis;
  useRedis(keyspace(prefix), (r) => (redis = r));
  const created = 1_800_000_000_000;

  function probe(now: () => number): FanoutProbe {
    return new FanoutProbe({ redis, keyPrefix: prefix, pollMs: 5, giveUpMs: 60_000, maxPending: 100, intervalMs: 1_000, startedAtMs: created, clock: now });
  }

  it("takes a pulled post's lag from the server's Server-Timing, exactly, weighted by its audience", async () => {
    await redis.zadd(prefix + authorPostsKey(7), created, 'p1');
    await redis.zadd(prefix + authorPostsKey(8), created, 'p2');
    const p = probe(() => created + 40);
    // answered 30 ms after its creation; the server said its list held it after 3.25 ms
    p.watch('p1', created, 7, [], true, 500, created + 30, 3.25);
    // a server that says nothing: the middle of creation to the 201
    p.watch('p2', created, 8, [], true, 500, created + 30);
    const f = await p.finish();
    expect(f.pulledPosts).toBe(2);
    expect(f.pulledTimed).toBe(1);
    expect(f.pulledPostLag.count).toBe(2);
    expect(f.pulledPostLag.max).toBeCloseTo(0.015, 4);
    expect(f.pulledFollowerLag.count).toBe(1_000);
    // HDR's 3 significant digits
    expect(Math.abs(f.pulledFollowerLag.mean - (0.00325 + 0.015) / 2)).toBeLessThan(2e-5);
    expect(Math.abs(f.postLag.mean - (0.00325 + 0.015) / 2)).toBeLessThan(2e-5);
  });

  it("ignores a Server-Timing for a pushed post: its lag is its polls'", async () => {
    await redis.zadd(prefix + timelineKey(9), created, 'p3');
    const p = probe(() => created + 20);
    p.watch('p3', created, 1, [9], false, 1, Infinity, 3.25);
    const f = await p.finish();
    expect(f.followerLag.count).toBe(1);
    // found at the first poll, at (send + answer) / 2 of the clock: 20 ms; the middle of 0-20 ms
    expect(f.followerLag.max).toBeCloseTo(0.01, 4);
  });
});
