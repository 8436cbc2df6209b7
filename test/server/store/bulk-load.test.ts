// Bulk loading a generated graph into the real Postgres, in a throwaway schema dropped afterwards.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateGraph } from '../../../sim/graph/generate.js';
import type { FollowerGraph } from '../../../sim/graph/graph.js';
import { bulkLoadGraph, checkGraphForLoad, handleFor } from '../../../server/store/bulk-load.js';
import { StoreInputError } from '../../../server/store/errors.js';
import { migrate } from '../../../server/store/migrate.js';
import { createStore, probeDatabase, type Store } from '../../../server/store/pool.js';
import { FeedRepository } from '../../../server/store/repository.js';

const DOWN = await probeDatabase(process.env.DATABASE_URL, 2000);
const SKIP = DOWN !== undefined && process.env.CI !== 'true';
if (SKIP) console.warn(`\n!!! SKIPPING the Postgres bulk-load tests: ${DOWN} (set DATABASE_URL; under CI=true they fail instead)\n`);

const DAY = 86_400_000;
const schema = `fl_test_load_${process.pid}_${randomBytes(4).toString('hex')}`;
let store: Store;

const graph = generateGraph({
  users: 2000,
  avgFollows: 12,
  alpha: 2.1,
  maxFollows: 5000,
  followsSigma: 1,
  seed: 7,
  celebrities: [{ count: 2, followers: 0.4, name: 'star' }],
});
const other = generateGraph({ users: 300, avgFollows: 5, alpha: 2.3, maxFollows: 5000, followsSigma: 1, seed: 8, celebrities: [] });

beforeAll(async () => {
  if (SKIP) return;
  store = createStore({ schema, max: 2 });
  await migrate(store);
});

afterAll(async () => {
  if (!store) return;
  if (DOWN === undefined) await store.pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await store.pool.end();
});

/** Every edge as follower * users + followee, sorted: from the graph's followee CSR. */
function graphEdges(g: FollowerGraph): number[] {
  const keys: number[] = [];
  for (let u = 0; u < g.users; u++) {
    for (let e = g.followeeOffsets[u]; e < g.followeeOffsets[u + 1]; e++) keys.push(u * g.users + g.followeeIds[e]);
  }
  return keys.sort((a, b) => a - b);
}

async function expectLoaded(g: FollowerGraph): Promise<void> {
  const users = await store.pool.query<{ id: string; handle: string; follower_count: string; followee_count: string }>(
    'SELECT id, handle, follower_count, followee_count FROM users ORDER BY id',
  );
  expect(users.rowCount).toBe(g.users);
  let wrong = 0;
  users.rows.forEach((r, a) => {
    if (Number(r.id) !== a) wrong++;
    if (r.handle !== handleFor(g, a)) wrong++;
    if (Number(r.follower_count) !== g.followerOffsets[a + 1] - g.followerOffsets[a]) wrong++;
    if (Number(r.followee_count) !== g.followeeOffsets[a + 1] - g.followeeOffsets[a]) wrong++;
  });
  expect(wrong).toBe(0);
  const follows = await store.pool.query<{ k: string }>('SELECT (follower_id * $1 + followee_id)::text AS k FROM follows ORDER BY 1::bigint', [g.users]);
  const stored = follows.rows.map((r) => Number(r.k)).sort((a, b) => a - b);
  expect(stored.length).toBe(g.edges);
  expect(stored).toEqual(graphEdges(g));
  // The counts the store keeps equal those recomputed from the loaded edges.
  const recount = await store.pool.query<{ n: string }>(`
    SELECT count(*) AS n FROM users u
    WHERE u.follower_count <> (SELECT count(*) FROM follows f WHERE f.followee_id = u.id)
       OR u.followee_count <> (SELECT count(*) FROM follows f WHERE f.follower_id = u.id)`);
  expect(Number(recount.rows[0].n)).toBe(0);
}

