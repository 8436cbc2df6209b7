// The simulation thread behind the dashboard.
//
// simulate() is synchronous and runs for seconds to minutes; on the main thread it would freeze
// Ink (no redraws, no keys) until it returned. Rather than cut the model's hot loop into
// resumable chunks (a generator or a yield every N events would cost the benchmark and complicate
// the engine), the whole run moves here: this thread builds the graph and population and runs each
// policy with the model's two hooks, posting each simulated minute's snapshot (batched, at most
// ~10 messages a second) and each finished result. The main thread only renders and reads keys;
// a stop is a shared flag the model reads once per simulated minute (Atomics, no message round
// trip; stop-flag.ts), so the model stops at the current simulated minute and still
// returns its metrics.
// A sweep with more than one thread runs its policies on threads of their own (policy-thread.ts)
// over one shared copy of the graph, as the sweep without a dashboard does.
import { parentPort, workerData } from 'node:worker_threads';
import type { FanoutPolicy } from '../../core/fanout-policy.js';
import { InputError } from '../../sim/errors.js';
import { sharedPrepared } from '../../sim/parallel/shared-memory.js';
import { runJobs } from '../../sim/parallel/thread-pool.js';
import type { RunResult } from '../../sim/result.js';
import { scenarioGraphOnThreads } from '../../sim/parallel/scenario-graph.js';
import { prepare, ScenarioError, type PreparedScenario } from '../../sim/run-scenario.js';
import type { Scenario } from '../../sim/scenario/types.js';
import { POST_INTERVAL_MS, simulateLive, type LivePolicyJob } from './live-policy.js';
import { StopFlag } from './stop-flag.js';
import type { LiveMessage } from './state.js';

export interface WorkerInput {
  scenario: Scenario;
  policies: FanoutPolicy[];
  /** The stop flag's SharedArrayBuffer (stop-flag.ts). */
  stop: SharedArrayBuffer;
  /** Policies simulated at once (1: one after another on this thread). */
  threads: number;
  /** Threads a generated graph drawn in blocks is made on (sim/parallel/scenario-graph.ts). */
  graphThreads: number;
}

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('sim-worker runs as a worker thread');
  const input = workerData as WorkerInput;
  const stop = new StopFlag(input.stop);
  const post = (m: LiveMessage) => port.postMessage(m);

  try {
    let lastPrepare = 0;
    const graph = await scenarioGraphOnThreads(input.scenario, input.graphThreads, (fraction, detail) => {
      const now = performance.now();
      if (now - lastPrepare < POST_INTERVAL_MS && fraction < 1) return;
      lastPrepare = now;
      post({ type: 'prepare', fraction, detail: `graph ${detail}` });
    });
    post({ type: 'prepare', fraction: 1, detail: `${graph.users} users, ${graph.edges} follows; building the population` });
    const prepared = prepare(input.scenario, graph);
    if (input.threads > 1 && input.policies.length > 1) await inParallel(prepared, input, post);
    else {
      for (let i = 0; i < input.policies.length; i++) {
        if (stop.requested()) break;
        const result = simulateLive(prepared, { index: i, policy: input.policies[i] }, stop, post);
        post({ type: 'finished', index: i, result });
        if (result.partial) break;
      }
    }
    post({ type: 'done' });
  } catch (err) {
    const input = err instanceof ScenarioError || err instanceof InputError;
    const message = err instanceof InputError ? err.line() : err instanceof Error ? err.message : String(err);
    post({ type: 'error', input, message, stack: err instanceof Error ? err.stack : undefined });
  }
}

/** The policies on up to `threads` threads of policy-thread.ts; their messages passed on, a policy not started before a stop not run. */
async function inParallel(prepared: PreparedScenario, input: WorkerInput, post: (m: LiveMessage) => void): Promise<void> {
  const jobs: LivePolicyJob[] = input.policies.map((policy, index) => ({ index, policy }));
  // the compiled thread beside this file (dist/cli/dashboard/policy-thread.js)
  await runJobs<LivePolicyJob, RunResult | null, LiveMessage>(new URL('./policy-thread.js', import.meta.url), { prepared: sharedPrepared(prepared), stop: input.stop }, jobs, input.threads, {
    onProgress: (_i, m) => post(m),
    onResult: (index, result) => {
      if (result) post({ type: 'finished', index, result });
    },
  });
}

void main();
