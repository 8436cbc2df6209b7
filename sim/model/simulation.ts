// The discrete-event model of a feed system: posts arrive, fan out through event-log partitions and
// a worker fleet into timeline caches (or into their authors' recent-post lists when pulled), and
// readers page through home feeds that merge both. One event per post and per read session; a
// post's followers are a tight loop over the CSR arrays, never an event each. The stages live
// beside this loop: fanout-stage.ts (the write path), read-stage.ts (the read path), api-tier.ts,
// machine.ts (shared cores); context.ts holds what they share and summary.ts what they measured.
import type { FanoutPolicy } from '../../core/fanout-policy.js';
import type { Scenario } from '../scenario/types.js';
import type { Arrivals } from '../workload/time-scaled.js';
import { ApiStage } from './api-tier.js';
import { buildContext, EV, SERIES_INTERVAL } from './context.js';
import { FanoutStage } from './fanout-stage.js';
import { SharedCores } from './machine.js';
import type { FiredEvent, SimulationMetrics } from './metrics.js';
import type { Population } from './population.js';
import { ReadStage } from './read-stage.js';
import { summarize } from './summary.js';

export { SERIES_INTERVAL };
const SWEEP_INTERVAL = 600;

export interface SimulationInput {
  scenario: Scenario;
  population: Population;
  policy: FanoutPolicy;
  /** The arrivals (made from the scenario and population when absent): posts, sessions, events. */
  schedule?: Arrivals;
  onProgress?: (fraction: number, detail: string) => void;
  /** Called after each simulated minute is recorded (for a live view); costs nothing when absent. */
  onMinute?: (snapshot: MinuteSnapshot) => void;
  /**
   * Asked at the end of each simulated minute with the simulated seconds so far: true ends the run
   * there, and the metrics cover what was simulated.
   */
  shouldStop?: (atSeconds: number) => boolean;
  /**
   * The key space the server being mirrored wrote under (a replay's scratch prefix): the memory
   * by key class is counted under the same key names, as MEMORY USAGE counts them there.
   */
  keyPrefix?: string;
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
  const ctx = buildContext(sc, pop, policy, input.schedule, input.keyPrefix);
  const { q, cache, series, duration, minutes, shardLoad } = ctx;
  const machine = new SharedCores(sc.infrastructure.cores, duration);
  const api = new ApiStage(ctx, machine);
  const fanout = new FanoutStage(ctx, api, machine);
  const reads = new ReadStage(ctx, api);
  const costs = sc.infrastructure.costs;
  const posts = ctx.schedule.posts();
  const sessions = ctx.schedule.sessions();
  const { readProfile } = ctx.schedule;
  const fluid = fanout.fluid;

  // ---- scenario events: bursts and storm returns arrive in the two streams
  for (const loss of ctx.schedule.cacheLosses) q.push(loss.at, EV.CACHE_LOSS, loss.shards);
  ctx.schedule.workerCrashes.forEach((c, i) => q.push(c.at, EV.WORKER_CRASH, i));
  if (posts.next()) q.push(posts.at, EV.POST);
  if (sessions.next()) q.push(sessions.at, EV.SESSION);
  q.push(Math.min(SERIES_INTERVAL, duration), EV.TICK, 0);
  q.push(SWEEP_INTERVAL, EV.SWEEP);

