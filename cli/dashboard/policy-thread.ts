// One thread of the dashboard's parallel sweep (sim-worker.ts): the prepared scenario arrives once,
// in shared memory, with the stop flag; each job is a policy, simulated with its minutes passed on
// as progress. A policy whose turn comes after a stop is not run (null).
import { workerData } from 'node:worker_threads';
import type { RunResult } from '../../sim/result.js';
import { serveJobs } from '../../sim/parallel/job-thread.js';
import type { PreparedScenario } from '../../sim/run-scenario.js';
import { simulateLive, type LivePolicyJob } from './live-policy.js';
import { StopFlag } from './stop-flag.js';
import type { LiveMessage } from './state.js';

const { prepared, stop } = workerData as { prepared: PreparedScenario; stop: SharedArrayBuffer };
const flag = new StopFlag(stop);

// every message is a first or last word of its policy, or a batch of minutes: none may be dropped
serveJobs<LivePolicyJob, RunResult | null, LiveMessage>((job, say) => (flag.requested() ? null : simulateLive(prepared, job, flag, (m) => say(m, true))));
