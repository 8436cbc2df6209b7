// What every stage of one simulation shares: the scenario's settings, the population and its
// weights, the policy's decisions, the timeline cache with its starting state, the arrivals, the
// event queue and the metrics being recorded. Built once by buildContext; the stages (fan-out,
// reads) and the summary read and update it.
import { keepForReader, pullsAuthor, pushPair, readerDraw, type FanoutPolicy } from '../../core/fanout-policy.js';
import { isDormant, SECONDS_PER_DAY } from '../../core/timeline-rules.js';
import { EventQueue } from '../engine/event-queue.js';
import { DurationRecorder, IntervalHistograms } from '../metrics/recorder.js';
import { mix32 } from '../../core/random.js';
import type { Scenario } from '../scenario/types.js';
import { ArrivalSchedule } from '../workload/schedule.js';
import type { Arrivals } from '../workload/time-scaled.js';
import type { FiredEvent } from './metrics.js';
import type { Population } from './population.js';
import { pushPullCosts } from '../policy.js';
import { PullIndex } from './pull-index.js';
import { ShardLoad } from './shard-load.js';
import { timelinesPerAddCall, timelineWritesPerQueryRead } from '../../core/redis-pipeline.js';
import { timelineKey } from '../../core/keys.js';
import { TimelineCache } from './timeline-cache.js';

/** The event kinds of the queue. */
export const EV = { POST: 0, WRITES_DONE: 1, LIST_DONE: 2, SESSION: 3, CACHE_LOSS: 4, TICK: 5, SWEEP: 6, PAGE: 7, LOGGED: 8, WORKER_CRASH: 9 } as const;

export const SERIES_INTERVAL = 60;

/** Per-minute series the stages fill. */
export interface Series {
  posts: Float64Array;
  writes: Float64Array;
  reads: Float64Array;
  coldReads: Float64Array;
  memoryBytes: Float64Array;
  naiveMemoryBytes: Float64Array;
  backlogWrites: Float64Array;
  threshold: Float64Array;
  maxShardBytes: Float64Array;
}

/** Running totals, in real posts, deliveries and reads (a sampled one weighs what it stands for). */
export interface Counters {
  postsReal: number;
  postsWithoutAudience: number;
  deliveries: number;
  listWrites: number;
  pushedPosts: number;
  pulledPosts: number;
  readsReal: number;
  readOps: number;
  /** Sessions' first pages and their Redis commands (a replay measures commands per read over first pages). */
  firstPages: number;
  firstPageOps: number;
  coldReads: number;
  rebuildEntries: number;
  rebuilds: number;
  listRebuilds: number;
  thresholdChanges: number;
  minThresholdSeen: number;
  peakBacklog: number;
  postSeq: number;
  readSeq: number;
}

export interface ModelContext {
  sc: Scenario;
  pop: Population;
  policy: FanoutPolicy;
  n: number;
  /** Real users a sampled ordinary user stands for. */
  scale: number;
  /** Ordinary users' keys stand for many users spread over every shard (population scaling). */
  spread: boolean;
  duration: number;
  minutes: number;
  leaseSeconds: number;
  shards: number;
  /** Real users each sampled user stands for (1 for named accounts). */
  weight: Float64Array;
  follows: Uint32Array;
  lastSeen: Float64Array;
  /** The threshold in force (an adaptive policy moves it). */
  threshold: number;
  adaptive: boolean;
  pulls: PullIndex;
  /** Each reader's pulled authors (CSR): the static index, or every followee for an adaptive policy. */
  pulledOf: Uint32Array;
  pulledIds: Uint32Array;
  authorPulled: (a: number) => boolean;
  pairPulled: (a: number, u: number) => boolean;
  /** May a post of this policy be written into u's timeline at `now`? (dormancy, the reader cap) */
  eligible: (u: number, now: number, post: number) => boolean;
  /** Expected pushed posts per second into u's timeline: the basis of warm starts and rebuilds. */
  pushedRate: (u: number) => number;
  cache: TimelineCache;
  /** The key names' prefix the memory by key class is counted under (SimulationInput.keyPrefix). */
  keyPrefix: string;
  shardLoad: ShardLoad;
  schedule: Arrivals;
  q: EventQueue;
  fired: FiredEvent[];
  postLag: DurationRecorder;
  followerLag: DurationRecorder;
  readLatency: DurationRecorder;
  lagByMinute: IntervalHistograms;
  readByMinute: IntervalHistograms;
  series: Series;
  count: Counters;
}

