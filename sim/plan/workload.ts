// The workload a plan sizes for, measured once over the scenario's sampled graph and population
// (at the likely values) under its fan-out policy: who pushes to whom, how long each timeline gets,
// which authors are pulled and how often their lists are read. Everything is at population scale
// and at the daily mean rate; `loadAt` then moves it to any point of the intervals and applies the
// growth, by the ratios of the inputs (no second pass over the graph).
import { pullsAuthor, pushPair, type FanoutPolicy } from '../../core/fanout-policy.js';
import { isDormant, SECONDS_PER_DAY } from '../../core/timeline-rules.js';
import type { FollowerGraph } from '../graph/graph.js';
import type { Population } from '../model/population.js';
import { pushPullCosts } from '../policy.js';
import type { Scenario } from '../scenario/types.js';
import { meanPagesPerSession } from '../workload/activity.js';
import { RateProfile } from '../workload/rate-profile.js';
import type { PlanPoint } from './inputs.js';

export interface Workload {
  /** The point the graph was measured at (growth 1). */
  point: PlanPoint;
  /** Real users per sampled user. */
  scale: number;
  posts: number;
  /** Timeline writes per second (eligible followers of pushed posts). */
  writes: number;
  /** Of which by named accounts (celebrities): few posts, each with a huge audience. */
  namedWrites: number;
  /** The largest audience one pushed post reaches (writes), and whether a named account's post reaches it. */
  largestPost: number;
  largestPostNamed: boolean;
  /**
   * The 99th percentile of pushed posts' audiences, weighted by deliveries: the post the p99 delivery
   * is in; and whether it is a named account's. A named account's audience is a share of the users
   * (it grows with them); an ordinary author's is its followers (it grows with the follows per user).
   */
  audienceP99: number;
  audienceP99Named: boolean;
  /** Recent-post list writes per second (pulled posts). */
  listWrites: number;
  /** Feed pages per second. */
  pages: number;
  /** Pulled lists merged per page, on average. */
  listsPerPage: number;
  /** Page reads per second that fetch the most-read named account's list (one key on one shard). */
  hotListReads: number;
  hotListName: string | null;
  /** Per sampled user with a timeline: expected entries (uncapped) and the real timelines it stands for. */
  timelineLength: Float64Array;
  timelineWeight: Float64Array;
  /** 1 where the timeline belongs to an active user (0: a dormant one kept by the fan-out). */
  timelineActive: Uint8Array;
  /** Per pulled author: expected list entries (uncapped) and the real lists it stands for. */
  listLength: Float64Array;
  listWeight: Float64Array;
  /** Named accounts' lists, which each sit on one shard: sampled id and expected entries. */
  namedLists: { id: number; length: number }[];
  /** A celebrity burst's pushed posts: deliveries and pulled posts, in its window. */
  burst: { posts: number; deliveries: number; largest: number; window: number } | null;
  /**
   * Rebuilds from Postgres the scenario's events cause. A cold-start storm: rebuilds per second at
   * its peak. A cache loss: the active users' sessions per second (daily mean) and the most shards
   * one loss takes; its readers rebuild at their next session, so the rebuilds per second are the
   * sessions at the read peak x the share of the planned shards lost (`coldStartAt` in load.ts).
   */
  coldStart: { stormRebuildsPerSecond: number; stormCause: string | null; lossSessionsPerSecond: number; lostShards: number; entriesPerRebuild: number };
}

export interface Prepared {
  scenario: Scenario;
  graph: FollowerGraph;
  population: Population;
}

