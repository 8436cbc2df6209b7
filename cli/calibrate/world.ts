// The world `feedlab calibrate` measures on, made for the fits rather than drawn from a scenario:
// an audience of users, one author per follower count of the expansion fit (10 to 10,000 followers,
// every follower seen now, so a follower page returns every row it reads), ordinary authors with
// posts of the last day, celebrities pulled at read time (their users.follower_count over any
// threshold, as a replay stores a named celebrity's) and quiet ones (pulled too, without posts), and
// readers in groups by the number of celebrities, or of quiet ones, they follow (the API fits' merged
// lists, full and empty), and authors of each size of a running worker's posts, followed by disjoint
// audiences among the write fit's targets. Laid into Postgres with the server's own loaders (COPY), as a replay's world is
// (cli/replay/world.ts).
import { SECONDS_PER_DAY } from '../../core/timeline-rules.js';
import { bulkLoadGraph, type GraphToLoad } from '../../server/store/bulk-load.js';
import { migrate } from '../../server/store/migrate.js';
import type { Store } from '../../server/store/pool.js';
import { seedPosts } from '../../server/store/seed-posts.js';
import { offsetsFromCounts, transpose } from '../../sim/graph/csr.js';
import { Rng } from '../../core/random.js';
import { postText } from '../../sim/workload/history.js';
import { historyPostIds } from '../replay/world.js';
import { CALIBRATE } from './settings.js';

export interface CalibrationWorld {
  graph: GraphToLoad;
  /** users.follower_count: the graph's, the celebrities' over any threshold. */
  followerCounts: Float64Array;
  /** The expansion fit's authors and their followers. */
  expansionAuthors: { id: number; followers: number }[];
  /** Authors of the readers' timelines (they post; their followers are readers). */
  authors: number[];
  celebrities: number[];
  /** Readers by the number of celebrities they follow (pulled lists merged on every read). */
  readersByPulled: Map<number, number[]>;
  /** Readers by the number of quiet celebrities (pulled, no posts: empty lists) they follow. */
  readersByQuiet: Map<number, number[]>;
  /** Audience users who follow nothing the readers read: their timelines take the write fit's batches. */
  writeTargets: number[];
  /**
   * A running worker's authors by size: for each size, as many authors as the write targets hold
   * disjoint audiences of it, author k followed by the k-th (every follower's timeline filled).
   */
  workerBySizeAuthors: { ids: number[]; followers: number }[];
  posts: { ids: string[]; authors: Int32Array; createdAtMs: Float64Array };
}

/** How many authors of `followers` the write fit's targets hold disjoint audiences for (a running worker's posts of that size go round them). */
export function bySizeAuthors(followers: number): number {
  return Math.floor(Math.max(...CALIBRATE.timelineWrites.batchSizes) / followers);
}

