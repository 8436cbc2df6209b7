// A sweep's policies serial against parallel (issue 14): the nine policies of threshold-sweep's
// sweep list over one simulated day of 1M users, once one after another on this thread and once on
// worker threads over one shared copy of the graph, in the same run. Printed: each side's wall
// time, the speed-up against the cores, whether the documents are the same byte for byte, and
// where the machine's CPU went (this process, its threads included, and the other processes).
import { availableParallelism } from 'node:os';
import { timedCpuLine, timedCpu } from './harness.js';
import { runPoliciesInParallel } from '../sim/parallel/run-policies.js';
import { policyFor, prepare, runPolicy, scenarioGraph } from '../sim/run-scenario.js';
import { parseScenario } from '../sim/scenario/load.js';
import { stringifyResult } from '../sim/result.js';
import { DAY_SCENARIO } from './simulate.js';

const POLICIES = ['push', 'pull', 'threshold:1000', 'threshold:10000', 'threshold:25000', 'threshold:100000', 'rate', 'reader-cap:2000', 'adaptive:100000'];

/** bench/simulate.ts's day, with five celebrities of a fifth of the users each for the thresholds to pull. */
const SCENARIO = withCelebrities(DAY_SCENARIO);

function withCelebrities(day: string): string {
  const text = day.replace('name: bench-day', 'name: bench-sweep-day').replace('maxFollows: 5000 }', 'maxFollows: 5000, celebrities: [{ count: 5, followers: 0.2, name: star }] }');
  if (!text.includes('celebrities') || !text.includes('bench-sweep-day')) throw new Error("bench/sweep.ts: bench/simulate.ts's day changed shape");
  return text;
}

export async function benchSweep(): Promise<void> {
  const cores = availableParallelism();
  const sc = parseScenario(SCENARIO, 'bench-sweep-day');
  const t = performance.now();
  const prepared = prepare(sc, scenarioGraph(sc));
  console.log(`sweep: ${POLICIES.length} policies over one simulated day of ${prepared.graph.users.toLocaleString('en-US')} users, ${prepared.graph.edges.toLocaleString('en-US')} follows (the graph and population built once, ${((performance.now() - t) / 1000).toFixed(1)} s)`);
  const policies = POLICIES.map((p) => policyFor(sc, p));
  const serial = await timedCpu(() => policies.map((p) => runPolicy(prepared, p)));
  const parallel = await timedCpu(() => runPoliciesInParallel(prepared, policies, cores));
  const same = serial.result.every((r, i) => stringifyResult(r) === stringifyResult(parallel.result[i]));
  for (const [name, s] of [['serial, this thread', serial], [`parallel, ${Math.min(cores, POLICIES.length)} threads`, parallel]] as const) console.log(`  ${name}: ${timedCpuLine(s)}`);
  const speedup = serial.seconds / parallel.seconds;
  console.log(`  RESULT parallel/serial ${(parallel.seconds / serial.seconds).toFixed(3)} of the wall time: ${speedup.toFixed(2)}x faster on ${cores} cores (${(speedup / cores).toFixed(2)} of the ideal ${cores}x); documents ${same ? 'the same byte for byte' : 'DIFFERENT'}`);
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSweep();
