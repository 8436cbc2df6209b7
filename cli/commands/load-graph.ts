// feedlab load-graph GRAPH: bulk-load a .fgraph into the reference server's users and follows.
import { loadGraph } from '../../sim/graph/file.js';
import { bulkLoadGraph } from '../../server/store/bulk-load.js';
import { migrate } from '../../server/store/migrate.js';
import type { Values } from '../spec/options.js';
import type { LOAD_GRAPH_OPTIONS } from '../spec/service.js';
import { EXIT_OK } from '../errors.js';
import { Progress } from '../output.js';
import { storeFromFlags, withStoreErrors } from './migrate.js';

export async function run(values: Values<typeof LOAD_GRAPH_OPTIONS>, positionals: string[]): Promise<number> {
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
