// Seed history posts with binary COPY: the posts a replay's starting state holds (each author's
// posts of the last lease window), streamed straight from typed arrays in chunks of about a
// megabyte. They are history, already fanned out, so they get no outbox rows: nothing relays them,
// and the caches get them the way they get any post in Postgres (a timeline rebuild on a cold
// read, an author's recent list on its rebuild).
//
// One transaction: the authors checked, the rows copied, posts analyzed (so the read path's plans
// know the new rows), committed. A seed that fails leaves posts as it was. Every row is checked
// before anything is sent: ids canonical and unique, created_at a whole ms and the id's own time
// (as createPost writes it, so that (created_at, id) orders as the ids do), authors that exist,
// bodies as createPost accepts them. An id already in the table fails the COPY (rolled back).
//
// Speed. Into an empty posts table (a replay's start, right after the graph load) the table is
// locked, its foreign key and author index dropped and rebuilt after the COPY (one sorted build and
// one join instead of a trigger and an index insertion per row: about 3 times faster), and the rows
// written frozen (COPY FREEZE: no hint-bit writes or vacuum of them during the measured run).
// Into a table that holds posts the COPY goes in alongside the server's own writes and reads,
// nothing locked beyond the rows.
import { isPostId, POST_ID_EPOCH_MS, POST_ID_SEQUENCE_BITS, POST_ID_WORKER_BITS } from '../../core/post-id.js';
import { copyIn, copyRows, writeInt8Field, writeTimestamp } from './binary-copy.js';
import { StoreInputError } from './errors.js';
import { POST_BODY_MAX_CHARS, POSTS_BULK_CONSTRAINTS } from './migrations.js';
import { connectClient, unavailable, type Store } from './pool.js';
import { checkPostBody } from './repository.js';

/** The posts to seed, by index: ids[i] by authors[i] at createdAtMs[i] saying body(i). */
export interface PostsToSeed {
  /** Post ids: canonical decimal strings (core/post-id.ts), or their int64 values. */
  readonly ids: readonly string[] | BigInt64Array;
  /** User ids; every one must exist. */
  readonly authors: Int32Array;
  /** ms since the epoch, whole: the time of the id (postIdTime; makePostId(createdAtMs, ...) makes one). */
  readonly createdAtMs: Float64Array;
  /** Post i's text, 1..280 characters. Called twice per post (checked, then written): it must give the same text. */
  readonly body: (i: number) => string;
}

export interface SeedPostsOptions {
  /** Replace every post and outbox row the schema holds (a replay's reset between policies), in
   * the same transaction: the seed then takes the empty-table path. */
  replace?: boolean;
  /** (fraction 0..1, what is happening); called often, so the callee throttles. */
  onProgress?: (fraction: number, detail: string) => void;
}

export interface SeedPostsResult {
  posts: number;
  seconds: number;
  /** Whether posts was empty, so the table was locked and its constraints rebuilt around the COPY. */
  emptyTable: boolean;
  /** Seconds per phase, in order: check, prepare (authors checked, table locked), copy, each rebuilt constraint, analyze, commit. */
  phases: { name: string; seconds: number }[];
}

const TIME_SHIFT = BigInt(POST_ID_WORKER_BITS + POST_ID_SEQUENCE_BITS);
/** posts row: (id int8, author_id int8, body text, created_at timestamptz), the body at most 4 bytes a character. */
const MAX_ROW_BYTES = 2 + 12 + 12 + 4 + POST_BODY_MAX_CHARS * 4 + 12;
/** Shares of the progress: the row checks, then the COPY; the rest is the constraints, analyze and commit. */
const CHECK_SHARE = 0.1;
const COPY_SHARE = 0.8;

const fmt = (n: number) => n.toLocaleString('en-US');

function rowError(i: number, what: string): StoreInputError {
  return new StoreInputError(`post ${i}: ${what}`);
}

/** Post i's body, or StoreInputError naming the post. */
function bodyOf(posts: PostsToSeed, i: number): string {
  const body = posts.body(i);
  try {
    return checkPostBody(body);
  } catch (err) {
    throw rowError(i, (err as Error).message.replace(/^text/, 'body'));
  }
}

/**
 * Check every row as the tables (and createPost) would; the ids as int64 values. StoreInputError
 * naming the first bad post: lengths that differ, an id that is not one or appears twice, a time
 * that is not the id's, a negative author, a body out of bounds.
 */
