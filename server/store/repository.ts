// The Postgres operations of the reference server: posting and deleting (each with its outbox row,
// atomically), following, the follower pages the fan-out worker walks, the followees the read path
// merges, an author's posts by cursor, the cold-start timeline rebuild, and hydration.
//
// Every write is ONE SQL statement (data-modifying CTEs): one round trip, one implicit transaction,
// so a post and its outbox row, or an edge and both counts, commit or roll back together, and a
// method resolves only after Postgres reported the commit. Nothing is acknowledged that is not
// durable: a connection that fails or times out mid-statement surfaces as DatabaseUnavailableError
// (the API's 503), never as a result.
//
// Errors: BadRequestError (400: a bad body, a self-follow, an id or limit that is not one),
// NotFoundError (404), ForbiddenError (403), DatabaseUnavailableError (503). Anything else is a bug.
//
// Times are Unix milliseconds. posts.created_at holds whole milliseconds (createPost writes
// postIdTime(id)), so (created_at, id) in SQL orders exactly as core/cursor.ts's FeedPosition does.
// Post ids travel as decimal strings and are bigint in SQL; user ids are JS numbers.
import type pg from 'pg';
import { isPostId, postIdTime, type PostId } from '../../core/post-id.js';
import type { FeedPosition } from '../../core/cursor.js';
import { DatabaseUnavailableError } from './errors.js';
import { POST_BODY_MAX_CHARS } from './migrations.js';
import { connectClient, unavailable, type Store } from './pool.js';

// ---- errors ----

/** Tries to insert a post under a fresh id when the id is taken. */
export const POST_ID_ATTEMPTS = 3;

export { BadRequestError, ForbiddenError, IdempotencyKeyReuseError, NotFoundError, OutcomeUnknownError } from '../domain-errors.js';
import { BadRequestError, ForbiddenError, IdempotencyKeyReuseError, NotFoundError, OutcomeUnknownError } from '../domain-errors.js';

// ---- records ----

export interface UserRecord {
  id: number;
  handle: string;
  createdAt: number;
  lastSeenAt: number;
  followerCount: number;
  followeeCount: number;
}

/** A post as hydration sees it. A deleted post keeps its id, author and time, but its body is ''. */
export interface StoredPost {
  id: PostId;
  authorId: number;
  body: string;
  createdAt: number;
  deleted: boolean;
}

export interface CreatedPost {
  id: PostId;
  /** postIdTime(id): the timeline score. */
  createdAt: number;
  /** The post an earlier request with the same Idempotency-Key made: nothing was written now. */
  replayed?: boolean;
  /** That post has been deleted since (its first answer is given again, the caches left alone). */
  deleted?: boolean;
}

/** What an Idempotency-Key may be: 1-255 visible ASCII characters (no spaces, no commas: two keys
 * sent as two headers arrive joined by ", " and are refused). */
export const IDEMPOTENCY_KEY = /^[!-+\--~]{1,255}$/;

export interface DeletedPost {
  id: PostId;
  authorId: number;
  /** The deleted post's creation time: its score in the timelines it must leave. */
  createdAt: number;
}

export interface FollowResult {
  /** True when this call made (follow) or removed (unfollow) the edge; false when it was already so. */
  changed: boolean;
  /** The followee's follower count right after this call, as committed (push or pull for the backfill). */
  followeeFollowerCount: number;
}

/** A user's followees, ascending, and those of them over a threshold. */
export interface Followees {
  all: number[];
  over: number[];
}

export interface FollowerPage {
  /** Follower ids, ascending. */
  ids: number[];
  /** Pass as afterFollowerId for the next page; null when this was the last page. */
  next: number | null;
}

/** What mints post ids: core/post-id.ts's PostIdGenerator. */
export interface PostIdSource {
  next(): PostId;
}

export interface RepositoryOptions {
  /**
   * A statement that has not answered after this long fails with DatabaseUnavailableError and its
   * connection is discarded (a partitioned or hung server answers 503 instead of hanging the
   * request). 0 disables it. Default 10,000.
   */
  queryTimeoutMs?: number;
}

export const DEFAULT_QUERY_TIMEOUT_MS = 10_000;

// ---- validation ----

/** The body as stored, or BadRequestError: a string of 1..280 Unicode code points (Postgres's
 * char_length), without NUL (Postgres text cannot hold it) or unpaired surrogates (they would be
 * stored as U+FFFD). */
