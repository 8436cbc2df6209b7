// The simulation thread behind the dashboard.
//
// simulate() is synchronous and runs for seconds to minutes; on the main thread it would freeze
// Ink (no redraws, no keys) until it returned. Rather than cut the model's hot loop into
// resumable chunks (a generator or a yield every N events would cost the benchmark and complicate
// the engine), the whole run moves here: this thread builds the graph and population and runs each
// policy with the model's two hooks, posting each simulated minute's snapshot (batched, at most
// ~10 messages a second) and each finished result. The main thread only renders and reads keys;
// a stop is one shared Int32 the model reads once per simulated minute (Atomics, no message
// round trip), so the model stops at the current simulated minute and still returns its metrics.
import { parentPort, workerData } from 'node:worker_threads';
import { formatPolicy, type FanoutPolicy } from '../../core/fanout-policy.js';
import { InputError } from '../../sim/errors.js';
import type { MinuteSnapshot } from '../../sim/model/simulation.js';
import { prepare, runPolicy, scenarioGraph, ScenarioError } from '../../sim/run-scenario.js';
import type { Scenario } from '../../sim/scenario/types.js';
import type { LiveMessage } from './state.js';

export interface WorkerInput {
  scenario: Scenario;
  policies: FanoutPolicy[];
  /** Int32Array over a SharedArrayBuffer: non-zero asks the run to stop. */
  stop: SharedArrayBuffer;
}

/** At most this many messages a second reach the UI; every minute still arrives, batched. */
const POST_INTERVAL_MS = 100;

function main(): void {
  const port = parentPort;
  if (!port) throw new Error('sim-worker runs as a worker thread');
  const input = workerData as WorkerInput;
  const flag = new Int32Array(input.stop);
  const stopRequested = () => Atomics.load(flag, 0) !== 0;
  /** The simulated second the stop asks for: the end of the minute on screen (session.tsx). */
  const stopAtSeconds = () => Atomics.load(flag, 0) * 60;
  const post = (m: LiveMessage) => port.postMessage(m);

  try {
    let lastPrepare = 0;
    const graph = scenarioGraph(input.scenario, (fraction, detail) => {
      const now = performance.now();
      if (now - lastPrepare < POST_INTERVAL_MS && fraction < 1) return;
      lastPrepare = now;
      post({ type: 'prepare', fraction, detail: `graph ${detail}` });
    });
    post({ type: 'prepare', fraction: 1, detail: `${graph.users} users, ${graph.edges} follows; building the population` });
    const prepared = prepare(input.scenario, graph);
    for (let i = 0; i < input.policies.length; i++) {
      if (stopRequested()) break;
      post({ type: 'start', index: i, policy: formatPolicy(input.policies[i]), durationSeconds: input.scenario.duration });
      let pending: MinuteSnapshot[] = [];
      let lastPost = 0;
      const flush = () => {
        if (pending.length === 0) return;
        post({ type: 'minutes', index: i, snapshots: pending });
        pending = [];
        lastPost = performance.now();
      };
      let result = runPolicy(prepared, input.policies[i], undefined, {
        onMinute: (snapshot) => {
          pending.push(snapshot);
          if (performance.now() - lastPost >= POST_INTERVAL_MS) flush();
        },
        shouldStop: stopRequested,
      });
      flush();
      // The run went past the minute on screen before it saw the stop (a fast run is minutes ahead
      // of a frame): run it again to that minute, the same draws, so the result is what was shown.
      const at = stopAtSeconds();
      if (result.partial && result.partial.stoppedAtSeconds > at) result = runPolicy(prepared, input.policies[i], undefined, { shouldStop: (t) => t >= at });
      post({ type: 'finished', index: i, result });
      if (result.partial) break;
    }
    post({ type: 'done' });
  } catch (err) {
    const input = err instanceof ScenarioError || err instanceof InputError;
    const message = err instanceof InputError ? err.line() : err instanceof Error ? err.message : String(err);
    post({ type: 'error', input, message, stack: err instanceof Error ? err.stack : undefined });
  }
}

main();
