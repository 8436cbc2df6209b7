// A generated graph on worker threads: the same steps as generateGraph (sim/graph/generate.ts), with
// the followee draws' blocks and each transpose's row ranges spread over the threads, every large
// buffer in shared memory. The blocks and their streams do not depend on the threads, and a
// transpose is exact whatever its ranges, so the graph is the same bytes on any number of threads.
import type { Csr, ColumnList } from '../graph/csr.js';
import { addLists, equalShares, transposeCursors } from '../graph/csr.js';
import type { DrawPlan, ShortRows } from '../graph/followees.js';
import { generateGraph, generation, type GenerateParams, type GenerateProgress, type GenerationAnswer, type GenerationStep } from '../graph/generate.js';
import type { FollowerGraph } from '../graph/graph.js';
import { sharedArray, sharedUint32 } from './shared-memory.js';
import { ThreadPool } from './thread-pool.js';

export type GraphJob =
  | { kind: 'draw'; plan: DrawPlan; block: number; out: Uint32Array }
  | { kind: 'count'; rows: Csr; from: number; to: number; counts: Uint32Array }
  | { kind: 'scatter'; rows: Csr; from: number; to: number; cursor: Uint32Array; ids: Uint32Array }
  | { kind: 'sort'; rows: Csr; from: number; to: number };
export type GraphJobResult = ShortRows | null;

/** generateGraph on `threads` threads (this one alone when 1). */
export async function generateGraphOnThreads(p: GenerateParams, threads: number, onProgress?: GenerateProgress): Promise<FollowerGraph> {
  if (threads <= 1) return generateGraph(p, onProgress);
  const steps = generation(p, onProgress ?? (() => {}), sharedUint32);
  // started first: the threads load while this one draws the counts and quotas
  // (the compiled thread beside this file, dist/sim/parallel/graph-worker.js)
  const pool = new ThreadPool<GraphJob, GraphJobResult, number>(new URL('./graph-worker.js', import.meta.url), null, threads);
  try {
    let next = steps.next();
    while (!next.done) next = steps.next(await onThreads(pool, next.value));
    return next.value;
  } finally {
    await pool.close();
  }
}

function onThreads(pool: ThreadPool<GraphJob, GraphJobResult, number>, step: GenerationStep): Promise<GenerationAnswer> | GenerationAnswer {
  if (step.kind === 'transpose') return transposeOnThreads(pool, step.rows, step.columns);
  if (step.kind === 'add lists') return addListsOnThreads(pool, step.rows, step.lists, step.buffer);
  const blocks = step.plan.blockStarts.length - 1;
  const plan = sharedPlan(step.plan);
  const done = new Float64Array(blocks);
  const jobs = Array.from({ length: blocks }, (_, block): GraphJob => ({ kind: 'draw', plan, block, out: step.out }));
  return pool.run(jobs, {
    onProgress: (b, f) => {
      done[b] = f;
      step.progress(done.reduce((s, x) => s + x, 0) / blocks);
    },
  }) as Promise<ShortRows[]>;
}

/** One range of rows per thread, at equal edges. */
function rowRanges(rows: Csr, threads: number): { from: number; to: number }[] {
  const bounds = equalShares(rows.offsets, threads);
  return Array.from({ length: threads }, (_, k) => ({ from: bounds[k], to: bounds[k + 1] }));
}

/** csr.ts addLists on this thread (it moves rows over each other), then the rows sorted a range per thread. */
async function addListsOnThreads(pool: ThreadPool<GraphJob, GraphJobResult, number>, source: Csr, lists: ColumnList[], buffer: Uint32Array): Promise<Csr> {
  const added = addLists(source, lists, buffer);
  const rows: Csr = { offsets: sharedArray(added.offsets), ids: added.ids };
  await pool.run(rowRanges(rows, pool.threads).map(({ from, to }): GraphJob => ({ kind: 'sort', rows, from, to })));
  return rows;
}

/** csr.ts transpose, a range of rows per thread. */
async function transposeOnThreads(pool: ThreadPool<GraphJob, GraphJobResult, number>, source: Csr, columns: number): Promise<Csr> {
  const rows: Csr = { offsets: sharedArray(source.offsets), ids: sharedArray(source.ids) };
  const ranges = rowRanges(rows, pool.threads);
  const counts = ranges.map(() => sharedUint32(columns));
  await pool.run(ranges.map(({ from, to }, k): GraphJob => ({ kind: 'count', rows, from, to, counts: counts[k] })));
  const offsets = transposeCursors(counts, columns);
  const ids = sharedUint32(offsets[columns]);
  await pool.run(ranges.map(({ from, to }, k): GraphJob => ({ kind: 'scatter', rows, from, to, cursor: counts[k], ids })));
  return { offsets, ids };
}

/** The plan with its arrays in shared memory, so that no thread copies them. */
function sharedPlan(plan: DrawPlan): DrawPlan {
  return { ...plan, quotas: sharedArray(plan.quotas), targets: sharedArray(plan.targets), idOfRank: sharedArray(plan.idOfRank), rankOfId: sharedArray(plan.rankOfId), offsets: sharedArray(plan.offsets) };
}
