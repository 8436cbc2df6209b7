// The repository and the Postgres outbox against the real Postgres ($DATABASE_URL, else the local
// default), in throwaway schemas dropped afterwards.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { compareNewestFirst, type FeedPosition } from '../../../core/cursor.js';
import { PostIdGenerator, postIdTime, type PostId } from '../../../core/post-id.js';
import { generateGraph } from '../../../sim/graph/generate.js';
import { OutboxRelay } from '../../../server/events/relay.js';
import type { PostEvent } from '../../../server/events/event-log.js';
import { bulkLoadGraph } from '../../../server/store/bulk-load.js';
import { DatabaseUnavailableError } from '../../../server/store/errors.js';
import { migrate } from '../../../server/store/migrate.js';
import { FanoutLedger } from '../../../server/store/fanout-ledger.js';
import { PostgresOutbox, type OutboxRow } from '../../../server/store/outbox.js';
import { createStore, probeDatabase, type Store } from '../../../server/store/pool.js';
import {
  BadRequestError,
  FeedRepository,
  FOLLOWERS_PAGE_SQL,
  ForbiddenError,
  NotFoundError,
  OutcomeUnknownError,
  POST_ID_ATTEMPTS,
  PREPARED,
  REBUILD_TIMELINE_SQL,
  USER_POSTS_SQL,
  type PostIdSource,
} from '../../../server/store/repository.js';

const DOWN = await probeDatabase(process.env.DATABASE_URL, 2000);
const SKIP = DOWN !== undefined && process.env.CI !== 'true';
if (SKIP) console.warn(`\n!!! SKIPPING the Postgres repository tests: ${DOWN} (set DATABASE_URL; under CI=true they fail instead)\n`);

const tag = `${process.pid}_${randomBytes(4).toString('hex')}`;
const schema = `fl_test_repo_${tag}`;
const loadedSchema = `fl_test_repo_load_${tag}`;
const stores: Store[] = [];
let store: Store;
let repo: FeedRepository;

function newStore(s: string, opts: { max?: number; applicationName?: string; databaseUrl?: string; connectTimeoutMs?: number } = {}): Store {
  const st = createStore({ schema: s, max: opts.max ?? 4, ...opts });
  stores.push(st);
  return st;
}

const DAY = 86_400_000;
const NOW = Date.now();
let workerId = 1;
/** A generator on a fixed clock (every id in the same millisecond), with its own worker id. */
const genAt = (ms: number) => new PostIdGenerator(workerId++, () => ms);
const gen = new PostIdGenerator(0);

let nextUser = 1000;
/** Fresh users (ids never reused between tests), seen at lastSeenMs. */
async function addUsers(n: number, lastSeenMs = NOW): Promise<number[]> {
  const ids = Array.from({ length: n }, () => nextUser++);
  await store.pool.query(`INSERT INTO users (id, handle, last_seen_at) SELECT id, 'u' || id, $2 FROM unnest($1::int8[]) id`, [ids, new Date(lastSeenMs)]);
  return ids;
}

async function outboxFor(postId: PostId) {
  const r = await store.pool.query<{ kind: string; author_id: string; payload: Record<string, unknown> }>(
    'SELECT kind, author_id::text AS author_id, payload FROM outbox WHERE post_id = $1 ORDER BY id',
    [postId],
  );
  return r.rows;
}

async function postExists(postId: PostId): Promise<boolean> {
  return (await store.pool.query('SELECT 1 FROM posts WHERE id = $1', [postId])).rowCount === 1;
}

