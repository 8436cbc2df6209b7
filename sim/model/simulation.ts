// The discrete-event model of a feed system: posts arrive, fan out through event-log partitions and
// a worker fleet into timeline caches (or into their authors' recent-post lists when pulled), and
// readers page through home feeds that merge both. One event per post and per read session; a
// post's followers are a tight loop over the CSR arrays, never an event each.
import { ADAPTIVE_RECHECK_SECONDS, formatPolicy, keepForReader, nextAdaptiveThreshold, pullsAuthor, pushPair, readerDraw, type FanoutPolicy } from '../../core/fanout-policy.js';
import { authorPartition } from '../../core/partition.js';
import { isDormant, SECONDS_PER_DAY } from '../../core/timeline-rules.js';
import { EventQueue } from '../engine/event-queue.js';
import { DurationRecorder, IntervalHistograms } from '../metrics/recorder.js';
import { maxOf } from '../metrics/series.js';
import { mix32, Rng } from '../random.js';
import type { Scenario } from '../scenario/types.js';
import { ArrivalSchedule } from '../workload/schedule.js';
import type { Population } from './population.js';
import { PullIndex } from './pull-index.js';
import { ShardLoad } from './shard-load.js';
import { TimelineCache } from './timeline-cache.js';
import { WorkerPool } from './worker-pool.js';
import { WriteGroups } from './write-groups.js';
import { FluidLoad } from './fluid-load.js';
import type { SimulationMetrics, FiredEvent } from './metrics.js';

const POST = 0;
const WRITES_DONE = 1;
const LIST_DONE = 2;
const SESSION = 3;
const CACHE_LOSS = 4;
const TICK = 5;
const SWEEP = 6;

export const SERIES_INTERVAL = 60;
const SWEEP_INTERVAL = 600;
/** Batches of one post finishing within this many seconds of each other are applied by one event. */
const APPLY_RESOLUTION = 1;

export interface SimulationInput {
  scenario: Scenario;
  population: Population;
  policy: FanoutPolicy;
  /** The arrivals (made from the scenario and population when absent): posts, sessions, events. */
  schedule?: ArrivalSchedule;
  onProgress?: (fraction: number, detail: string) => void;
  /** Called after each simulated minute is recorded (for a live view); costs nothing when absent. */
  onMinute?: (snapshot: MinuteSnapshot) => void;
  /** Asked once per simulated minute: true ends the run there, and the metrics cover what was simulated. */
  shouldStop?: () => boolean;
}

/** One simulated minute as it is recorded, with the run's figures so far. */
export interface MinuteSnapshot {
  minute: number;
  /** Simulated time at the end of this minute, and the scenario's duration, in seconds. */
  atSeconds: number;
  durationSeconds: number;
  postsPerSecond: number;
  writesPerSecond: number;
  readsPerSecond: number;
  backlogWrites: number;
  lagP99Seconds: number;
  readP99Ms: number;
  memoryBytes: number;
  /** The figures the SLOs are checked on, over the run so far: per-follower lag p99, read p99, peak memory. */
  soFar: { followerLagP99Seconds: number; readP99Ms: number; peakMemoryBytes: number };
  /** Scenario events that have fired by atSeconds. */
  events: FiredEvent[];
}

