// Post-body hydration on this machine's Redis: one MGET returns the cached bodies and the ids to
// fetch from Postgres. Keys live under a prefix unique to this run and are removed afterwards.
// Without a reachable Redis the tests are skipped with one loud line, except under CI=true.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import { makePostId } from '../../../core/post-id.js';
import { PostBodyCache, DEFAULT_POST_BODY_TTL_MS } from '../../../server/cache/post-bodies.js';
import { keyspace } from '../../../server/cache/redis.js';
import { CI, redisUnreachable, useRedis } from './reachable.js';

const unreachable = await redisUnreachable('test/server/cache/post-bodies.test.ts');

const ks = keyspace(`feedlab:test:${process.pid}-${randomUUID().slice(0, 8)}:bodies:`);
const T0 = Date.UTC(2025, 5, 15, 12, 0, 0);

interface Body {
  id: string;
  authorId: number;
  text: string;
}

describe.skipIf(unreachable !== null && !CI)('post bodies on this machine\'s Redis', () => {
  let redis: Redis;
  useRedis(ks, (r) => (redis = r));

  it('hydrates a page in one MGET, returning the missing ids in order, each once', async () => {
    const bodies = new PostBodyCache<Body>(redis, ks, { ttlMs: 60_000 });
    const [a, b, c, x, y] = [1, 2, 3, 4, 5].map((i) => makePostId(T0 + i));
    const body = (id: string, authorId: number): Body => ({ id, authorId, text: `post ${id} by ${authorId}, "quoted" ✓` });
    await bodies.setMany([
      { id: a, body: body(a, 1) },
      { id: b, body: body(b, 2) },
      { id: c, body: body(c, 3) },
    ]);
    const mget = vi.spyOn(redis, 'mget');
    const got = await bodies.getMany([y, a, x, b, a, y]);
    expect(mget).toHaveBeenCalledTimes(1);
    mget.mockRestore();
    expect([...got.hits.keys()]).toEqual([a, b]);
    expect(got.hits.get(a)).toEqual(body(a, 1));
    expect(got.missing).toEqual([y, x]);
    // Each body has its TTL.
    const ttl = await redis.pttl(bodies.key(c));
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    // Backfilling the misses completes the next hydration.
    await bodies.setMany([{ id: x, body: body(x, 4) }]);
    expect((await bodies.getMany([a, x, y])).missing).toEqual([y]);
  });

  it('deletes bodies, treats unreadable ones as missing, and answers an empty request without Redis', async () => {
    const bodies = new PostBodyCache<Body>(redis, ks);
    expect(bodies.ttlMs).toBe(DEFAULT_POST_BODY_TTL_MS);
    const [a, b] = [10, 11].map((i) => makePostId(T0 + i));
    await bodies.setMany([{ id: a, body: { id: a, authorId: 1, text: 'hi' } }]);
    await redis.set(bodies.key(b), '{"truncated', 'PX', 60_000);
    expect((await bodies.getMany([a, b])).missing).toEqual([b]);
    expect(await bodies.delete([a, b])).toBe(2);
    expect((await bodies.getMany([a])).missing).toEqual([a]);
    expect(await bodies.getMany([])).toEqual({ hits: new Map(), missing: [] });
    expect(await bodies.delete([])).toBe(0);
  });
});
