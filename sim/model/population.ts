// Who the sampled users are: how often each posts and reads, who is dormant, where their keys live,
// and how much of the real population each one stands for.
//
// Population scaling: a sampled graph of n users stands for a population of N (scale s = N/n).
// An ordinary sampled account stands for s accounts like it (s times its posts, reads and
// timelines; each copy with the same follower count). A named account (a celebrity added by the
// generator) stands only for itself: its sampled followers are a share of the population, so its
// real follower count is s times its sampled one, and it posts at its own rate.
import { userShard } from '../../core/keys.js';
import { SECONDS_PER_DAY } from '../../core/timeline-rules.js';
import type { FollowerGraph } from '../graph/graph.js';
import { shuffledIds } from '../graph/popularity.js';
import { Rng } from '../../core/random.js';
import type { Scenario } from '../scenario/types.js';
import { drawDailyRate, meanPagesPerSession } from '../workload/activity.js';

export interface Population {
  readonly graph: FollowerGraph;
  readonly users: number;
  /** Real users per sampled user. */
  readonly scale: number;
  /** 1 for accounts that stand only for themselves (named celebrities). */
  readonly individual: Uint8Array;
  /** Follower counts at population scale: what a fan-out policy compares with its threshold. */
  readonly realFollowers: Float64Array;
  /** Posts per second of one real account like this one (0 for the dormant). */
  readonly postRate: Float64Array;
  /** Feed pages per second of one real reader like this one (0 for the dormant). */
  readonly readRate: Float64Array;
  /** Last time seen, in simulated seconds (negative: before the run started). */
  readonly lastSeen: Float64Array;
  /** Users active at the start, who read at the session rate. */
  readonly activeUsers: Int32Array;
  /** Dormant users, in a seeded random order (a cold-start storm brings back a prefix). */
  readonly dormantUsers: Int32Array;
  /** The Redis shard of each user's keys. */
  readonly shard: Uint16Array;
  /** Accounts a celebrity burst makes post: named celebrities first, then the most followed. */
  readonly burstAccounts: Int32Array;
}

/** How many of the most-followed ordinary accounts a celebrity burst may draw on after the named ones. */
const BURST_CANDIDATES = 1000;


export function buildPopulation(graph: FollowerGraph, scenario: Scenario): Population {
  const n = graph.users;
  const scale = scenario.population ? scenario.population / n : 1;
  const rng = Rng.derive(scenario.seed, 'population');
  const a = scenario.activity;

  const individual = new Uint8Array(n);
  for (const id of graph.names.keys()) individual[id] = 1;

  const realFollowers = new Float64Array(n);
  for (let v = 0; v < n; v++) {
    const d = graph.followerOffsets[v + 1] - graph.followerOffsets[v];
    realFollowers[v] = individual[v] ? d * scale : d;
  }

  // Dormant users: a seeded random share, away uniformly within the configured range.
  const lastSeen = new Float64Array(n);
  const order = shuffledIds(n, rng);
  const dormantCount = Math.round(n * a.dormantShare);
  const dormant = new Uint8Array(n);
  const [awayMin, awayMax] = a.dormantAway;
  for (let i = 0; i < dormantCount; i++) {
    const u = order[i];
    if (individual[u]) continue; // celebrities are active: they are the reason for the scenario
    dormant[u] = 1;
  }
  const dormantUsers: number[] = [];
  const activeUsers: number[] = [];
  const sessionRate = a.sessionsPerUserPerDay / SECONDS_PER_DAY;
  const pageRate = (a.sessionsPerUserPerDay * meanPagesPerSession(a.pagesPerSession)) / SECONDS_PER_DAY;
  const postRate = new Float64Array(n);
  const readRate = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const u = order[i];
    if (dormant[u]) {
      dormantUsers.push(u);
      lastSeen[u] = -(awayMin + rng.float() * (awayMax - awayMin));
    } else {
      activeUsers.push(u);
      // seen at its last session: exponential with the session rate, truncated to the dormancy
      // window (clamping would put users exactly on its edge, dormant a moment after the start)
      const window = scenario.policy.dormantDays * SECONDS_PER_DAY;
      const since = sessionRate > 0 ? -Math.log(1 - rng.float() * (1 - Math.exp(-sessionRate * window))) / sessionRate : 0;
      lastSeen[u] = -since;
      postRate[u] = drawDailyRate(a.postsPerUserPerDay, rng) / SECONDS_PER_DAY;
      readRate[u] = pageRate;
    }
  }
  activeUsers.sort((x, y) => x - y);

  const shards = scenario.infrastructure.redisShards;
  const shard = new Uint16Array(n);
  for (let u = 0; u < n; u++) shard[u] = userShard(u, shards);

  const named = [...graph.names.keys()].sort((x, y) => x - y);
  const namedSet = new Set(named);
  // the 1,000 most-followed ordinary accounts, without sorting every account
  const counts = realFollowers.slice().sort();
  const cut = counts[Math.max(0, n - BURST_CANDIDATES - named.length)];
  const candidates: number[] = [];
  for (let v = 0; v < n; v++) if (realFollowers[v] >= cut && !namedSet.has(v)) candidates.push(v);
  const byFollowers = candidates.sort((x, y) => realFollowers[y] - realFollowers[x] || x - y).slice(0, BURST_CANDIDATES);

  return {
    graph,
    users: n,
    scale,
    individual,
    realFollowers,
    postRate,
    readRate,
    lastSeen,
    activeUsers: Int32Array.from(activeUsers),
    dormantUsers: Int32Array.from(dormantUsers),
    shard,
    burstAccounts: Int32Array.from([...named, ...byFollowers]),
  };
}