/** The counts the store keeps, beside those recomputed from the follows rows. */
async function countsDrift(ids: number[]): Promise<number> {
  const r = await store.pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM users u WHERE u.id = ANY ($1::int8[]) AND (
       u.follower_count <> (SELECT count(*) FROM follows f WHERE f.followee_id = u.id) OR
       u.followee_count <> (SELECT count(*) FROM follows f WHERE f.follower_id = u.id))`,
    [ids],
  );
  return Number(r.rows[0].n);
}

beforeAll(async () => {
  if (SKIP) return;
  store = newStore(schema, { max: 24 });
  await migrate(store);
  repo = new FeedRepository(store);
});

afterAll(async () => {
  if (DOWN === undefined && store) {
    for (const s of [schema, loadedSchema]) await store.pool.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  }
  await Promise.all(stores.map((s) => s.pool.end()));
});

describe.skipIf(SKIP)('posting', () => {
  it('commits a post and its PostCreated outbox row together, createdAt = postIdTime(id)', async () => {
    const [author] = await addUsers(1);
    const post = await repo.createPost(author, 'hello 🌍', gen);
    expect(post.createdAt).toBe(postIdTime(post.id));
    const stored = (await repo.getPosts([post.id])).get(post.id);
    expect(stored).toEqual({ id: post.id, authorId: author, body: 'hello 🌍', createdAt: post.createdAt, deleted: false });
    expect(await outboxFor(post.id)).toEqual([
      { kind: 'PostCreated', author_id: String(author), payload: { postId: post.id, authorId: author, createdAt: post.createdAt, bodyLength: 7 } },
    ]);
  });

  it('rolls the post back when its outbox row fails, and writes no outbox row for an unknown author', async () => {
    const [author] = await addUsers(1);
    const ids: PostId[] = [];
    const recording: PostIdSource = { next: () => (ids.push(gen.next()), ids[ids.length - 1]) };
    await store.pool.query(`ALTER TABLE outbox ADD CONSTRAINT test_refuse_created CHECK (kind <> 'PostCreated') NOT VALID`);
    try {
      await expect(repo.createPost(author, 'never acknowledged', recording)).rejects.toMatchObject({ code: '23514' });
    } finally {
      await store.pool.query('ALTER TABLE outbox DROP CONSTRAINT test_refuse_created');
    }
    expect(ids).toHaveLength(1);
    expect(await postExists(ids[0])).toBe(false);
    expect(await outboxFor(ids[0])).toEqual([]);

    await expect(repo.createPost(999_999_999, 'who?', recording)).rejects.toThrow(NotFoundError);
    expect(await postExists(ids[1])).toBe(false);
    expect(await outboxFor(ids[1])).toEqual([]);

    // The connection that saw the failures is fine: the next post commits.
    const ok = await repo.createPost(author, 'works', recording);
    expect(await outboxFor(ok.id)).toHaveLength(1);
  });

  it('takes a fresh id when a post id is taken (another generator with the same worker id), up to POST_ID_ATTEMPTS tries', async () => {
    const [author] = await addUsers(1);
    const taken = await repo.createPost(author, 'first', gen);
    const fresh = gen.next();
    const queue = [taken.id, taken.id, fresh];
    const colliding: PostIdSource = { next: () => queue.shift()! };
    const post = await repo.createPost(author, 'second', colliding);
    expect(post.id).toBe(fresh);
    expect(await outboxFor(fresh)).toHaveLength(1);
    expect(await outboxFor(taken.id)).toHaveLength(1);

    const stuck: PostIdSource = { next: () => taken.id };
    await expect(repo.createPost(author, 'third', stuck)).rejects.toThrow(/already exists \(3 tries\): two id generators share worker id/);
    expect(POST_ID_ATTEMPTS).toBe(3);
  });

  it('refuses bodies that are empty, over 280 code points or not strings, and counts an emoji as one', async () => {
    const [author] = await addUsers(1);
    const emoji = '😀';
    for (const bad of ['', 'a'.repeat(281), emoji.repeat(281), 'x'.repeat(10_000), 42, null, undefined, { text: 'hi' }, ['hi'], 'nul\0byte', 'lone \uD83D half']) {
      await expect(repo.createPost(author, bad, gen), JSON.stringify(bad)?.slice(0, 30)).rejects.toThrow(BadRequestError);
    }
    for (const good of ['a', 'a'.repeat(280), emoji.repeat(280), `${'é'.repeat(279)}${emoji}`]) {
      const post = await repo.createPost(author, good, gen);
      const r = await store.pool.query<{ n: number }>('SELECT char_length(body) AS n FROM posts WHERE id = $1', [post.id]);
      expect(r.rows[0].n).toBe([...good].length);
    }
    const count = await store.pool.query('SELECT 1 FROM posts WHERE author_id = $1', [author]);
    expect(count.rowCount).toBe(4);
  });

  it('answers DatabaseUnavailableError when Postgres is unreachable, and a post lost mid-statement as of unknown outcome unless keyed', async () => {
    const [author] = await addUsers(1);
    const nowhere = new FeedRepository(newStore('public', { databaseUrl: 'postgres://root:secret@127.0.0.1:1/x', connectTimeoutMs: 500 }));
    const refused = nowhere.createPost(author, 'lost?', gen);
    await expect(refused).rejects.toThrow(DatabaseUnavailableError);
    await expect(refused).rejects.not.toThrow(/secret/);
    // never sent: known not to have committed, so a retry is safe (a 503)
    await expect(refused).rejects.toMatchObject({ sentBeforeLost: false });
    await expect(nowhere.follow(1, 2)).rejects.toThrow(DatabaseUnavailableError);

    // A posting statement blocked on a lock, whose backend is then terminated: nothing committed, but
    // the client cannot know: without a key, its outcome is unknown (not a 503 "retry shortly").
    const app = `fl_victim_${tag}`;
    const victim = new FeedRepository(newStore(schema, { max: 2, applicationName: app }));
    const locker = await store.pool.connect();
    const ids: PostId[] = [];
    const recording: PostIdSource = { next: () => (ids.push(gen.next()), ids[ids.length - 1]) };
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE posts IN ACCESS EXCLUSIVE MODE');
      const pending = victim.createPost(author, 'in flight', recording);
      pending.catch(() => {});
      for (let i = 0; i < 200; i++) {
        const r = await store.pool.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, [app]);
        if (r.rowCount) break;
        await new Promise((res) => setTimeout(res, 10));
      }
      await expect(pending).rejects.toThrow(OutcomeUnknownError);
      await expect(pending).rejects.toThrow(`Postgres stopped answering while post ${ids[0]} was being committed`);
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
    }
    expect(await postExists(ids[0])).toBe(false);
    expect(await outboxFor(ids[0])).toEqual([]);
    // It resumes by itself.
    const after = await victim.createPost(author, 'back', recording);
    expect(await postExists(after.id)).toBe(true);

    // A statement that does not answer within the query timeout: an answer in time. The statement may
    // still commit once the lock goes (the usual ambiguity of a lost reply), but never half of it:
    // with a key, a DatabaseUnavailableError (503: the retry is safe), without, of unknown outcome.
    const impatient = new FeedRepository(newStore(schema, { max: 2 }), { queryTimeoutMs: 300 });
    const blocker = await store.pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE outbox IN ACCESS EXCLUSIVE MODE');
      const t0 = Date.now();
      const keyed = impatient.createPost(author, 'slow', recording, 'slow-key');
      await expect(keyed).rejects.toThrow(/did not answer within 300 ms/);
      await expect(keyed).rejects.toMatchObject({ name: 'DatabaseUnavailableError', sentBeforeLost: true });
      await expect(impatient.createPost(author, 'slow', recording)).rejects.toThrow(OutcomeUnknownError);
      expect(Date.now() - t0).toBeLessThan(3000);
    } finally {
      await blocker.query('ROLLBACK');
      blocker.release();
    }
    await new Promise((res) => setTimeout(res, 100));
    for (const id of ids.slice(-2)) expect(await postExists(id)).toBe((await outboxFor(id)).length === 1);
  });
});

describe.skipIf(SKIP)('deleting', () => {
  it('lets only the author delete, soft-deletes with a PostDeleted outbox row, and 404s a second delete', async () => {
    const [author, other] = await addUsers(2);
    const post = await repo.createPost(author, 'regret', gen);
    await expect(repo.deletePost(post.id, other)).rejects.toThrow(ForbiddenError);
    expect((await repo.getPosts([post.id])).get(post.id)?.deleted).toBe(false);
    expect(await outboxFor(post.id)).toHaveLength(1);

    expect(await repo.deletePost(post.id, author)).toEqual({ id: post.id, authorId: author, createdAt: post.createdAt });
    const outbox = await outboxFor(post.id);
    expect(outbox.map((r) => r.kind)).toEqual(['PostCreated', 'PostDeleted']);
    expect(outbox[1].payload).toEqual({ postId: post.id, authorId: author, createdAt: post.createdAt });
    expect((await repo.getPosts([post.id])).get(post.id)).toEqual({ id: post.id, authorId: author, body: '', createdAt: post.createdAt, deleted: true });
    expect(await repo.livePostIds([post.id])).toEqual(new Set());
    expect(await repo.userPostsPage(author, null, 10)).toEqual([]);
    const row = await store.pool.query('SELECT body FROM posts WHERE id = $1 AND deleted_at IS NOT NULL', [post.id]);
    expect(row.rows).toEqual([{ body: 'regret' }]);

    await expect(repo.deletePost(post.id, author)).rejects.toThrow(NotFoundError);
    await expect(repo.deletePost(post.id, other)).rejects.toThrow(ForbiddenError);
    await expect(repo.deletePost('123456789', author)).rejects.toThrow(NotFoundError);
    await expect(repo.deletePost('12x', author)).rejects.toThrow(BadRequestError);
    expect(await outboxFor(post.id)).toHaveLength(2);
  });

  it('concurrent deletes of one post: one succeeds, one outbox row', async () => {
    const [author] = await addUsers(1);
    const post = await repo.createPost(author, 'twice', gen);
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => repo.deletePost(post.id, author)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(NotFoundError);
    expect((await outboxFor(post.id)).map((r) => r.kind)).toEqual(['PostCreated', 'PostDeleted']);
  });

  it('getPosts hydrates in one call: unknown ids absent, duplicates fine, bad ids refused', async () => {
    const [author] = await addUsers(1);
    const a = await repo.createPost(author, 'a', gen);
    const b = await repo.createPost(author, 'b', gen);
    const got = await repo.getPosts([b.id, a.id, b.id, '42']);
    expect([...got.keys()].sort()).toEqual([a.id, b.id].sort());
    expect(got.get(b.id)?.body).toBe('b');
    expect(await repo.getPosts([])).toEqual(new Map());
    await expect(repo.getPosts(['-1'])).rejects.toThrow(BadRequestError);
    expect(await repo.livePostIds([a.id, '42'])).toEqual(new Set([a.id]));
  });
});

describe.skipIf(SKIP)('following', () => {
  it('is idempotent and counts once under 20 concurrent duplicate follows and unfollows', async () => {
    const [a, b] = await addUsers(2);
    const follows = await Promise.all(Array.from({ length: 20 }, () => repo.follow(a, b)));
    expect(follows.filter((r) => r.changed)).toHaveLength(1);
    expect(follows.every((r) => r.followeeFollowerCount === 1)).toBe(true);
    expect(await repo.getUser(a)).toMatchObject({ followeeCount: 1, followerCount: 0 });
    expect(await repo.getUser(b)).toMatchObject({ followeeCount: 0, followerCount: 1 });
    expect(await repo.follow(a, b)).toEqual({ changed: false, followeeFollowerCount: 1 });
    expect(await repo.isFollowing(a, b)).toBe(true);
    expect(await repo.isFollowing(b, a)).toBe(false);
    expect(await countsDrift([a, b])).toBe(0);

    const unfollows = await Promise.all(Array.from({ length: 20 }, () => repo.unfollow(a, b)));
    expect(unfollows.filter((r) => r.changed)).toHaveLength(1);
    expect(await repo.unfollow(a, b)).toEqual({ changed: false, followeeFollowerCount: 0 });
    expect(await repo.getUser(a)).toMatchObject({ followeeCount: 0, followerCount: 0 });
    expect(await repo.getUser(b)).toMatchObject({ followeeCount: 0, followerCount: 0 });
    expect(await countsDrift([a, b])).toBe(0);
  });

  it('keeps counts right under concurrent follows, reverse follows and unfollows among a few users (no deadlock)', async () => {
    const ids = await addUsers(6);
    const ops: Promise<unknown>[] = [];
    for (let round = 0; round < 3; round++) {
      for (const x of ids) for (const y of ids) if (x !== y) ops.push((round === 1 && (x + y) % 3 === 0 ? repo.unfollow(x, y) : repo.follow(x, y)));
    }
    const settled = await Promise.allSettled(ops);
    expect(settled.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    expect(await countsDrift(ids)).toBe(0);
  });

  it('refuses a self-follow (400) and unknown users (404) without changing anything', async () => {
    const [a] = await addUsers(1);
    await expect(repo.follow(a, a)).rejects.toThrow(BadRequestError);
    await expect(repo.unfollow(a, a)).rejects.toThrow(BadRequestError);
    await expect(repo.follow(a, 888_888_888)).rejects.toThrow(/user 888888888 not found/);
    await expect(repo.follow(888_888_888, a)).rejects.toThrow(/user 888888888 not found/);
    await expect(repo.unfollow(a, 888_888_888)).rejects.toThrow(NotFoundError);
    await expect(repo.unfollow(888_888_888, a)).rejects.toThrow(NotFoundError);
    await expect(repo.follow(-1, a)).rejects.toThrow(BadRequestError);
    await expect(repo.follow(1.5, a)).rejects.toThrow(BadRequestError);
    expect(await repo.getUser(a)).toMatchObject({ followeeCount: 0, followerCount: 0 });
    expect(await repo.getUser(888_888_888)).toBeNull();
    await expect(repo.followerCount(888_888_888)).rejects.toThrow(NotFoundError);
  });

  it('followersPage walks the followers in id order and skips the dormant ones with activeSince', async () => {
    const [author] = await addUsers(1);
    const active = await addUsers(13, NOW);
    const dormant = await addUsers(12, NOW - 30 * DAY);
    const all = [...active, ...dormant];
    // Interleave the dormant among the active in id order: follow in a shuffled order.
    for (const f of [...all].reverse()) await repo.follow(f, author);
    await store.pool.query(`UPDATE users SET last_seen_at = $2 WHERE id = ANY ($1::int8[])`, [dormant.filter((_, i) => i % 2 === 0), new Date(NOW - 30 * DAY)]);
    expect(await repo.followerCount(author)).toBe(25);

    const walk = async (limit: number, since?: number) => {
      const seen: number[] = [];
      let after: number | null = null;
      for (let pages = 0; pages < 100; pages++) {
        const page = await repo.followersPage(author, after, limit, since);
        seen.push(...page.ids);
        if (page.next === null) return seen;
        after = page.next;
      }
      throw new Error('did not end');
    };
    expect(await walk(4)).toEqual([...all].sort((x, y) => x - y));
    expect(await walk(1000)).toEqual([...all].sort((x, y) => x - y));
    const since = NOW - 14 * DAY;
    expect(await walk(4, since)).toEqual(active);
    expect(await walk(13, since)).toEqual(active);
    expect(await walk(1, since)).toEqual(active);

    // Touching a dormant follower brings it back; touching never moves last_seen_at backwards.
    expect(await repo.touchUser(dormant[3], NOW)).toBe(true);
    expect(await repo.touchUser(dormant[3], NOW - DAY)).toBe(false);
    expect(await repo.touchUser(dormant[3], NOW + 1000, 60_000)).toBe(false);
    expect((await repo.getUser(dormant[3]))?.lastSeenAt).toBe(NOW);
    expect(await walk(5, since)).toEqual([...active, dormant[3]]);
    await expect(repo.touchUser(888_888_888)).rejects.toThrow(NotFoundError);
  });

  it('followeesOf lists every followee, pulledFollowees those over the threshold', async () => {
    const [reader, small, mid, big, fan1, fan2, fan3] = await addUsers(7);
    for (const f of [reader, fan1, fan2, fan3]) await repo.follow(f, big);
    for (const f of [reader, fan1]) await repo.follow(f, mid);
    await repo.follow(reader, small);
    expect(await repo.followeesOf(reader)).toEqual([small, mid, big]);
    expect(await repo.pulledFollowees(reader, 3)).toEqual([big]);
    expect(await repo.pulledFollowees(reader, 1)).toEqual([mid, big]);
    expect(await repo.pulledFollowees(reader, 4)).toEqual([]);
    expect(await repo.followeesOf(fan3)).toEqual([big]);
    // The read path's one statement: both lists at once.
    expect(await repo.followees(reader, 3)).toEqual({ all: [small, mid, big], over: [big] });
    expect(await repo.followees(reader, 1)).toEqual({ all: [small, mid, big], over: [mid, big] });
    expect(await repo.followees(reader, 4)).toEqual({ all: [small, mid, big], over: [] });
    expect(await repo.followees(888_888_888, 1)).toEqual({ all: [], over: [] });
  });

  it('runs the hot statements as named prepared statements, prepared once per connection', async () => {
    const one = newStore(schema, { max: 1 });
    const r1 = new FeedRepository(one);
    const [reader, author] = await addUsers(2);
    await r1.follow(reader, author);
    for (let i = 0; i < 3; i++) {
      expect(await r1.followees(reader, 0)).toEqual({ all: [author], over: [author] });
      await r1.getUser(reader);
      await r1.touchUsers(new Map([[reader, NOW]]));
    }
    const r = await one.pool.query<{ name: string }>(`SELECT name FROM pg_prepared_statements ORDER BY name`);
    const names = r.rows.map((row) => row.name);
    expect(names).toEqual(expect.arrayContaining([PREPARED.followees, PREPARED.getUser, PREPARED.touchUsers]));
    expect(new Set(names).size).toBe(names.length);
  });

  it('touchUsers moves many last-seen times forward in one statement, like touchUser', async () => {
    const ids = await addUsers(3, NOW - DAY);
    const seen = async () => Promise.all(ids.map(async (id) => (await repo.getUser(id))!.lastSeenAt));
    expect(await repo.touchUsers(new Map([[ids[0], NOW], [ids[1], NOW - 2 * DAY], [888_888_888, NOW]]))).toBe(1);
    expect(await seen()).toEqual([NOW, NOW - DAY, NOW - DAY]);
    // Within the granularity: not rewritten.
    expect(await repo.touchUsers(new Map([[ids[0], NOW + 1000], [ids[2], NOW]]), 60_000)).toBe(1);
    expect(await seen()).toEqual([NOW, NOW - DAY, NOW]);
    expect(await repo.touchUsers(new Map())).toBe(0);
    await expect(repo.touchUsers(new Map([[-1, NOW]]))).rejects.toThrow(BadRequestError);
  });
});

describe.skipIf(SKIP)('reading posts', () => {
  it('userPostsPage pages through many posts of one millisecond once each, in order', async () => {
    const [author, other] = await addUsers(2);
    const burst = genAt(NOW - 5000);
    for (let i = 0; i < 60; i++) await repo.createPost(author, `burst ${i}`, burst);
    const spread = new PostIdGenerator(workerId++, (() => { let t = NOW - 20_000; return () => (t += 700); })());
    for (let i = 0; i < 25; i++) await repo.createPost(author, `spread ${i}`, spread);
    await repo.createPost(other, 'not theirs', genAt(NOW - 5000));
    const gone = await repo.createPost(author, 'deleted', genAt(NOW - 5000));
    await repo.deletePost(gone.id, author);

    const all = await repo.userPostsPage(author, null, 1000);
    expect(all).toHaveLength(85);
    for (let i = 1; i < all.length; i++) expect(compareNewestFirst(all[i - 1], all[i])).toBeLessThan(0);
    expect(all.every((p) => p.authorId === author && !p.deleted)).toBe(true);

    for (const limit of [1, 7, 60, 85]) {
      const paged: FeedPosition[] = [];
      let cursor: FeedPosition | null = null;
      for (;;) {
        const page = await repo.userPostsPage(author, cursor, limit);
        paged.push(...page);
        if (page.length < limit) break;
        cursor = { createdAt: page[page.length - 1].createdAt, id: page[page.length - 1].id };
      }
      expect(paged.map((p) => p.id), `limit ${limit}`).toEqual(all.map((p) => p.id));
    }
    await expect(repo.userPostsPage(888_888_888, null, 10)).rejects.toThrow(NotFoundError);
    await expect(repo.userPostsPage(author, null, 0)).rejects.toThrow(BadRequestError);
    await expect(repo.userPostsPage(author, { createdAt: NOW, id: 'x' }, 10)).rejects.toThrow(BadRequestError);
  });

  it('rebuildTimeline returns only the non-celebrity followees’ live posts in the window, newest first, capped', async () => {
    const [reader, a, b, celeb, stranger, f1, f2, f3] = await addUsers(8);
    for (const f of [reader, a, b]) await repo.follow(f, celeb); // celeb: 3 followers
    await repo.follow(reader, a); // a: 1 follower
    await repo.follow(reader, b);
    await repo.follow(f1, b); // b: 3 followers: at the threshold, still pushed
    await repo.follow(f2, b);
    await repo.follow(f3, stranger);
    const threshold = 3;
    await repo.follow(f1, celeb); // celeb: 4, over the threshold
    const since = NOW - 7 * DAY;

    const expected: FeedPosition[] = [];
    const authorOf = new Map<PostId, number>();
    const post = async (author: number, at: number, gen = genAt(at)): Promise<FeedPosition> => {
      const created = await repo.createPost(author, 'p', gen);
      authorOf.set(created.id, author);
      return created;
    };
    for (let i = 0; i < 5; i++) expected.push(await post(a, NOW - i * 3_600_000));
    expected.push(await post(a, since)); // exactly at the window's start: in
    await post(a, since - 1); // just outside
    await post(a, NOW - 30 * DAY);
    for (let i = 0; i < 4; i++) expected.push(await post(b, NOW - i * 3_600_000 - 1_800_000));
    const deleted = await post(b, NOW - 60_000);
    await repo.deletePost(deleted.id, b);
    const sameMs = genAt(NOW - 7_200_000);
    for (let i = 0; i < 3; i++) expected.push(await post(b, NOW - 7_200_000, sameMs));
    for (let i = 0; i < 3; i++) await post(celeb, NOW - i * 1000);
    for (let i = 0; i < 3; i++) await post(stranger, NOW - i * 1000);
    await post(reader, NOW); // the reader's own post is not in the rebuilt timeline
    expected.sort(compareNewestFirst);

    expect(await repo.rebuildTimeline(reader, since, 800, threshold)).toEqual(expected);
    expect(await repo.rebuildTimeline(reader, since, 4, threshold)).toEqual(expected.slice(0, 4));
    expect(await repo.rebuildTimeline(reader, since, 1, threshold)).toEqual(expected.slice(0, 1));
    // A higher threshold pushes the celebrity too; unfollowing removes an author.
    expect((await repo.rebuildTimeline(reader, since, 800, 4)).length).toBe(expected.length + 3);
    await repo.unfollow(reader, a);
    expect(await repo.rebuildTimeline(reader, since, 800, threshold)).toEqual(expected.filter((p) => authorOf.get(p.id) === b));
    expect(await repo.rebuildTimeline(stranger, since, 800, threshold)).toEqual([]);
  });
});

describe.skipIf(SKIP)('outbox', () => {
  beforeEach(async () => {
    await store.pool.query('TRUNCATE outbox');
  });

  async function fill(n: number): Promise<PostId[]> {
    const authors = await addUsers(5);
    const ids: PostId[] = [];
    for (let i = 0; i < n; i++) ids.push((await repo.createPost(authors[i % 5], `post ${i}`, gen)).id);
    return ids;
  }

  it('two concurrent claimers never get the same row, and together publish every row once', async () => {
    const posts = await fill(300);
    const relays = [new PostgresOutbox(store, { owner: 'relay-a' }), new PostgresOutbox(store, { owner: 'relay-b' })];
    const claimedBy = relays.map(() => [] as OutboxRow[]);
    await Promise.all(
      relays.map(async (outbox, k) => {
        for (;;) {
          const rows = await outbox.claim(7 + k * 4);
          if (rows.length === 0) return;
          // Each claim is ascending and holds the rows while "publishing".
          for (let i = 1; i < rows.length; i++) expect(BigInt(rows[i].id) > BigInt(rows[i - 1].id)).toBe(true);
          claimedBy[k].push(...rows);
          await new Promise((res) => setTimeout(res, Math.random() * 4));
          await outbox.markPublished(rows.map((r) => r.id));
        }
      }),
    );
    const [a, b] = claimedBy.map((rows) => rows.map((r) => r.id));
    expect(a.length).toBeGreaterThan(0);
    expect(b.length).toBeGreaterThan(0);
    expect(a.filter((id) => b.includes(id))).toEqual([]);
    expect([...a, ...b].length).toBe(300);
    expect(new Set([...claimedBy[0], ...claimedBy[1]].map((r) => r.postId))).toEqual(new Set(posts));
    expect(await relays[0].backlog()).toBe(0);
  });

  it('a claim is a lease: its owner gets the rows again, others only once it ran out or was released', async () => {
    const posts = await fill(6);
    const x = new PostgresOutbox(store, { owner: 'x', leaseMs: 400 });
    const y = new PostgresOutbox(store, { owner: 'y', leaseMs: 400 });
    const first = await x.claim(4);
    expect(first.map((r) => r.postId)).toEqual(posts.slice(0, 4));
    expect(first[0]).toMatchObject({ kind: 'PostCreated', postId: posts[0], event: { kind: 'PostCreated', postId: posts[0], createdAt: postIdTime(posts[0]) } });
    const second = await y.claim(10);
    expect(second.map((r) => r.postId)).toEqual(posts.slice(4));
    expect((await x.claim(10)).map((r) => r.id)).toEqual(first.map((r) => r.id)); // y holds the other two
    await x.markPublished([first[0].id]);
    await x.release([first[1].id]);
    expect((await y.claim(10)).map((r) => r.postId)).toEqual([posts[1], ...posts.slice(4)]);
    await new Promise((res) => setTimeout(res, 450));
    // x's lease on 2, 3 ran out (and so did y's, but y claims first here).
    expect((await y.claim(10)).map((r) => r.postId)).toEqual(posts.slice(1));
    await y.markPublished((await y.claim(10)).map((r) => r.id));
    expect(await x.claim(10)).toEqual([]);
    expect(await x.backlog()).toBe(0);
    // published is not enough: a row is kept until its fan-out is marked done (a lost log is rebuilt from it)
    expect(await x.prunePublished(Date.now() + 60_000)).toBe(0);
    const ledger = new FanoutLedger(store, { streamPrefix: 'test', group: 'lease' });
    ledger.done([...first, ...second].map((r) => r.event));
    await ledger.flush();
    expect(ledger.pending.marks).toBe(0);
    expect(await x.prunePublished(Date.now() + 60_000)).toBe(6);
    await expect(x.markPublished(['1; DROP TABLE outbox'])).rejects.toThrow(BadRequestError);
  });

  it('plugs into the outbox relay: creates and deletes reach the log in order', async () => {
    const [author] = await addUsers(1);
    const p1 = await repo.createPost(author, 'one', gen);
    const p2 = await repo.createPost(author, 'two', gen);
    await repo.deletePost(p1.id, author);
    const published: PostEvent[] = [];
    const source = new PostgresOutbox(store);
    const relay = new OutboxRelay({ source, log: { publish: async (events) => void published.push(...events) }, idleMs: 5 });
    const ac = new AbortController();
    const running = relay.run(ac.signal);
    for (let i = 0; i < 500 && (await source.backlog()) > 0; i++) await new Promise((res) => setTimeout(res, 5));
    ac.abort();
    await running;
    // each event names its outbox row, ascending: the worker marks the row fanned out
    const row = expect.stringMatching(/^[1-9][0-9]*$/);
    expect(published).toEqual([
      { kind: 'PostCreated', postId: p1.id, authorId: author, createdAt: p1.createdAt, bodyLength: 3, outboxId: row },
      { kind: 'PostCreated', postId: p2.id, authorId: author, createdAt: p2.createdAt, bodyLength: 3, outboxId: row },
      { kind: 'PostDeleted', postId: p1.id, authorId: author, createdAt: p1.createdAt, outboxId: row },
    ]);
    const rows = published.map((e) => BigInt(e.outboxId!));
    expect(rows[0] < rows[1] && rows[1] < rows[2]).toBe(true);
  });
});

describe.skipIf(SKIP)('on a loaded graph', () => {
  let loaded: Store;
  let lrepo: FeedRepository;
  const graph = generateGraph({ users: 20_000, avgFollows: 25, alpha: 2.1, maxFollows: 3000, followsSigma: 1, seed: 11, celebrities: [{ count: 3, followers: 0.3, name: 'star' }] });
  const reader = (() => {
    let best = 0;
    for (let u = 0; u < graph.users; u++) if (graph.followeeOffsets[u + 1] - graph.followeeOffsets[u] > graph.followeeOffsets[best + 1] - graph.followeeOffsets[best]) best = u;
    return best;
  })();
  const threshold = 1000;
  const since = NOW - 7 * DAY;

  beforeAll(async () => {
    loaded = newStore(loadedSchema, { max: 2 });
    await migrate(loaded);
    await bulkLoadGraph(loaded, graph, { loadedAt: new Date(NOW) });
    // 400k posts over 60 days by random authors, ids ascending with time (as minted ids are).
    await loaded.pool.query(`
      INSERT INTO posts (id, author_id, body, created_at, deleted_at)
      SELECT g, (hashint4(g)::int8 & 2147483647) % $1, 'body ' || g,
             to_timestamp(($2::float8 - (400000 - g) * 12960.0) / 1000),
             CASE WHEN g % 97 = 0 THEN now() END
      FROM generate_series(1, 400000) g`, [graph.users, NOW]);
    await loaded.pool.query('ANALYZE');
    lrepo = new FeedRepository(loaded);
  });

  async function plan(sql: string, values: unknown[]): Promise<string> {
    const r = await loaded.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, values);
    return r.rows.map((row) => row['QUERY PLAN']).join('\n');
  }

  it('rebuildTimeline uses the indexes (no scan of all posts) and agrees with a plain query', async () => {
    const p = await plan(REBUILD_TIMELINE_SQL, [reader, new Date(since), 800, threshold]);
    expect(p).not.toMatch(/Seq Scan on posts/);
    expect(p).toMatch(/posts_author_created_idx/);
    const t0 = Date.now();
    const rebuilt = await lrepo.rebuildTimeline(reader, since, 800, threshold);
    const ms = Date.now() - t0;
    const plain = await loaded.pool.query<{ id: string }>(
      `SELECT p.id::text AS id FROM posts p JOIN follows f ON f.followee_id = p.author_id JOIN users u ON u.id = p.author_id
       WHERE f.follower_id = $1 AND u.follower_count <= $4 AND p.created_at >= $2 AND p.deleted_at IS NULL
       ORDER BY p.created_at DESC, p.id DESC LIMIT $3`,
      [reader, new Date(since), 800, threshold],
    );
    expect(rebuilt.map((e) => e.id)).toEqual(plain.rows.map((r) => r.id));
    expect(rebuilt.length).toBeGreaterThan(100);
    expect(ms).toBeLessThan(2000);
  });

  it('userPostsPage and followersPage read ranges of their indexes', async () => {
    const author = graph.users - 1; // a celebrity: many followers
    const cursorPlan = await plan(USER_POSTS_SQL(true), [author, 20, new Date(NOW - DAY), '12345']);
    expect(cursorPlan).toMatch(/Index Scan on posts_author_created_idx|Index Scan using posts_author_created_idx/);
    expect(cursorPlan).toMatch(/Index Cond: \(\(author_id = .*\) AND \(created_at <= /);
    expect(cursorPlan).not.toMatch(/Seq Scan/);
    expect(cursorPlan).not.toMatch(/::text\) DESC/); // ordered by the bigint id, not its text
    const followersPlan = await plan(FOLLOWERS_PAGE_SQL(false), [author, 100, 1000]);
    expect(followersPlan).toMatch(/follows_followee_idx/);
    expect(followersPlan).not.toMatch(/Seq Scan/);
    const activePlan = await plan(FOLLOWERS_PAGE_SQL(true), [author, 100, 1000, new Date(since)]);
    expect(activePlan).toMatch(/follows_followee_idx/);
    expect(activePlan).not.toMatch(/Seq Scan on follows/);
    const page = await lrepo.followersPage(author, null, 1000);
    expect(page.ids).toHaveLength(1000);
    expect(await lrepo.followerCount(author)).toBe(graph.followerOffsets[author + 1] - graph.followerOffsets[author]);
  });
});
