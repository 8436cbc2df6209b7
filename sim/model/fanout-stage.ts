// The write path of the model: a post is accepted by the API, its event crosses the outbox relay
// and the event log (postToLog), and a worker reads the author's follower count and first page of
// followers (eventStatements, expand + expandPerFollower per follower) and writes its followers'
// timelines in pipelined batches. Two shapes of worker (worker.splitPosts):
//  - the documents' fan-out services (true): the event waits its turn on its author's partition
//    for the statements and the first page, and its batches are shared by the whole fleet
//    (WorkerPool, first come, first served);
//  - the reference worker (false): consumers of the event log that take events in batches, handle
//    several at once and write a whole post each (ConsumerFleet, consumers.ts); a post is deferred
//    to the moment the log has it, so that consumers take events in the log's order. Each stage
//    of an event is slower the longer its consumer was idle before it (idle-wake.ts).
// A pulled post is one write into its author's recent list. Fan-out lag counts from the post's
// commit, as the reference server's does. Each post's stages (its wait to be taken, statements,
// first page, writes, and a large post's writes per timeline) are recorded as the server's workers
// record theirs.
import { ADAPTIVE_RECHECK_SECONDS, nextAdaptiveThreshold } from '../../core/fanout-policy.js';
import { LARGE_POST_TIMELINES, LARGE_WRITES_PER_TIMELINES } from '../../core/fanout-worker.js';
import { authorPartition } from '../../core/partition.js';
import { isDormant } from '../../core/timeline-rules.js';
import { DurationRecorder } from '../metrics/recorder.js';
import { Rng } from '../../core/random.js';
import { constantValue, quantileAt } from '../scenario/quantiles.js';
import type { ApiStage } from './api-tier.js';
import { ConsumerFleet } from './consumers.js';
import { EV, minuteOf, type ModelContext } from './context.js';
import { expansionSeconds, firstPageSeconds } from './expansion.js';
import { FluidLoad } from './fluid-load.js';
import { firstPageAfterIdle, statementAfterIdle, writesWake } from './idle-wake.js';
import { LoggedPosts } from './logged-posts.js';
import type { SharedCores } from './machine.js';
import { WorkerPool } from './worker-pool.js';
import { WriteGroups } from './write-groups.js';

/** Batches of one post finishing within this many seconds of each other are applied by one event. */
const APPLY_RESOLUTION = 1;

/** A post event's stages as the worker spends them (the names of the server's worker metrics). */
export interface StageRecorders {
  /** The post's commit to its event in the log (the outbox relay and the log). */
  postToLog: DurationRecorder;
  /** The log having the event to a worker starting on it (its partition's or a consumer's wait). */
  pickup: DurationRecorder;
  statements: DurationRecorder;
  /** The first page of followers (pushed posts). */
  firstPage: DurationRecorder;
  /** The first page in hand to the last batch written (pushed posts). */
  writes: DurationRecorder;
  /** A large post's writes (LARGE_POST_TIMELINES or more) scaled to LARGE_WRITES_PER_TIMELINES of the timelines it wrote. */
  largeWritesPerThousand: DurationRecorder;
}

export class FanoutStage {
  /** The documents' fleet (worker.splitPosts: true); the reference worker's consumers otherwise. */
  readonly pool: WorkerPool | null;
  readonly largePool: WorkerPool | null;
  readonly consumers: ConsumerFleet | null;
  readonly largeConsumers: ConsumerFleet | null;
  readonly fluid: FluidLoad;
  readonly groups = new WriteGroups();
  readonly stages: StageRecorders = { postToLog: new DurationRecorder(), pickup: new DurationRecorder(), statements: new DurationRecorder(), firstPage: new DurationRecorder(), writes: new DurationRecorder(), largeWritesPerThousand: new DurationRecorder() };
  private readonly loggedPosts = new LoggedPosts();
  private readonly partitionFree: Float64Array;
  private readonly partitionFluidAt: Float64Array;
  partitionBusy = 0;
  private fluidClock = 0;
  private lastAdapt = -Infinity;
  private readonly hopRng: Rng;
  private readonly statementsRng: Rng;
  private readonly writesSpreadRng: Rng;
  private readonly pickupRng: Rng;

