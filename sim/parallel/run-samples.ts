// A plan's samples evaluated on worker threads: the closed form of each sample is its own (no
// draw, no shared state), so slices of them go to the threads and come back in order, and the
// plan is the same whatever the number of threads. The workload's per-user arrays are shared.
import type { PlanSamples } from '../plan/plan.js';
import type { PlanPoint } from '../plan/inputs.js';
import type { Figures } from '../plan/resources.js';
import { withSharedArrays } from './shared-memory.js';
import { runJobs } from './thread-pool.js';

/** Slices per thread: the threads finish together though some samples cost more than others. */
const SLICES_PER_THREAD = 4;

export async function evaluateSamplesInParallel(s: PlanSamples, threads: number, onSlice?: (done: number, of: number) => void): Promise<Figures[]> {
  const n = s.points.length;
  const slices = Math.min(n, Math.max(1, threads) * SLICES_PER_THREAD);
  const jobs: PlanPoint[][] = [];
  for (let k = 0; k < slices; k++) jobs.push(s.points.slice(Math.floor((k * n) / slices), Math.floor(((k + 1) * n) / slices)));
  let done = 0;
  // the compiled thread beside this file (dist/sim/parallel/sample-worker.js)
  const results = await runJobs<PlanPoint[], Figures[], never>(new URL('./sample-worker.js', import.meta.url), { workload: withSharedArrays(s.workload), ctx: s.ctx }, jobs, threads, {
    onResult: () => onSlice?.(++done, slices),
  });
  return results.flat();
}
