// Jobs on worker threads: up to `threads` threads of one entry file, each handed the next job when
// it finishes one, the results in the jobs' order; runJobs for one set of jobs, ThreadPool for
// rounds of them on the same threads. Every thread gets the same workerData (typed
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

/** Jobs on a fixed set of threads, one round after another (`run`), until `close`. */
export class ThreadPool<J, R, P> {
  private readonly workers: Worker[] = [];
  /** Threads stopped on purpose: the pool closed, or a job failed. */
  private readonly retired = new Set<Worker>();
  private failure: Error | null = null;
  private round: { jobs: readonly J[]; results: R[]; next: number; finished: number; hooks: JobHooks<R, P>; resolve: (r: R[]) => void; reject: (e: Error) => void } | null = null;

  constructor(entry: URL, workerData: unknown, threads: number) {
    for (let i = 0; i < Math.max(1, Math.floor(threads)); i++) {
      let w: Worker;
      try {
        w = new Worker(entry, { workerData });
      } catch (err) {
        void this.close(); // the threads already started
        throw err;
      }
      this.workers.push(w);
      w.on('message', (m: JobReply<R, P>) => this.reply(w, m));
      w.on('error', (err) => this.fail(err));
      w.on('exit', (code) => {
        if (!this.retired.has(w)) this.fail(new Error(`a worker thread exited with code ${code} before its job finished`));
      });
    }
  }

  get threads(): number {
    return this.workers.length;
  }

  /** Every job done on the pool's threads; the results in the jobs' order. One round at a time. */
  run(jobs: readonly J[], hooks: JobHooks<R, P> = {}): Promise<R[]> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.round) return Promise.reject(new Error('a thread pool runs one round of jobs at a time'));
    if (jobs.length === 0) return Promise.resolve([]);
    return new Promise<R[]>((resolve, reject) => {
      this.round = { jobs, results: new Array(jobs.length), next: 0, finished: 0, hooks, resolve, reject };
      for (const w of this.workers) this.give(w);
    });
  }

  /** Stop every thread. */
  async close(): Promise<void> {
    for (const w of this.workers) this.retired.add(w);
    await Promise.all(this.workers.map((w) => w.terminate()));
  }

  private give(w: Worker): void {
    const round = this.round!;
    if (round.next >= round.jobs.length) return;
    const index = round.next++;
    w.postMessage({ index, job: round.jobs[index] } satisfies JobRequest<J>);
  }

  private reply(w: Worker, m: JobReply<R, P>): void {
    const round = this.round;
    if (this.failure || !round) return;
    if (m.type === 'progress') round.hooks.onProgress?.(m.index, m.progress);
    else if (m.type === 'error') {
      const err = m.input ? new ScenarioError(m.message) : new Error(m.message);
      if (m.stack && !m.input) err.stack = m.stack;
      this.fail(err);
    } else {
      round.results[m.index] = m.result;
      round.hooks.onResult?.(m.index, m.result);
      if (++round.finished === round.jobs.length) {
        this.round = null;
        round.resolve(round.results);
      } else this.give(w);
    }
  }

  /** A job failed or a thread died: stop every thread and reject the round, and every round after. */
  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    void this.close();
    const round = this.round;
    this.round = null;
    round?.reject(err);
  }
}

/** Jobs on up to `threads` threads (no more than there are jobs), which stop when the jobs are done. */
export async function runJobs<J, R, P>(entry: URL, workerData: unknown, jobs: readonly J[], threads: number, hooks: JobHooks<R, P> = {}): Promise<R[]> {
  if (jobs.length === 0) return [];
  const pool = new ThreadPool<J, R, P>(entry, workerData, Math.min(Math.floor(threads), jobs.length));
  try {
    return await pool.run(jobs, hooks);
  } finally {
    void pool.close();
  }
}
