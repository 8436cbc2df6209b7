// The versioned result document that estimate, simulate and replay all write, so a report can put
// them side by side. `feedlab run --json` prints it; reports render it.
import type { SimulationMetrics, FiredEvent } from './model/metrics.js';
import type { DurationSummary } from './metrics/recorder.js';
import type { Scenario } from './scenario/types.js';
import { documentProvenance, type DocumentProvenance } from './scenario/calibration.js';
import { sloVerdict, type SloVerdict } from './slo.js';
import { maxOf } from './metrics/series.js';
import type { FollowerDistribution } from './graph/follower-distribution.js';
import type { ReplaySection } from './replay/result.js';

export const RESULT_SCHEMA = 'feedlab.result/1';
export const FEEDLAB_VERSION = '0.1.0';

export type LatencySummary = Omit<DurationSummary, 'count'>;

/**
 * The stages of a post event, in the order a post goes through them, then a large post's writes
 * per timeline (core/fanout-worker.ts LARGE_POST_TIMELINES: where the per-follower tail is made).
 */
export const STAGE_IDS = ['postToLog', 'pickup', 'statements', 'firstPage', 'writes', 'largeWritesPerTimeline'] as const;
export type StageId = (typeof STAGE_IDS)[number];

export interface RunResult {
  schema: typeof RESULT_SCHEMA;
  tool: { name: 'feedlab'; version: string; mode: 'simulate' | 'replay' };
  /** What the figures are: simulated by the model, or measured on the live stack (`feedlab replay`). */
  source: 'simulate' | 'replay';
  scenario: {
    name: string;
    description: string;
    seed: number;
    durationSeconds: number;
    population: number;
    sampledUsers: number;
    sampledEdges: number;
    scale: number;
    graph: Record<string, string | number>;
    /** The calibration file the infrastructure's measured costs came from (absent: none). */
    calibration?: DocumentProvenance;
  };
  policy: string;
  /** Present only when the run was stopped early: every figure covers the first stoppedAtSeconds simulated. */
  partial?: { stoppedAtSeconds: number };
  summary: {
    posts: { total: number; perSecond: { mean: number; peak: number }; pushed: number; pulled: number; withoutAudience: number };
    fanout: {
      lagSeconds: LatencySummary;
      followerLagSeconds: LatencySummary;
      writesPerSecond: { mean: number; peak: number };
      deliveries: number;
      deliveriesPerPost: number;
      listWrites: number;
      /**
       * Timeline writes queued for the fleet: the peak (at any post), at the end, when the last queued
       * write finished, and `drainSeconds`, the backlog's drain time (see backlogDrainSeconds): the
       * longest stretch it stayed above one second of the fleet's rated work.
       */
      backlog: { peakWrites: number; endWrites: number; drainedAtSeconds: number; drainSeconds: number };
      workerUtilisation: number;
      partitionUtilisation: number;
      adaptive: { thresholdChanges: number; minThreshold: number } | null;
      /**
       * A post event's stages, per post: its commit to the event log (postToLog), the log to a worker
       * starting on it (pickup), the worker's statements, its first follower page and its timeline
       * writes (pushed posts), and a large post's writes per timeline it wrote. A replay's come from
       * the workers' own histograms; absent from older documents (the large posts' from some more).
       */
      stagesSeconds?: Record<Exclude<StageId, 'largeWritesPerTimeline'>, LatencySummary> & { largeWritesPerTimeline?: LatencySummary };
    };
    redis: {
      memoryBytes: { peak: number; end: number };
      naiveMemoryBytes: { peak: number; end: number };
      naiveUnderestimate: number;
      listBytes: number;
      timelines: number;
      perShard: { endBytes: number[]; imbalance: number };
      peakShardUtilisation: number;
      /** Shards that had more work than a second per second at some point: their queues grew without bound. */
      saturatedShards: number;
      /**
       * A simulation's timelines, pulled lists and readers' own lists at the end as a replay counts its keys (MEMORY
       * USAGE and the keyspace entry), beside memoryBytes' used_memory terms; absent from a replay.
       * `keyPrefix`: the key names were counted under it (the replay's scratch prefix, in a compare).
       */
      usageBytes?: { timelines: number; lists: number; ownLists: number; keyPrefix?: string };
    };
    reads: {
      total: number;
      perSecond: { mean: number };
      latencyMs: LatencySummary;
      /**
       * Redis commands per feed page: over every page (`mean`; what Redis serves per read), and over
       * sessions' first pages only (`firstPages`: a reader once a session, as a replay measures it;
       * readers who follow more page further, and a session's cold read is its first page).
       */
      redisOpsPerRead: { mean: number; firstPages?: number };
      coldShare: number;
      coldReads: number;
      listRebuilds: number;
      rebuilds: number;
      postgresUtilisation: number;
    };
    /** The API tier (a simulation with one): processes, cores, their utilisation and CPU in cores (absent from replays and older documents). */
    api?: { instances: number; servers: number; utilisation: number; cpuCores: number } | null;
    slo: SloVerdict;
  };
  events: FiredEvent[];
  series: {
    intervalSeconds: number;
    startSeconds: number[];
    postsPerSecond: number[];
    writesPerSecond: number[];
    readsPerSecond: number[];
    coldReadsPerSecond: number[];
    backlogWrites: number[];
    lagP99Seconds: number[];
    readP99Ms: number[];
    memoryBytes: number[];
    naiveMemoryBytes: number[];
    maxShardBytes: number[];
    threshold: number[] | null;
  };
  histograms: { postLagMicros: string; readLatencyMicros: string };
  /** The sampled graph's follower counts in log bins, with the fitted power-law tail (null when not computed). */
  followers: FollowerDistribution | null;
  /** A replay's own figures: the mapping, what was offered and sent, every measurement's source (source: replay only). */
  replay?: ReplaySection;
}

