// The write path of the model: a post is accepted by the API, its event crosses the outbox relay
// and the event log (postToLog), waits on its author's partition while the worker reads the
// author's follower count and first page of followers (eventStatements, expand +
// expandPerFollower per follower), and its timeline writes go to the worker fleet in pipelined
// batches (WorkerPool): shared by the whole fleet, or written by one worker (worker.splitPosts).
// A pulled post is one write into its author's recent list. Fan-out lag counts from the post's
// commit, as the reference server's does.
import { nextAdaptiveThreshold } from '../../core/fanout-policy.js';
import { authorPartition } from '../../core/partition.js';
import { isDormant } from '../../core/timeline-rules.js';
import { Rng } from '../random.js';
import { quantileAt } from '../scenario/quantiles.js';
import type { ApiStage } from './api-tier.js';
import { EV, minuteOf, type ModelContext } from './context.js';
import { expansionSeconds } from './expansion.js';
import { FluidLoad } from './fluid-load.js';
import type { SharedCores } from './machine.js';
import { WorkerPool } from './worker-pool.js';
import { WriteGroups } from './write-groups.js';
import { ADAPTIVE_RECHECK_SECONDS } from '../../core/fanout-policy.js';

/** Batches of one post finishing within this many seconds of each other are applied by one event. */
const APPLY_RESOLUTION = 1;

export class FanoutStage {
  readonly pool: WorkerPool;
  readonly largePool: WorkerPool | null;
  readonly fluid: FluidLoad;
  readonly groups = new WriteGroups();
  private readonly partitionFree: Float64Array;
  private readonly partitionFluidAt: Float64Array;
  partitionBusy = 0;
  private fluidClock = 0;
  private lastAdapt = -Infinity;
  private readonly hopRng: Rng;

  constructor(
    private readonly ctx: ModelContext,
    private readonly api: ApiStage,
    private readonly machine: SharedCores,
  ) {
    const infra = ctx.sc.infrastructure;
    const { pop, policy } = ctx;
    const perBatch = infra.costs.rtt + infra.costs.batch;
    const large = infra.largePostClass;
    this.pool = new WorkerPool(large ? infra.fanoutWorkers - large.workers : infra.fanoutWorkers, infra.writesPerSecondPerWorker, perBatch, infra.batchSize, ctx.duration);
    this.largePool = large ? new WorkerPool(large.workers, infra.writesPerSecondPerWorker, perBatch, infra.batchSize, ctx.duration) : null;
    this.fluid = new FluidLoad({
      population: pop,
      policy,
      costs: infra.costs,
      pageSize: ctx.sc.activity.pageSize,
      shards: ctx.shards,
      partitions: infra.partitions,
      dormantDays: ctx.sc.policy.dormantDays,
      weight: ctx.weight,
      follows: ctx.follows,
      pulls: ctx.pulls,
      pairPulled: ctx.pairPulled,
      followerPage: infra.worker.followerPage,
      authorPulledAtStart: ctx.authorPulled,
      isLarge: (a) => this.isLarge(a),
    });
    this.fluid.recompute(ctx.authorPulled);
    this.partitionFree = new Float64Array(infra.partitions);
    this.partitionFluidAt = new Float64Array(infra.partitions);
    this.hopRng = Rng.derive(ctx.sc.seed, 'post-to-log');
  }

  private isLarge(a: number): boolean {
    const large = this.ctx.sc.infrastructure.largePostClass;
    return large !== null && this.ctx.pop.realFollowers[a] > large.followers;
  }

  /** Fluid writes of the posts the probes stand for, fed up to t. */
  feedFluid(t: number): void {
    if (!this.ctx.spread || t <= this.fluidClock) return;
    const factor = this.ctx.schedule.postProfile.factorAt(t) * (t - this.fluidClock);
    this.pool.addFluid(t, this.fluid.fanout[0] * factor);
    if (this.largePool) this.largePool.addFluid(t, this.fluid.fanout[1] * factor);
    this.fluidClock = t;
  }

  backlogWrites(t: number): number {
    return this.pool.backlogWrites(t) + (this.largePool ? this.largePool.backlogWrites(t) : 0);
  }

  writesInSecond(sec: number): number {
    return this.pool.writesBySecond[sec] + (this.largePool ? this.largePool.writesBySecond[sec] : 0);
  }

  drainTime(): number {
    return Math.max(this.pool.drainTime(), this.largePool ? this.largePool.drainTime() : 0);
  }

