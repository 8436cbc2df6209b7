// One thread of a plan's samples evaluated at once (run-samples.ts): the workload (its per-user
// arrays in shared memory) and the plan's context arrive once; each job is a slice of the samples.
import { workerData } from 'node:worker_threads';
import { evaluateSamples } from '../plan/plan.js';
import type { PlanPoint } from '../plan/inputs.js';
import type { Figures, PlanContext } from '../plan/resources.js';
import type { Workload } from '../plan/workload.js';
import { serveJobs } from './job-thread.js';

const { workload, ctx } = workerData as { workload: Workload; ctx: PlanContext };
serveJobs<PlanPoint[], Figures[], never>((points) => evaluateSamples(workload, ctx, points));
