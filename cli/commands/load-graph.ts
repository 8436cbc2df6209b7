// feedlab load-graph GRAPH: bulk-load a .fgraph into the reference server's users and follows.
import { loadGraph } from '../../sim/graph/file.js';
import { bulkLoadGraph } from '../../server/store/bulk-load.js';
import { migrate } from '../../server/store/migrate.js';
import { DEFAULT_DATABASE_URL } from '../../server/store/pool.js';
import { parseCommandArgs } from '../args.js';
import { EXIT_OK, InputError } from '../errors.js';
import { Progress } from '../output.js';
import { DATABASE_OPTIONS, storeFromFlags, withStoreErrors } from './migrate.js';

export const summary = 'bulk-load a follower graph (.fgraph) into Postgres users and follows';

const USAGE = 'feedlab load-graph GRAPH [--database-url URL] [--schema S] [--truncate] [--json] [--quiet]';

const HELP = `${USAGE}

Loads a generated or imported graph into the reference server's tables with COPY: account a
becomes user id a, with handle "u<a>" (or the celebrity's name) and its follower and followee
counts. Migrates the schema first. The load is one transaction: if it fails or is interrupted,
the database is left as it was.

  --database-url URL  Postgres to load (default $DATABASE_URL, else ${DEFAULT_DATABASE_URL})
  --schema S          Postgres schema to work in (default public)
  --truncate          replace the users and follows already there (and the posts and outbox
                      rows that belong to them); without it the tables must be empty
  --json              print a feedlab.load-graph/1 document on stdout
  --quiet             no progress on stderr
`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    'load-graph',
    argv,
    { ...DATABASE_OPTIONS, truncate: { type: 'boolean' }, json: { type: 'boolean' }, quiet: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(HELP);
    return EXIT_OK;
  }
  if (positionals.length !== 1) {
    throw new InputError(`load-graph: ${positionals.length === 0 ? 'GRAPH is required' : `unexpected argument "${positionals[1]}"`} (usage: ${USAGE})`);
  }
  const path = positionals[0];
  const store = await storeFromFlags(values, 1);
  try {
    const graph = loadGraph(path);
    await withStoreErrors(() => migrate(store));
    const progress = new Progress(`load-graph ${path}`, !values.quiet);
    let result;
    try {
      result = await withStoreErrors(() => bulkLoadGraph(store, graph, { truncate: values.truncate, onProgress: (f, d) => progress.update(f, d) }));
    } catch (err) {
      if (!values.quiet && process.stderr.isTTY) process.stderr.write('\n'); // end the progress line before the error line
      throw err;
    }
    progress.done();
    const rate = result.follows / Math.max(result.seconds, 1e-3);
    if (values.json) {
      const doc = { schema: 'feedlab.load-graph/1', graph: path, database: store.url, pgSchema: store.schema, ...result };
      process.stdout.write(JSON.stringify(doc, null, 2) + '\n');
    } else {
      process.stdout.write(
        `loaded ${path} into schema ${store.schema} at ${store.url}: ${result.users.toLocaleString('en-US')} users, ` +
          `${result.follows.toLocaleString('en-US')} follows in ${result.seconds.toFixed(1)} s (${Math.round(rate).toLocaleString('en-US')} follows/s)\n`,
      );
    }
    return EXIT_OK;
  } finally {
    await store.pool.end();
  }
}
