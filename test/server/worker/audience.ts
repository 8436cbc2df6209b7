// An author and n active followers, each with an existing (empty) cached timeline: the fan-out's
// targets in the worker process's tests. Ids from `first` on (the author, then its followers).
import type { Redis } from 'ioredis';
import { EMPTY_SENTINEL, SENTINEL_SCORE } from '../../../server/cache/post-list.js';
import type { TimelineCache } from '../../../server/cache/timelines.js';
import type { Store } from '../../../server/store/pool.js';

const WEEK_MS = 7 * 86_400_000;

export async function makeAudience(store: Store, redis: Redis, timelines: TimelineCache, author: number, n: number): Promise<{ author: number; followers: number[] }> {
  const first = author + 1;
  await store.pool.query(
    `INSERT INTO users (id, handle, follower_count, followee_count)
     SELECT $1::int8, 'u' || $1::int8, $2::int8, 0
     UNION ALL SELECT g, 'u' || g, 0, 1 FROM generate_series($3::int8, $3::int8 + $2::int8 - 1) g`,
    [author, n, first],
  );
  await store.pool.query(`INSERT INTO follows (follower_id, followee_id) SELECT g, $1 FROM generate_series($2::int8, $2::int8 + $3::int8 - 1) g`, [author, first, n]);
  const followers = Array.from({ length: n }, (_, i) => first + i);
  for (let i = 0; i < n; i += 10_000) {
    const p = redis.pipeline();
    for (const f of followers.slice(i, i + 10_000)) p.zadd(timelines.key(f), SENTINEL_SCORE, EMPTY_SENTINEL).pexpire(timelines.key(f), WEEK_MS);
    await p.exec();
  }
  return { author, followers };
}
