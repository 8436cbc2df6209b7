// npm run bench: every benchmark in one process, each printing its figure and its ratio to the anchor.
import { benchCompare } from './compare.js';
import { benchEngine } from './engine.js';
import { benchFaults } from './faults.js';
import { benchGraph } from './graph.js';
import { benchLoadGraph } from './load-graph.js';
import { benchPlan } from './plan.js';
import { benchReplay } from './replay.js';
import { benchServer } from './server.js';
import { benchSimulate } from './simulate.js';
import { benchSoak } from './soak.js';
import { benchSweep } from './sweep.js';

const only = process.argv[2];
const benches: Record<string, () => Promise<void>> = { engine: benchEngine, simulate: benchSimulate, sweep: benchSweep, plan: benchPlan, graph: benchGraph, 'load-graph': benchLoadGraph, server: benchServer, replay: benchReplay, compare: benchCompare, faults: benchFaults, soak: benchSoak };
for (const [name, fn] of Object.entries(benches)) {
  if (only && only !== name) continue;
  console.log(`\n== ${name} ==`);
  await fn();
}