/** The world as of `nowMs` (the posts are of the day before it). */
export function buildCalibrationWorld(nowMs: number): CalibrationWorld {
  const w = CALIBRATE.world;
  const rng = new Rng(w.seed);
  const expansionBase = w.audience;
  const authorBase = expansionBase + w.expansionFollowers.length;
  const celebrityBase = authorBase + w.authors;
  const quietBase = celebrityBase + w.celebrities;
  const bySizeBase = quietBase + w.quietCelebrities;
  const bySize = CALIBRATE.workerBySize.followers;
  const maxBatch = Math.max(...CALIBRATE.timelineWrites.batchSizes);
  if (Math.max(...bySize) > maxBatch) throw new Error("calibrate: a running worker's largest post has more followers than the write fit's targets");
  const authorsOfSize = bySize.map(bySizeAuthors);
  const users = bySizeBase + authorsOfSize.reduce((sum, n) => sum + n, 0);
  const expansionAuthors = w.expansionFollowers.map((followers, i) => ({ id: expansionBase + i, followers }));
  const authors = Array.from({ length: w.authors }, (_, i) => authorBase + i);
  const celebrities = Array.from({ length: w.celebrities }, (_, i) => celebrityBase + i);
  const quiet = Array.from({ length: w.quietCelebrities }, (_, i) => quietBase + i);
  let nextAuthor = bySizeBase;
  const workerBySizeAuthors = bySize.map((followers, i) => ({ ids: Array.from({ length: authorsOfSize[i] }, () => nextAuthor++), followers }));

  // followees per user, then CSR
  const follows: number[][] = Array.from({ length: users }, () => []);
  for (const a of expansionAuthors) for (const u of sample(rng, w.audience, a.followers)) follows[u].push(a.id);
  let next = 0;
  // readersPerShape readers for each shape k, each following readerFollows authors and k of `pulled`
  const readersOf = (shapes: readonly number[], pulled: readonly number[]) => {
    const byShape = new Map<number, number[]>();
    for (const k of shapes) {
      const readers = Array.from({ length: w.readersPerShape }, () => next++);
      byShape.set(k, readers);
      for (const r of readers) {
        for (const i of sample(rng, w.authors, w.readerFollows)) follows[r].push(authors[i]);
        for (let c = 0; c < k; c++) follows[r].push(pulled[c]);
      }
    }
    return byShape;
  };
  const readersByPulled = readersOf(w.pulledShapes, celebrities);
  const readersByQuiet = readersOf(w.quietShapes, quiet);
  const writeTargets = Array.from({ length: maxBatch }, (_, i) => next + i);
  if (next + maxBatch > w.audience) throw new Error('calibrate: the audience is smaller than the readers and the write fit need');
  for (const a of workerBySizeAuthors) a.ids.forEach((id, k) => { for (const u of writeTargets.slice(k * a.followers, (k + 1) * a.followers)) follows[u].push(id); });

  const counts = new Uint32Array(users);
  follows.forEach((list, u) => {
    list.sort((a, b) => a - b);
    counts[u] = list.length;
  });
  const followeeOffsets = offsetsFromCounts(counts);
  const followeeIds = new Uint32Array(followeeOffsets[users]);
  follows.forEach((list, u) => followeeIds.set(list, followeeOffsets[u]));
  const followers = transpose({ offsets: followeeOffsets, ids: followeeIds }, users);
  const names = new Map<number, string>([...celebrities.map((c, i): [number, string] => [c, `celebrity-${i + 1}`]), ...quiet.map((c, i): [number, string] => [c, `quiet-celebrity-${i + 1}`])]);
  const graph: GraphToLoad = { users, edges: followeeIds.length, followerOffsets: followers.offsets, followeeOffsets, followeeIds, names };
  const followerCounts = Float64Array.from({ length: users }, (_, a) => followers.offsets[a + 1] - followers.offsets[a]);
  for (const c of [...celebrities, ...quiet]) followerCounts[c] = w.celebrityFollowerCount;

  // posts of the last day, in time order
  const made: { author: number; ms: number }[] = [];
  const dayMs = SECONDS_PER_DAY * 1000;
  for (const a of authors) for (let i = 0; i < w.postsPerAuthor; i++) made.push({ author: a, ms: nowMs - 1 - rng.int(dayMs) });
  for (const c of celebrities) for (let i = 0; i < w.celebrityPosts; i++) made.push({ author: c, ms: nowMs - 1 - rng.int(dayMs) });
  made.sort((a, b) => a.ms - b.ms);
  const createdAtMs = Float64Array.from(made, (p) => p.ms);
  const posts = { ids: historyPostIds(createdAtMs), authors: Int32Array.from(made, (p) => p.author), createdAtMs };
  return { graph, followerCounts, expansionAuthors, authors, celebrities, readersByPulled, readersByQuiet, writeTargets, workerBySizeAuthors, posts };
}

/** `k` distinct numbers of 0..n-1, ascending (a partial Fisher-Yates shuffle). */
function sample(rng: Rng, n: number, k: number): number[] {
  const ids = Array.from({ length: n }, (_, i) => i);
  for (let i = 0; i < k; i++) {
    const j = i + rng.int(n - i);
    [ids[i], ids[j]] = [ids[j], ids[i]];
  }
  return ids.slice(0, k).sort((a, b) => a - b);
}

/** Migrate, then COPY the world in; every user seen at `nowMs`. */
export async function loadCalibrationWorld(store: Store, world: CalibrationWorld, nowMs: number): Promise<{ users: number; follows: number; posts: number; seconds: number }> {
  const t0 = performance.now();
  await migrate(store);
  const { graph } = world;
  await bulkLoadGraph(store, graph, { truncate: true, loadedAt: new Date(nowMs), lastSeenMs: new Float64Array(graph.users).fill(nowMs), followerCounts: world.followerCounts });
  const { ids, authors, createdAtMs } = world.posts;
  await seedPosts(store, { ids, authors, createdAtMs, body: (i) => postText(CALIBRATE.world.seed, 'calibrate', i) });
  return { users: graph.users, follows: graph.edges, posts: ids.length, seconds: (performance.now() - t0) / 1000 };
}

/** The world's sizes, for the file's provenance. */
export function worldFigures(world: CalibrationWorld): Record<string, number | string> {
  const w = CALIBRATE.world;
  return {
    users: world.graph.users,
    follows: world.graph.edges,
    posts: world.posts.ids.length,
    expansionAuthors: w.expansionFollowers.join(', '),
    readers: `${w.readersPerShape} per shape of ${w.pulledShapes.join(', ')} pulled followees, each following ${w.readerFollows} of ${w.authors} authors with ${w.postsPerAuthor} posts of the last day`,
    celebrities: `${w.celebrities} with ${w.celebrityPosts} posts each`,
    quietCelebrities: `${w.quietCelebrities} without posts, ${w.readersPerShape} readers per shape of ${w.quietShapes.join(', ')} of them`,
    workerBySizeAuthors: world.workerBySizeAuthors.map((a) => `${a.ids.length} of ${a.followers}`).join(', '),
  };
}
