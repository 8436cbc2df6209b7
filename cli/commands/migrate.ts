// feedlab migrate: bring the reference server's Postgres schema up to date (idempotent).
import { DatabaseUnavailableError, SchemaMismatchError, StoreInputError } from '../../server/store/errors.js';
import { migrate } from '../../server/store/migrate.js';
import { createStore, type Store } from '../../server/store/pool.js';
import type { Values } from '../spec/options.js';
import type { MIGRATE_OPTIONS } from '../spec/service.js';
import { EXIT_OK, InfrastructureError, InputError } from '../errors.js';

/** Run a store operation with its errors turned into the CLI's: bad input exits 2, an unusable database 3. */
export async function withStoreErrors<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof StoreInputError) throw new InputError(err.message);
    if (err instanceof DatabaseUnavailableError || err instanceof SchemaMismatchError) throw new InfrastructureError(err.message);
    throw err;
  }
}

/** A store from --database-url / --schema, with a bad URL or schema name as an InputError. */
export function storeFromFlags(values: { 'database-url'?: string; schema?: string }, max?: number): Promise<Store> {
  return withStoreErrors(() => createStore({ databaseUrl: values['database-url'], schema: values.schema, max }));
}

export async function run(values: Values<typeof MIGRATE_OPTIONS>): Promise<number> {
  const store = await storeFromFlags(values, 1);
  try {
    const result = await withStoreErrors(() => migrate(store));
    if (values.json) {
      const doc = { schema: 'feedlab.migrate/1', database: store.url, pgSchema: result.schema, applied: result.applied, version: result.version, unknown: result.unknown };
      process.stdout.write(JSON.stringify(doc, null, 2) + '\n');
    } else {
      const where = `schema ${result.schema} at ${store.url}`;
      const applied = result.applied.map((m) => `${m.version} ${m.name}`).join(', ');
      process.stdout.write(
        result.applied.length === 0
          ? `${where}: up to date at version ${result.version}\n`
          : `${where}: applied ${result.applied.length} migration${result.applied.length === 1 ? '' : 's'} (${applied}); now at version ${result.version}\n`,
      );
      if (result.unknown.length > 0) {
        process.stderr.write(`feedlab migrate: the database also records version(s) ${result.unknown.join(', ')}, unknown to this feedlab (a newer one migrated it)\n`);
      }
    }
    return EXIT_OK;
  } finally {
    await store.pool.end();
  }
}
