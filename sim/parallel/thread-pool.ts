// Jobs on worker threads: up to `threads` threads of one entry file, each handed the next job when
// it finishes one, the results in the jobs' order. Every thread gets the same workerData (typed
// arrays over SharedArrayBuffers in it are shared, not copied: shared-memory.ts). The thread side
// is job-thread.ts. A job that fails stops the others and its error is thrown (a ScenarioError
// stays one: the command line reports it as bad input).
import { Worker } from 'node:worker_threads';
import { ScenarioError } from '../scenario-error.js';

export interface JobRequest<J> {
  index: number;
  job: J;
}

export type JobReply<R, P> =
  | { type: 'progress'; index: number; progress: P }
  | { type: 'result'; index: number; result: R }
  | { type: 'error'; index: number; input: boolean; message: string; stack?: string };

export interface JobHooks<R, P> {
  /** What a job said of its progress, from whichever thread runs it. */
  onProgress?: (index: number, progress: P) => void;
  /** A job finished. */
  onResult?: (index: number, result: R) => void;
}

export function runJobs<J, R, P>(entry: URL, workerData: unknown, jobs: readonly J[], threads: number, hooks: JobHooks<R, P> = {}): Promise<R[]> {
  const count = Math.max(1, Math.min(Math.floor(threads), jobs.length));
  const results: R[] = new Array(jobs.length);
  if (jobs.length === 0) return Promise.resolve(results);
  const workers: Worker[] = [];
  /** Threads stopped on purpose: nothing left to give them, or the jobs ended. */
  const retired = new Set<Worker>();
  const retire = (w: Worker) => {
    retired.add(w);
    void w.terminate();
  };
  let next = 0;
  let finished = 0;
  return new Promise<R[]>((resolve, reject) => {
    let failed = false;
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      for (const w of workers) retire(w);
      reject(err);
    };
    const give = (w: Worker) => {
      if (next >= jobs.length) return retire(w);
      const index = next++;
      w.postMessage({ index, job: jobs[index] } satisfies JobRequest<J>);
    };
    for (let i = 0; i < count; i++) {
      const w = new Worker(entry, { workerData });
      workers.push(w);
      w.on('message', (m: JobReply<R, P>) => {
        if (failed) return;
        if (m.type === 'progress') hooks.onProgress?.(m.index, m.progress);
        else if (m.type === 'error') {
          const err = m.input ? new ScenarioError(m.message) : new Error(m.message);
          if (m.stack && !m.input) err.stack = m.stack;
          fail(err);
        } else {
          results[m.index] = m.result;
          hooks.onResult?.(m.index, m.result);
          if (++finished === jobs.length) {
            for (const x of workers) retire(x);
            resolve(results);
          } else give(w);
        }
      });
      w.on('error', (err) => fail(err));
      w.on('exit', (code) => {
        if (!retired.has(w)) fail(new Error(`a worker thread exited with code ${code} before its job finished`));
      });
      give(w);
    }
  });
}
