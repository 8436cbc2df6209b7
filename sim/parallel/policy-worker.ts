// One thread of a parallel sweep (run-policies.ts): the prepared scenario arrives once, in shared
// memory; each job is a policy to simulate over it.
import { workerData } from 'node:worker_threads';
import type { FanoutPolicy } from '../../core/fanout-policy.js';
import type { RunResult } from '../result.js';
import { runPolicy, type PreparedScenario } from '../run-scenario.js';
import { serveJobs } from './job-thread.js';
import type { PolicyProgress } from './run-policies.js';

const prepared = workerData as PreparedScenario;
serveJobs<FanoutPolicy, RunResult, PolicyProgress>((policy, say) => runPolicy(prepared, policy, (fraction, detail) => say({ fraction, detail }, fraction >= 1)));