export function checkPostsToSeed(posts: PostsToSeed, progress?: (rows: number) => void): BigInt64Array {
  const n = posts.ids.length;
  if (!(posts.authors instanceof Int32Array) || !(posts.createdAtMs instanceof Float64Array) || typeof posts.body !== 'function') {
    throw new StoreInputError('posts to seed need authors (Int32Array), createdAtMs (Float64Array) and body (a function of the index)');
  }
  if (posts.authors.length !== n || posts.createdAtMs.length !== n) {
    throw new StoreInputError(`posts to seed: ${fmt(n)} ids, ${fmt(posts.authors.length)} authors, ${fmt(posts.createdAtMs.length)} times (one each per post)`);
  }
  const values = new BigInt64Array(n);
  const strings = posts.ids instanceof BigInt64Array ? null : posts.ids;
  for (let i = 0; i < n; i++) {
    let id: bigint;
    if (strings) {
      const s = strings[i];
      if (!isPostId(s)) throw rowError(i, `id "${String(s).slice(0, 40)}" is not a post id (a decimal from 0 to 2^63 - 1)`);
      id = BigInt(s);
    } else {
      id = (posts.ids as BigInt64Array)[i];
      if (id < 0n) throw rowError(i, `id ${id} is not a post id (negative)`);
    }
    values[i] = id;
    const at = posts.createdAtMs[i];
    const idTime = Number(id >> TIME_SHIFT) + POST_ID_EPOCH_MS;
    if (at !== idTime) {
      throw rowError(i, `created at ${at}, but id ${id} is of ${idTime} (ids are makePostId(createdAtMs, worker, sequence))`);
    }
    if (posts.authors[i] < 0) throw rowError(i, `author ${posts.authors[i]} is not a user id`);
    bodyOf(posts, i);
    if ((i & 0xffff) === 0xffff) progress?.(i);
  }
  const sorted = values.slice().sort();
  for (let k = 1; k < n; k++) {
    if (sorted[k] === sorted[k - 1]) {
      const first = values.indexOf(sorted[k]);
      throw new StoreInputError(`posts ${first} and ${values.indexOf(sorted[k], first + 1)} have the same id ${sorted[k]}`);
    }
  }
  return values;
}

/** The distinct authors, ascending. */
function distinctAuthors(authors: Int32Array): number[] {
  const sorted = authors.slice().sort();
  const out: number[] = [];
  for (let k = 0; k < sorted.length; k++) if (k === 0 || sorted[k] !== sorted[k - 1]) out.push(sorted[k]);
  return out;
}

function postChunks(posts: PostsToSeed, ids: BigInt64Array, progress: (rows: number) => void): Generator<Buffer> {
  const { authors, createdAtMs } = posts;
  return copyRows(
    ids.length,
    MAX_ROW_BYTES,
    (chunk, at, i) => {
      at = chunk.writeInt16BE(4, at);
      at = chunk.writeInt32BE(8, at);
      at = chunk.writeBigInt64BE(ids[i], at);
      at = writeInt8Field(chunk, at, authors[i]); // authors are non-negative int32
      const body = bodyOf(posts, i); // checked again: a body that changed since the check fails the seed
      const bytes = chunk.write(body, at + 4, 'utf8');
      at = chunk.writeInt32BE(bytes, at) + bytes;
      at = chunk.writeInt32BE(8, at);
      return writeTimestamp(chunk, at, createdAtMs[i]);
    },
    progress,
  );
}

/** A constraint the COPY broke, as one line; undefined for anything else. */
function refused(err: unknown): StoreInputError | undefined {
  const e = (err ?? {}) as { code?: string; detail?: string; message?: string };
  const detail = e.detail ? `: ${e.detail}` : '';
  if (e.code === '23505') return new StoreInputError(`a seeded post id is already in the posts table${detail}`);
  if (e.code === '23503') return new StoreInputError(`a seeded post's author does not exist${detail}`);
  if (e.code === '23514') return new StoreInputError(`a seeded post was refused: ${e.message ?? 'a check constraint'}${detail}`);
  return undefined;
}

/**
 * Insert the posts into the store's schema (which must be migrated and hold their authors) in one
 * transaction, without outbox rows. StoreInputError for a row the table would refuse (nothing is
 * sent), an author that does not exist or an id already stored; DatabaseUnavailableError when
 * Postgres cannot be used. Either way nothing is changed.
 */