  constructor(
    private readonly ctx: ModelContext,
    private readonly api: ApiStage,
    private readonly machine: SharedCores,
  ) {
    const infra = ctx.sc.infrastructure;
    const { pop, policy } = ctx;
    const perBatch = infra.costs.rtt + infra.costs.batch;
    const large = infra.largePostClass;
    const ordinary = large ? infra.fanoutWorkers - large.workers : infra.fanoutWorkers;
    const { worker } = infra;
    if (worker.splitPosts) {
      this.pool = new WorkerPool(ordinary, infra.writesPerSecondPerWorker, perBatch, infra.batchSize, ctx.duration);
      this.largePool = large ? new WorkerPool(large.workers, infra.writesPerSecondPerWorker, perBatch, infra.batchSize, ctx.duration) : null;
      this.consumers = null;
      this.largeConsumers = null;
    } else {
      const fleet = (n: number) => new ConsumerFleet(n, infra.writesPerSecondPerWorker, perBatch, infra.batchSize, worker.pipelines, worker.eventConcurrency, ctx.duration, infra.costs.rtt);
      this.consumers = fleet(ordinary);
      this.largeConsumers = large ? fleet(large.workers) : null;
      this.pool = null;
      this.largePool = null;
    }
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
    this.statementsRng = Rng.derive(ctx.sc.seed, 'event-statements');
    this.writesSpreadRng = Rng.derive(ctx.sc.seed, 'writes-spread');
    this.pickupRng = Rng.derive(ctx.sc.seed, 'event-pickup');
  }

  private isLarge(a: number): boolean {
    const large = this.ctx.sc.infrastructure.largePostClass;
    return large !== null && this.ctx.pop.realFollowers[a] > large.followers;
  }

  /** The fleets writing ordinary and large posts (the second absent without a large-post class). */
  private fleets(): [WorkerPool | ConsumerFleet, WorkerPool | ConsumerFleet | null] {
    return this.consumers ? [this.consumers, this.largeConsumers] : [this.pool!, this.largePool];
  }

  /** A workerCrash at t: `workers` of the fleet (null: every one; the ordinary fleet's first) down until t + down. */
  crash(workers: number | null, t: number, down: number): void {
    let left = workers ?? Infinity;
    for (const fleet of this.fleets()) if (fleet && left > 0) left -= fleet.hold(left, t + down);
  }

  /** Fluid writes of the posts the probes stand for, fed up to t. */
  feedFluid(t: number): void {
    if (!this.ctx.spread || t <= this.fluidClock) return;
    const factor = this.ctx.schedule.postProfile.factorAt(t) * (t - this.fluidClock);
    const [ordinary, large] = this.fleets();
    ordinary.addFluid(t, this.fluid.fanout[0] * factor);
    if (large) large.addFluid(t, this.fluid.fanout[1] * factor);
    this.fluidClock = t;
  }

  backlogWrites(t: number): number {
    const [ordinary, large] = this.fleets();
    return ordinary.backlogWrites(t) + (large ? large.backlogWrites(t) : 0);
  }

  writesInSecond(sec: number): number {
    const [ordinary, large] = this.fleets();
    return ordinary.writesBySecond[sec] + (large ? large.writesBySecond[sec] : 0);
  }

  drainTime(): number {
    const [ordinary, large] = this.fleets();
    return Math.max(ordinary.drainTime(), large ? large.drainTime() : 0);
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
    const { pop, count, series } = ctx;
    const infra = ctx.sc.infrastructure;
    const post = count.postSeq++;
    const named = pop.individual[a] === 1;
    const stands = organic && !named ? ctx.scale : 1;
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
    const logged = created + quantileAt(infra.postToLog, this.hopRng.float());
    this.stages.postToLog.record(logged - created, stands);
    const visible = t + accepted.listed;
    this.feedFluid(t);

    if (this.consumers) {
      // the reference worker's consumers take events in the order the log has them
      ctx.q.push(logged, EV.LOGGED, this.loggedPosts.add(a, created, post, stands, visible));
      return;
    }
    // the event waits its turn on its author's partition, where the worker reads the author's
    // follower count and first page of followers; at scale the other posts a probe stands for keep
    // every partition busy as a fluid
    const pulledAuthor = this.pulledAuthor(a);
    const statements = this.drawStatements();
    const expansion = expansionSeconds(infra.costs, statements, this.firstPage(a, pulledAuthor), pulledAuthor);
    const p = authorPartition(a, infra.partitions);
    if (ctx.spread && t > this.partitionFluidAt[p]) {
      const from = this.partitionFluidAt[p];
      this.partitionFree[p] = Math.max(this.partitionFree[p], from) + this.fluid.partitionRate * ctx.schedule.postProfile.factorAt(t) * (t - from);
      this.partitionFluidAt[p] = t;
    }
    const start = this.partitionFree[p] > logged ? this.partitionFree[p] : logged;
    this.partitionFree[p] = start + expansion;
    const fleet = this.isLarge(a) ? this.largePool! : this.pool!;
    // on shared cores the worker's writes run slower when the machine is busy
    fleet.slowdown = this.machine.factor(start + expansion) * this.drawWritesSpread();
    this.handle(a, post, created, stands, visible, t, logged, start, statements, expansion, fleet, -1);
  }

