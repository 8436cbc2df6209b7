// Seeding history posts with binary COPY into the real Postgres, in a throwaway schema dropped
// afterwards: the rows land exactly (ids, authors, times to the ms, bodies in any script, up to
// 280 characters of 4 UTF-8 bytes), without outbox rows and analyzed; the read path (an author's
// posts, a cold-start timeline rebuild) sees them; a bad row is refused in one line before
// Postgres is even asked, and a seed refused by the table (an author missing, an id already there,
// a body that changed between its check and its write) leaves posts as it was, its constraints
// too; replace swaps the posts whole. And its speed, into an empty table and beside posts.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePostId } from '../../../core/post-id.js';
import { StoreInputError } from '../../../server/store/errors.js';
import { migrate } from '../../../server/store/migrate.js';
import { createStore, probeDatabase, type Store } from '../../../server/store/pool.js';
import { FeedRepository } from '../../../server/store/repository.js';
import { checkPostsToSeed, seedPosts, type PostsToSeed } from '../../../server/store/seed-posts.js';
import { dropPostgresState } from '../services.js';

const DOWN = await probeDatabase(process.env.DATABASE_URL, 2000);
const SKIP = DOWN !== undefined && process.env.CI !== 'true';
if (SKIP) console.warn(`\n!!! SKIPPING the Postgres seed-posts tests: ${DOWN} (set DATABASE_URL; under CI=true they fail instead)\n`);

const schema = `fl_test_seed_${process.pid}_${randomBytes(4).toString('hex')}`;
let store: Store;
let repo: FeedRepository;
const USERS = 6_000;
const READER = USERS - 1;
const T0 = Date.UTC(2025, 4, 1, 12);

beforeAll(async () => {
  if (SKIP) return;
  store = createStore({ schema, max: 4 });
  await migrate(store);
  repo = new FeedRepository(store);
  await store.pool.query(`INSERT INTO users (id, handle) SELECT g, 'u' || g FROM generate_series(0, $1::int8 - 1) g`, [USERS]);
  // The reader follows authors 1 and 2.
  await store.pool.query(`INSERT INTO follows (follower_id, followee_id) VALUES ($1, 1), ($1, 2)`, [READER]);
});

afterAll(async () => {
  if (!store) return;
  if (DOWN === undefined) await store.pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await store.pool.end();
});

const BODIES = ['hello', 'café crème, déjà vu', '日本語の投稿です', 'emoji 🎉🚀 and 𝄞', 'Ελληνικά · русский · עברית', '𝄞'.repeat(280), 'x'.repeat(280)];

/** n posts by authors 0..authors-1 in turn, 1 ms apart from `from` (several per ms: the sequence). */
function history(n: number, authors: number, from = T0, worker = 900): PostsToSeed & { ids: string[]; bodies: string[] } {
  const ids: string[] = [];
  const createdAtMs = new Float64Array(n);
  const authorIds = new Int32Array(n);
  const bodies: string[] = [];
  for (let i = 0; i < n; i++) {
    const at = from + Math.floor(i / 3);
    ids.push(makePostId(at, worker, i % 3));
    createdAtMs[i] = at;
    authorIds[i] = i % authors;
    bodies.push(i < BODIES.length ? BODIES[i] : `post ${i} by ${i % authors} ✓`);
  }
  return { ids, authors: authorIds, createdAtMs, body: (i) => bodies[i], bodies };
}

async function postRows(): Promise<{ id: string; author: number; body: string; ms: number }[]> {
  const r = await store.pool.query<{ id: string; author: string; body: string; ms: string }>(
    `SELECT id::text AS id, author_id::text AS author, body, (extract(epoch FROM created_at) * 1000)::numeric::text AS ms FROM posts ORDER BY id`,
  );
  return r.rows.map((row) => ({ id: row.id, author: Number(row.author), body: row.body, ms: Number(row.ms) }));
}

/** Bodies that turn empty the second time post k's is asked for (between its check and its write). */
function changesAt(k: number, body: (i: number) => string): (i: number) => string {
  const asked = new Set<number>();
  return (i) => {
    if (i === k && asked.has(i)) return '';
    asked.add(i);
    return body(i);
  };
}