export function checkPostBody(body: unknown): string {
  if (typeof body !== 'string') throw new BadRequestError(`text must be a string, not ${body === null ? 'null' : Array.isArray(body) ? 'an array' : typeof body}`);
  if (body.length === 0) throw new BadRequestError('text is empty (1 to 280 characters)');
  // A code point is at most 2 UTF-16 units, so only bodies longer than the limit in units need counting.
  if (body.length > POST_BODY_MAX_CHARS) {
    let chars = 0;
    for (const _ of body) {
      if (++chars > POST_BODY_MAX_CHARS) throw new BadRequestError(`text is longer than ${POST_BODY_MAX_CHARS} characters`);
    }
  }
  if (body.includes('\0')) throw new BadRequestError('text contains a NUL character');
  if (/\p{Cs}/u.test(body)) throw new BadRequestError('text is not valid Unicode (an unpaired surrogate)');
  return body;
}

function checkUserId(id: unknown, what = 'user id'): number {
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) throw new BadRequestError(`${what} ${String(id)} is not a user id`);
  return id;
}

function checkPostId(id: unknown): PostId {
  if (!isPostId(id)) throw new BadRequestError(`"${String(id).slice(0, 40)}" is not a post id`);
  return id;
}

function checkLimit(limit: unknown, max: number): number {
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > max) {
    throw new BadRequestError(`limit ${String(limit)} must be an integer in 1..${max}`);
  }
  return limit;
}

function checkMs(ms: unknown, what: string): number {
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0) throw new BadRequestError(`${what} ${String(ms)} is not a time in ms`);
  return ms;
}

function checkPosition(p: FeedPosition): FeedPosition {
  checkMs(p.createdAt, 'cursor time');
  checkPostId(p.id);
  return p;
}

/** A threshold as the int8 SQL compares follower_count with ("more than 2.5" is "more than 2"). */
function followerCountBound(threshold: number): number {
  return Math.min(Math.floor(threshold), Number.MAX_SAFE_INTEGER);
}

/** Largest page any listing serves (the fan-out worker's batches included). */
export const MAX_PAGE = 100_000;

// ---- running statements ----

/** A failure that means Postgres cannot be used right now (including our own statement timeout). */
function asUnavailable(err: unknown, store: Store, timeoutMs: number): DatabaseUnavailableError | undefined {
  if (err instanceof Error && err.message === 'Query read timeout') {
    return new DatabaseUnavailableError(`Postgres at ${store.url} did not answer within ${timeoutMs} ms`, 'ETIMEDOUT');
  }
  return unavailable(err, store.url);
}

const SQLSTATE_RETRYABLE = new Set(['40001', '40P01']); // serialization_failure, deadlock_detected

/**
 * Run one statement on a pooled connection. Connection failures and timeouts become
 * DatabaseUnavailableError and the connection is discarded; other errors (constraints) leave it in
 * the pool. Deadlocks and serialization failures are retried (the statement was rolled back).
 *
 * With a `name` the statement is prepared once per connection and reused (no parse and, once
 * Postgres settles on a generic plan, no planning per call): for the hot statements. A name must
 * always go with the same text (pg refuses otherwise).
 */
export async function runStatement<R extends pg.QueryResultRow>(
  store: Store,
  text: string,
  values: readonly unknown[],
  timeoutMs: number = DEFAULT_QUERY_TIMEOUT_MS,
  name?: string,
): Promise<pg.QueryResult<R>> {
  for (let attempt = 1; ; attempt++) {
    const client = await connectClient(store);
    let broken: Error | undefined;
    try {
      const config: pg.QueryConfig = { text, values: values as unknown[] };
      if (name) config.name = name;
      if (timeoutMs > 0) (config as { query_timeout?: number }).query_timeout = timeoutMs;
      return await client.query<R>(config);
    } catch (err) {
      const down = asUnavailable(err, store, timeoutMs);
      if (down) {
        // lost after the statement went out: its outcome is unknown (createPost says so)
        down.sentBeforeLost = true;
        broken = down;
        throw down;
      }
      const code = (err as { code?: string }).code;
      if (code && SQLSTATE_RETRYABLE.has(code) && attempt < 4) continue;
      throw err;
    } finally {
      client.release(broken);
    }
  }
}

/** SQL for a timestamptz column as whole Unix ms (a decimal string: Number() it). */
const ms = (col: string) => `floor(extract(epoch FROM ${col}) * 1000)::int8`;

interface PgError {
  code?: string;
  constraint?: string;
}

const pgError = (err: unknown): PgError => (err && typeof err === 'object' ? (err as PgError) : {});