const latency = (d: DurationSummary, factor = 1): LatencySummary => ({
  mean: d.mean * factor,
  p50: d.p50 * factor,
  p90: d.p90 * factor,
  p99: d.p99 * factor,
  p999: d.p999 * factor,
  max: d.max * factor,
});

/**
 * The backlog's drain time: the longest stretch during which the fan-out backlog stayed above
 * `floorWrites` (one second of the fleet's rated work, fanoutWorkers x writesPerSecondPerWorker:
 * less is work in flight, not a queue anyone waits on), as the series sees it. The backlog is
 * sampled at the end of every interval (a simulated minute); a stretch runs from the start of the
 * first interval whose sample is above the floor to the end of the last one, so it is known to
 * within an interval either way and a backlog that forms and drains between two samples counts 0.
 * A stretch still above the floor when the run ends lasts until the last queued write finishes
 * (`drainedAtSeconds`, exact). 0 when no sample is above the floor.
 */
export function backlogDrainSeconds(backlogWrites: readonly number[], intervalSeconds: number, ranSeconds: number, drainedAtSeconds: number, floorWrites: number): number {
  let longest = 0;
  let start = -1;
  for (let i = 0; i <= backlogWrites.length; i++) {
    const above = i < backlogWrites.length && backlogWrites[i] > floorWrites;
    if (above && start < 0) start = i * intervalSeconds;
    if (!above && start >= 0) {
      const end = i === backlogWrites.length ? Math.max(ranSeconds, drainedAtSeconds) : Math.min(i * intervalSeconds, ranSeconds);
      longest = Math.max(longest, end - start);
      start = -1;
    }
  }
  return longest;
}

