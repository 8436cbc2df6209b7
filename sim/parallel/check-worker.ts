// One thread of a plan's simulation checks run at once (run-checks.ts): the scenario, its graph (in
// shared memory) and the plan's options arrive once; each job is one check (plan.ts runCheck).
import { workerData } from 'node:worker_threads';
import type { CheckJob, PlanRequest } from '../plan/plan.js';
import { runCheck } from '../plan/plan.js';
import type { SimulationCheck } from '../plan/check.js';
import { serveJobs } from './job-thread.js';
import type { CheckProgressMessage } from './run-checks.js';

const req = workerData as Pick<PlanRequest, 'scenario' | 'graph' | 'options'>;
serveJobs<CheckJob, SimulationCheck, CheckProgressMessage>((job, say) =>
  runCheck(
    {
      ...req,
      progress: {
        start(label) {
          say({ kind: 'start', label }, true);
          return { update: (fraction, detail) => say({ kind: 'update', fraction, detail }), done: (detail) => say({ kind: 'done', detail: detail ?? '' }, true) };
        },
      },
    },
    job,
  ),
);