// ---- the statements (exported for EXPLAIN in tests) ----

/** $1 id, $2 author, $3 body, $4 created_at, $5 the outbox payload. */
const CREATE_POST_SQL = `
WITH p AS (
  INSERT INTO posts (id, author_id, body, created_at) VALUES ($1, $2, $3, $4)
  RETURNING id, author_id
)
INSERT INTO outbox (post_id, author_id, kind, payload)
SELECT id, author_id, 'PostCreated', $5::jsonb FROM p`;

/**
 * CREATE_POST_SQL under an idempotency key ($6): the post and its outbox row only where the key's
 * row was inserted, so one row is written when the key is new and none when it is taken (a racing
 * statement with the same key waits for the first to commit, then finds it taken).
 */
const CREATE_KEYED_POST_SQL = `
WITH k AS (
  INSERT INTO post_keys (author_id, key, post_id) VALUES ($2, $6, $1)
  ON CONFLICT (author_id, key) DO NOTHING
  RETURNING post_id
), p AS (
  INSERT INTO posts (id, author_id, body, created_at) SELECT $1::int8, $2::int8, $3::text, $4::timestamptz FROM k
  RETURNING id, author_id
)
INSERT INTO outbox (post_id, author_id, kind, payload)
SELECT id, author_id, 'PostCreated', $5::jsonb FROM p`;

/** $1 user, $2 since (timestamptz), $3 cap, $4 threshold. */
export const REBUILD_TIMELINE_SQL = `
SELECT p.id::text AS id, ${ms('p.created_at')} AS created_ms
FROM follows f
JOIN users a ON a.id = f.followee_id AND a.follower_count <= $4
CROSS JOIN LATERAL (
  SELECT q.id, q.created_at FROM posts q
  WHERE q.author_id = f.followee_id AND q.created_at >= $2 AND q.deleted_at IS NULL
  ORDER BY q.created_at DESC, q.id DESC
  LIMIT $3
) p
WHERE f.follower_id = $1
ORDER BY p.created_at DESC, p.id DESC
LIMIT $3`;

/** $1 author, $2 limit, then (cursor) $3 created_at, $4 id. `created_at <= $3` is the index bound;
 * the OR only breaks ties inside the cursor's millisecond. */
export const USER_POSTS_SQL = (withCursor: boolean) => `
SELECT id::text AS id, author_id::text AS author_id, body, ${ms('created_at')} AS created_ms
FROM posts
WHERE author_id = $1 AND deleted_at IS NULL
  ${withCursor ? 'AND created_at <= $3 AND (created_at < $3 OR id < $4)' : ''}
ORDER BY posts.created_at DESC, posts.id DESC
LIMIT $2`;

/** $1 author, $2 after (exclusive), $3 limit, ($4 active since). */
export const FOLLOWERS_PAGE_SQL = (activeOnly: boolean) =>
  activeOnly
    ? `
SELECT f.follower_id::text AS id
FROM follows f JOIN users u ON u.id = f.follower_id
WHERE f.followee_id = $1 AND f.follower_id > $2 AND u.last_seen_at >= $4
ORDER BY f.follower_id
LIMIT $3`
    : `
SELECT follower_id::text AS id
FROM follows
WHERE followee_id = $1 AND follower_id > $2
ORDER BY follower_id
LIMIT $3`;

/** $1 users, $2 threshold: each one's followees, ascending, and whether they have more followers than it. */
export const FOLLOWEES_SQL = `
SELECT f.follower_id::text AS reader, f.followee_id::text AS id, u.follower_count > $2 AS over
FROM follows f JOIN users u ON u.id = f.followee_id
WHERE f.follower_id = ANY ($1::int8[])
ORDER BY f.follower_id, f.followee_id`;

const GET_USER_SQL = `SELECT id::text AS id, handle, ${ms('created_at')} AS created_ms, ${ms('last_seen_at')} AS seen_ms,
       follower_count::text AS follower_count, followee_count::text AS followee_count
FROM users WHERE id = $1`;

const TOUCH_USER_SQL = `WITH t AS (
  UPDATE users SET last_seen_at = $2
  WHERE id = $1 AND last_seen_at < $3
  RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM t) AS touched, EXISTS (SELECT 1 FROM users WHERE id = $1) AS known`;

