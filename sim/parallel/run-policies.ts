// A sweep's policies simulated in parallel: one worker thread per core (at most one per policy),
// each over the same graph and population, loaded once into shared memory (shared-memory.ts). Every
// policy's run is its own seeded simulation, so the documents are the same whatever the number of
// threads and whichever thread ran them; they come back in the order of the policies.
import type { FanoutPolicy } from '../../core/fanout-policy.js';
import type { RunResult } from '../result.js';
import type { PreparedScenario } from '../run-scenario.js';
import { sharedPrepared } from './shared-memory.js';
import { runJobs } from './thread-pool.js';

export interface PolicyProgress {
  fraction: number;
  detail: string;
}

export interface ParallelHooks {
  /** A policy's progress, from whichever thread runs it. */
  onProgress?: (index: number, fraction: number, detail: string) => void;
  /** A policy finished. */
  onResult?: (index: number, result: RunResult) => void;
}

/** Every policy simulated over `prepared` on up to `threads` worker threads; the results in the policies' order. */
export function runPoliciesInParallel(prepared: PreparedScenario, policies: readonly FanoutPolicy[], threads: number, hooks: ParallelHooks = {}): Promise<RunResult[]> {
  // the compiled thread beside this file (dist/sim/parallel/policy-worker.js)
  return runJobs<FanoutPolicy, RunResult, PolicyProgress>(new URL('./policy-worker.js', import.meta.url), sharedPrepared(prepared), policies, threads, {
    onProgress: (i, p) => hooks.onProgress?.(i, p.fraction, p.detail),
    onResult: hooks.onResult,
  });
}
