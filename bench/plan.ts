// A plan's samples serial against parallel (issue 14): plan-next-year's intervals drawn 5,000 times
// over its 100k-user sampled graph (the most --samples takes), every sample's closed form evaluated
// once on this thread and once on worker threads, in the same run; then the whole `feedlab plan`
// through the CLI with --threads 1 and with every core. Printed: each side's wall time, where the
// machine's CPU went, the speed-up against the cores, and whether the figures are the same.
import { availableParallelism } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { evaluateSamples, planSamples } from '../sim/plan/plan.js';
import { evaluateSamplesInParallel } from '../sim/parallel/run-samples.js';
import { DEFAULT_GROWTH, DEFAULT_HEADROOM, MAX_SAMPLES } from '../sim/plan/inputs.js';
import { scenarioGraph } from '../sim/run-scenario.js';
import { loadScenario } from '../sim/scenario/load.js';
import { timedCpuLine, runCli, timedCpu } from './harness.js';

const SCENARIO = 'scenarios/plan-next-year.yaml';

export async function benchPlan(): Promise<void> {
  const cores = availableParallelism();
  const sc = loadScenario(SCENARIO, { onIntervalNote: null });
  const t = performance.now();
  const graph = scenarioGraph(sc);
  const samples = planSamples({ scenario: sc, graph, options: { growth: DEFAULT_GROWTH, headroom: DEFAULT_HEADROOM, samples: MAX_SAMPLES } });
  console.log(`plan: ${MAX_SAMPLES.toLocaleString('en-US')} samples of ${SCENARIO} over ${graph.users.toLocaleString('en-US')} sampled users (graph, population and workload built once, ${((performance.now() - t) / 1000).toFixed(1)} s)`);
  const serial = await timedCpu(() => evaluateSamples(samples.workload, samples.ctx, samples.points));
  const parallel = await timedCpu(() => evaluateSamplesInParallel(samples, cores));
  const same = isDeepStrictEqual(serial.result, parallel.result);
  console.log(`  samples serial, this thread: ${timedCpuLine(serial)}`);
  console.log(`  samples parallel, ${cores} threads: ${timedCpuLine(parallel)}`);
  const speedup = serial.seconds / parallel.seconds;
  console.log(`  RESULT plan samples parallel/serial ${(1 / speedup).toFixed(3)} of the wall time: ${speedup.toFixed(2)}x faster on ${cores} cores (${(speedup / cores).toFixed(2)} of the ideal); figures ${same ? 'the same' : 'DIFFERENT'}`);
  // the whole command as a user runs it (the graph, the workload, the checks' simulations included)
  const cli = async (threads: number) => {
    const r = await runCli(['plan', SCENARIO, '--samples', String(MAX_SAMPLES), '--threads', String(threads), '--json', '--quiet'], { timeoutMs: 600_000 });
    if (r.code !== 0) throw new Error(`feedlab plan --threads ${threads} exited ${r.code}: ${r.stderr.trim().split('\n').pop()}`);
    return { seconds: r.seconds, json: r.stdout };
  };
  const one = await cli(1);
  const all = await cli(cores);
  console.log(`  RESULT feedlab plan --samples ${MAX_SAMPLES}: --threads 1 ${one.seconds.toFixed(1)} s, --threads ${cores} ${all.seconds.toFixed(1)} s (${(all.seconds / one.seconds).toFixed(3)}); documents ${one.json === all.json ? 'the same byte for byte' : 'DIFFERENT'}`);
}

if (import.meta.url === `file://${process.argv[1]}`) await benchPlan();