// Rows locked in id order (the follow statements' order too), so a batch cannot deadlock with them.
const TOUCH_USERS_SQL = `WITH v AS (
  SELECT * FROM unnest($1::int8[], $2::timestamptz[]) AS v(id, at)
), locked AS (
  SELECT u.id, v.at FROM users u JOIN v ON v.id = u.id
  WHERE u.last_seen_at < v.at - $3::int8 * interval '1 millisecond'
  ORDER BY u.id
  FOR UPDATE OF u
)
UPDATE users u SET last_seen_at = locked.at FROM locked
WHERE u.id = locked.id AND u.last_seen_at < locked.at`;

const GET_POSTS_SQL = `SELECT id::text AS id, author_id::text AS author_id, CASE WHEN deleted_at IS NULL THEN body ELSE '' END AS body,
       ${ms('created_at')} AS created_ms, deleted_at IS NOT NULL AS deleted
FROM posts WHERE id = ANY ($1::int8[])`;

/**
 * Names of the statements run as named prepared statements (runStatement's `name`): those on the
 * feed read path and the fan-out worker's per-event ones. Each name goes with one text only.
 */
export const PREPARED = {
  followees: 'feedlab_followees',
  getUser: 'feedlab_get_user',
  touchUser: 'feedlab_touch_user',
  touchUsers: 'feedlab_touch_users',
  getPosts: 'feedlab_get_posts',
  userPosts: 'feedlab_user_posts',
  userPostsAfter: 'feedlab_user_posts_after',
  rebuildTimeline: 'feedlab_rebuild_timeline',
  followersPage: 'feedlab_followers_page',
  activeFollowersPage: 'feedlab_active_followers_page',
  followerCount: 'feedlab_follower_count',
  userExists: 'feedlab_user_exists',
} as const;

// ---- the repository ----

export class FeedRepository {
  private readonly timeoutMs: number;

  constructor(
    readonly store: Store,
    options: RepositoryOptions = {},
  ) {
    this.timeoutMs = options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  }

  private run<R extends pg.QueryResultRow>(text: string, values: readonly unknown[], name?: string): Promise<pg.QueryResult<R>> {
    return runStatement<R>(this.store, text, values, this.timeoutMs, name);
  }

  // ---- posts ----

  /**
   * Write a post and its PostCreated outbox row in one transaction; resolves after the commit.
   * BadRequestError for a bad body or key, NotFoundError for an unknown author, DatabaseUnavailableError
   * when Postgres cannot be used (then nothing was acknowledged; when it was lost after the statement
   * went out, `sentBeforeLost`, the post may exist, and if it does its outbox row does too).
   *
   * With an idempotency key the key is written in the same statement: the first call with it makes
   * the post, every later one (also one racing it) resolves with that post, `replayed`, and writes
   * nothing; the same key with another body is an IdempotencyKeyReuseError.
   */
  async createPost(authorId: number, body: unknown, idGen: PostIdSource, idempotencyKey?: string): Promise<CreatedPost> {
    checkUserId(authorId, 'author id');
    const text = checkPostBody(body);
    if (idempotencyKey !== undefined && (typeof idempotencyKey !== 'string' || !IDEMPOTENCY_KEY.test(idempotencyKey))) {
      throw new BadRequestError('an Idempotency-Key is 1-255 visible ASCII characters, without spaces or commas');
    }
    // A taken id means another generator shares this worker id (or a restart with the clock behind
    // ids already issued): the next id is fresh, so retry before giving up with a 500.
    for (let attempt = 1; ; attempt++) {
      const id = idGen.next();
      const createdAt = postIdTime(id);
      const payload = JSON.stringify({ postId: id, authorId, createdAt, bodyLength: [...text].length });
      try {
        if (idempotencyKey === undefined) {
          await this.run(CREATE_POST_SQL, [id, authorId, text, new Date(createdAt), payload]);
          return { id, createdAt };
        }
        const r = await this.run(CREATE_KEYED_POST_SQL, [id, authorId, text, new Date(createdAt), payload, idempotencyKey]);
        if (r.rowCount === 1) return { id, createdAt };
        const first = await this.keyedPost(authorId, idempotencyKey);
        if (first.post === null) {
          // the key outlived its post (posts truncated by hand): let it go and make the post anew
          if (first.postId !== null) await this.run('DELETE FROM post_keys WHERE author_id = $1 AND key = $2 AND post_id = $3', [authorId, idempotencyKey, first.postId]);
          if (attempt < POST_ID_ATTEMPTS) continue;
          throw new Error(`Idempotency-Key ${JSON.stringify(idempotencyKey.slice(0, 40))}: its post is gone and a new one could not be made under it (${attempt} tries)`);
        }
        const p = first.post;
        if (p.body !== text) throw new IdempotencyKeyReuseError(`Idempotency-Key ${JSON.stringify(idempotencyKey.slice(0, 40))} was used for post ${p.id} with another text`);
        return { id: p.id, createdAt: p.createdAt, replayed: true, ...(p.deleted ? { deleted: true } : {}) };
      } catch (err) {
        const e = pgError(err);
        if (e.code === '23503' && e.constraint === 'posts_author_fkey') throw new NotFoundError(`user ${authorId} not found`);
        if (e.code === '23505' && e.constraint === 'posts_pkey') {
          if (attempt < POST_ID_ATTEMPTS) continue;
          throw new Error(`post id ${id} already exists (${attempt} tries): two id generators share worker id (each live generator needs its own)`);
        }
        // the post may have committed, and without a key a retry would post it again: not a 503
        if (err instanceof DatabaseUnavailableError && err.sentBeforeLost && idempotencyKey === undefined) throw new OutcomeUnknownError(id);
        throw err;
      }
    }
  }

