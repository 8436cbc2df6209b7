// The live world of a replay: built in memory from the mapped scenario (graph, population, history,
// arrival schedule), then laid into Postgres with the server's own loaders (COPY): users with their
// last-seen times (so the scenario's dormant share is dormant) and population-scale follower counts
// (so the policies pull what the simulator pulls), the follows, and the posts of the last lease
// window. Nothing here talks HTTP: the warm pass (warm.ts) goes through the running server.
import { makePostId, MAX_WORKER_ID } from '../../core/post-id.js';
import { SECONDS_PER_DAY } from '../../core/timeline-rules.js';
import type { FanoutPolicy } from '../../core/fanout-policy.js';
import { bulkLoadGraph } from '../../server/store/bulk-load.js';
import { StoreInputError } from '../../server/store/errors.js';
import { migrate } from '../../server/store/migrate.js';
import type { Store } from '../../server/store/pool.js';
import { seedPosts } from '../../server/store/seed-posts.js';
import type { FollowerGraph } from '../../sim/graph/graph.js';
import type { Population } from '../../sim/model/population.js';
import { keptAtStart } from '../../sim/replay/capacity.js';
import { policyFollowerCounts, withFileUsers, type ReplayMapping } from '../../sim/replay/mapping.js';
import { scenarioGraphOnThreads } from '../../sim/parallel/scenario-graph.js';
import { prepare } from '../../sim/run-scenario.js';
import { historyPosts, postText, type History } from '../../sim/workload/history.js';
import { ArrivalSchedule, scheduleDigest, type MaterializedSchedule } from '../../sim/workload/schedule.js';

/** Post ids of the history carry this worker id: no live API instance mints with it. */
export const HISTORY_NODE_ID = MAX_WORKER_ID;

export interface LiveWorld {
  mapping: ReplayMapping;
  graph: FollowerGraph;
  population: Population;
  history: History;
  schedule: MaterializedSchedule;
  digest: string;
  /** users.follower_count: what the policies compare with their thresholds. */
  followerCounts: Float64Array;
}

/**
 * The world of a mapped scenario. Its generated graph is made on up to `threads` threads when it is
 * drawn in blocks (sim/parallel/scenario-graph.ts), the same graph as on one.
 */
export async function buildWorld(mapping: ReplayMapping, onProgress?: (fraction: number, detail: string) => void, threads = 1): Promise<LiveWorld> {
  const graph = await scenarioGraphOnThreads(mapping.scenario, threads, onProgress);
  const m = withFileUsers(mapping, graph.users);
  const prepared = prepare(m.scenario, graph);
  const population = prepared.population;
  const history = historyPosts(m.scenario.seed, population, m.scenario.policy.leaseDays * SECONDS_PER_DAY);
  const schedule = new ArrivalSchedule(m.scenario, population).materialize();
  return {
    mapping: m,
    graph,
    population,
    history,
    schedule,
    digest: scheduleDigest(schedule),
    followerCounts: policyFollowerCounts(graph.followerOffsets, graph.names, m.celebrityScale),
  };
}

export interface LoadFigures {
  users: number;
  follows: number;
  posts: number;
  seconds: number;
}

/**
 * Migrate, then replace the schema's users, follows and posts with the world as of `startMs` (the
 * load's own time; the window starts after the warm pass, some seconds later): last-seen times and
 * post times are offsets from it.
 */
export async function loadWorld(store: Store, world: LiveWorld, startMs: number, replace: boolean, onProgress?: (fraction: number, detail: string) => void): Promise<LoadFigures> {
  const t0 = performance.now();
  await migrate(store);
  const { graph, population, history } = world;
  const lastSeenMs = Float64Array.from(population.lastSeen, (s) => Math.round(startMs + s * 1000));
  try {
    await bulkLoadGraph(store, graph, {
      truncate: replace,
      loadedAt: new Date(startMs),
      lastSeenMs,
      followerCounts: world.followerCounts,
      onProgress: (f, d) => onProgress?.(f * 0.6, d),
    });
  } catch (err) {
    // the loader's own advice names its flag; a replay's are --no-load and --replace
    if (err instanceof StoreInputError && /already holds/.test(err.message)) {
      throw new StoreInputError(`${err.message.replace(/; pass --truncate.*$/, '')}; pass --no-load (that graph is the one to replay) or --replace (replace it)`);
    }
    throw err;
  }
  const n = history.author.length;
  const createdAtMs = Float64Array.from(history.offsetMs, (o) => startMs + o);
  const ids = historyPostIds(createdAtMs);
  const seed = world.mapping.scenario.seed;
  await seedPosts(store, { ids, authors: history.author, createdAtMs, body: (i) => postText(seed, 'history', i) }, { onProgress: (f, d) => onProgress?.(0.6 + f * 0.4, d) });
  return { users: graph.users, follows: graph.edges, posts: n, seconds: (performance.now() - t0) / 1000 };
}

/** Ids for posts loaded with COPY at these times (ascending): HISTORY_NODE_ID's, a sequence within each ms. */
export function historyPostIds(createdAtMs: Float64Array): string[] {
  const ids: string[] = new Array(createdAtMs.length);
  let lastMs = -1;
  let seq = 0;
  for (let i = 0; i < createdAtMs.length; i++) {
    const ms = createdAtMs[i];
    seq = ms === lastMs ? seq + 1 : 0;
    lastMs = ms;
    ids[i] = makePostId(ms, HISTORY_NODE_ID, seq);
  }
  return ids;
}

/** The readers the warm pass reads (the active) and the dormant ones whose timelines are kept too (capacity.ts keptAtStart). */
export function keptTimelines(world: LiveWorld, policy: FanoutPolicy): { active: Int32Array; dormantKept: number[] } {
  const kept = keptAtStart(world.mapping.scenario, world.population, policy);
  return { active: world.population.activeUsers, dormantKept: Array.from(world.population.dormantUsers).filter((u) => kept[u] === 1) };
}
