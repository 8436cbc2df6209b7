// feedlab migrate: bring the reference server's Postgres schema up to date (idempotent).
import { DatabaseUnavailableError, SchemaMismatchError, StoreInputError } from '../../server/store/errors.js';
import { migrate } from '../../server/store/migrate.js';
import { createStore, DEFAULT_DATABASE_URL, type Store } from '../../server/store/pool.js';
import { parseCommandArgs } from '../args.js';
import { EXIT_OK, InfrastructureError, InputError } from '../errors.js';

export const summary = 'create or update the reference server\'s Postgres tables (idempotent)';

const USAGE = 'feedlab migrate [--database-url URL] [--schema S] [--json]';

const HELP = `${USAGE}

Applies the pending migrations (users, follows, posts, outbox) in order, each in its own
transaction; a second run applies nothing. Several processes may migrate at once: they take turns
on an advisory lock.

  --database-url URL  Postgres to migrate (default $DATABASE_URL, else ${DEFAULT_DATABASE_URL})
  --schema S          Postgres schema to work in, created if missing (default public)
  --json              print a feedlab.migrate/1 document on stdout
`;

/** Options every database command takes. */
export const DATABASE_OPTIONS = {
  'database-url': { type: 'string' },
  schema: { type: 'string' },
} as const;

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

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    'migrate',
    argv,
    { ...DATABASE_OPTIONS, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(HELP);
    return EXIT_OK;
  }
  if (positionals.length > 0) throw new InputError(`migrate: unexpected argument "${positionals[0]}" (usage: ${USAGE})`);
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