  /** The post an idempotency key made (deleted or not): its id (null: no such key) and the post (null: gone). */
  private async keyedPost(authorId: number, key: string): Promise<{ postId: string | null; post: { id: PostId; createdAt: number; body: string; deleted: boolean } | null }> {
    const r = await this.run<{ key_post: string; id: string | null; created_ms: string | null; body: string | null; deleted: boolean | null }>(
      `SELECT k.post_id::text AS key_post, p.id::text AS id, ${ms('p.created_at')} AS created_ms, p.body, p.deleted_at IS NOT NULL AS deleted
       FROM post_keys k LEFT JOIN posts p ON p.id = k.post_id
       WHERE k.author_id = $1 AND k.key = $2`,
      [authorId, key],
    );
    const row = r.rows[0];
    if (!row) return { postId: null, post: null };
    return { postId: row.key_post, post: row.id === null ? null : { id: row.id, createdAt: Number(row.created_ms), body: row.body!, deleted: row.deleted === true } };
  }

  /**
   * Soft-delete a post (deleted_at) and write its PostDeleted outbox row, in one transaction.
   * ForbiddenError when the post is someone else's, NotFoundError when it does not exist or is
   * already deleted (also when a concurrent delete won).
   */
  async deletePost(postId: PostId, byUserId: number): Promise<DeletedPost> {
    checkPostId(postId);
    checkUserId(byUserId);
    const r = await this.run<{ deleted: boolean; author_id: string | null; created_ms: string | null }>(
      `WITH del AS (
         UPDATE posts SET deleted_at = now()
         WHERE id = $1 AND author_id = $2 AND deleted_at IS NULL
         RETURNING id, author_id, created_at
       ), ob AS (
         INSERT INTO outbox (post_id, author_id, kind, payload)
         SELECT id, author_id, 'PostDeleted',
                jsonb_build_object('postId', id::text, 'authorId', author_id, 'createdAt', ${ms('created_at')})
         FROM del
       )
       SELECT EXISTS (SELECT 1 FROM del) AS deleted, p.author_id::text AS author_id, ${ms('p.created_at')} AS created_ms
       FROM (SELECT 1) one LEFT JOIN posts p ON p.id = $1`,
      [postId, byUserId],
    );
    const row = r.rows[0];
    if (row.author_id === null || row.created_ms === null) throw new NotFoundError(`post ${postId} not found`);
    if (Number(row.author_id) !== byUserId) throw new ForbiddenError(`post ${postId} is not yours to delete`);
    if (!row.deleted) throw new NotFoundError(`post ${postId} not found (already deleted)`);
    return { id: postId, authorId: byUserId, createdAt: Number(row.created_ms) };
  }

  /** Posts by id for hydration, in one query: unknown ids are absent from the map; deleted posts are
   * present with deleted: true and an empty body. Duplicates are fine. */
  async getPosts(ids: readonly PostId[]): Promise<Map<PostId, StoredPost>> {
    ids.forEach(checkPostId);
    const out = new Map<PostId, StoredPost>();
    if (ids.length === 0) return out;
    const r = await this.run<{ id: string; author_id: string; body: string; created_ms: string; deleted: boolean }>(
      GET_POSTS_SQL,
      [[...new Set(ids)]],
      PREPARED.getPosts,
    );
    for (const row of r.rows) {
      out.set(row.id, { id: row.id, authorId: Number(row.author_id), body: row.body, createdAt: Number(row.created_ms), deleted: row.deleted });
    }
    return out;
  }