export function measureWorkload(prep: Prepared, policy: FanoutPolicy, point: PlanPoint): Workload {
  const { scenario: sc, graph: g, population: pop } = prep;
  const n = pop.users;
  const s = pop.scale;
  const lease = sc.policy.leaseDays * SECONDS_PER_DAY;
  const dormantDays = sc.policy.dormantDays;
  const infra = sc.infrastructure;
  const weight = (u: number) => (pop.individual[u] ? 1 : s);
  const dormant = (u: number) => isDormant(pop.lastSeen[u], 0, dormantDays);
  const follows = (u: number) => g.followeeOffsets[u + 1] - g.followeeOffsets[u];
  const { push: pushCost, pull: pullCost } = pushPullCosts(sc);
  const authorPulled = (a: number) => pullsAuthor(policy, pop.realFollowers[a], policy.threshold);
  const pairPulled = (a: number, u: number) =>
    policy.kind === 'rate' ? !pushPair(pop.postRate[a], pop.readRate[u], pushCost, pullCost) : authorPulled(a);
  const capFactor = (u: number) => (policy.kind === 'reader-cap' && follows(u) > policy.readerCap ? policy.readerCap / follows(u) : 1);

  // per reader: the rate of pushed posts into its timeline and the lists its pages merge
  const timelineLength = new Float64Array(n);
  const timelineWeight = new Float64Array(n);
  const timelineActive = new Uint8Array(n);
  const listReaders = new Float64Array(n);
  const pulledAuthor = new Uint8Array(n);
  let writes = 0;
  let pages = 0;
  let listPages = 0;
  for (let u = 0; u < n; u++) {
    let pushed = 0;
    let pulled = 0;
    const readPages = pop.readRate[u] * weight(u);
    for (let e = g.followeeOffsets[u]; e < g.followeeOffsets[u + 1]; e++) {
      const f = g.followeeIds[e];
      if (pairPulled(f, u)) {
        pulled++;
        pulledAuthor[f] = 1;
        listReaders[f] += readPages;
      } else pushed += pop.postRate[f];
    }
    pushed *= capFactor(u);
    const isDormantUser = dormant(u);
    // a write per delivery to every eligible follower: s real writes per (author, follower) pair
    if (!(policy.skipDormant && isDormantUser)) writes += pushed * s;
    pages += readPages;
    listPages += readPages * pulled;
    const away = -pop.lastSeen[u];
    const kept = !isDormantUser || !policy.skipDormant || away < lease;
    if (kept) {
      timelineLength[u] = pushed * lease;
      timelineWeight[u] = weight(u);
      timelineActive[u] = isDormantUser ? 0 : 1;
    }
  }
  for (let a = 0; a < n; a++) if (authorPulled(a)) pulledAuthor[a] = 1;

  let posts = 0;
  let listWrites = 0;
  const listLength = new Float64Array(n);
  const listWeight = new Float64Array(n);
  const namedLists: { id: number; length: number }[] = [];
  for (let a = 0; a < n; a++) {
    posts += pop.postRate[a] * weight(a);
    if (!pulledAuthor[a]) continue;
    listWrites += pop.postRate[a] * weight(a);
    listLength[a] = pop.postRate[a] * lease;
    listWeight[a] = weight(a);
    if (pop.individual[a]) namedLists.push({ id: a, length: listLength[a] });
  }

  const eligibleFollowers = (a: number): number => {
    let w = 0;
    for (let e = g.followerOffsets[a]; e < g.followerOffsets[a + 1]; e++) {
      const u = g.followerIds[e];
      if (pairPulled(a, u) || (policy.skipDormant && dormant(u))) continue;
      w += capFactor(u);
    }
    return w * (pop.individual[a] ? s : 1);
  };
  let namedWrites = 0;
  let largestPost = 0;
  let largestPostNamed = false;
  let hotListReads = 0;
  let hotListName: string | null = null;
  for (const [a, name] of g.names) {
    const w = eligibleFollowers(a);
    namedWrites += pop.postRate[a] * w;
    if (w > largestPost) {
      largestPost = w;
      largestPostNamed = pop.individual[a] === 1;
    }
    if (pulledAuthor[a] && listReaders[a] > hotListReads) {
      hotListReads = listReaders[a];
      hotListName = name;
    }
  }
  // every pushed author's audience, weighted by the deliveries its posts make
  const audience: number[] = [];
  const delivered: number[] = [];
  const named: boolean[] = [];
  for (let a = 0; a < n; a++) {
    if (pop.postRate[a] === 0 || (policy.kind !== 'rate' && authorPulled(a))) continue;
    const w = eligibleFollowers(a);
    if (w <= 0) continue;
    if (w > largestPost) {
      largestPost = w;
      largestPostNamed = pop.individual[a] === 1;
    }
    audience.push(w);
    delivered.push(pop.postRate[a] * weight(a) * w);
    named.push(pop.individual[a] === 1);
  }
  const order = audience.map((_, i) => i).sort((x, y) => audience[x] - audience[y]);
  const totalDelivered = delivered.reduce((x, y) => x + y, 0);
  let audienceP99 = 0;
  let audienceP99Named = false;
  let seen = 0;
  for (const i of order) {
    seen += delivered[i];
    audienceP99 = audience[i];
    audienceP99Named = named[i];
    if (seen >= 0.99 * totalDelivered) break;
  }

  let burst: Workload['burst'] = null;
  for (const ev of sc.events) {
    if (ev.kind !== 'celebrityBurst') continue;
    let deliveries = 0;
    let largest = 0;
    for (let i = 0; i < ev.accounts && i < pop.burstAccounts.length; i++) {
      const a = pop.burstAccounts[i];
      if (policy.kind !== 'rate' && authorPulled(a)) continue;
      const w = eligibleFollowers(a);
      deliveries += w * ev.postsPerAccount;
      largest = Math.max(largest, w);
    }
    const posts = ev.accounts * ev.postsPerAccount;
    if (!burst || deliveries > burst.deliveries) burst = { posts, deliveries, largest, window: ev.window };
  }

  // cold starts: returning dormant users rebuild at once; after a cache loss, each reader of a lost
  // shard rebuilds at its next session (the share lost depends on the planned shards: load.ts)
  let entries = 0;
  let entryWeight = 0;
  for (let u = 0; u < n; u++) {
    if (!timelineActive[u]) continue;
    entries += Math.min(sc.policy.timelineCap, timelineLength[u]) * timelineWeight[u];
    entryWeight += timelineWeight[u];
  }
  const activeReal = pop.activeUsers.length * s;
  let stormRebuildsPerSecond = 0;
  let stormCause: string | null = null;
  let lostShards = 0;
  for (const ev of sc.events) {
    if (ev.kind === 'coldStartStorm') {
      const rate = (ev.share * pop.dormantUsers.length * s) / ev.window;
      if (rate > stormRebuildsPerSecond) {
        stormRebuildsPerSecond = rate;
        stormCause = `a cold-start storm (${Math.round(ev.share * 100)}% of dormant users within ${ev.window} s)`;
      }
    } else if (ev.kind === 'cacheLoss') {
      lostShards = Math.max(lostShards, ev.shards);
    }
  }

  return {
    point: { ...point },
    scale: s,
    posts,
    writes,
    namedWrites,
    largestPost,
    largestPostNamed,
    audienceP99,
    audienceP99Named,
    listWrites,
    pages,
    listsPerPage: pages > 0 ? listPages / pages : 0,
    hotListReads,
    hotListName,
    timelineLength,
    timelineWeight,
    timelineActive,
    listLength,
    listWeight,
    namedLists,
    burst,
    coldStart: {
      stormRebuildsPerSecond,
      stormCause,
      lossSessionsPerSecond: lostShards > 0 ? (activeReal * sc.activity.sessionsPerUserPerDay) / SECONDS_PER_DAY : 0,
      lostShards,
      entriesPerRebuild: entryWeight > 0 ? entries / entryWeight : 0,
    },
  };
}

/** The peak over a day and over the run of the post (or read) rate, as a multiple of the daily mean. */
export function peakFactors(sc: Scenario): { posts: number; reads: number; runMean: number } {
  const windows = sc.events.flatMap((e) => (e.kind === 'breakingNews' ? [{ start: e.at, end: e.at + e.window, multiplier: e.multiplier }] : []));
  const posts = new RateProfile(sc.duration, sc.activity.diurnal, windows);
  const reads = new RateProfile(sc.duration, sc.activity.diurnal, []);
  const daily = sc.activity.diurnal?.peakFactor ?? 1;
  const max = (p: RateProfile) => Math.max(...p.factors);
  return { posts: Math.max(daily, max(posts)), reads: Math.max(daily, max(reads)), runMean: posts.integral() / sc.duration };
}

/** Pages a session reads, on average. */
export function pagesPerSession(sc: Scenario): number {
  return meanPagesPerSession(sc.activity.pagesPerSession);
}
