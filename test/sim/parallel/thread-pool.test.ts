// Jobs on worker threads (sim/parallel/thread-pool.ts with job-thread.ts on the thread side): the
// results in the jobs' order whatever order they finish in, every job once, progress passed on, and
// a failed job's error thrown (a ScenarioError still one) with the other threads stopped; a pool's
// rounds on the same threads, one at a time, a failure ending every later round.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runJobs, ThreadPool } from '../../../sim/parallel/thread-pool.js';
import { ScenarioError } from '../../../sim/scenario-error.js';
import { ROOT, scratchDir } from '../../cli/cli-helpers.js';

interface Job {
  n: number;
  /** Busy for this long on its thread. */
  ms: number;
  fail?: 'scenario' | 'crash';
}

// a thread of the built code (npm test builds dist/ first): it doubles n, saying so first
const entry = join(scratchDir(), 'doubling-thread.mjs');
writeFileSync(
  entry,
  `import { threadId } from 'node:worker_threads';
import { serveJobs } from ${JSON.stringify(pathToFileURL(join(ROOT, 'dist/sim/parallel/job-thread.js')).href)};
import { ScenarioError } from ${JSON.stringify(pathToFileURL(join(ROOT, 'dist/sim/scenario-error.js')).href)};
serveJobs((job, say) => {
  if (job.fail === 'scenario') throw new ScenarioError('job ' + job.n + ' is impossible');
  if (job.fail === 'crash') throw new Error('job ' + job.n + ' crashed');
  const end = Date.now() + job.ms;
  while (Date.now() < end);
  say({ n: job.n, thread: threadId }, true);
  return job.n * 2;
});
`,
);
const url = pathToFileURL(entry);

describe('runJobs', () => {
  it('answers in the order of the jobs, each once, whichever thread finishes first', async () => {
    // the first job is the longest: the second thread takes every other one meanwhile
    const jobs: Job[] = [{ n: 1, ms: 300 }, ...Array.from({ length: 7 }, (_, i) => ({ n: i + 2, ms: 5 }))];
    const said: { index: number; n: number; thread: number }[] = [];
    const finished: number[] = [];
    const results = await runJobs<Job, number, { n: number; thread: number }>(url, null, jobs, 2, {
      onProgress: (index, p) => said.push({ index, ...p }),
      onResult: (i) => finished.push(i),
    });
    expect(results).toEqual(jobs.map((j) => j.n * 2));
    // each job's word came once, under its own index
    expect(said.map((p) => p.n).sort((a, b) => a - b)).toEqual(jobs.map((j) => j.n));
    for (const p of said) expect(jobs[p.index].n).toBe(p.n);
    // two threads did the work, and the long first job finished last
    expect(new Set(said.map((p) => p.thread)).size).toBe(2);
    expect(finished.at(-1)).toBe(0);
    expect([...finished].sort((a, b) => a - b)).toEqual(jobs.map((_, i) => i));
  });

  it('never starts more threads than jobs, and answers no jobs at once', async () => {
    const said = new Set<number>();
    await runJobs<Job, number, { thread: number }>(url, null, [{ n: 1, ms: 1 }], 8, { onProgress: (_, p) => said.add(p.thread) });
    expect(said.size).toBe(1);
    expect(await runJobs(url, null, [], 4)).toEqual([]);
  });

  it("throws a failed job's error, a ScenarioError as one, and stops the other threads", async () => {
    const slow = { n: 9, ms: 20_000 };
    const started = Date.now();
    const impossible = runJobs<Job, number, unknown>(url, null, [slow, { n: 2, ms: 1, fail: 'scenario' }], 2);
    await expect(impossible).rejects.toThrow(new ScenarioError('job 2 is impossible'));
    await expect(impossible).rejects.toBeInstanceOf(ScenarioError);
    // the 20-second job's thread was stopped, not waited for
    expect(Date.now() - started).toBeLessThan(10_000);
    const crashed = runJobs<Job, number, unknown>(url, null, [{ n: 3, ms: 1, fail: 'crash' }], 1);
    await expect(crashed).rejects.toThrow('job 3 crashed');
    await expect(crashed).rejects.not.toBeInstanceOf(ScenarioError);
  });
});

describe('ThreadPool', () => {
  it('runs rounds of jobs on the same threads, one round at a time, and stops them on close', async () => {
    const pool = new ThreadPool<Job, number, { n: number; thread: number }>(url, null, 2);
    const threads = new Set<number>();
    const onProgress = (_: number, p: { thread: number }) => threads.add(p.thread);
    expect(await pool.run([1, 2, 3].map((n) => ({ n, ms: 20 })), { onProgress })).toEqual([2, 4, 6]);
    const second = pool.run([{ n: 4, ms: 200 }], { onProgress });
    await expect(pool.run([{ n: 5, ms: 1 }])).rejects.toThrow(/one round of jobs at a time/);
    expect(await second).toEqual([8]);
    expect(await pool.run([6, 7].map((n) => ({ n, ms: 20 })), { onProgress })).toEqual([12, 14]);
    // the rounds ran on the two threads the pool started, no others
    expect(threads.size).toBe(2);
    expect(await pool.run([])).toEqual([]);
    await pool.close();
  });

  it("rejects a failed job's round and every round after it", async () => {
    const pool = new ThreadPool<Job, number, unknown>(url, null, 2);
    await expect(pool.run([{ n: 1, ms: 1 }, { n: 2, ms: 1, fail: 'crash' }])).rejects.toThrow('job 2 crashed');
    await expect(pool.run([{ n: 3, ms: 1 }])).rejects.toThrow('job 2 crashed');
    await pool.close();
  });
});