export async function seedPosts(store: Store, posts: PostsToSeed, opts: SeedPostsOptions = {}): Promise<SeedPostsResult> {
  const started = performance.now();
  const n = posts.ids.length;
  const report = opts.onProgress ?? (() => {});
  const phases: { name: string; seconds: number }[] = [];
  let phaseStart = started;
  const phaseEnd = (name: string) => {
    const now = performance.now();
    phases.push({ name, seconds: (now - phaseStart) / 1000 });
    phaseStart = now;
  };

  report(0, `checking ${fmt(n)} posts`);
  const ids = checkPostsToSeed(posts, (rows) => report((CHECK_SHARE * rows) / Math.max(1, n), `checking posts ${fmt(rows)}/${fmt(n)}`));
  phaseEnd('check');

  const client = await connectClient(store);
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const authors = distinctAuthors(posts.authors);
    const missing = await client.query<{ id: string; n: string }>(
      `SELECT min(a)::text AS id, count(*)::text AS n FROM unnest($1::int8[]) AS a WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = a)`,
      [authors],
    );
    const gone = Number(missing.rows[0].n);
    if (gone > 0) {
      const a = Number(missing.rows[0].id);
      const more = gone > 1 ? ` (nor do ${fmt(gone - 1)} more of the ${fmt(authors.length)} authors)` : '';
      throw rowError(posts.authors.indexOf(a), `author ${a} does not exist in schema ${store.schema}${more}`);
    }
    // The empty-table path: posts replaced, or empty (checked again under the lock: a post may have
    // come in between). Nobody can see or add a post until the commit, so the table may be rebuilt
    // around the COPY; truncating it in this transaction is what allows COPY FREEZE.
    const isEmpty = async () => !(await client.query<{ held: boolean }>('SELECT EXISTS (SELECT 1 FROM posts) AS held')).rows[0].held;
    let emptyTable = false;
    if (opts.replace) {
      // the posts' idempotency keys and the event log's group records go with them (fanout-ledger.ts)
      await client.query('TRUNCATE posts, post_keys, outbox, event_log_groups');
      emptyTable = true;
    } else if (await isEmpty()) {
      await client.query('LOCK TABLE posts IN ACCESS EXCLUSIVE MODE');
      emptyTable = await isEmpty();
      if (emptyTable) await client.query('TRUNCATE posts, post_keys');
    }
    if (emptyTable) for (const c of [...POSTS_BULK_CONSTRAINTS].reverse()) await client.query(c.drop);
    phaseEnd('prepare');

    report(CHECK_SHARE, `posts 0/${fmt(n)}`);
    let rows: number;
    try {
      rows = await copyIn(
        client,
        `COPY posts (id, author_id, body, created_at) FROM STDIN (FORMAT binary${emptyTable ? ', FREEZE' : ''})`,
        postChunks(posts, ids, (done) => report(CHECK_SHARE + (COPY_SHARE * done) / Math.max(1, n), `posts ${fmt(done)}/${fmt(n)}`)),
      );
      phaseEnd('copy');
      if (emptyTable) {
        for (const c of POSTS_BULK_CONSTRAINTS) {
          report(CHECK_SHARE + COPY_SHARE, `building ${c.name}`);
          await client.query(c.add);
          phaseEnd(c.name);
        }
      }
    } catch (err) {
      throw refused(err) ?? err;
    }
    if (rows !== n) throw new Error(`COPY stored ${rows} posts, expected ${n}`);

    report(CHECK_SHARE + COPY_SHARE, 'analyzing posts');
    await client.query('ANALYZE posts');
    phaseEnd('analyze');
    report(CHECK_SHARE + COPY_SHARE + (1 - CHECK_SHARE - COPY_SHARE) / 2, 'committing');
    await client.query('COMMIT');
    phaseEnd('commit');
    report(1, `${fmt(n)} posts`);
    return { posts: rows, seconds: (performance.now() - started) / 1000, emptyTable, phases };
  } catch (err) {
    const down = unavailable(err, store.url);
    if (down) broken = down;
    else await client.query('ROLLBACK').catch((e: Error) => (broken = e));
    throw down ?? err;
  } finally {
    client.release(broken);
  }
}