describe.skipIf(SKIP)('bulkLoadGraph', () => {
  it('loads exactly the graph: every user with its handle and CSR degrees, every edge, the constraints rebuilt', async () => {
    const fractions: number[] = [];
    const result = await bulkLoadGraph(store, graph, { onProgress: (f) => fractions.push(f) });
    expect(result.users).toBe(graph.users);
    expect(result.follows).toBe(graph.edges);
    await expectLoaded(graph);
    expect(handleFor(graph, graph.users - 1)).toMatch(/^star-\d$/);
    expect(fractions.at(-1)).toBe(1);
    expect(fractions.every((f, i) => f >= 0 && f <= 1 && (i === 0 || f >= fractions[i - 1]))).toBe(true);

    const cons = await store.pool.query<{ conname: string; convalidated: boolean }>(
      `SELECT conname, convalidated FROM pg_constraint WHERE conrelid = 'follows'::regclass ORDER BY 1`,
    );
    expect(cons.rows).toEqual([
      { conname: 'follows_followee_fkey', convalidated: true },
      { conname: 'follows_follower_fkey', convalidated: true },
      { conname: 'follows_no_self_follow', convalidated: true },
      { conname: 'follows_pkey', convalidated: true },
    ]);
    const idx = await store.pool.query(`SELECT 1 FROM pg_indexes WHERE schemaname = $1 AND indexname = 'follows_followee_idx'`, [schema]);
    expect(idx.rowCount).toBe(1);
    // The rebuilt constraints hold after the load.
    await expect(store.pool.query('INSERT INTO follows (follower_id, followee_id) SELECT follower_id, followee_id FROM follows LIMIT 1')).rejects.toMatchObject({ code: '23505' });
  });

  it('refuses to load over an existing graph without truncate, and replaces it with truncate', async () => {
    await expect(bulkLoadGraph(store, other)).rejects.toThrow(/already holds 2,000 users .* pass --truncate/);
    await expectLoaded(graph);
    await store.pool.query(`INSERT INTO posts (id, author_id, body, created_at) VALUES (1, 5, 'hello', now())`);
    await bulkLoadGraph(store, other, { truncate: true });
    await expectLoaded(other);
    expect((await store.pool.query('SELECT 1 FROM posts')).rowCount).toBe(0);
  });

  it('leaves the database as it was when a load fails part-way', async () => {
    // Inside the follows COPY stream (rows already sent), then between two index builds.
    for (const [when, message] of [
      [/^follows [1-9]/, 'interrupted mid-COPY'],
      [/^building follows_followee_idx/, 'interrupted between index builds'],
    ] as const) {
      const failing = bulkLoadGraph(store, graph, {
        truncate: true,
        onProgress: (_f, detail) => {
          if (when.test(detail)) throw new Error(message);
        },
      });
      await expect(failing).rejects.toThrow(message);
      await expectLoaded(other);
    }
    // And the connection it used is healthy again: a later load succeeds.
    await bulkLoadGraph(store, graph, { truncate: true });
    await expectLoaded(graph);
  });

  it('gives every account its own last_seen_at when asked, to the microsecond, and the fan-out\'s dormancy filter sees it', async () => {
    const loadedAt = new Date(Date.UTC(2025, 5, 1));
    // A third of the accounts away for 30 days and more (dormant under a 14-day window), the others
    // seen within the last day; one time with a fraction of a ms, one before 2000 (negative on the wire).
    const lastSeenMs = Float64Array.from({ length: graph.users }, (_, a) => loadedAt.getTime() - (a % 3 === 0 ? (30 + (a % 7)) * DAY : (a % 24) * 3_600_000) - a);
    lastSeenMs[1] += 0.25;
    lastSeenMs[2] = Date.UTC(1999, 11, 31, 23, 59, 59, 999);
    await bulkLoadGraph(store, graph, { truncate: true, loadedAt, lastSeenMs });
    await expectLoaded(graph);
    const r = await store.pool.query<{ seen: string; created: string }>(
      `SELECT (extract(epoch FROM last_seen_at) * 1000)::numeric::text AS seen, (extract(epoch FROM created_at) * 1000)::numeric::text AS created FROM users ORDER BY id`,
    );
    expect(r.rows.map((row) => Number(row.seen))).toEqual(Array.from(lastSeenMs));
    expect(new Set(r.rows.map((row) => Number(row.created)))).toEqual(new Set([loadedAt.getTime()]));

    // The push path's follower pages skip exactly the accounts last seen before the window.
    const star = graph.users - 1;
    const followers = Array.from(graph.followerIds.subarray(graph.followerOffsets[star], graph.followerOffsets[star + 1])).sort((x, y) => x - y);
    const activeSince = loadedAt.getTime() - 14 * DAY;
    const page = await new FeedRepository(store).followersPage(star, null, 100_000, activeSince);
    expect(page.ids).toEqual(followers.filter((f) => lastSeenMs[f] >= activeSince));
    expect(page.ids.length).toBeLessThan(followers.length * 0.7);
    expect(page.ids.length).toBeGreaterThan(followers.length * 0.6);
  });

  it('refuses last-seen times that are not one finite time per account, changing nothing', async () => {
    const before = await store.pool.query<{ n: string }>('SELECT sum(extract(epoch FROM last_seen_at))::text AS n FROM users');
    const seen = (change: (t: Float64Array) => Float64Array) => change(new Float64Array(graph.users).fill(Date.now()));
    const cases: [Float64Array, RegExp][] = [
      [seen((t) => t.subarray(1)), new RegExp(`^lastSeenMs has ${graph.users - 1} entries for ${graph.users} accounts$`)],
      [seen((t) => ((t[5] = NaN), t)), /^lastSeenMs\[5\] = NaN is not a time \(ms since the epoch\)$/],
      [seen((t) => ((t[7] = Infinity), t)), /^lastSeenMs\[7\] = Infinity is not a time/],
      [seen((t) => ((t[9] = 1e16), t)), /^lastSeenMs\[9\] = 10000000000000000 is not a time/],
      [Array.from(seen((t) => t)) as unknown as Float64Array, /^lastSeenMs must be a Float64Array/],
    ];
    for (const [lastSeenMs, message] of cases) {
      const loading = bulkLoadGraph(store, graph, { truncate: true, lastSeenMs });
      await expect(loading).rejects.toThrow(StoreInputError);
      await expect(loading).rejects.toThrow(message);
    }
    await expectLoaded(graph);
    expect((await store.pool.query<{ n: string }>('SELECT sum(extract(epoch FROM last_seen_at))::text AS n FROM users')).rows[0].n).toBe(before.rows[0].n);
  });
});

