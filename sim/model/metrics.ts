// What one simulation measures, before it becomes a result document.
import type { DurationSummary } from '../metrics/recorder.js';
import type { StageId } from '../result.js';

export interface FiredEvent {
  at: number;
  kind: string;
  detail: string;
}

export interface SimulationMetrics {
  policy: string;
  scale: number;
  /** Simulated seconds: the scenario's duration, or where the run was stopped. */
  duration: number;
  /** Set when the run was stopped early (shouldStop): the simulated time it stopped at. */
  stoppedAt?: number;
  events: FiredEvent[];
  eventsProcessed: number;
  posts: { total: number; pushed: number; pulled: number; withoutAudience: number; perSecondMean: number };
  fanout: {
    /** Post creation to its last follower's timeline written (or to its list write when pulled). */
    postLag: DurationSummary;
    /** The wait each follower sees, weighted by deliveries. */
    followerLag: DurationSummary;
    postLagHistogram: string;
    deliveries: number;
    listWrites: number;
    writesPerSecondMean: number;
    writesPerSecondPeak: number;
    peakBacklogWrites: number;
    backlogAtEndWrites: number;
    drainedAt: number;
    workerUtilisation: number;
    partitionUtilisation: number;
    thresholdChanges: number;
    minThreshold: number;
    /** A post event's stages, per post (see RunResult's stagesSeconds). */
    stages: Record<StageId, DurationSummary>;
  };
  redis: {
    peakBytes: number;
    endBytes: number;
    naiveEndBytes: number;
    naivePeakBytes: number;
    listBytes: number;
    timelinesEnd: number;
    shardBytesEnd: number[];
    shardImbalance: number;
    peakShardUtilisation: number;
    saturatedShards: number;
    saturatedShardSeconds: number;
    /** The timelines and lists at the end as a replay counts them: MEMORY USAGE and the keyspace entry. */
    usageEnd: { timelines: number; lists: number; ownLists: number; keyPrefix?: string };
  };
  reads: {
    total: number;
    latency: DurationSummary;
    latencyHistogram: string;
    redisOpsPerRead: number;
    /** The same over sessions' first pages only (each reader once a session, as a replay measures it). */
    redisOpsPerFirstPage: number;
    coldReads: number;
    coldShare: number;
    rebuildEntries: number;
    listRebuilds: number;
    rebuilds: number;
    postgresUtilisation: number;
  };
  /**
   * The API tier as simulated (null: none): its processes (resolved when sized automatically), cores,
   * mean utilisation, and `cpuCores`, its CPU seconds a second before the shared cores' stretch (what /proc counts).
   */
  api: { instances: number; servers: number; utilisation: number; cpuCores: number } | null;
  /** Services sharing cores (infrastructure.cores): the highest utilisation of them in any second. */
  sharedCores: { cores: number; peakUtilisation: number } | null;
  series: {
    intervalSeconds: number;
    posts: number[];
    writes: number[];
    reads: number[];
    coldReads: number[];
    memoryBytes: number[];
    naiveMemoryBytes: number[];
    backlogWrites: number[];
    lagP99: number[];
    readP99: number[];
    /** The threshold in force, for threshold and adaptive policies. */
    threshold: number[] | null;
    maxShardBytes: number[];
  };
}