  /** Which of these ids are posts that exist and are not deleted (no bodies read). */
  async livePostIds(ids: readonly PostId[]): Promise<Set<PostId>> {
    ids.forEach(checkPostId);
    if (ids.length === 0) return new Set();
    const r = await this.run<{ id: string }>(`SELECT id::text AS id FROM posts WHERE id = ANY ($1::int8[]) AND deleted_at IS NULL`, [[...new Set(ids)]]);
    return new Set(r.rows.map((row) => row.id));
  }

  /**
   * The author's non-deleted posts, newest first (created_at, then id, descending), strictly older
   * than the cursor (null: from the newest). NotFoundError for an unknown author (checked only
   * when the page is empty).
   */
  async userPostsPage(authorId: number, cursor: FeedPosition | null, limit: number): Promise<StoredPost[]> {
    checkUserId(authorId, 'author id');
    checkLimit(limit, MAX_PAGE);
    const values: unknown[] = [authorId, limit];
    if (cursor) {
      checkPosition(cursor);
      values.push(new Date(cursor.createdAt), cursor.id);
    }
    const r = await this.run<{ id: string; author_id: string; body: string; created_ms: string }>(
      USER_POSTS_SQL(cursor !== null),
      values,
      cursor ? PREPARED.userPostsAfter : PREPARED.userPosts,
    );
    if (r.rows.length === 0 && !(await this.userExists(authorId))) throw new NotFoundError(`user ${authorId} not found`);
    return r.rows.map((row) => ({ id: row.id, authorId: Number(row.author_id), body: row.body, createdAt: Number(row.created_ms), deleted: false }));
  }

  /**
   * What a missing home timeline is rebuilt from: the non-deleted posts created at or after sinceMs
   * by the authors the user follows with at most `threshold` followers (the pushed ones; the
   * pulled celebrities are merged at read time), newest first, at most `cap`. One statement: per
   * followee a bounded range scan of posts_author_created_idx, then a top-`cap` sort.
   * The user's own posts are not included (the user does not follow themself).
   */
  async rebuildTimeline(userId: number, sinceMs: number, cap: number, threshold: number): Promise<FeedPosition[]> {
    checkUserId(userId);
    checkMs(sinceMs, 'since');
    checkLimit(cap, MAX_PAGE);
    if (typeof threshold !== 'number' || !(threshold >= 0)) throw new BadRequestError(`threshold ${String(threshold)} is not a follower count`);
    const r = await this.run<{ id: string; created_ms: string }>(
      REBUILD_TIMELINE_SQL,
      [userId, new Date(sinceMs), cap, followerCountBound(threshold)],
      PREPARED.rebuildTimeline,
    );
    return r.rows.map((row) => ({ id: row.id, createdAt: Number(row.created_ms) }));
  }

  // ---- follows ----

  /**
   * Make followerId follow followeeId. Idempotent: following again changes nothing (changed: false).
   * The edge and both counts are written in one statement, and the counts move only when the edge
   * was inserted, so concurrent duplicate requests count once. BadRequestError for a self-follow,
   * NotFoundError for an unknown user.
   */
  async follow(followerId: number, followeeId: number): Promise<FollowResult> {
    this.checkPair(followerId, followeeId);
    try {
      // Both counts in one UPDATE: its two row locks are taken in one order (by id) by every
      // follow and unfollow, so a follow and the reverse follow cannot deadlock.
      const r = await this.run<{ changed: boolean; count: string | null }>(
        `WITH ins AS (
           INSERT INTO follows (follower_id, followee_id) VALUES ($1, $2)
           ON CONFLICT DO NOTHING
           RETURNING 1
         ), counts AS (
           UPDATE users SET
             followee_count = followee_count + (id = $1)::int,
             follower_count = follower_count + (id = $2)::int
           WHERE id = ANY (ARRAY[$1, $2]::int8[]) AND EXISTS (SELECT 1 FROM ins)
           RETURNING id, follower_count
         )
         SELECT EXISTS (SELECT 1 FROM ins) AS changed,
                coalesce((SELECT follower_count FROM counts WHERE id = $2), (SELECT follower_count FROM users WHERE id = $2))::text AS count`,
        [followerId, followeeId],
      );
      return await this.followResult(r.rows[0], followeeId);
    } catch (err) {
      const e = pgError(err);
      if (e.code === '23503') {
        throw new NotFoundError(`user ${e.constraint === 'follows_follower_fkey' ? followerId : followeeId} not found`);
      }
      throw err;
    }
  }

