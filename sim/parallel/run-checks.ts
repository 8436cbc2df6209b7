// A plan's simulation checks (the p50's and the p95's, when they are at different samples) at once,
// one worker thread each, over one shared copy of the graph. Each check is its own seeded series of
// simulations, so the plan is the same whatever the number of threads.
import type { SimulationCheck } from '../plan/check.js';
import type { CheckJob, PlanStage } from '../plan/plan.js';
import { sharedGraph } from './shared-memory.js';
import { runJobs } from './thread-pool.js';

/** What a check's thread says: a simulation started, its progress, and how it ended. */
export type CheckProgressMessage = { kind: 'start'; label: string } | { kind: 'update'; fraction: number; detail: string } | { kind: 'done'; detail: string };

export function runChecksInParallel(stage: PlanStage, threads: number, onProgress?: (job: number, m: CheckProgressMessage) => void): Promise<SimulationCheck[]> {
  const { scenario, graph, options } = stage.req;
  // the compiled thread beside this file (dist/sim/parallel/check-worker.js)
  return runJobs<CheckJob, SimulationCheck, CheckProgressMessage>(new URL('./check-worker.js', import.meta.url), { scenario, graph: sharedGraph(graph), options }, stage.jobs, threads, { onProgress });
}
