// A scenario after validation: every default filled in, every unit converted.
// Times are in seconds, sizes in bytes, counts are plain numbers.
// The YAML keys users write are in docs/scenario-reference.md.
import type { CalibrationProvenance } from './calibration.js';
import type { QuantileDistribution } from './quantiles.js';
import type { Threshold } from './thresholds.js';

export type Distribution =
  | { dist: 'constant'; mean: number }
  | { dist: 'lognormal'; mean: number; sigma: number }
  | { dist: 'exponential'; mean: number }
  | { dist: 'pareto'; mean: number; alpha: number };

export interface CelebritySpec {
  count: number;
  /** <= 1: a share of the population; > 1: an absolute follower count at population scale. */
  followers: number;
  /** Optional name: one account is named exactly that; several are `${name}-1`, `${name}-2`, ... */
  name?: string;
}

export type GraphSpec =
  | {
      kind: 'generate';
      users: number;
      avgFollows: number;
      alpha: number;
      maxFollows: number;
      /** Shape of the followee-count law (lognormal sigma). */
      followsSigma: number;
      celebrities: CelebritySpec[];
    }
  | { kind: 'file'; path: string };

export interface PagesPerSession {
  /** Buckets of page counts with their probabilities, summing to 1. */
  buckets: { min: number; max: number; p: number }[];
}

export interface Activity {
  postsPerUserPerDay: Distribution;
  sessionsPerUserPerDay: number;
  pagesPerSession: PagesPerSession;
  pageSize: number;
  diurnal: { peakFactor: number; peakHourUtc: number; startHourUtc: number } | null;
  /** Share of users not seen within policy.dormantDays. */
  dormantShare: number;
  /** How long dormant users have been away: uniform between these, in seconds. */
  dormantAway: [number, number];
}

export type ScenarioEvent =
  | { at: number; kind: 'celebrityBurst'; accounts: number; window: number; postsPerAccount: number }
  | { at: number; kind: 'breakingNews'; multiplier: number; window: number }
  | { at: number; kind: 'coldStartStorm'; share: number; window: number }
  | { at: number; kind: 'cacheLoss'; shards: number }
  /** workers: how many (undefined: every one); down: seconds, simulated. */
  | { at: number; kind: 'workerCrash'; workers?: number; down: number }
  | { at: number; kind: 'apiCrash'; down: number }
  | { at: number; kind: 'eventLogLoss' }
  | { at: number; kind: 'redisFlush' }
  /** window: seconds, simulated; mode: how the proxy breaks the path (cli/replay/fault-proxy.ts). */
  | { at: number; kind: 'redisOutage' | 'postgresOutage'; window: number; mode: 'reset' | 'hang' };

/** The events a replay injects into its own stack as faults (a target's processes are not ours to break). */
export const FAULT_EVENT_KINDS: ReadonlySet<ScenarioEvent['kind']> = new Set(['workerCrash', 'apiCrash', 'eventLogLoss', 'redisFlush', 'redisOutage', 'postgresOutage']);

export interface Costs {
  rtt: number;
  zadd: number;
  /** One list read of a page (an empty list's, when zrangePerEntry is set). */
  zrange: number;
  /** Each entry a list read returns. */
  zrangePerEntry: number;
  mgetPerKey: number;
  rebuild: number;
  /** Reading one page of an author's follower list to expand a post (on its partition). */
  expand: number;
  /** Reading one more follower of that list. */
  expandPerFollower: number;
  /** The worker's statement per post event before its fan-out (the author's follower count): a distribution, drawn per event. */
  eventStatements: QuantileDistribution;
  /** The worker's median statement after each idle time before its event, ascending in idle time (sim/model/idle-wake.ts); null: not moved. */
  eventStatementsByIdle: IdlePoint[] | null;
  /** The worker's median first follower page of a small post after each idle time; null: not moved. */
  eventFirstPageByIdle: IdlePoint[] | null;
  /** The worker's median writes of a small post (one batch) after each idle time; null: not moved. */
  eventWritesByIdle: IdlePoint[] | null;
  /** A post's writes over what the writes line gives it, drawn per post (fanout-stage.ts): ratios, median 1. */
  eventWritesSpread: QuantileDistribution;
  /** The idle time eventStatements (and the curves' reference point) was measured at. */
  eventStatementsGap: number;
  /** A post event entering the log to an idle worker starting on it (a blocked read woken): a distribution, drawn per event. */
  pickup: QuantileDistribution;
  /** One pipelined batch of timeline writes beyond the round trip and its writes. */
  batch: number;
}

/** A worker's median stage (s: its statement, first page or writes) after an idle time (s) before its event. */
export interface IdlePoint {
  gap: number;
  value: number;
}

/** The fan-out worker's shape (core/fanout-worker.ts has the reference worker's defaults). */
export interface WorkerShape {
  /** A post's batches shared by the whole fleet (true), or one worker writes a whole post (false, the reference worker). */
  splitPosts: boolean;
  /** Pipelined batches in flight per post (one worker writing a whole post overlaps this many round trips). */
  pipelines: number;
  /** Followers read per Postgres page while expanding a post. */
  followerPage: number;
  /** Authors' events one worker handles at once within a batch it took (the reference worker). */
  eventConcurrency: number;
}