  /** Stop following. Idempotent: unfollowing a non-follow changes nothing (changed: false).
   * BadRequestError for oneself, NotFoundError for an unknown user. */
  async unfollow(followerId: number, followeeId: number): Promise<FollowResult> {
    this.checkPair(followerId, followeeId);
    const r = await this.run<{ changed: boolean; count: string | null; follower_known: boolean }>(
      `WITH del AS (
         DELETE FROM follows WHERE follower_id = $1 AND followee_id = $2
         RETURNING 1
       ), counts AS (
         UPDATE users SET
           followee_count = followee_count - (id = $1)::int,
           follower_count = follower_count - (id = $2)::int
         WHERE id = ANY (ARRAY[$1, $2]::int8[]) AND EXISTS (SELECT 1 FROM del)
         RETURNING id, follower_count
       )
       SELECT EXISTS (SELECT 1 FROM del) AS changed,
              coalesce((SELECT follower_count FROM counts WHERE id = $2), (SELECT follower_count FROM users WHERE id = $2))::text AS count,
              EXISTS (SELECT 1 FROM users WHERE id = $1) AS follower_known`,
      [followerId, followeeId],
    );
    const row = r.rows[0];
    if (!row.follower_known) throw new NotFoundError(`user ${followerId} not found`);
    if (row.count === null) throw new NotFoundError(`user ${followeeId} not found`);
    return this.followResult(row, followeeId);
  }

  /** When the statement changed the edge, its count is the one its UPDATE wrote. When it did not,
   * the count it read may predate a concurrent duplicate that it waited for: read it again. */
  private async followResult(row: { changed: boolean; count: string | null }, followeeId: number): Promise<FollowResult> {
    if (row.changed) return { changed: true, followeeFollowerCount: Number(row.count) };
    const r = await this.run<{ n: string }>(`SELECT follower_count::text AS n FROM users WHERE id = $1`, [followeeId]);
    return { changed: false, followeeFollowerCount: Number(r.rows[0]?.n ?? row.count) };
  }

  private checkPair(followerId: number, followeeId: number): void {
    checkUserId(followerId, 'follower id');
    checkUserId(followeeId, 'followee id');
    if (followerId === followeeId) throw new BadRequestError('a user cannot follow themself');
  }

  /** Whether followerId follows followeeId. */
  async isFollowing(followerId: number, followeeId: number): Promise<boolean> {
    checkUserId(followerId, 'follower id');
    checkUserId(followeeId, 'followee id');
    const r = await this.run(`SELECT 1 FROM follows WHERE follower_id = $1 AND followee_id = $2`, [followerId, followeeId]);
    return r.rowCount === 1;
  }

  /**
   * One page of the author's followers in id order, after afterFollowerId (null: from the start):
   * the fan-out worker's batches. With activeSinceMs, only followers seen at or after it (dormant
   * followers are skipped; a page may then have read past many of them). next is null once the
   * followers are exhausted.
   */
  async followersPage(authorId: number, afterFollowerId: number | null, limit: number, activeSinceMs?: number): Promise<FollowerPage> {
    checkUserId(authorId, 'author id');
    if (afterFollowerId !== null) checkUserId(afterFollowerId, 'after');
    checkLimit(limit, MAX_PAGE);
    const values: unknown[] = [authorId, afterFollowerId ?? -1, limit];
    if (activeSinceMs !== undefined) values.push(new Date(checkMs(activeSinceMs, 'active since')));
    const active = activeSinceMs !== undefined;
    const r = await this.run<{ id: string }>(FOLLOWERS_PAGE_SQL(active), values, active ? PREPARED.activeFollowersPage : PREPARED.followersPage);
    const ids = r.rows.map((row) => Number(row.id));
    return { ids, next: ids.length === limit ? ids[ids.length - 1] : null };
  }

  /** The author's follower count as kept in users. NotFoundError for an unknown user. */
  async followerCount(authorId: number): Promise<number> {
    checkUserId(authorId, 'author id');
    const r = await this.run<{ n: string }>(`SELECT follower_count::text AS n FROM users WHERE id = $1`, [authorId], PREPARED.followerCount);
    if (r.rows.length === 0) throw new NotFoundError(`user ${authorId} not found`);
    return Number(r.rows[0].n);
  }

  /** Everyone the user follows, ascending ([] for an unknown user). */
  async followeesOf(userId: number): Promise<number[]> {
    checkUserId(userId);
    const r = await this.run<{ id: string }>(`SELECT followee_id::text AS id FROM follows WHERE follower_id = $1 ORDER BY followee_id`, [userId]);
    return r.rows.map((row) => Number(row.id));
  }

