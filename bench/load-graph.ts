// Bulk-loading a 1M-user, 20M-follow graph into Postgres with COPY.
// Target (the reference server issue): under 2 minutes on this machine.
import { generateGraph } from '../sim/graph/generate.js';
import { bulkLoadGraph } from '../server/store/bulk-load.js';
import { migrate } from '../server/store/migrate.js';
import { createStore, probeDatabase } from '../server/store/pool.js';

const TARGET_SECONDS = 120;

export async function benchLoadGraph(): Promise<void> {
  const down = await probeDatabase();
  if (down) {
    console.log(`!!! load-graph benchmark SKIPPED: Postgres unreachable (${down}) !!!`);
    return;
  }
  const graph = generateGraph({ users: 1_000_000, avgFollows: 20, alpha: 2.1, maxFollows: 5000, followsSigma: 1, seed: 1, celebrities: [] });
  const schema = `bench_load_${process.pid}`;
  const store = createStore({ schema });
  try {
    await migrate(store);
    const r = await bulkLoadGraph(store, graph);
    const phases = r.phases.map((p) => `${p.name} ${p.seconds.toFixed(1)}s`).join(', ');
    console.log(`load-graph 1M users / ${graph.edges} follows: ${r.seconds.toFixed(1)} s (${phases})`);
    console.log(`  ${(r.follows / r.seconds / 1e3).toFixed(0)}k follows/s; target ${TARGET_SECONDS} s, ratio ${(r.seconds / TARGET_SECONDS).toFixed(2)} (< 1 meets it)`);
  } finally {
    await store.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await store.pool.end();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchLoadGraph();
