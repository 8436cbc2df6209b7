// One policy simulated for the dashboard, on whichever thread runs it (sim-worker.ts one after
// another, policy-thread.ts in parallel): its start, every simulated minute's snapshot (batched, at
// most ~10 messages a second) and its result; stopped by the shared flag at the minute on screen.
import { formatPolicy, type FanoutPolicy } from '../../core/fanout-policy.js';
import type { MinuteSnapshot } from '../../sim/model/simulation.js';
import type { RunResult } from '../../sim/result.js';
import { runPolicy, type PreparedScenario } from '../../sim/run-scenario.js';
import type { LiveMessage } from './state.js';
import type { StopFlag } from './stop-flag.js';

/** At most this many messages a second reach the UI from one policy; every minute still arrives, batched. */
export const POST_INTERVAL_MS = 100;

export interface LivePolicyJob {
  index: number;
  policy: FanoutPolicy;
}

/**
 * Simulate one policy, posting its start and minutes. A stop ends it at the next simulated minute;
 * the policy on screen then runs again to the minute shown (a fast run is minutes ahead of a frame;
 * the same draws), so its partial result is what was shown. Another policy running beside it keeps
 * the minute it reached: its result is partial, not compared.
 */
export function simulateLive(prepared: PreparedScenario, job: LivePolicyJob, stop: StopFlag, post: (m: LiveMessage) => void): RunResult {
  const { index, policy } = job;
  post({ type: 'start', index, policy: formatPolicy(policy), durationSeconds: prepared.scenario.duration });
  let pending: MinuteSnapshot[] = [];
  let lastPost = 0;
  const flush = () => {
    if (pending.length === 0) return;
    post({ type: 'minutes', index, snapshots: pending });
    pending = [];
    lastPost = performance.now();
  };
  let result = runPolicy(prepared, policy, undefined, {
    onMinute: (snapshot) => {
      pending.push(snapshot);
      if (performance.now() - lastPost >= POST_INTERVAL_MS) flush();
    },
    shouldStop: () => stop.requested(),
  });
  flush();
  const at = stop.atSeconds();
  if (result.partial && stop.onScreen() === index && result.partial.stoppedAtSeconds > at) {
    result = runPolicy(prepared, policy, undefined, { shouldStop: (t) => t >= at });
  }
  return result;
}
