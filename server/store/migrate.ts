// The migration runner: applies the pending migrations of migrations.ts to one schema, each in its
// own transaction, recording it in schema_migrations. Idempotent (a second run applies nothing) and
// safe when several processes start at once: they serialize on an advisory lock per schema, and
// each one re-reads what is applied after taking it.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { SchemaMismatchError } from './errors.js';
import { MIGRATIONS, type Migration } from './migrations.js';
import { connectClient, unavailable, type Store } from './pool.js';

export interface AppliedMigration {
  version: number;
  name: string;
}

export interface MigrateResult {
  schema: string;
  /** Migrations this run applied, in order. */
  applied: AppliedMigration[];
  /** Highest version now applied. */
  version: number;
  /** Versions recorded in the database that this code does not know (a newer feedlab migrated it). */
  unknown: number[];
}

/** Checksum of a migration's SQL, recorded when it is applied and compared on every later run. */
export function migrationChecksum(m: Migration): string {
  return createHash('sha256').update(m.sql).digest('hex').slice(0, 16);
}

/** Lock key (two int4s): a constant for "feedlab migrate" and the schema's hash, so schemas migrate independently. */
const LOCK_CLASS = 0x46_4c_4d_47; // "FLMG"

/**
 * Bring the store's schema up to date, creating the schema if needed. Throws
 * DatabaseUnavailableError when Postgres cannot be reached, SchemaMismatchError when an applied
 * migration differs from this code's.
 */
export async function migrate(store: Store, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrateResult> {
  checkOrder(migrations);
  const client = await connectClient(store);
  let locked = false;
  try {
    await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [LOCK_CLASS, store.schema]);
    locked = true;
    // Under the lock, so two processes never race to create the same schema.
    const ns = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [store.schema]);
    if (ns.rowCount === 0) await client.query(`CREATE SCHEMA ${store.schema}`);
    await client.query(`SET search_path TO ${store.schema}`);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version     integer     PRIMARY KEY,
      name        text        NOT NULL,
      checksum    text        NOT NULL,
      applied_at  timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await client.query<{ version: number; name: string; checksum: string }>(
      'SELECT version, name, checksum FROM schema_migrations ORDER BY version',
    );
    const recorded = new Map(rows.map((r) => [r.version, r]));
    for (const m of migrations) {
      const r = recorded.get(m.version);
      if (r && r.checksum !== migrationChecksum(m)) {
        throw new SchemaMismatchError(
          `schema ${store.schema} at ${store.url}: migration ${m.version} (${r.name}) was applied with different SQL than this feedlab's; ` +
            'migrations must not change once applied (drop the schema, or add a new migration)',
        );
      }
    }
    const known = new Set(migrations.map((m) => m.version));
    const unknown = rows.map((r) => r.version).filter((v) => !known.has(v));
    const applied: AppliedMigration[] = [];
    for (const m of migrations) {
      if (recorded.has(m.version)) continue;
      await applyOne(client, m);
      applied.push({ version: m.version, name: m.name });
    }
    const version = Math.max(0, ...rows.map((r) => r.version), ...applied.map((a) => a.version));
    return { schema: store.schema, applied, version, unknown };
  } catch (err) {
    throw unavailable(err, store.url) ?? err;
  } finally {
    try {
      if (locked) await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK_CLASS, store.schema]);
      await client.query('RESET search_path'); // back to the pool's schema
      client.release();
    } catch (err) {
      client.release(err as Error); // a broken connection: discard it (the lock went with it)
    }
  }
}

async function applyOne(client: pg.PoolClient, m: Migration): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(m.sql);
    await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [m.version, m.name, migrationChecksum(m)]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    if (err instanceof Error && !unavailable(err, '')) err.message = `migration ${m.version} (${m.name}) failed: ${err.message}`;
    throw err;
  }
}

function checkOrder(migrations: readonly Migration[]): void {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migrations must be numbered 1, 2, 3, ... in order; found ${m.version} at position ${i + 1}`);
  });
}

/** The versions applied in the store's schema (empty when it was never migrated). */
export async function appliedMigrations(store: Store): Promise<AppliedMigration[]> {
  const client = await connectClient(store);
  try {
    const exists = await client.query<{ t: string | null }>(`SELECT to_regclass($1) AS t`, [`${store.schema}.schema_migrations`]);
    if (!exists.rows[0].t) return [];
    const { rows } = await client.query<AppliedMigration>(`SELECT version, name FROM ${store.schema}.schema_migrations ORDER BY version`);
    return rows;
  } catch (err) {
    throw unavailable(err, store.url) ?? err;
  } finally {
    client.release();
  }
}