/** The posts table's constraints and indexes, as Postgres describes them. */
async function postsSchema(): Promise<string[]> {
  const cons = await store.pool.query<{ d: string }>(`SELECT conname || ' ' || pg_get_constraintdef(oid) AS d FROM pg_constraint WHERE conrelid = 'posts'::regclass ORDER BY conname`);
  const idx = await store.pool.query<{ d: string }>(`SELECT indexdef AS d FROM pg_indexes WHERE schemaname = $1 AND tablename = 'posts' ORDER BY indexname`, [schema]);
  return [...cons.rows, ...idx.rows].map((r) => r.d);
}

async function postCount(): Promise<number> {
  return Number((await store.pool.query<{ n: string }>('SELECT count(*)::text AS n FROM posts')).rows[0].n);
}

describe.skipIf(SKIP)('seedPosts', () => {
  it('stores exactly the posts: ids, authors, times to the ms, bodies in any script; no outbox rows; analyzed', async () => {
    const migrated = await postsSchema();
    expect(migrated).toHaveLength(5); // pkey, author fkey, body check; pkey and author index
    const h = history(3_000, 40);
    // Into the empty table its constraints are rebuilt around the COPY: a seed failing inside it
    // leaves them (and the empty table) as they were.
    await expect(seedPosts(store, { ...h, body: changesAt(2_000, h.body) })).rejects.toThrow(/^post 2000: body is empty/);
    expect(await postCount()).toBe(0);
    expect(await postsSchema()).toEqual(migrated);

    const fractions: number[] = [];
    const result = await seedPosts(store, h, { onProgress: (f) => fractions.push(f) });
    expect(result.posts).toBe(3_000);
    expect(result.emptyTable).toBe(true);
    expect(result.phases.map((p) => p.name)).toEqual(['check', 'prepare', 'copy', 'posts_author_fkey', 'posts_author_created_idx', 'analyze', 'commit']);
    expect(await postsSchema()).toEqual(migrated);
    await expect(store.pool.query(`INSERT INTO posts (id, author_id, body, created_at) VALUES (1, $1, 'x', now())`, [USERS + 1])).rejects.toMatchObject({ code: '23503' });
    const expected = h.ids.map((id, i) => ({ id, author: h.authors[i], body: h.bodies[i], ms: h.createdAtMs[i] })).sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    expect(await postRows()).toEqual(expected);
    expect((await store.pool.query('SELECT 1 FROM outbox')).rowCount).toBe(0);
    const stats = await store.pool.query<{ n: number }>(`SELECT reltuples::int AS n FROM pg_class WHERE oid = 'posts'::regclass`);
    expect(stats.rows[0].n).toBe(3_000);
    expect(fractions.at(-1)).toBe(1);
    expect(fractions.every((f, i) => f >= 0 && f <= 1 && (i === 0 || f >= fractions[i - 1]))).toBe(true);
  });

  it('takes the ids as int64 values too', async () => {
    const h = history(500, 7, T0 + 3_600_000);
    const before = await postCount();
    const result = await seedPosts(store, { ...h, ids: BigInt64Array.from(h.ids, (id) => BigInt(id)) });
    expect(result).toMatchObject({ posts: 500, emptyTable: false });
    expect(result.phases.map((p) => p.name)).toEqual(['check', 'prepare', 'copy', 'analyze', 'commit']);
    expect(await postCount()).toBe(before + 500);
    const r = await store.pool.query<{ id: string; author: string }>(`SELECT id::text AS id, author_id::text AS author FROM posts WHERE id = $1`, [h.ids[123]]);
    expect(r.rows).toEqual([{ id: h.ids[123], author: String(h.authors[123]) }]);
  });

  it('the read path sees the seeded posts: an author\'s posts page and a cold-start timeline rebuild', async () => {
    const h = history(60, 3, T0 + 7_200_000, 901); // authors 0, 1, 2 in turn
    await seedPosts(store, h);
    const byAuthor = (a: number) =>
      h.ids
        .map((id, i) => ({ id, i }))
        .filter(({ i }) => h.authors[i] === a)
        .sort((x, y) => h.createdAtMs[y.i] - h.createdAtMs[x.i] || (BigInt(y.id) > BigInt(x.id) ? 1 : -1));
    const page = await repo.userPostsPage(1, null, 5);
    expect(page.map((p) => p.id)).toEqual(byAuthor(1).slice(0, 5).map((p) => p.id));
    expect(page[0]).toMatchObject({ authorId: 1, body: h.bodies[byAuthor(1)[0].i], createdAt: h.createdAtMs[byAuthor(1)[0].i], deleted: false });
    // The reader follows 1 and 2: its rebuilt timeline holds their posts of this history, newest first.
    const rebuilt = await repo.rebuildTimeline(READER, T0 + 7_200_000, 800, 1_000);
    const expected = [...byAuthor(1), ...byAuthor(2)]
      .map(({ id, i }) => ({ id, createdAt: h.createdAtMs[i] }))
      .sort((x, y) => y.createdAt - x.createdAt || (BigInt(y.id) > BigInt(x.id) ? 1 : -1));
    expect(rebuilt).toEqual(expected);
    expect(rebuilt).toHaveLength(40);
  });

  it('refuses a bad row in one line naming it, before Postgres is asked', async () => {
    // A store nobody listens at: a seed that got as far as connecting would fail otherwise.
    const nowhere = createStore({ databaseUrl: 'postgres://root@127.0.0.1:1/feedlab', schema, connectTimeoutMs: 500 });
    const bad = (change: (h: ReturnType<typeof history>) => void) => {
      const h = history(20, 5, T0 + 10_800_000);
      change(h);
      return seedPosts(nowhere, h);
    };
    const cases: [string, (h: ReturnType<typeof history>) => void, RegExp][] = [
      ['not an id', (h) => (h.ids[4] = '12a'), /^post 4: id "12a" is not a post id/],
      ['a negative int64', (h) => Object.assign(h, { ids: BigInt64Array.from(h.ids, (id, i) => (i === 6 ? -BigInt(id) : BigInt(id))) }), /^post 6: id -\d+ is not a post id/],
      ['an id twice', (h) => (h.ids[9] = h.ids[2]), /^post 9: created at .* but id/],
      ['the same id and time twice', (h) => ((h.ids[9] = h.ids[2]), (h.createdAtMs[9] = h.createdAtMs[2])), /^posts 2 and 9 have the same id \d+$/],
      ['a time not the id\'s', (h) => (h.createdAtMs[3] += 1), /^post 3: created at \d+, but id \d+ is of \d+/],
      ['a time not a whole ms', (h) => (h.createdAtMs[3] += 0.5), /^post 3: created at [\d.]+, but id/],
      ['a negative author', (h) => (h.authors[7] = -1), /^post 7: author -1 is not a user id$/],
      ['an empty body', (h) => (h.bodies[5] = ''), /^post 5: body is empty \(1 to 280 characters\)$/],
      ['a body of 281 characters', (h) => (h.bodies[5] = '𝄞'.repeat(281)), /^post 5: body is longer than 280 characters$/],
      ['a NUL in a body', (h) => (h.bodies[5] = 'a\0b'), /^post 5: body contains a NUL character$/],
      ['an unpaired surrogate', (h) => (h.bodies[5] = 'a\ud800b'), /^post 5: body is not valid Unicode/],
      ['a body not a string', (h) => (h.bodies[5] = 42 as unknown as string), /^post 5: body must be a string, not number$/],
      ['fewer authors than ids', (h) => Object.assign(h, { authors: h.authors.subarray(0, 19) }), /^posts to seed: 20 ids, 19 authors, 20 times/],
      ['times not a Float64Array', (h) => Object.assign(h, { createdAtMs: Array.from(h.createdAtMs) }), /need authors \(Int32Array\), createdAtMs \(Float64Array\)/],
    ];
    try {
      for (const [what, change, message] of cases) {
        const seeding = bad(change);
        await expect(seeding, what).rejects.toThrow(StoreInputError);
        await expect(seeding, what).rejects.toThrow(message);
      }
    } finally {
      await nowhere.pool.end();
    }
    expect(() => checkPostsToSeed(history(20, 5))).not.toThrow();
  });

  it('leaves posts as they were when the table refuses the seed: an author missing, an id already there, a body changed since its check', async () => {
    const before = await postRows();
    const h = history(200, 5, T0 + 14_400_000, 902);
    h.authors[150] = USERS + 7;
    await expect(seedPosts(store, h)).rejects.toThrow(new StoreInputError(`post 150: author ${USERS + 7} does not exist in schema ${schema}`));

    const again = history(200, 5, T0 + 14_400_000, 902);
    again.ids[199] = before[0].id;
    again.createdAtMs[199] = before[0].ms;
    await expect(seedPosts(store, again)).rejects.toThrow(/^a seeded post id is already in the posts table: Key \(id\)=\(\d+\) already exists/);

    const fickle = history(200, 5, T0 + 14_400_000, 902);
    await expect(seedPosts(store, { ...fickle, body: changesAt(180, fickle.body) })).rejects.toThrow(/^post 180: body is empty/);

    expect(await postRows()).toEqual(before);
    // The connection each used is fine again: the same seed, corrected, goes in.
    await seedPosts(store, history(200, 5, T0 + 14_400_000, 902));
    expect(await postCount()).toBe(before.length + 200);
  });

  it('with replace, swaps every post and outbox row for the seed in one transaction, on the empty-table path', async () => {
    expect(await postCount()).toBeGreaterThan(0);
    await store.pool.query(`INSERT INTO outbox (post_id, author_id, kind, payload) VALUES (1, 1, 'PostCreated', '{}')`);
    const migrated = await postsSchema();
    const h = history(100, 4, T0 + 18_000_000, 905);
    const result = await seedPosts(store, h, { replace: true });
    expect(result).toMatchObject({ posts: 100, emptyTable: true });
    expect((await postRows()).map((r) => r.id)).toEqual([...h.ids].sort((x, y) => (BigInt(x) < BigInt(y) ? -1 : 1)));
    expect((await store.pool.query('SELECT 1 FROM outbox')).rowCount).toBe(0);
    expect(await postsSchema()).toEqual(migrated);
  });

  it('measures the seeding rate: 300,000 posts by 5,000 authors into an empty table, then 300,000 more beside them', async () => {
    // A schema of its own, so that the first seed finds posts empty (as a replay's does).
    const speed = createStore({ schema: `${schema}_speed`, max: 2 });
    try {
      await migrate(speed);
      await speed.pool.query(`INSERT INTO users (id, handle) SELECT g, 'u' || g FROM generate_series(0, 4999) g`);
      const n = 300_000;
      const words = 'the feed post timeline read write cache follow news today café'.split(' ');
      const body = (i: number) => `${words[i % words.length]} ${words[(i >> 3) % words.length]} number ${i} of the seeded history, ${'x'.repeat(i % 60)}`;
      const week = (from: number, worker: number): PostsToSeed => {
        const authors = new Int32Array(n);
        const createdAtMs = new Float64Array(n);
        const ids = new BigInt64Array(n);
        for (let i = 0; i < n; i++) {
          const at = from + Math.floor(i / 2); // two per ms
          createdAtMs[i] = at;
          authors[i] = (i * 7919) % 5_000;
          ids[i] = BigInt(makePostId(at, worker, i % 2));
        }
        return { ids, authors, createdAtMs, body };
      };
      for (const [what, posts, empty] of [
        ['into an empty table', week(T0 - 7 * 86_400_000, 903), true],
        ['beside 300,000', week(T0 - 14 * 86_400_000, 904), false],
      ] as const) {
        const result = await seedPosts(speed, posts);
        expect(result).toMatchObject({ posts: n, emptyTable: empty });
        const phases = result.phases.map((p) => `${p.name} ${p.seconds.toFixed(2)} s`).join(', ');
        console.log(`seeded ${n.toLocaleString('en-US')} posts ${what} in ${result.seconds.toFixed(2)} s: ${Math.round(n / result.seconds).toLocaleString('en-US')} posts/s (${phases})`);
      }
      expect(Number((await speed.pool.query<{ n: string }>('SELECT count(*)::text AS n FROM posts')).rows[0].n)).toBe(2 * n);
    } finally {
      await dropPostgresState(speed, `${schema}_speed`);
    }
  });
});