export function simulate(input: SimulationInput): SimulationMetrics {
  const { scenario: sc, population: pop, policy } = input;
  const g = pop.graph;
  const n = pop.users;
  const s = pop.scale;
  const infra = sc.infrastructure;
  const costs = infra.costs;
  const duration = sc.duration;
  const seed = sc.seed;
  const minutes = Math.max(1, Math.ceil(duration / SERIES_INTERVAL));
  const leaseSeconds = sc.policy.leaseDays * SECONDS_PER_DAY;
  const dormantDays = sc.policy.dormantDays;
  const shards = infra.redisShards;
  const spread = s > 1; // ordinary users' keys stand for many users spread over every shard

  const weight = new Float64Array(n);
  for (let u = 0; u < n; u++) weight[u] = pop.individual[u] ? 1 : s;
  const follows = new Uint32Array(n);
  for (let u = 0; u < n; u++) follows[u] = g.followeeOffsets[u + 1] - g.followeeOffsets[u];

  // Feeding Frenzy costs: a push costs a write at the worker and at Redis; a pull costs one more list read per feed read.
  const pushCost = 1 / infra.writesPerSecondPerWorker + costs.zadd;
  const pullCost = costs.zrange;

  const skipDormant = policy.skipDormant;
  const readerCapped = policy.kind === 'reader-cap';
  let threshold = policy.threshold;
  const authorPulled = (a: number) => pullsAuthor(policy, pop.realFollowers[a], threshold);
  const pairPulled = (a: number, u: number) =>
    policy.kind === 'rate' ? !pushPair(pop.postRate[a], pop.readRate[u], pushCost, pullCost) : authorPulled(a);
  // A static policy's pulled authors per reader are indexed once; an adaptive one's move with the
  // threshold, so its reads test each followee instead of rebuilding the index.
  const adaptive = policy.kind === 'adaptive';
  const pulls = new PullIndex(g, adaptive ? () => false : pairPulled);
  const pulledOf = adaptive ? g.followeeOffsets : pulls.offsets;
  const pulledIds = adaptive ? g.followeeIds : pulls.authors;

  /** Expected pushed posts per second into u's timeline under the policy: the basis of warm starts and rebuilds. */
  const pushedRate = (u: number): number => {
    let r = 0;
    for (let e = g.followeeOffsets[u]; e < g.followeeOffsets[u + 1]; e++) {
      const f = g.followeeIds[e];
      if (!pairPulled(f, u)) r += pop.postRate[f];
    }
    if (policy.kind === 'reader-cap' && follows[u] > policy.readerCap) r *= policy.readerCap / follows[u];
    return r;
  };

  // ---- initial state: warm timelines for those the fan-out keeps alive, lists for pulled authors
  const cache = new TimelineCache(n, sc.policy.timelineCap, sc.policy.celebrityListLength, leaseSeconds, weight, pop.shard, shards, spread);
  const lastSeen = Float64Array.from(pop.lastSeen);
  for (let u = 0; u < n; u++) {
    const away = -lastSeen[u];
    const dormant = isDormant(lastSeen[u], 0, dormantDays);
    const kept = !dormant || !policy.skipDormant || away < leaseSeconds;
    if (!kept) continue;
    cache.build(u, pushedRate(u) * leaseSeconds, -1);
    cache.expiresAt[u] = dormant && policy.skipDormant ? lastSeen[u] + leaseSeconds : leaseSeconds;
  }
  const hasList = new Uint8Array(n);
  for (let i = 0; i < pulls.authors.length; i++) hasList[pulls.authors[i]] = 1;
  for (let a = 0; a < n; a++) if (hasList[a] || authorPulled(a)) cache.buildList(a, pop.postRate[a] * leaseSeconds);

  // ---- workload: the seeded arrivals, shared with `feedlab replay`
  const schedule = input.schedule ?? new ArrivalSchedule(sc, pop);
  const { postProfile, readProfile } = schedule;
  const posts = schedule.posts();
  const sessions = schedule.sessions();
  const pageSize = sc.activity.pageSize;

  // ---- the fleet
  const pool = new WorkerPool(
    infra.largePostClass ? infra.fanoutWorkers - infra.largePostClass.workers : infra.fanoutWorkers,
    infra.writesPerSecondPerWorker,
    costs.rtt,
    infra.batchSize,
    duration,
  );
  const largePool = infra.largePostClass
    ? new WorkerPool(infra.largePostClass.workers, infra.writesPerSecondPerWorker, costs.rtt, infra.batchSize, duration)
    : null;
  const isLarge = (a: number) => largePool !== null && pop.realFollowers[a] > infra.largePostClass!.followers;

  const fluid = new FluidLoad({
    population: pop,
    policy,
    costs,
    pageSize: sc.activity.pageSize,
    shards,
    partitions: infra.partitions,
    dormantDays,
    weight,
    follows,
    pulls,
    pairPulled,
    isLarge,
  });
  fluid.recompute(authorPulled);
  let fluidClock = 0;
  const feedFluid = (t: number) => {
    if (!spread || t <= fluidClock) return;
    const factor = postProfile.factorAt(t) * (t - fluidClock);
    pool.addFluid(t, fluid.fanout[0] * factor);
    if (largePool) largePool.addFluid(t, fluid.fanout[1] * factor);
    fluidClock = t;
  };
  // Rebuilds queue on Postgres connections, one rebuild at a time each.
  const postgres = new WorkerPool(infra.postgresConnections, 1 / costs.rebuild, 0, Infinity, duration);
  const rebuild = (now: number, w: number): number => {
    // at scale a cold read stands for w rebuilds at once: this one waits behind half of the others
    postgres.addLump(now, (w - 1) / 2);
    const done = postgres.submit(now, 1);
    postgres.addLump(now, (w - 1) / 2);
    rebuilds += w;
    return done - now;
  };
  const partitionFree = new Float64Array(infra.partitions);
  const partitionFluidAt = new Float64Array(infra.partitions);
  let partitionBusy = 0;

  const shardLoad = new ShardLoad(shards);
  const groups = new WriteGroups();

  const waitRng = Rng.derive(seed, 'waits');

  // ---- metrics
  const postLag = new DurationRecorder();
  const followerLag = new DurationRecorder();
  const readLatency = new DurationRecorder();
  const lagByMinute = new IntervalHistograms(minutes);
  const readByMinute = new IntervalHistograms(minutes);
  const series = {
    posts: new Float64Array(minutes),
    writes: new Float64Array(minutes),
    reads: new Float64Array(minutes),
    coldReads: new Float64Array(minutes),
    memoryBytes: new Float64Array(minutes),
    naiveMemoryBytes: new Float64Array(minutes),
    backlogWrites: new Float64Array(minutes),
    threshold: new Float64Array(minutes),
    maxShardBytes: new Float64Array(minutes),
  };
  const fired: FiredEvent[] = schedule.fired.map((e) => ({ ...e }));
  let postsReal = 0;
  let postsWithoutAudience = 0;
  let deliveries = 0;
  let listWrites = 0;
  let pushedPosts = 0;
  let pulledPosts = 0;
  let readsReal = 0;
  let readOps = 0;
  let coldReads = 0;
  let rebuildEntries = 0;
  let rebuilds = 0;
  let listRebuilds = 0;
  let thresholdChanges = 0;
  let minThresholdSeen = threshold;
  let peakBacklog = 0;
  let postSeq = 0;
  let readSeq = 0;
  let lastAdapt = -Infinity;
  let eventsProcessed = 0;
  const shardStamp = new Int32Array(shards).fill(-1);

  const eligible = (u: number, now: number, post: number): boolean => {
    if (skipDormant && isDormant(lastSeen[u], now, dormantDays)) return false;
    // the keep draw is the server's, a hash of (post, reader): the same delivery decides the same way twice
    return !readerCapped || keepForReader(policy, follows[u], readerDraw(mix32(post ^ seed), u));
  };

  const q = new EventQueue(4096);

  // ---- a post
  /**
   * A post by `a` at `t`. An organic post by an ordinary account at population scale stands for s
   * posts (this probe plus s - 1 in the fluid load); a burst post stands for one real post; a
   * named account's post is one post to s real followers per sampled one.
   */
  const handlePost = (a: number, t: number, organic: boolean) => {
    const post = postSeq++;
    const named = pop.individual[a] === 1;
    const stands = organic && !named ? s : 1;
    const perFollower = named ? s : stands;
    const workPerFollower = named ? s : 1;
    postsReal += stands;
    const createdMinute = Math.min(minutes - 1, Math.floor(t / SERIES_INTERVAL));
    series.posts[createdMinute] += stands;

    if (policy.kind === 'adaptive' && t - lastAdapt >= ADAPTIVE_RECHECK_SECONDS) {
      lastAdapt = t;
      const backlog = pool.backlogWrites(t) + (largePool ? largePool.backlogWrites(t) : 0);
      const next = nextAdaptiveThreshold(policy, threshold, backlog);
      if (next !== threshold) {
        threshold = next;
        thresholdChanges++;
        if (threshold < minThresholdSeen) minThresholdSeen = threshold;
        fluid.recompute(authorPulled);
      }
    }

    // the post event waits its turn on its author's partition, which reads the follower list;
    // at scale the other posts a probe stands for keep every partition busy as a fluid
    const p = authorPartition(a, infra.partitions);
    if (spread && t > partitionFluidAt[p]) {
      const from = partitionFluidAt[p];
      partitionFree[p] = Math.max(partitionFree[p], from) + fluid.partitionRate * postProfile.factorAt(t) * (t - from);
      partitionFluidAt[p] = t;
    }
    const start = partitionFree[p] > t ? partitionFree[p] : t;
    partitionFree[p] = start + costs.expand;
    partitionBusy += costs.expand * stands;
    const ready = start + costs.expand;
    const fleet = isLarge(a) ? largePool! : pool;
    feedFluid(t);

    const o0 = g.followerOffsets[a];
    const o1 = g.followerOffsets[a + 1];
    let lastDone = -1;
    let needsList = false;

    let pushed = false;
    if (policy.kind !== 'rate' && authorPulled(a)) {
      needsList = true;
    } else {
      const perBatch = Math.max(1, Math.floor(infra.batchSize / workPerFollower));
      let count = 0;
      let batchStart = o0;
      let groupStart = -1;
      let groupEnd = 0;
      let groupFirst = 0;
      let groupDone = 0;
      const flush = () => {
        if (groupStart >= 0) q.push(groupDone, WRITES_DONE, groups.add(a, groupStart, groupEnd, t, post));
        groupStart = -1;
      };
      const emit = (end: number) => {
        const done = fleet.submit(ready, count * workPerFollower);
        pushed = true;
        deliveries += count * perFollower;
        followerLag.record(done - t, count * perFollower);
        lagByMinute.record(createdMinute, done - t, count * perFollower);
        if (done > lastDone) lastDone = done;
        if (groupStart >= 0 && done - groupFirst <= APPLY_RESOLUTION) {
          groupEnd = end;
          if (done > groupDone) groupDone = done;
        } else {
          flush();
          groupStart = batchStart;
          groupEnd = end;
          groupFirst = done;
          groupDone = done;
        }
        batchStart = end;
        count = 0;
      };
      for (let e = o0; e < o1; e++) {
        const u = g.followerIds[e];
        if (policy.kind === 'rate' && pairPulled(a, u)) {
          // the list is for readers who read; a skipped dormant one needs neither push nor list
          if (!skipDormant || !isDormant(lastSeen[u], t, dormantDays)) needsList = true;
          continue;
        }
        if (!eligible(u, t, post)) continue;
        if (++count === perBatch) emit(e + 1);
      }
      if (count > 0) emit(o1);
      flush();
    }

    if (pushed) pushedPosts += stands;
    if (needsList) {
      const done = fleet.submit(ready, 1);
      listWrites += stands;
      pulledPosts += stands;
      q.push(done, LIST_DONE, a);
      if (done > lastDone) lastDone = done;
      // a pulled post is visible to all of its (pull) readers once it is in the list
      if (policy.kind !== 'rate' && o1 > o0) {
        followerLag.record(done - t, (o1 - o0) * perFollower);
        lagByMinute.record(createdMinute, done - t, (o1 - o0) * perFollower);
      }
    }

    if (lastDone < 0) {
      postsWithoutAudience += stands;
      return;
    }
    postLag.record(lastDone - t, stands);

    const backlog = fleet.backlogWrites(t);
    if (backlog > peakBacklog) peakBacklog = backlog;
  };

  // ---- timeline writes landing
  const applyWrites = (i: number, now: number) => {
    const a = groups.author[i];
    const created = groups.created[i];
    const post = groups.post[i];
    const end = groups.end[i];
    for (let e = groups.start[i]; e < end; e++) {
      const u = g.followerIds[e];
      if (policy.kind === 'rate' && pairPulled(a, u)) continue;
      if (!eligible(u, now, post)) continue;
      cache.push(u, created, now);
      // at scale the Redis write load follows the fleet's throughput (see writesLoad); here only exact keys
      if (!spread || pop.individual[u]) shardLoad.add(pop.shard[u], costs.zadd * weight[u], weight[u]);
    }
    groups.release(i);
  };

  // ---- a feed page
  const listShard = (f: number, u: number) => (spread && !pop.individual[f] ? mix32(f ^ Math.imul(u, 0x9e3779b1)) % shards : pop.shard[f]);

  const readPage = (u: number, now: number) => {
    const w = weight[u];
    const seq = readSeq++;
    lastSeen[u] = now;
    let latency = 0;
    let ops = 0;
    let cold = false;
    const home = spread && w > 1 ? waitRng.int(shards) : pop.shard[u];
    if (!cache.present(u, now)) {
      cold = true;
      const entries = Math.min(sc.policy.timelineCap, Math.round(pushedRate(u) * leaseSeconds));
      cache.build(u, entries, now);
      rebuildEntries += entries * w;
      latency += rebuild(now, w) + costs.rtt + costs.zadd * entries;
      ops += 1;
      if (spread && w > 1) shardLoad.addSpread(costs.zadd * entries * w, w);
      else shardLoad.add(home, costs.zadd * entries * w, w);
    }
    // round trip 1: the timeline and every pulled author's list, pipelined
    let maxWait = shardLoad.wait(home, waitRng);
    shardStamp[home] = seq;
    if (!spread) shardLoad.add(home, costs.zrange * w, w);
    let lists = 0;
    let listWait = 0;
    for (let k = pulledOf[u]; k < pulledOf[u + 1]; k++) {
      const f = pulledIds[k];
      if (adaptive && !authorPulled(f)) continue;
      lists++;
      const sh = listShard(f, u);
      if (shardStamp[sh] !== seq) {
        shardStamp[sh] = seq;
        const wt = shardLoad.wait(sh, waitRng);
        if (wt > maxWait) maxWait = wt;
      }
      if (!spread) shardLoad.add(sh, costs.zrange * w, w);
      if (!cache.listExists[f]) {
        // concurrent reads of a missing list make one rebuild (single-flight)
        listWait = Math.max(listWait, rebuild(now, 1));
        listRebuilds += 1;
        cache.buildList(f, pop.postRate[f] * leaseSeconds);
      }
    }
    latency += costs.rtt + maxWait + costs.zrange * (1 + lists) + listWait;
    ops += 1 + lists;
    // round trip 2: hydrate the page's post bodies
    const bodyShard = waitRng.int(shards);
    latency += costs.rtt + shardLoad.wait(bodyShard, waitRng) + costs.mgetPerKey * pageSize;
    if (!spread) shardLoad.addSpread(costs.mgetPerKey * pageSize * w, w);
    ops += 1;
    cache.touch(u, now);

    readLatency.record(latency, w);
    const minute = Math.min(minutes - 1, Math.floor(now / SERIES_INTERVAL));
    readByMinute.record(minute, latency, w);
    series.reads[minute] += w;
    readsReal += w;
    readOps += ops * w;
    if (cold) {
      coldReads += w;
      series.coldReads[minute] += w;
    }
  };

  // ---- scenario events: bursts and storm returns arrive in the two streams
  for (const loss of schedule.cacheLosses) q.push(loss.at, CACHE_LOSS, loss.shards);
  if (posts.next()) q.push(posts.at, POST);
  if (sessions.next()) q.push(sessions.at, SESSION);
  q.push(Math.min(SERIES_INTERVAL, duration), TICK, 0);
  q.push(SWEEP_INTERVAL, SWEEP);

  // a live view's minute: the writes of seconds before t are final once the fluid is fed up to t
  const minuteSnapshot = (m: number, t: number): MinuteSnapshot => {
    const from = m * SERIES_INTERVAL;
    const to = Math.min(from + SERIES_INTERVAL, duration);
    let writes = 0;
    for (let sec = from; sec < to; sec++) writes += pool.writesBySecond[sec] + (largePool ? largePool.writesBySecond[sec] : 0);
    const span = Math.max(1e-9, to - from);
    return {
      minute: m,
      atSeconds: t,
      durationSeconds: duration,
      postsPerSecond: series.posts[m] / span,
      writesPerSecond: writes / span,
      readsPerSecond: series.reads[m] / span,
      backlogWrites: series.backlogWrites[m],
      lagP99Seconds: lagByMinute.percentile(m, 99),
      readP99Ms: readByMinute.percentile(m, 99) * 1000,
      memoryBytes: series.memoryBytes[m],
      soFar: { followerLagP99Seconds: followerLag.percentile(99), readP99Ms: readLatency.percentile(99) * 1000, peakMemoryBytes: cache.peakBytes },
      events: fired.filter((e) => e.at <= t),
    };
  };
  let stoppedAt: number | undefined;

  let shardSecond = 0;
  simulation: while (q.pop()) {
    const t = q.now;
    if (t > duration) break;
    if (Math.floor(t) > shardSecond) {
      for (let sec = shardSecond; sec < Math.floor(t); sec++) {
        if (spread) {
          const w = pool.writesBySecond[sec] + (largePool ? largePool.writesBySecond[sec] : 0);
          const f = readProfile.factorAt(sec + 0.5);
          shardLoad.addSpread(w * costs.zadd + fluid.readSpread * f, w + fluid.readOps * f);
          for (let i = 0; i < shards; i++) if (fluid.readShard[i] > 0) shardLoad.add(i, fluid.readShard[i] * f, fluid.readShardOps[i] * f);
        }
        shardLoad.advance(sec + 1);
      }
      shardSecond = Math.floor(t);
    }
    eventsProcessed++;
    switch (q.kind) {
      case POST:
        handlePost(posts.author, t, posts.organic);
        if (posts.next() && posts.at <= duration) q.push(posts.at, POST);
        break;
      case WRITES_DONE:
        applyWrites(q.a, t);
        break;
      case LIST_DONE:
        cache.pushList(q.a);
        if (!spread || pop.individual[q.a]) shardLoad.add(pop.shard[q.a], costs.zadd * weight[q.a], weight[q.a]);
        break;
      case SESSION:
        for (let i = 0; i < sessions.pages; i++) readPage(sessions.user, t);
        if (sessions.next() && sessions.at <= duration) q.push(sessions.at, SESSION);
        break;
      case CACHE_LOSS: {
        const lost = q.a;
        cache.loseShards((sh) => sh < lost);
        break;
      }
      case TICK: {
        const m = q.a;
        feedFluid(t);
        series.memoryBytes[m] = cache.bytes;
        series.naiveMemoryBytes[m] = cache.naiveBytes;
        series.backlogWrites[m] = pool.backlogWrites(t) + (largePool ? largePool.backlogWrites(t) : 0);
        series.threshold[m] = threshold;
        let mx = 0;
        for (let i = 0; i < shards; i++) if (cache.shardBytes(i) > mx) mx = cache.shardBytes(i);
        series.maxShardBytes[m] = mx;
        if (m + 1 < minutes) q.push(Math.min((m + 2) * SERIES_INTERVAL, duration), TICK, m + 1);
        input.onProgress?.(t / duration, `${Math.round(t / 60)}/${Math.round(duration / 60)} simulated min`);
        if (input.onMinute) input.onMinute(minuteSnapshot(m, t));
        if (input.shouldStop && t < duration && input.shouldStop()) {
          stoppedAt = t;
          break simulation;
        }
        break;
      }
      case SWEEP:
        cache.sweepExpired(t);
        if (t + SWEEP_INTERVAL <= duration) q.push(t + SWEEP_INTERVAL, SWEEP);
        break;
    }
  }

  // a stopped run is reported for what was simulated: its first `ran` seconds, `ranMinutes` minutes
  const ran = stoppedAt ?? duration;
  const ranMinutes = stoppedAt === undefined ? minutes : Math.ceil(ran / SERIES_INTERVAL);
  const upTo = (xs: Float64Array) => Array.from(xs.subarray(0, ranMinutes));
  const lagSeries = Array.from({ length: ranMinutes }, (_, m) => lagByMinute.percentile(m, 99));
  const readSeries = Array.from({ length: ranMinutes }, (_, m) => readByMinute.percentile(m, 99));
  feedFluid(ran);
  let peakWrites = 0;
  let totalWritesInRun = 0;
  for (let i = 0; i < ran; i++) {
    const w = pool.writesBySecond[i] + (largePool ? largePool.writesBySecond[i] : 0);
    totalWritesInRun += w;
    series.writes[Math.min(ranMinutes - 1, Math.floor(i / SERIES_INTERVAL))] += w;
    if (w > peakWrites) peakWrites = w;
  }
  const drain = Math.max(pool.drainTime(), largePool ? largePool.drainTime() : 0);
  const shardEnd = Array.from({ length: shards }, (_, i) => cache.shardBytes(i));
  const meanShard = shardEnd.reduce((x, y) => x + y, 0) / shards;

  return {
    policy: formatPolicy(policy),
    scale: s,
    duration: ran,
    ...(stoppedAt === undefined ? {} : { stoppedAt }),
    events: stoppedAt === undefined ? fired : fired.filter((e) => e.at <= ran),
    eventsProcessed,
    posts: { total: postsReal, pushed: pushedPosts, pulled: pulledPosts, withoutAudience: postsWithoutAudience, perSecondMean: postsReal / ran },
    fanout: {
      postLag: postLag.summary(),
      followerLag: followerLag.summary(),
      postLagHistogram: postLag.encoded(),
      deliveries,
      listWrites,
      writesPerSecondMean: totalWritesInRun / ran,
      writesPerSecondPeak: peakWrites,
      peakBacklogWrites: peakBacklog,
      backlogAtEndWrites: pool.backlogWrites(ran) + (largePool ? largePool.backlogWrites(ran) : 0),
      drainedAt: drain,
      workerUtilisation: totalWritesInRun / (infra.fanoutWorkers * infra.writesPerSecondPerWorker * ran),
      partitionUtilisation: partitionBusy / (infra.partitions * ran),
      thresholdChanges,
      minThreshold: minThresholdSeen,
    },
    redis: {
      peakBytes: cache.peakBytes,
      endBytes: cache.bytes,
      naiveEndBytes: cache.naiveBytes,
      naivePeakBytes: Math.max(maxOf(series.naiveMemoryBytes), cache.naiveBytes),
      listBytes: cache.listBytes,
      timelinesEnd: cache.timelines,
      shardBytesEnd: shardEnd,
      shardImbalance: meanShard > 0 ? maxOf(shardEnd) / meanShard : 1,
      peakShardUtilisation: shardLoad.peakRho,
      saturatedShards: shardLoad.saturated.reduce((x, y) => x + y, 0),
      saturatedShardSeconds: shardLoad.saturatedSeconds,
    },
    reads: {
      total: readsReal,
      latency: readLatency.summary(),
      latencyHistogram: readLatency.encoded(),
      redisOpsPerRead: readsReal > 0 ? readOps / readsReal : 0,
      coldReads,
      coldShare: readsReal > 0 ? coldReads / readsReal : 0,
      rebuildEntries,
      listRebuilds,
      rebuilds,
      postgresUtilisation: postgres.busySeconds / (infra.postgresConnections * ran),
    },
    series: {
      intervalSeconds: SERIES_INTERVAL,
      posts: upTo(series.posts),
      writes: upTo(series.writes),
      reads: upTo(series.reads),
      coldReads: upTo(series.coldReads),
      memoryBytes: upTo(series.memoryBytes),
      naiveMemoryBytes: upTo(series.naiveMemoryBytes),
      backlogWrites: upTo(series.backlogWrites),
      lagP99: lagSeries,
      readP99: readSeries,
      threshold: policy.kind === 'threshold' || adaptive ? upTo(series.threshold) : null,
      maxShardBytes: upTo(series.maxShardBytes),
    },
  };
}