/** The API tier: processes serving home-feed pages and posts on their cores. */
export interface ApiTier {
  /** API processes; null: as many as are 50% busy at the peak read rate. */
  instances: number | null;
  coresPerInstance: number;
  /** CPU of a page: cpuPerRead + cpuPerList x merged lists + cpuPerListEntry x their entries + cpuPerPost x hydrated posts. */
  cpuPerRead: number;
  cpuPerList: number;
  /** CPU per entry a merged list returns. */
  cpuPerListEntry: number;
  cpuPerPost: number;
  /** CPU of accepting one post. */
  cpuPerWrite: number;
  /** A post's creation to its author's list holding it (commit and list add, CPU included): when a pulled post is delivered. */
  postListed: QuantileDistribution;
  /** The client's round trip to the API. */
  network: number;
  /** Time a request loses when it finds the API idle, shrinking with the tier's utilisation. */
  idleOverhead: number;
  /** Of idleOverhead, the API's own CPU (holding the core); the rest is waiting. */
  idleCpu: number;
  /** Cores each process keeps busy with no request (timers, the relay's polls). */
  backgroundCpu: number;
  /** Service time over its mean. */
  spread: QuantileDistribution;
}

export interface Infrastructure {
  fanoutWorkers: number;
  writesPerSecondPerWorker: number;
  batchSize: number;
  redisShards: number;
  /** null: a Redis process each shard; N: the shards run on N processes (shard i on process i mod N). */
  redisProcesses: number | null;
  /** Event-log partitions, keyed by author. */
  partitions: number;
  /** Postgres connections serving timeline rebuilds (each takes costs.rebuild). */
  postgresConnections: number;
  costs: Costs;
  worker: WorkerShape;
  /** From a post's commit to a worker taking its event (outbox relay and event log). */
  postToLog: QuantileDistribution;
  /** null: reads cost only their Redis work (no API stage). */
  api: ApiTier | null;
  /** null: every service has cores of its own; N: they share N cores. */
  cores: number | null;
  /** The documents' mitigation: posts by authors with more followers than this go to their own worker pool. */
  largePostClass: { followers: number; workers: number } | null;
}

export type PolicyKind = 'push' | 'pull' | 'threshold' | 'rate' | 'reader-cap' | 'adaptive';

export interface PolicySpec {
  kind: PolicyKind;
  /** Pull when an author's followers > threshold (threshold, adaptive). */
  threshold: number;
  skipDormant: boolean;
  timelineCap: number;
  leaseDays: number;
  dormantDays: number;
  celebrityListLength: number;
  /** Reader-side cap (reader-cap): keep a delivery with probability cap/follows for readers following more. */
  readerCap: number;
  /** Adaptive: lower the threshold while the fan-out backlog (queued writes) is over this bound. */
  backlogBound: number;
  /** Adaptive: the threshold never goes below this. */
  minThreshold: number;
}

export interface Slo {
  fanoutLagP99: number;
  readP99: number;
  /** Bytes; Infinity when no budget is set. */
  redisMemory: number;
  /** k6-style thresholds (slo.thresholds), in the order of THRESHOLD_FIGURES; absent when there are none. */
  thresholds?: Threshold[];
}

/** Scenario inputs that may be written as `[low, likely, high]` (feedlab plan samples them). */
export type IntervalKey = 'population' | 'avgFollows' | 'postsPerUserPerDay' | 'sessionsPerUserPerDay' | 'dormantShare' | 'peakFactor';

/** An input written as an interval. The resolved scenario carries the likely value in its usual place. */
export interface Interval {
  key: IntervalKey;
  /** The key path as written, e.g. activity.postsPerUserPerDay.mean. */
  path: string;
  low: number;
  likely: number;
  high: number;
  /** file:line:col of the interval. */
  where: string;
}

/** What `feedlab plan` assumes beyond the simulator's keys (scenario section `plan`, all optional). */
export interface PlanSettings {
  /** Usable memory of one Redis node (bytes). */
  redisNodeMemory: number;
  /** Replicas per Redis shard. */
  replicas: number;
  /** RSS over used_memory allowed for allocator fragmentation (mem_fragmentation_ratio). */
  fragmentation: number;
  /** Bytes of one post body as cached in Redis for hydration (value + key + overhead). */
  postBodyBytes: number;
  /** How long post bodies stay in the hydration cache (seconds). */
  postCacheTtl: number;
  /** Square-root staffing's quality-of-service factor (ANCHORS 5: 2.375 ~ 1% of requests wait). */
  staffingQ: number;
}

/** How `feedlab replay` maps the scenario onto a live stack (scenario section `replay`, all optional). */
export interface ReplaySettings {
  /** Accounts of the graph loaded into Postgres; null: graph.generate.users (or the file's). */
  users: number | null;
  /** Simulated seconds per wall second. */
  timeScale: number;
  /** Fan-out worker processes to start (self-contained mode); null: infrastructure.fanoutWorkers, capped. */
  workers: number | null;
  /** Timelines and followee sets warm at the start. */
  warm: boolean;
  /** A live sweep's policies, replayed when the command line names none; null: the policy section's one. */
  policies: string[] | null;
}

export interface Scenario {
  /** The file the scenario came from, for error messages and provenance. */
  source: string;
  name: string;
  description: string;
  seed: number;
  duration: number;
  /** Users the results stand for; null means the graph's own user count. */
  population: number | null;
  graph: GraphSpec;
  activity: Activity;
  events: ScenarioEvent[];
  infrastructure: Infrastructure;
  policy: PolicySpec;
  slo: Slo;
  sweep: { policies: string[] };
  /** Settings for `feedlab plan`; absent when the file has no plan section (defaults in schema.ts PLAN_DEFAULTS). */
  plan?: PlanSettings;
  /** Settings for `feedlab replay`; absent when the file has no replay section. */
  replay?: ReplaySettings;
  /** Inputs written as [low, likely, high]; absent when there are none. */
  intervals?: Interval[];
  /** The calibration file the infrastructure's measured costs came from (`calibration:` or --calibration); absent when none. */
  calibration?: CalibrationProvenance;
}