  // a live view's minute: the writes of seconds before t are final once the fluid is fed up to t
  const minuteSnapshot = (m: number, t: number): MinuteSnapshot => {
    const from = m * SERIES_INTERVAL;
    const to = Math.min(from + SERIES_INTERVAL, duration);
    let writes = 0;
    for (let sec = from; sec < to; sec++) writes += fanout.writesInSecond(sec);
    const span = Math.max(1e-9, to - from);
    return {
      minute: m,
      atSeconds: t,
      durationSeconds: duration,
      postsPerSecond: series.posts[m] / span,
      writesPerSecond: writes / span,
      readsPerSecond: series.reads[m] / span,
      backlogWrites: series.backlogWrites[m],
      lagP99Seconds: ctx.lagByMinute.percentile(m, 99),
      readP99Ms: ctx.readByMinute.percentile(m, 99) * 1000,
      memoryBytes: series.memoryBytes[m],
      soFar: { followerLagP99Seconds: ctx.followerLag.percentile(99), readP99Ms: ctx.readLatency.percentile(99) * 1000, peakMemoryBytes: cache.peakBytes },
      events: ctx.fired.filter((e) => e.at <= t),
    };
  };
  let stoppedAt: number | undefined;
  let eventsProcessed = 0;
  let shardSecond = 0;
  simulation: while (q.pop()) {
    const t = q.now;
    if (t > duration) break;
    if (Math.floor(t) > shardSecond) {
      for (let sec = shardSecond; sec < Math.floor(t); sec++) {
        const w = fanout.writesInSecond(sec);
        machine.addWork(sec, w / sc.infrastructure.writesPerSecondPerWorker);
        if (ctx.spread) {
          const f = readProfile.factorAt(sec + 0.5);
          shardLoad.addSpread(fluid.readSpread * f, fluid.readOps * f, w * costs.zadd);
          for (let i = 0; i < ctx.shards; i++) if (fluid.readShard[i] > 0) shardLoad.add(i, fluid.readShard[i] * f, fluid.readShardOps[i] * f);
        }
        shardLoad.advance(sec + 1);
      }
      shardSecond = Math.floor(t);
    }
    eventsProcessed++;
    switch (q.kind) {
      case EV.POST:
        fanout.post(posts.author, t, posts.organic);
        if (posts.next() && posts.at <= duration) q.push(posts.at, EV.POST);
        break;
      case EV.LOGGED:
        fanout.logged(q.a, t);
        break;
      case EV.WRITES_DONE:
        fanout.applyWrites(q.a, t);
        break;
      case EV.LIST_DONE:
        fanout.listWritten(q.a);
        break;
      case EV.SESSION:
        reads.session(sessions.user, t, sessions.pages);
        if (sessions.next() && sessions.at <= duration) q.push(sessions.at, EV.SESSION);
        break;
      case EV.PAGE:
        reads.nextPage(q.a, t);
        break;
      case EV.CACHE_LOSS: {
        const lost = q.a;
        cache.loseShards((sh) => sh < lost);
        break;
      }
      case EV.WORKER_CRASH: {
        const c = ctx.schedule.workerCrashes[q.a];
        fanout.feedFluid(t);
        fanout.crash(c.workers, t, c.down);
        break;
      }
      case EV.TICK: {
        const m = q.a;
        fanout.feedFluid(t);
        series.memoryBytes[m] = cache.bytes;
        series.naiveMemoryBytes[m] = cache.naiveBytes;
        series.backlogWrites[m] = fanout.backlogWrites(t);
        series.threshold[m] = ctx.threshold;
        let mx = 0;
        for (let i = 0; i < ctx.shards; i++) if (cache.shardBytes(i) > mx) mx = cache.shardBytes(i);
        series.maxShardBytes[m] = mx;
        if (m + 1 < minutes) q.push(Math.min((m + 2) * SERIES_INTERVAL, duration), EV.TICK, m + 1);
        input.onProgress?.(t / duration, `${Math.round(t / 60)}/${Math.round(duration / 60)} simulated min`);
        if (input.onMinute) input.onMinute(minuteSnapshot(m, t));
        if (input.shouldStop && t < duration && input.shouldStop(t)) {
          stoppedAt = t;
          break simulation;
        }
        break;
      }
      case EV.SWEEP:
        cache.sweepExpired(t);
        if (t + SWEEP_INTERVAL <= duration) q.push(t + SWEEP_INTERVAL, EV.SWEEP);
        break;
    }
  }
  return summarize(ctx, fanout, reads, api, machine, stoppedAt, eventsProcessed);
}
