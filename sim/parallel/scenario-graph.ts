// A scenario's generated graph on worker threads when it is large enough to gain from them.
import { BLOCKS_FROM_SLOTS, DRAW_BLOCKS } from '../graph/followees.js';
import type { FollowerGraph } from '../graph/graph.js';
import { scenarioGenerateParams, scenarioGraph, type ProgressFn } from '../run-scenario.js';
import type { Scenario } from '../scenario/types.js';
import { generateGraphOnThreads } from './generate-graph.js';

/**
 * A scenario's graph (scenarioGraph), generated on up to `threads` threads when it is drawn in blocks
 * (about BLOCKS_FROM_SLOTS follows or more, by the uncapped mean: a graph just under it in truth
 * goes to the threads as one block), the same bytes either way. At most DRAW_BLOCKS threads: more
 * would only share the transposes, each with a count array of the users. Below that size the
 * threads do not pay for themselves: by hand (2026-12-07, 2 cores) 200k users x 20 and 1M x 4 took
 * the same on one thread and two (0.53-0.62 s, 0.81-1.04 s), 1M x 20 took 2.3-2.7 s on two against
 * 3.6-3.7 s on one.
 */
export async function scenarioGraphOnThreads(sc: Scenario, threads: number, onProgress?: ProgressFn): Promise<FollowerGraph> {
  if (sc.graph.kind === 'file' || threads <= 1 || sc.graph.users * sc.graph.avgFollows < BLOCKS_FROM_SLOTS) return scenarioGraph(sc, onProgress);
  return generateGraphOnThreads(scenarioGenerateParams(sc, sc.graph), Math.min(threads, DRAW_BLOCKS), onProgress);
}
