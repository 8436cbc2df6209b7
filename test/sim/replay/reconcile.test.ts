// The replay's reconciliation (sim/replay/reconcile.ts) against this machine's Redis and Postgres,
// on a world made by hand: every kind of loss it must find (an acknowledged post not stored, a post
// stored twice, a delivery missing from a cached timeline or a cached author's list), what it must
// not call a loss (a follower without a cached timeline, one the policy does not reach, an entry
// trimmed off a full timeline, a fan-out that had not settled), and the posts that committed
// without a 201.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorPostsKey, timelineKey } from '../../../core/keys.js';
import { connectRedis, keyspace, redisUrlFromEnv } from '../../../server/cache/redis.js';
import { migrate } from '../../../server/store/migrate.js';
import { createStore, type Store } from '../../../server/store/pool.js';
import type { PostOutcome } from '../../../sim/replay/driver-result.js';
import { reconcile, reconciliationLine, type ReconcileInput } from '../../../sim/replay/reconcile.js';
import { dropPostgresState, dropRedisState, skipWithoutServices } from '../../server/services.js';

const SKIP = await skipWithoutServices('test/sim/replay/reconcile.test.ts');
const tag = `${process.pid}_${randomBytes(3).toString('hex')}`;
const schema = `fl_test_reconcile_${tag}`;
const keys = keyspace(`feedlab:test:reconcile:${tag}:`);
let store: Store;
let redis: Redis;

beforeAll(async () => {
  if (SKIP) return;
  store = createStore({ schema, max: 2 });
  await migrate(store);
  await store.pool.query(`INSERT INTO users (id, handle) SELECT g, 'u' || g FROM generate_series(1, 20) g`);
  redis = await connectRedis({ url: redisUrlFromEnv() });
});

afterAll(async () => {
  await dropRedisState(redis, keys);
  await dropPostgresState(store, schema);
});

const T0 = 1_790_000_000_000;
const outcome = (i: number, authorId: number, status: number, id: string | null): PostOutcome => ({
  id,
  authorId,
  burst: false,
  createdAt: id === null ? null : T0 + i,
  intendedMs: i,
  sentMs: i,
  answeredMs: i + 1,
  status,
  outcome: status === 201 ? 'created' : 'failed',
});
/** Scheduled post i's text: the driver's posts are by schedule index (their position). */
const text = (i: number) => `scheduled post ${i}`;
/** Post `id` stored as scheduled post `i` (what the server committed for it). */
const store_ = (id: string, author: number, i: number) => store.pool.query(`INSERT INTO posts (id, author_id, body, created_at) VALUES ($1, $2, $3, $4)`, [id, author, text(i), new Date(T0 + i)]);
/** The driver's outcomes of scheduled posts `first`, `first + 1`, ...: padded before with posts never sent. */
const schedule = (first: number, ...posts: PostOutcome[]): PostOutcome[] => [
  ...Array.from({ length: first }, (_, i) => ({ ...outcome(i, 1, 0, null), sentMs: null, outcome: 'not-sent' as const })),
  ...posts,
];
const tl = (u: number) => keys.prefix + timelineKey(u);

function input(posts: PostOutcome[], over: Partial<ReconcileInput> = {}): ReconcileInput {
  return {
    redis,
    store,
    keyPrefix: keys.prefix,
    posts,
    textOf: text,
    // author 1 (pushed) has followers 10-14; author 2 (pulled) has 15, 16
    followersOf: (a) => (a === 1 ? [10, 11, 12, 13, 14] : [15, 16]),
    pushed: (a) => a === 1,
    // 14 is dormant: not reached by a push
    reached: (u) => u !== 14,
    timelineCap: 3,
    listCap: 2,
    sinceMs: T0 - 60_000,
    settled: true,
    ...over,
  };
}