export function buildResult(scenario: Scenario, graphInfo: { users: number; edges: number; provenance: Record<string, string | number>; followers?: FollowerDistribution }, m: SimulationMetrics): RunResult {
  const iv = m.series.intervalSeconds;
  const perSecond = (xs: number[]) => xs.map((x, i) => x / Math.min(iv, m.duration - i * iv));
  const postsPerSecond = perSecond(m.series.posts);
  const infra = scenario.infrastructure;
  const drainSeconds = backlogDrainSeconds(m.series.backlogWrites, iv, m.duration, m.fanout.drainedAt, infra.fanoutWorkers * infra.writesPerSecondPerWorker);
  const doc: Omit<RunResult, 'summary'> & { summary: Omit<RunResult['summary'], 'slo'> & { slo?: SloVerdict } } = {
    schema: RESULT_SCHEMA,
    tool: { name: 'feedlab', version: FEEDLAB_VERSION, mode: 'simulate' },
    source: 'simulate',
    scenario: {
      name: scenario.name,
      description: scenario.description,
      seed: scenario.seed,
      durationSeconds: scenario.duration,
      population: graphInfo.users * m.scale,
      sampledUsers: graphInfo.users,
      sampledEdges: graphInfo.edges,
      scale: m.scale,
      graph: graphInfo.provenance,
      ...(scenario.calibration ? { calibration: documentProvenance(scenario.calibration) } : {}),
    },
    policy: m.policy,
    ...(m.stoppedAt === undefined ? {} : { partial: { stoppedAtSeconds: m.stoppedAt } }),
    summary: {
      posts: {
        total: m.posts.total,
        perSecond: { mean: m.posts.perSecondMean, peak: maxOf(postsPerSecond) },
        pushed: m.posts.pushed,
        pulled: m.posts.pulled,
        withoutAudience: m.posts.withoutAudience,
      },
      fanout: {
        lagSeconds: latency(m.fanout.postLag),
        followerLagSeconds: latency(m.fanout.followerLag),
        writesPerSecond: { mean: m.fanout.writesPerSecondMean, peak: m.fanout.writesPerSecondPeak },
        deliveries: m.fanout.deliveries,
        deliveriesPerPost: m.posts.total > 0 ? m.fanout.deliveries / m.posts.total : 0,
        listWrites: m.fanout.listWrites,
        backlog: { peakWrites: m.fanout.peakBacklogWrites, endWrites: m.fanout.backlogAtEndWrites, drainedAtSeconds: m.fanout.drainedAt, drainSeconds },
        workerUtilisation: m.fanout.workerUtilisation,
        partitionUtilisation: m.fanout.partitionUtilisation,
        adaptive: m.policy.startsWith('adaptive') ? { thresholdChanges: m.fanout.thresholdChanges, minThreshold: m.fanout.minThreshold } : null,
        stagesSeconds: Object.fromEntries(STAGE_IDS.map((id) => [id, latency(m.fanout.stages[id])])) as Record<StageId, LatencySummary>,
      },
      redis: {
        memoryBytes: { peak: m.redis.peakBytes, end: m.redis.endBytes },
        naiveMemoryBytes: { peak: m.redis.naivePeakBytes, end: m.redis.naiveEndBytes },
        naiveUnderestimate: m.redis.naiveEndBytes > 0 ? (m.redis.endBytes - m.redis.listBytes) / m.redis.naiveEndBytes : 0,
        listBytes: m.redis.listBytes,
        timelines: m.redis.timelinesEnd,
        perShard: { endBytes: m.redis.shardBytesEnd, imbalance: m.redis.shardImbalance },
        peakShardUtilisation: m.redis.peakShardUtilisation,
        saturatedShards: m.redis.saturatedShards,
        usageBytes: m.redis.usageEnd,
      },
      reads: {
        total: m.reads.total,
        perSecond: { mean: m.reads.total / m.duration },
        latencyMs: latency(m.reads.latency, 1000),
        redisOpsPerRead: { mean: m.reads.redisOpsPerRead, firstPages: m.reads.redisOpsPerFirstPage },
        coldShare: m.reads.coldShare,
        coldReads: m.reads.coldReads,
        listRebuilds: m.reads.listRebuilds,
        rebuilds: m.reads.rebuilds,
        postgresUtilisation: m.reads.postgresUtilisation,
      },
      api: m.api,
    },
    events: m.events,
    series: {
      intervalSeconds: iv,
      startSeconds: m.series.posts.map((_, i) => i * iv),
      postsPerSecond,
      writesPerSecond: perSecond(m.series.writes),
      readsPerSecond: perSecond(m.series.reads),
      coldReadsPerSecond: perSecond(m.series.coldReads),
      backlogWrites: m.series.backlogWrites,
      lagP99Seconds: m.series.lagP99,
      readP99Ms: m.series.readP99.map((x) => x * 1000),
      memoryBytes: m.series.memoryBytes,
      naiveMemoryBytes: m.series.naiveMemoryBytes,
      maxShardBytes: m.series.maxShardBytes,
      threshold: m.series.threshold,
    },
    histograms: { postLagMicros: m.fanout.postLagHistogram, readLatencyMicros: m.reads.latencyHistogram },
    followers: graphInfo.followers ?? null,
  };
  // the verdict is the summary's last key, checked on the figures above (the objectives and any thresholds)
  doc.summary.slo = sloVerdict(scenario, doc);
  return doc as RunResult;
}

/** JSON with numbers cut to 6 significant digits: stable, byte-identical for the same run, and readable. */
export function stringifyResult(doc: unknown): string {
  return JSON.stringify(
    doc,
    (_k, v) => {
      if (typeof v !== 'number') return v;
      if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : v < 0 ? '-Infinity' : null;
      if (Number.isInteger(v)) return v;
      return Number(v.toPrecision(6));
    },
    2,
  );
}