  /** A post event the log took at `now`, handled by the reference worker's consumers. */
  logged(i: number, now: number): void {
    const lp = this.loggedPosts;
    const a = lp.author[i];
    const created = lp.created[i];
    const post = lp.post[i];
    const stands = lp.stands[i];
    const visible = lp.visible[i];
    lp.release(i);
    const pulledAuthor = this.pulledAuthor(a);
    const fleet = this.isLarge(a) ? this.largeConsumers! : this.consumers!;
    const costs = this.ctx.sc.infrastructure.costs;
    const { consumer, lane, start } = fleet.take(now, quantileAt(costs.pickup, this.pickupRng.float()));
    // each stage of the event is slower the longer its consumer was idle before it, by its own curve
    const idle = fleet.idleBefore(consumer, start);
    const statements = statementAfterIdle(costs, this.drawStatements(), idle);
    const expansion = statements + (pulledAuthor ? 0 : firstPageAfterIdle(costs, firstPageSeconds(costs, this.firstPage(a, pulledAuthor)), idle));
    fleet.slowdown = this.machine.factor(start + expansion) * this.drawWritesSpread();
    fleet.wakeSeconds = writesWake(costs, idle);
    const workerDone = this.handle(a, post, created, stands, visible, now, now, start, statements, expansion, fleet, consumer);
    fleet.finish(consumer, lane, workerDone);
  }

  /** How far this post's writes fall from the line: a draw of costs.eventWritesSpread (none drawn when every post is on it). */
  private drawWritesSpread(): number {
    const d = this.ctx.sc.infrastructure.costs.eventWritesSpread;
    return constantValue(d) ?? quantileAt(d, this.writesSpreadRng.float());
  }

  /** This event's statements: a draw of costs.eventStatements. */
  private drawStatements(): number {
    return quantileAt(this.ctx.sc.infrastructure.costs.eventStatements, this.statementsRng.float());
  }

  private pulledAuthor(a: number): boolean {
    return this.ctx.policy.kind !== 'rate' && this.ctx.authorPulled(a);
  }

  /** Followers on the first page the worker reads for a post of `a` (none when pulled). */
  private firstPage(a: number, pulledAuthor: boolean): number {
    const g = this.ctx.pop.graph;
    return pulledAuthor ? 0 : Math.min(g.followerOffsets[a + 1] - g.followerOffsets[a], this.ctx.sc.infrastructure.worker.followerPage);
  }