  private adapt(t: number): void {
    const ctx = this.ctx;
    if (ctx.policy.kind !== 'adaptive' || t - this.lastAdapt < ADAPTIVE_RECHECK_SECONDS) return;
    this.lastAdapt = t;
    const next = nextAdaptiveThreshold(ctx.policy, ctx.threshold, this.backlogWrites(t));
    if (next === ctx.threshold) return;
    ctx.threshold = next;
    ctx.count.thresholdChanges++;
    if (next < ctx.count.minThresholdSeen) ctx.count.minThresholdSeen = next;
    this.fluid.recompute(ctx.authorPulled);
  }

  /**
   * A post by `a` sent at `t`. An organic post by an ordinary account at population scale stands
   * for s posts (this probe plus s - 1 in the fluid load); a burst post stands for one real post; a
   * named account's post is one post to s real followers per sampled one.
   */
  post(a: number, t: number, organic: boolean): void {
    const ctx = this.ctx;
    const { pop, policy, count, series } = ctx;
    const g = pop.graph;
    const infra = ctx.sc.infrastructure;
    const costs = infra.costs;
    const post = count.postSeq++;
    const named = pop.individual[a] === 1;
    const stands = organic && !named ? ctx.scale : 1;
    const perFollower = named ? ctx.scale : stands;
    const workPerFollower = named ? ctx.scale : 1;
    count.postsReal += stands;
    series.posts[minuteOf(ctx, t)] += stands;
    // the API adds the post to its author's own list before answering
    ctx.cache.pushOwn(a);
    this.adapt(t);

    // accepted by the API, whose handler stamps the post's createdAt (the lag counts from there),
    // commits it and adds it to its author's list; then the hop through the outbox relay and the
    // event log (measured from createdAt too)
    const accepted = this.api.acceptPost(t, stands);
    const created = t + accepted.started;
    const createdMinute = minuteOf(ctx, created);
    const logged = created + quantileAt(infra.postToLog, this.hopRng.float());

    // the event waits its turn on its author's partition, where the worker reads the author's
    // follower count and first page of followers; at scale the other posts a probe stands for keep
    // every partition busy as a fluid
    const o0 = g.followerOffsets[a];
    const o1 = g.followerOffsets[a + 1];
    const pulledAuthor = policy.kind !== 'rate' && ctx.authorPulled(a);
    const firstPage = pulledAuthor ? 0 : Math.min(o1 - o0, infra.worker.followerPage);
    const expansion = expansionSeconds(costs, firstPage, pulledAuthor);
    const p = authorPartition(a, infra.partitions);
    if (ctx.spread && t > this.partitionFluidAt[p]) {
      const from = this.partitionFluidAt[p];
      this.partitionFree[p] = Math.max(this.partitionFree[p], from) + this.fluid.partitionRate * ctx.schedule.postProfile.factorAt(t) * (t - from);
      this.partitionFluidAt[p] = t;
    }
    const start = this.partitionFree[p] > logged ? this.partitionFree[p] : logged;
    this.partitionFree[p] = start + expansion;
    this.partitionBusy += expansion * stands;
    const ready = start + expansion;
    const fleet = this.isLarge(a) ? this.largePool! : this.pool;
    // on shared cores the worker's writes run slower when the machine is busy
    fleet.slowdown = this.machine.factor(ready);
    this.feedFluid(t);
    this.machine.addWork(created, expansion * stands);

    let lastDone = -1;
    let needsList = false;
    let pushed = false;
    const record = (done: number, followers: number) => {
      ctx.followerLag.record(done - created, followers);
      ctx.lagByMinute.record(createdMinute, done - created, followers);
      if (done > lastDone) lastDone = done;
    };

    if (pulledAuthor) {
      needsList = true;
    } else {
      // the followers the fan-out writes, in CSR order (a rate policy's pulled pairs get the list instead)
      const skipDormant = policy.skipDormant;
      const dormantDays = ctx.sc.policy.dormantDays;
      const perBatch = Math.max(1, Math.floor(infra.batchSize / workPerFollower));
      const whole = !infra.worker.splitPosts;
      // a follower without a timeline costs the worker its command but gets no write (the server's
      // script skips a missing timeline; it is rebuilt whole on the next read)
      const { cache } = ctx;
      const live = (u: number) => cache.exists[u] === 1 && cache.expiresAt[u] > t;
      let eligibleCount = 0;
      let liveCount = 0;
      if (whole) {
        for (let e = o0; e < o1; e++) {
          const u = g.followerIds[e];
          if (policy.kind === 'rate' && ctx.pairPulled(a, u)) continue;
          if (!ctx.eligible(u, t, post)) continue;
          eligibleCount++;
          if (live(u)) liveCount++;
        }
      }
      const wholeWrites = eligibleCount * workPerFollower;
      const wholeStart = whole && eligibleCount > 0 ? fleet.submitWhole(ready, wholeWrites, infra.worker.pipelines, liveCount * workPerFollower) : 0;
      let batchIndex = 0;
      let count = 0;
      let landed = 0;
      let batchStart = o0;
      let groupStart = -1;
      let groupEnd = 0;
      let groupFirst = 0;
      let groupDone = 0;
      const flush = () => {
        if (groupStart >= 0) ctx.q.push(groupDone, EV.WRITES_DONE, this.groups.add(a, groupStart, groupEnd, created, post));
        groupStart = -1;
      };
      const emit = (end: number) => {
        const done = whole ? fleet.batchDone(wholeStart, batchIndex++, wholeWrites, infra.worker.pipelines) : fleet.submit(ready, count * workPerFollower, landed * workPerFollower);
        pushed = true;
        ctx.count.deliveries += landed * perFollower;
        if (landed > 0) record(done, landed * perFollower);
        else if (done > lastDone) lastDone = done;
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
        landed = 0;
      };
      for (let e = o0; e < o1; e++) {
        const u = g.followerIds[e];
        if (policy.kind === 'rate' && ctx.pairPulled(a, u)) {
          // the list is for readers who read; a skipped dormant one needs neither push nor list
          if (!skipDormant || !isDormant(ctx.lastSeen[u], t, dormantDays)) needsList = true;
          continue;
        }
        if (!ctx.eligible(u, t, post)) continue;
        if (live(u)) landed++;
        if (++count === perBatch) emit(e + 1);
      }
      if (count > 0) emit(o1);
      flush();
    }

    if (pushed) count.pushedPosts += stands;
    if (needsList) {
      // the API adds the post to its author's recent list before answering (FeedService.createPost):
      // a pulled post is visible to all of its (pull) readers from then; the worker's own list add
      // finds it there (its work is on the fleet, and it is no timeline write)
      fleet.submit(ready, 1, 0);
      const done = t + accepted.done + costs.rtt;
      count.listWrites += stands;
      count.pulledPosts += stands;
      ctx.q.push(done, EV.LIST_DONE, a);
      if (done > lastDone) lastDone = done;
      if (policy.kind !== 'rate' && o1 > o0) {
        ctx.followerLag.record(done - created, (o1 - o0) * perFollower);
        ctx.lagByMinute.record(createdMinute, done - created, (o1 - o0) * perFollower);
      }
    }

    if (lastDone < 0) {
      count.postsWithoutAudience += stands;
      return;
    }
    ctx.postLag.record(lastDone - created, stands);
    const backlog = fleet.backlogWrites(t);
    if (backlog > count.peakBacklog) count.peakBacklog = backlog;
  }