export function minuteOf(ctx: ModelContext, t: number): number {
  return Math.min(ctx.minutes - 1, Math.floor(t / SERIES_INTERVAL));
}

export function buildContext(sc: Scenario, pop: Population, policy: FanoutPolicy, schedule?: Arrivals, keyPrefix = ''): ModelContext {
  const g = pop.graph;
  const n = pop.users;
  const infra = sc.infrastructure;
  const costs = infra.costs;
  const duration = sc.duration;
  const minutes = Math.max(1, Math.ceil(duration / SERIES_INTERVAL));
  const leaseSeconds = sc.policy.leaseDays * SECONDS_PER_DAY;
  const dormantDays = sc.policy.dormantDays;
  const weight = new Float64Array(n);
  for (let u = 0; u < n; u++) weight[u] = pop.individual[u] ? 1 : pop.scale;
  const follows = new Uint32Array(n);
  for (let u = 0; u < n; u++) follows[u] = g.followeeOffsets[u + 1] - g.followeeOffsets[u];

  const { push: pushCost, pull: pullCost } = pushPullCosts(sc);
  const ctx = { threshold: policy.threshold } as ModelContext;
  const authorPulled = (a: number) => pullsAuthor(policy, pop.realFollowers[a], ctx.threshold);
  const pairPulled = (a: number, u: number) =>
    policy.kind === 'rate' ? !pushPair(pop.postRate[a], pop.readRate[u], pushCost, pullCost) : authorPulled(a);
  // A static policy's pulled authors per reader are indexed once; an adaptive one's move with the
  // threshold, so its reads test each followee instead of rebuilding the index.
  const adaptive = policy.kind === 'adaptive';
  const pulls = new PullIndex(g, adaptive ? () => false : pairPulled);
  const readerCapped = policy.kind === 'reader-cap';
  const lastSeen = Float64Array.from(pop.lastSeen);

  const pushedRate = (u: number): number => {
    let r = 0;
    for (let e = g.followeeOffsets[u]; e < g.followeeOffsets[u + 1]; e++) {
      const f = g.followeeIds[e];
      if (!pairPulled(f, u)) r += pop.postRate[f];
    }
    if (policy.kind === 'reader-cap' && follows[u] > policy.readerCap) r *= policy.readerCap / follows[u];
    return r;
  };

  // ---- starting state: warm timelines for those the fan-out keeps alive, lists for pulled authors
  const spread = pop.scale > 1;
  const cache = new TimelineCache(n, sc.policy.timelineCap, sc.policy.celebrityListLength, leaseSeconds, weight, pop.shard, infra.redisShards, spread);
  for (let u = 0; u < n; u++) {
    const away = -lastSeen[u];
    const dormant = isDormant(lastSeen[u], 0, dormantDays);
    const kept = !dormant || !policy.skipDormant || away < leaseSeconds;
    if (!kept) continue;
    cache.build(u, pushedRate(u) * leaseSeconds, -1);
    cache.expiresAt[u] = dormant && policy.skipDormant ? lastSeen[u] + leaseSeconds : leaseSeconds;
  }
  // every active reader's own list (a read merges it, and makes it when missing)
  for (let i = 0; i < pop.activeUsers.length; i++) {
    const u = pop.activeUsers[i];
    cache.ensureOwn(u, pop.postRate[u] * leaseSeconds);
  }
  const hasList = new Uint8Array(n);
  for (let i = 0; i < pulls.authors.length; i++) hasList[pulls.authors[i]] = 1;
  for (let a = 0; a < n; a++) if (hasList[a] || authorPulled(a)) cache.buildList(a, pop.postRate[a] * leaseSeconds);

  const arrivals = schedule ?? new ArrivalSchedule(sc, pop);
  Object.assign(ctx, {
    sc,
    pop,
    policy,
    n,
    scale: pop.scale,
    spread,
    duration,
    minutes,
    leaseSeconds,
    shards: infra.redisShards,
    weight,
    follows,
    lastSeen,
    adaptive,
    pulls,
    pulledOf: adaptive ? g.followeeOffsets : pulls.offsets,
    pulledIds: adaptive ? g.followeeIds : pulls.authors,
    authorPulled,
    pairPulled,
    eligible: (u: number, now: number, post: number) => {
      if (policy.skipDormant && isDormant(lastSeen[u], now, dormantDays)) return false;
      // the keep draw is the server's, a hash of (post, reader): the same delivery decides the same way twice
      return !readerCapped || keepForReader(policy, follows[u], readerDraw(mix32(post ^ sc.seed), u));
    },
    pushedRate,
    cache,
    keyPrefix,
    shardLoad: new ShardLoad(infra.redisShards, infra.redisProcesses ?? infra.redisShards, pipelineChunkSeconds(sc, n, keyPrefix)),
    schedule: arrivals,
    q: new EventQueue(4096),
    fired: arrivals.fired.map((e) => ({ ...e })),
    postLag: new DurationRecorder(),
    followerLag: new DurationRecorder(),
    readLatency: new DurationRecorder(),
    lagByMinute: new IntervalHistograms(minutes),
    readByMinute: new IntervalHistograms(minutes),
    series: {
      posts: new Float64Array(minutes),
      writes: new Float64Array(minutes),
      reads: new Float64Array(minutes),
      coldReads: new Float64Array(minutes),
      memoryBytes: new Float64Array(minutes),
      naiveMemoryBytes: new Float64Array(minutes),
      backlogWrites: new Float64Array(minutes),
      threshold: new Float64Array(minutes),
      maxShardBytes: new Float64Array(minutes),
    },
    count: {
      postsReal: 0,
      postsWithoutAudience: 0,
      deliveries: 0,
      listWrites: 0,
      pushedPosts: 0,
      pulledPosts: 0,
      readsReal: 0,
      readOps: 0,
      firstPages: 0,
      firstPageOps: 0,
      coldReads: 0,
      rebuildEntries: 0,
      rebuilds: 0,
      listRebuilds: 0,
      thresholdChanges: 0,
      minThresholdSeen: policy.threshold,
      peakBacklog: 0,
      postSeq: 0,
      readSeq: 0,
    },
  } satisfies Omit<ModelContext, 'threshold'>);
  return ctx;
}

/**
 * Redis's time on one read of a fan-out worker's pipeline (core/redis-pipeline.ts): the timeline
 * writes of the add calls on the longest user id's key under the key prefix that fit in one read,
 * at Redis's own time a write (costs.zadd).
 */
function pipelineChunkSeconds(sc: Scenario, users: number, keyPrefix: string): number {
  const leaseMs = Math.round(sc.policy.leaseDays * SECONDS_PER_DAY * 1000);
  // one Redis process (a replay's) is a standalone server: add calls of many timelines; a cluster's calls hold one
  const standalone = (sc.infrastructure.redisProcesses ?? sc.infrastructure.redisShards) === 1;
  const perCall = standalone ? timelinesPerAddCall(1) : 1;
  return timelineWritesPerQueryRead(keyPrefix + timelineKey(Math.max(0, users - 1)), sc.policy.timelineCap, leaseMs, perCall) * sc.infrastructure.costs.zadd;
}