  /** Everyone the user follows, ascending, and those of them with more than `threshold` followers
   * (pulledFollowees), in one statement: what a read's followee set is loaded from. */
  async followees(userId: number, threshold: number): Promise<Followees> {
    return (await this.followeesOfMany([userId], threshold)).get(userId) as Followees;
  }

  /** followees() for many users in one statement (every user asked is in the map). */
  async followeesOfMany(userIds: readonly number[], threshold: number): Promise<Map<number, Followees>> {
    userIds.forEach((id) => checkUserId(id));
    if (typeof threshold !== 'number' || !(threshold >= 0)) throw new BadRequestError(`threshold ${String(threshold)} is not a follower count`);
    const out = new Map<number, Followees>();
    for (const id of userIds) out.set(id, { all: [], over: [] });
    if (userIds.length === 0) return out;
    const r = await this.run<{ reader: string; id: string; over: boolean }>(FOLLOWEES_SQL, [[...out.keys()], followerCountBound(threshold)], PREPARED.followees);
    for (const row of r.rows) {
      const f = out.get(Number(row.reader)) as Followees;
      const id = Number(row.id);
      f.all.push(id);
      if (row.over) f.over.push(id);
    }
    return out;
  }

  /** The followees with more than `threshold` followers (the celebrities whose recent-post lists a
   * read merges), ascending. */
  async pulledFollowees(userId: number, threshold: number): Promise<number[]> {
    checkUserId(userId);
    if (typeof threshold !== 'number' || !(threshold >= 0)) throw new BadRequestError(`threshold ${String(threshold)} is not a follower count`);
    const r = await this.run<{ id: string }>(
      `SELECT f.followee_id::text AS id FROM follows f JOIN users u ON u.id = f.followee_id
       WHERE f.follower_id = $1 AND u.follower_count > $2 ORDER BY f.followee_id`,
      [userId, followerCountBound(threshold)],
    );
    return r.rows.map((row) => Number(row.id));
  }

  // ---- users ----

  /** touchUser for many users in one statement (one commit): each last_seen_at moves forward to its
   * `at` when more than granularityMs older. Unknown ids are skipped. Resolves the rows written. */
  async touchUsers(touches: ReadonlyMap<number, number>, granularityMs = 0): Promise<number> {
    checkMs(granularityMs, 'granularity');
    if (touches.size === 0) return 0;
    const ids: number[] = [];
    const ats: Date[] = [];
    for (const [id, at] of touches) {
      ids.push(checkUserId(id));
      ats.push(new Date(checkMs(at, 'seen at')));
    }
    const r = await this.run(TOUCH_USERS_SQL, [ids, ats, granularityMs], PREPARED.touchUsers);
    return r.rowCount ?? 0;
  }

  /** The user, or null when there is none. */
  async getUser(userId: number): Promise<UserRecord | null> {
    checkUserId(userId);
    const r = await this.run<{ id: string; handle: string; created_ms: string; seen_ms: string; follower_count: string; followee_count: string }>(
      GET_USER_SQL,
      [userId],
      PREPARED.getUser,
    );
    const row = r.rows[0];
    if (!row) return null;
    return {
      id: Number(row.id),
      handle: row.handle,
      createdAt: Number(row.created_ms),
      lastSeenAt: Number(row.seen_ms),
      followerCount: Number(row.follower_count),
      followeeCount: Number(row.followee_count),
    };
  }

  /** Whether the user exists. */
  async userExists(userId: number): Promise<boolean> {
    checkUserId(userId);
    const r = await this.run(`SELECT 1 FROM users WHERE id = $1`, [userId], PREPARED.userExists);
    return r.rowCount === 1;
  }

  /**
   * Record that the user was seen at `at` (for dormancy). last_seen_at only moves forward, and is
   * written only when it is more than granularityMs older than `at` (a busy reader does not rewrite
   * its row on every request). Resolves true when it wrote. NotFoundError for an unknown user.
   */
  async touchUser(userId: number, at: number = Date.now(), granularityMs = 0): Promise<boolean> {
    checkUserId(userId);
    checkMs(at, 'seen at');
    checkMs(granularityMs, 'granularity');
    const r = await this.run<{ known: boolean; touched: boolean }>(TOUCH_USER_SQL, [userId, new Date(at), new Date(at - granularityMs)], PREPARED.touchUser);
    const row = r.rows[0];
    if (!row.known) throw new NotFoundError(`user ${userId} not found`);
    return row.touched;
  }
}