describe('checkGraphForLoad', () => {
  const tiny = (followeeIds: number[], names: [number, string][] = []) => ({
    users: 3,
    edges: followeeIds.length,
    followerOffsets: new Uint32Array([0, 0, 0, followeeIds.length]),
    followeeOffsets: new Uint32Array([0, followeeIds.length, followeeIds.length, followeeIds.length]),
    followeeIds: new Uint32Array(followeeIds),
    names: new Map(names),
  });

  it('refuses what the tables would reject, with a line naming the account', () => {
    expect(() => checkGraphForLoad(tiny([1, 2]))).not.toThrow();
    expect(() => checkGraphForLoad(tiny([0, 1]))).toThrow(/0 -> 0: an account cannot follow itself/);
    expect(() => checkGraphForLoad(tiny([1, 5]))).toThrow(/account 5 does not exist/);
    expect(() => checkGraphForLoad(tiny([2, 2]))).toThrow(/duplicate/);
    expect(() => checkGraphForLoad(tiny([1], [[1, 'u2']]))).toThrow(StoreInputError);
    expect(() => checkGraphForLoad(tiny([1], [[1, 'a'], [2, 'a']]))).toThrow(/same name "a"/);
    expect(() => checkGraphForLoad(tiny([1], [[1, 'u1']]))).not.toThrow();
  });
  it('stores follower counts of its own when given (population-scale celebrities), which the fan-out reads, and refuses bad ones', async () => {
    const star = graph.users - 1;
    const counts = Float64Array.from({ length: graph.users }, (_, a) => graph.followerOffsets[a + 1] - graph.followerOffsets[a]);
    counts[star] = 50_000_000_000; // past 2^32: the count is a bigint column
    await bulkLoadGraph(store, graph, { truncate: true, followerCounts: counts });
    const repo = new FeedRepository(store);
    expect(await repo.followerCount(star)).toBe(50_000_000_000);
    expect(await repo.followerCount(0)).toBe(counts[0]);
    // the follows themselves are the graph's
    const page = await repo.followersPage(star, null, 100_000);
    expect(page.ids.length).toBe(graph.followerOffsets[star + 1] - graph.followerOffsets[star]);
    for (const [bad, message] of [
      [counts.subarray(1), new RegExp(`^followerCounts has ${graph.users - 1} entries for ${graph.users} accounts$`)],
      [Float64Array.from(counts, (c, a) => (a === 3 ? -1 : c)), /^followerCounts\[3\] = -1 is not a whole number of followers$/],
      [Float64Array.from(counts, (c, a) => (a === 4 ? 1.5 : c)), /^followerCounts\[4\] = 1.5 is not a whole number/],
    ] as [Float64Array, RegExp][]) {
      await expect(bulkLoadGraph(store, graph, { truncate: true, followerCounts: bad })).rejects.toThrow(message);
    }
    expect(await repo.followerCount(star)).toBe(50_000_000_000);
  });
});
