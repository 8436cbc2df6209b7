// The thread side of thread-pool.ts: each message is a job, answered with its progress (at most
// ~10 messages a second, but every first and last word) and its result, or its error.
import { parentPort } from 'node:worker_threads';
import { InputError } from '../errors.js';
import { ScenarioError } from '../scenario-error.js';
import type { JobReply, JobRequest } from './thread-pool.js';

const PROGRESS_INTERVAL_MS = 100;

/**
 * Serve jobs with `work`; `say(progress, urgent)` posts progress (an urgent word, such as a stage
 * starting or ending, always; the rest at most every PROGRESS_INTERVAL_MS).
 */
export function serveJobs<J, R, P>(work: (job: J, say: (progress: P, urgent?: boolean) => void) => R): void {
  const port = parentPort;
  if (!port) throw new Error('a job thread runs as a worker thread');
  const post = (m: JobReply<R, P>) => port.postMessage(m);
  port.on('message', ({ index, job }: JobRequest<J>) => {
    let last = 0;
    const say = (progress: P, urgent = false) => {
      const now = performance.now();
      if (!urgent && now - last < PROGRESS_INTERVAL_MS) return;
      last = now;
      post({ type: 'progress', index, progress });
    };
    try {
      post({ type: 'result', index, result: work(job, say) });
    } catch (err) {
      const input = err instanceof ScenarioError || err instanceof InputError;
      post({ type: 'error', index, input, message: err instanceof Error ? err.message : String(err), stack: err instanceof Error ? err.stack : undefined });
    }
  });
}
