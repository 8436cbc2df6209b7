// Migrations against the real Postgres ($DATABASE_URL, else the local default), each test in its
// own throwaway schema, dropped afterwards.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { SchemaMismatchError } from '../../../server/store/errors.js';
import { appliedMigrations, migrate } from '../../../server/store/migrate.js';
import { MIGRATIONS, POST_BODY_MAX_CHARS, type Migration } from '../../../server/store/migrations.js';
import { createStore, probeDatabase, type Store } from '../../../server/store/pool.js';

const DOWN = await probeDatabase(process.env.DATABASE_URL, 2000);
const SKIP = DOWN !== undefined && process.env.CI !== 'true';
if (SKIP) console.warn(`\n!!! SKIPPING the Postgres migration tests: ${DOWN} (set DATABASE_URL; under CI=true they fail instead)\n`);

const stores: Store[] = [];
const schemas = new Set<string>();

function freshSchema(): string {
  const s = `fl_test_mig_${process.pid}_${randomBytes(4).toString('hex')}`;
  schemas.add(s);
  return s;
}

function store(schema: string): Store {
  const s = createStore({ schema, max: 2 });
  stores.push(s);
  return s;
}

/** The SQLSTATE of the statement's failure (undefined when it succeeds). */
async function sqlState(s: Store, sql: string, params: unknown[] = []): Promise<string | undefined> {
  try {
    await s.pool.query(sql, params);
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code ?? (err as Error).message;
  }
}

afterAll(async () => {
  if (DOWN === undefined && schemas.size > 0) {
    const admin = createStore({ max: 1 });
    for (const s of schemas) await admin.pool.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
    await admin.pool.end();
  }
  await Promise.all(stores.map((s) => s.pool.end()));
});

describe.skipIf(SKIP)('migrate', () => {
  it('creates the schema and applies every migration once; a second run applies nothing', async () => {
    const s = store(freshSchema());
    const first = await migrate(s);
    expect(first.applied.map((m) => m.version)).toEqual(MIGRATIONS.map((m) => m.version));
    expect(first.version).toBe(MIGRATIONS.length);
    const second = await migrate(s);
    expect(second.applied).toEqual([]);
    expect(second.version).toBe(MIGRATIONS.length);
    expect((await appliedMigrations(s)).map((m) => m.version)).toEqual(MIGRATIONS.map((m) => m.version));
    const tables = await s.pool.query<{ t: string }>(
      `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`,
      [s.schema],
    );
    expect(tables.rows.map((r) => r.t)).toEqual(['event_log_groups', 'follows', 'outbox', 'post_keys', 'posts', 'schema_migrations', 'users']);
    const indexes = await s.pool.query<{ i: string }>(`SELECT indexname AS i FROM pg_indexes WHERE schemaname = $1 ORDER BY 1`, [s.schema]);
    expect(indexes.rows.map((r) => r.i)).toEqual(
      expect.arrayContaining(['follows_pkey', 'follows_followee_idx', 'posts_author_created_idx', 'outbox_unpublished_idx', 'outbox_unfinished_idx', 'event_log_groups_pkey', 'users_handle_key']),
    );
  });

  it('is safe when two processes migrate a new schema at once: one applies, the other finds it done', async () => {
    const schema = freshSchema();
    const results = await Promise.all([migrate(store(schema)), migrate(store(schema)), migrate(store(schema))]);
    const appliedCounts = results.map((r) => r.applied.length).sort();
    expect(appliedCounts).toEqual([0, 0, MIGRATIONS.length]);
    const rows = await store(schema).pool.query('SELECT version FROM schema_migrations');
    expect(rows.rowCount).toBe(MIGRATIONS.length);
  });

  it('leaves no trace of a failing migration and refuses a migration changed after it was applied', async () => {
    const s = store(freshSchema());
    const broken: Migration = { version: MIGRATIONS.length + 1, name: 'broken', sql: 'CREATE TABLE half_done (x int); SELECT 1 / 0;' };
    await expect(migrate(s, [...MIGRATIONS, broken])).rejects.toThrow(/migration \d+ \(broken\) failed: division by zero/);
    expect((await appliedMigrations(s)).length).toBe(MIGRATIONS.length);
    expect(await sqlState(s, 'SELECT * FROM half_done')).toBe('42P01'); // undefined_table: rolled back
    const changed = [{ ...MIGRATIONS[0], sql: MIGRATIONS[0].sql + '\n-- edited' }, ...MIGRATIONS.slice(1)];
    await expect(migrate(s, changed)).rejects.toBeInstanceOf(SchemaMismatchError);
  });
});

describe.skipIf(SKIP)('schema constraints', () => {
  it('refuses self-follows, duplicate follows, follows of unknown users, bad post bodies and outbox kinds', async () => {
    const s = store(freshSchema());
    await migrate(s);
    await s.pool.query(`INSERT INTO users (id, handle) VALUES (1, 'alice'), (2, 'bob')`);
    expect(await sqlState(s, `INSERT INTO users (id, handle) VALUES (3, 'alice')`)).toBe('23505'); // handle unique

    expect(await sqlState(s, 'INSERT INTO follows (follower_id, followee_id) VALUES (1, 2)')).toBeUndefined();
    expect(await sqlState(s, 'INSERT INTO follows (follower_id, followee_id) VALUES (1, 2)')).toBe('23505'); // primary key
    expect(await sqlState(s, 'INSERT INTO follows (follower_id, followee_id) VALUES (1, 1)')).toBe('23514'); // no self-follow
    expect(await sqlState(s, 'INSERT INTO follows (follower_id, followee_id) VALUES (1, 99)')).toBe('23503'); // unknown user
    expect(await sqlState(s, 'INSERT INTO follows (follower_id, followee_id) VALUES (2, 1)')).toBeUndefined();

    const post = (id: number, body: string) => sqlState(s, 'INSERT INTO posts (id, author_id, body, created_at) VALUES ($1, 1, $2, now())', [id, body]);
    expect(await post(1, '')).toBe('23514');
    expect(await post(2, 'x'.repeat(POST_BODY_MAX_CHARS))).toBeUndefined();
    expect(await post(3, 'x'.repeat(POST_BODY_MAX_CHARS + 1))).toBe('23514');
    // Characters are code points: 280 emoji (560 UTF-16 units, 1120 bytes) fit.
    expect(await post(4, '😀'.repeat(POST_BODY_MAX_CHARS))).toBeUndefined();
    expect(await post(2, 'same id')).toBe('23505');
    expect(await sqlState(s, `INSERT INTO posts (id, author_id, body, created_at) VALUES (5, 99, 'who?', now())`)).toBe('23503');
    // 64-bit ids round-trip exactly as strings.
    const big = '9007199254740993'; // 2^53 + 1: not representable as a JS number
    expect(await sqlState(s, `INSERT INTO posts (id, author_id, body, created_at) VALUES ($1, 1, 'big', now())`, [big])).toBeUndefined();
    const back = await s.pool.query<{ id: string }>('SELECT id FROM posts WHERE id = $1', [big]);
    expect(back.rows[0].id).toBe(big);

    const outbox = (kind: string) => sqlState(s, `INSERT INTO outbox (post_id, author_id, kind, payload) VALUES (2, 1, $1, '{}')`, [kind]);
    expect(await outbox('PostCreated')).toBeUndefined();
    expect(await outbox('PostDeleted')).toBeUndefined();
    expect(await outbox('PostEdited')).toBe('23514');
  });
});