  /**
   * The worker's part of a post: taken off the log (or its partition) at `start` after the log had
   * it at `logged`, its statements and first page done `expansion` later, then its writes on
   * `fleet` (the pool, or consumer `consumer` of the consumer fleet); `statements` of the expansion
   * are its statements. `now` is when the event is
   * handled (who is dormant, whose timeline exists). Returns when the worker is done with it.
   */
  private handle(
    a: number, post: number, created: number, stands: number, visible: number, now: number,
    logged: number, start: number, statements: number, expansion: number, fleet: WorkerPool | ConsumerFleet, consumer: number,
  ): number {
    const ctx = this.ctx;
    const { pop, policy, count } = ctx;
    const g = pop.graph;
    const infra = ctx.sc.infrastructure;
    const costs = infra.costs;
    const named = pop.individual[a] === 1;
    const perFollower = named ? ctx.scale : stands;
    const workPerFollower = named ? ctx.scale : 1;
    const createdMinute = minuteOf(ctx, created);
    const o0 = g.followerOffsets[a];
    const o1 = g.followerOffsets[a + 1];
    const pulledAuthor = this.pulledAuthor(a);
    const ready = start + expansion;
    this.partitionBusy += expansion * stands;
    this.machine.addWork(created, expansion * stands);
    const stages = this.stages;
    stages.pickup.record(start - logged, stands);
    stages.statements.record(statements, stands);
    if (!pulledAuthor) stages.firstPage.record(expansion - statements, stands);

    let lastDone = -1;
    let workerDone = ready;
    let needsList = false;
    let pushed = false;
    const record = (done: number, followers: number) => {
      ctx.followerLag.record(done - created, followers);
      ctx.lagByMinute.record(createdMinute, done - created, followers);
      if (done > lastDone) lastDone = done;
    };

    if (pulledAuthor) {
      needsList = true;
      // after its statement the worker adds the post to the list and marks the author: a round trip
      workerDone = ready + costs.rtt;
    } else {
      // the followers the fan-out writes, in CSR order (a rate policy's pulled pairs get the list instead)
      const skipDormant = policy.skipDormant;
      const dormantDays = ctx.sc.policy.dormantDays;
      const perBatch = Math.max(1, Math.floor(infra.batchSize / workPerFollower));
      const consumers = fleet instanceof ConsumerFleet ? fleet : null;
      const pool = fleet instanceof WorkerPool ? fleet : null;
      const whole = consumers !== null || !infra.worker.splitPosts;
      // a follower without a timeline costs the worker its command but gets no write (the server's
      // script skips a missing timeline; it is rebuilt whole on the next read)
      const { cache } = ctx;
      const live = (u: number) => cache.exists[u] === 1 && cache.expiresAt[u] > now;
      let eligibleCount = 0;
      let liveCount = 0;
      if (whole) {
        for (let e = o0; e < o1; e++) {
          const u = g.followerIds[e];
          if (policy.kind === 'rate' && ctx.pairPulled(a, u)) continue;
          if (!ctx.eligible(u, now, post)) continue;
          eligibleCount++;
          if (live(u)) liveCount++;
        }
      }
      const wholeWrites = eligibleCount * workPerFollower;
      const pipelines = infra.worker.pipelines;
      let wholeStart = 0;
      if (whole && eligibleCount > 0) {
        wholeStart = consumers ? consumers.write(consumer, ready, wholeWrites, liveCount * workPerFollower) : pool!.submitWhole(ready, wholeWrites, pipelines, liveCount * workPerFollower);
      }
      let batchIndex = 0;
      let batched = 0;
      let landed = 0;
      let landedAll = 0;
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
        const done = consumers
          ? consumers.batchDone(wholeStart, batchIndex++, wholeWrites)
          : whole
            ? pool!.batchDone(wholeStart, batchIndex++, wholeWrites, pipelines)
            : pool!.submit(ready, batched * workPerFollower, landed * workPerFollower);
        pushed = true;
        if (done > workerDone) workerDone = done;
        count.deliveries += landed * perFollower;
        landedAll += landed;
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
        batched = 0;
        landed = 0;
      };
      for (let e = o0; e < o1; e++) {
        const u = g.followerIds[e];
        if (policy.kind === 'rate' && ctx.pairPulled(a, u)) {
          // the list is for readers who read; a skipped dormant one needs neither push nor list
          if (!skipDormant || !isDormant(ctx.lastSeen[u], now, dormantDays)) needsList = true;
          continue;
        }
        if (!ctx.eligible(u, now, post)) continue;
        if (live(u)) landed++;
        if (++batched === perBatch) emit(e + 1);
      }
      if (batched > 0) emit(o1);
      flush();
      if (pushed) stages.writes.record(workerDone - ready, stands);
      // the timelines written (a missing one costs its command and is not one), as the worker counts them
      const wrote = landedAll * workPerFollower;
      if (pushed && wrote >= LARGE_POST_TIMELINES) stages.largeWritesPerThousand.record(((workerDone - ready) * LARGE_WRITES_PER_TIMELINES) / wrote, stands);
    }

    if (pushed) count.pushedPosts += stands;
    if (needsList) {
      // the API adds the post to its author's recent list before answering (FeedService.createPost):
      // a pulled post is visible to all of its (pull) readers from then; the worker's own list add
      // finds it there (its work is on the pool; a consumer's is in its statements), and it is no
      // timeline write
      if (fleet instanceof WorkerPool) fleet.submit(ready, 1, 0);
      const done = visible;
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
      return workerDone;
    }
    ctx.postLag.record(lastDone - created, stands);
    const backlog = fleet.backlogWrites(now);
    if (backlog > count.peakBacklog) count.peakBacklog = backlog;
    return workerDone;
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
      if (!ctx.spread || pop.individual[u]) ctx.shardLoad.add(pop.shard[u], zadd * ctx.weight[u], ctx.weight[u], true);
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