  /** Timeline writes of one group of a post's batches landing. */
  applyWrites(i: number, now: number): void {
    const ctx = this.ctx;
    const { pop, policy, cache } = ctx;
    const g = pop.graph;
    const zadd = ctx.sc.infrastructure.costs.zadd;
    const groups = this.groups;
    const a = groups.author[i];
    const created = groups.created[i];
    const post = groups.post[i];
    const end = groups.end[i];
    for (let e = groups.start[i]; e < end; e++) {
      const u = g.followerIds[e];
      if (policy.kind === 'rate' && ctx.pairPulled(a, u)) continue;
      if (!ctx.eligible(u, now, post)) continue;
      cache.push(u, created, now);
      // at scale the Redis write load follows the fleet's throughput (see writesLoad); here only exact keys
      if (!ctx.spread || pop.individual[u]) ctx.shardLoad.add(pop.shard[u], zadd * ctx.weight[u], ctx.weight[u]);
    }
    groups.release(i);
  }

  /** A pulled post landing in its author's list. */
  listWritten(a: number): void {
    const ctx = this.ctx;
    ctx.cache.pushList(a);
    if (!ctx.spread || ctx.pop.individual[a]) ctx.shardLoad.add(ctx.pop.shard[a], ctx.sc.infrastructure.costs.zadd * ctx.weight[a], ctx.weight[a]);
  }
}
