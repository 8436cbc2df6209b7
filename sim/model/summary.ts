// What a simulation measured, once its loop has ended (or was stopped at `ran` seconds): the
// figures every result document carries, from the shared context and the stages.
import { formatPolicy } from '../../core/fanout-policy.js';
import { maxOf } from '../metrics/series.js';
import { perTimeline } from '../metrics/recorder.js';
import type { ApiStage } from './api-tier.js';
import type { ModelContext } from './context.js';
import { SERIES_INTERVAL } from './context.js';
import type { FanoutStage } from './fanout-stage.js';
import type { SharedCores } from './machine.js';
import type { SimulationMetrics } from './metrics.js';
import type { ReadStage } from './read-stage.js';

export function summarize(ctx: ModelContext, fanout: FanoutStage, reads: ReadStage, api: ApiStage, machine: SharedCores, stoppedAt: number | undefined, eventsProcessed: number): SimulationMetrics {
  const { count, series, cache, policy } = ctx;
  const infra = ctx.sc.infrastructure;
  // a stopped run is reported for what was simulated: its first `ran` seconds, `ranMinutes` minutes
  const ran = stoppedAt ?? ctx.duration;
  const ranMinutes = stoppedAt === undefined ? ctx.minutes : Math.ceil(ran / SERIES_INTERVAL);
  const upTo = (xs: Float64Array) => Array.from(xs.subarray(0, ranMinutes));
  const lagSeries = Array.from({ length: ranMinutes }, (_, m) => ctx.lagByMinute.percentile(m, 99));
  const readSeries = Array.from({ length: ranMinutes }, (_, m) => ctx.readByMinute.percentile(m, 99));
  fanout.feedFluid(ran);
  let peakWrites = 0;
  let totalWritesInRun = 0;
  for (let i = 0; i < ran; i++) {
    const w = fanout.writesInSecond(i);
    totalWritesInRun += w;
    series.writes[Math.min(ranMinutes - 1, Math.floor(i / SERIES_INTERVAL))] += w;
    if (w > peakWrites) peakWrites = w;
  }
  const shardEnd = Array.from({ length: ctx.shards }, (_, i) => cache.shardBytes(i));
  const meanShard = shardEnd.reduce((x, y) => x + y, 0) / ctx.shards;
  const adaptive = policy.kind === 'adaptive';

  return {
    policy: formatPolicy(policy),
    scale: ctx.scale,
    duration: ran,
    ...(stoppedAt === undefined ? {} : { stoppedAt }),
    events: stoppedAt === undefined ? ctx.fired : ctx.fired.filter((e) => e.at <= ran),
    eventsProcessed,
    posts: { total: count.postsReal, pushed: count.pushedPosts, pulled: count.pulledPosts, withoutAudience: count.postsWithoutAudience, perSecondMean: count.postsReal / ran },
    fanout: {
      postLag: ctx.postLag.summary(),
      followerLag: ctx.followerLag.summary(),
      postLagHistogram: ctx.postLag.encoded(),
      deliveries: count.deliveries,
      listWrites: count.listWrites,
      writesPerSecondMean: totalWritesInRun / ran,
      writesPerSecondPeak: peakWrites,
      peakBacklogWrites: count.peakBacklog,
      backlogAtEndWrites: fanout.backlogWrites(ran),
      drainedAt: fanout.drainTime(),
      workerUtilisation: totalWritesInRun / (infra.fanoutWorkers * infra.writesPerSecondPerWorker * ran),
      partitionUtilisation: fanout.partitionBusy / (infra.partitions * ran),
      thresholdChanges: count.thresholdChanges,
      minThreshold: count.minThresholdSeen,
      stages: {
        postToLog: fanout.stages.postToLog.summary(),
        pickup: fanout.stages.pickup.summary(),
        statements: fanout.stages.statements.summary(),
        firstPage: fanout.stages.firstPage.summary(),
        writes: fanout.stages.writes.summary(),
        largeWritesPerTimeline: perTimeline(fanout.stages.largeWritesPerThousand.summary()),
      },
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
      peakShardUtilisation: ctx.shardLoad.peakRho,
      saturatedShards: ctx.shardLoad.saturated.reduce((x, y) => x + y, 0),
      saturatedShardSeconds: ctx.shardLoad.saturatedSeconds,
      usageEnd: { ...cache.usageBytes(ctx.keyPrefix), ...(ctx.keyPrefix ? { keyPrefix: ctx.keyPrefix } : {}) },
    },
    reads: {
      total: count.readsReal,
      latency: ctx.readLatency.summary(),
      latencyHistogram: ctx.readLatency.encoded(),
      redisOpsPerRead: count.readsReal > 0 ? count.readOps / count.readsReal : 0,
      redisOpsPerFirstPage: count.firstPages > 0 ? count.firstPageOps / count.firstPages : 0,
      coldReads: count.coldReads,
      coldShare: count.readsReal > 0 ? count.coldReads / count.readsReal : 0,
      rebuildEntries: count.rebuildEntries,
      listRebuilds: count.listRebuilds,
      rebuilds: count.rebuilds,
      postgresUtilisation: reads.postgres.busySeconds / (infra.postgresConnections * ran),
    },
    api: api.spec ? { instances: api.instances, servers: api.servers, utilisation: api.utilisation(ran), cpuCores: api.cpuCores(ran) } : null,
    sharedCores: machine.cores === null ? null : { cores: machine.cores, peakUtilisation: machine.peakUtilisation },
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