describe.skipIf(SKIP)('the reconciliation', () => {
  it('finds nothing lost where every acknowledged post is stored and delivered, and does not count what the read path makes up for', async () => {
    await store_('101', 1, 0);
    await store_('102', 2, 1);
    // 10, 11 hold the pushed post; 12's timeline is full of newer posts (trimmed); 13 has none (rebuilt on read)
    await redis.zadd(tl(10), T0, '101');
    await redis.zadd(tl(11), T0, '101', T0 + 50, '999');
    await redis.zadd(tl(12), T0 + 10, 'a', T0 + 11, 'b', T0 + 12, 'c');
    // the pulled post in its author's list
    await redis.zadd(keys.prefix + authorPostsKey(2), T0 + 1, '102');
    const r = await reconcile(input([outcome(0, 1, 201, '101'), outcome(1, 2, 201, '102')]));
    expect(r).toMatchObject({ acknowledged: 2, stored: 2, lost: 0, duplicated: 0, ok: true });
    expect(r.deliveries).toEqual({ checked: 3, delivered: 2, trimmed: 1, rebuiltOnRead: 1, pulledChecked: 1, pulledListed: 1, pulledRebuiltOnRead: 0, missing: 0, unchecked: 0 });
    expect(r.committedUnacknowledged).toEqual({ status503: 0, otherStatus: 0, noAnswer: 0 });
  });

  it('finds an acknowledged post not stored, one stored twice, a missing delivery, and what committed without a 201', async () => {
    await store_('201', 1, 10);
    await store_('202', 1, 10); // the same scheduled post twice
    await store_('203', 1, 12); // answered 503, committed anyway
    await store_('204', 1, 13); // no answer, committed
    await redis.del(tl(10), tl(11), tl(12));
    await redis.zadd(tl(10), T0 + 10, '201');
    await redis.zadd(tl(11), T0 - 5, 'older'); // present, not full, without the post: missing
    const posts = schedule(10, outcome(10, 1, 201, '201'), outcome(11, 1, 201, '299'), outcome(12, 1, 503, null), { ...outcome(13, 1, 0, null), outcome: 'timeout' as const });
    const r = await reconcile(input(posts));
    expect(r).toMatchObject({ acknowledged: 2, stored: 1, lost: 1, duplicated: 1, ok: false });
    expect(r.examples.lost).toEqual(['299']);
    expect(r.committedUnacknowledged).toEqual({ status503: 1, otherStatus: 0, noAnswer: 1 });
    expect(r.deliveries).toMatchObject({ checked: 2, delivered: 1, missing: 1 });
    expect(r.examples.missing).toEqual([`201 in ${timelineKey(11)}`]);
    expect(reconciliationLine(r)).toBe(
      `1 of 2 acknowledged posts in Postgres (1 LOST: 299); 1 duplicated; 1 of 2 deliveries to cached timelines, 0 of 0 pulled posts in their author's list; 1 MISSING: 201 in ${timelineKey(11)}; committed without a 201: 1 answered 503, 0 another status, 1 unanswered`,
    );
  });

  it('calls a missing delivery pending, not lost, when the fan-out had not settled; and leaves run-time decisions unchecked', async () => {
    await store_('301', 2, 20);
    await redis.del(keys.prefix + authorPostsKey(2));
    await redis.zadd(keys.prefix + authorPostsKey(2), T0 - 1, 'older');
    const pending = await reconcile(input(schedule(20, outcome(20, 2, 201, '301')), { settled: false }));
    expect(pending).toMatchObject({ ok: true, settled: false, deliveries: { pulledChecked: 1, pulledListed: 0, missing: 1 } });
    expect(reconciliationLine(pending)).toContain('1 pending (the fan-out had not settled)');
    const adaptive = await reconcile(input(schedule(20, outcome(20, 2, 201, '301')), { pushed: () => null }));
    expect(adaptive).toMatchObject({ ok: true, deliveries: { unchecked: 1, pulledChecked: 0, missing: 0 } });
  });

  it("counts a pulled post trimmed off its author's full list, and not a post of the same text made before the run, as losses", async () => {
    await store_('401', 2, 30);
    // the list at its cap (2) with newer posts: 401 left it
    await redis.del(keys.prefix + authorPostsKey(2));
    await redis.zadd(keys.prefix + authorPostsKey(2), T0 + 31, 'n1', T0 + 32, 'n2');
    // the same scheduled text stored long before the run (an earlier replay of the world): not a duplicate
    await store.pool.query(`INSERT INTO posts (id, author_id, body, created_at) VALUES ('402', 2, $1, $2)`, [text(30), new Date(T0 - 3_600_000)]);
    const r = await reconcile(input(schedule(30, outcome(30, 2, 201, '401'))));
    expect(r).toMatchObject({ ok: true, duplicated: 0, deliveries: { pulledChecked: 1, pulledListed: 0, trimmed: 1, missing: 0 } });
    // from before the run on, it is one
    expect((await reconcile(input(schedule(30, outcome(30, 2, 201, '401')), { sinceMs: T0 - 7_200_000 }))).duplicated).toBe(1);
  });
});
