// The figures `feedlab compare` holds side by side, in one table: for each stable id, its label, its
// unit and how to read it from a result document (feedlab.result/1) of either source, a simulation
// (`feedlab run`) or a measurement (`feedlab replay`).
//
// A figure a document does not have stays null, never a made-up number: a replay leaves what it
// does not measure NaN (null in the JSON), and a simulation does not model every key class a replay
// finds in Redis. Which of the two it is, is said ("not measured", "not modelled").
import { LARGE_POST_TIMELINES } from '../../core/fanout-worker.js';
import type { RunResult, StageId } from '../result.js';

export type FigureUnit = 's' | 'ms' | 'bytes' | 'writes/s' | 'commands' | 'writes' | 'cores';

export const FIGURE_IDS = [
  'lag_p50',
  'lag_p99',
  'lag_max',
  'post_lag_p50',
  'post_lag_p99',
  'post_lag_max',
  'writes_per_second_mean',
  'writes_per_second_peak',
  'deliveries_per_post',
  'memory_bytes',
  'memory_total_bytes',
  'memory_timelines_bytes',
  'memory_lists_bytes',
  'memory_own_lists_bytes',
  'memory_bodies_bytes',
  'memory_event_log_bytes',
  'memory_other_bytes',
  'read_p50',
  'read_p99',
  'commands_per_read',
  'api_cpu',
  'stage_post_to_log_p50',
  'stage_post_to_log_p99',
  'stage_pickup_mean',
  'stage_pickup_p99',
  'stage_statements_p50',
  'stage_statements_p99',
  'stage_first_page_p50',
  'stage_writes_p50',
  'stage_writes_p99',
  'stage_large_writes_per_timeline_p50',
] as const;

export type FigureId = (typeof FIGURE_IDS)[number];

/** A figure read from one document: its value, or null and why ("not measured", "not modelled"). */
export type FigureReading = { value: number; why?: undefined } | { value: null; why: string };

/** What figures hang on that the simulations with the replays' stages keep calibrated (FigureDef.calibratedOnly), each said once. */
const READ_COSTS = "the API's CPU per page and a read's Redis costs";
const API_CPU = "the API's CPU per request";
const PULLED_LISTED = "a pulled post's time to its author's list (api.postListed)";
export const CALIBRATED_ONLY_COSTS = [READ_COSTS, API_CPU, PULLED_LISTED] as const;
/** A lag hangs on api.postListed where the measured side pulled posts: each one's delivery is its time to its author's list. */
const pulledListed = (measured: readonly RunResult[]) => (measured.some((r) => (r.summary.posts?.pulled ?? 0) > 0) ? PULLED_LISTED : undefined);

export interface FigureDef {
  id: FigureId;
  label: string;
  unit: FigureUnit;
  /** The heading it is grouped under in the reports. */
  group: 'fan-out lag' | 'fan-out work' | 'Redis memory' | 'reads' | 'fan-out stages';
  /** What the figure is, and where either source differs in how it counts it. */
  about: string;
  /** The value in the document, or null where the document has none (NaN, null, missing). */
  read(r: RunResult): number | null;
  /** Sources that do not model or measure the figure at all: null there, with this reason. */
  absentFrom?: Partial<Record<RunResult['source'], string>>;
  /**
   * What the figure hangs on, given the measured side's documents, that the simulations with the
   * replays' stages (sim/compare/replay-stages.ts) keep as calibrated (a replay does not measure
   * it, or it is not swapped): a gap that stays with them may be these costs' as well as the model's.
   */
  calibratedOnly?: (measured: readonly RunResult[]) => string | undefined;
  /** Why a document that has the figure's section reads null (else "not measured" / "not in the document"). */
  whyNone?(r: RunResult): string | undefined;
  /**
   * The step of the clocks a document read the figure with, in its unit (a replay's workers and
   * event log stamp whole milliseconds), or null where its clock is finer: a quantile of such
   * differences is within one step of the true one, so the step is part of the noise.
   */
  resolution?(r: RunResult): number | null;
}

/** The step of a clock that stamps whole milliseconds, in seconds. */
const MS_STEP = 0.001;
/** A replay's fan-out lags and its hop and pickup are differences of two millisecond stamps. */
const MS_CLOCKS = (r: RunResult): number | null => (r.source === 'replay' ? MS_STEP : null);

type KeyClass = 'timelines' | 'pulledLists' | 'ownLists' | 'bodies' | 'eventLog' | 'other';

/**
 * A replay's key class at the end: MEMORY USAGE of its keys plus the keyspace entry per key, the
 * parts its `summary.redis.memoryBytes.end` is the sum of (the simulator counts each key's keyspace
 * entry too).
 */
function replayClass(r: RunResult, cls: KeyClass): number | null {
  const m = r.replay?.memory;
  const c = m?.classes?.[cls];
  if (!m || !c) return null;
  return c.bytes + c.keys * m.keyspaceBytesPerKey;
}

const NOT_MODELLED = { simulate: 'not modelled' } as const;

/** Timeline keys: a replay's measured, a simulation's by the model (an older simulation document: its used_memory terms, about 6% above). */
const timelines = (r: RunResult): number | null =>
  r.source === 'replay' ? replayClass(r, 'timelines') : (r.summary.redis.usageBytes?.timelines ?? r.summary.redis.memoryBytes.end - r.summary.redis.listBytes);
const pulledLists = (r: RunResult): number | null => (r.source === 'replay' ? replayClass(r, 'pulledLists') : (r.summary.redis.usageBytes?.lists ?? r.summary.redis.listBytes));
const ownLists = (r: RunResult): number | null => (r.source === 'replay' ? replayClass(r, 'ownLists') : (r.summary.redis.usageBytes?.ownLists ?? null));

const lag = (pick: 'p50' | 'p99' | 'max', perPost: boolean): ((r: RunResult) => number) =>
  perPost ? (r) => r.summary.fanout.lagSeconds[pick] : (r) => r.summary.fanout.followerLagSeconds[pick];
/**
 * A replay's lags: its workers' in whole milliseconds (pushed posts); its probes' of pulled posts to
 * the server's own sub-millisecond Server-Timing, or, for one it did not time, the middle of the poll
 * that found it (within half a poll).
 */
function lagStep(r: RunResult): number | null {
  if (r.source !== 'replay') return null;
  const probes = r.replay?.fanout?.probes;
  const untimed = probes ? probes.pulledPosts - (probes.pulledTimed ?? 0) : 0;
  const step = Math.max((r.summary.posts?.pushed ?? 0) > 0 ? MS_STEP : 0, untimed > 0 ? (probes!.pollMs / 2) * MS_STEP : 0);
  return step > 0 ? step : null;
}

const lagFigure = (id: FigureId, label: string, about: string, pick: 'p50' | 'p99' | 'max', perPost: boolean): FigureDef => ({
  id,
  label,
  unit: 's',
  group: 'fan-out lag',
  about,
  read: lag(pick, perPost),
  resolution: lagStep,
  calibratedOnly: pulledListed,
});

/** A page read's latency at `pick`: it hangs on the API's CPU and a read's Redis costs, which a replay does not measure. */
const pageReadFigure = (id: FigureId, label: string, pick: 'p50' | 'p99'): FigureDef => ({
  id,
  label,
  unit: 'ms',
  group: 'reads',
  about: 'page read latency (a replay from the intended send, on the driver)',
  read: (r) => r.summary.reads.latencyMs[pick],
  calibratedOnly: () => READ_COSTS,
});

const FOLLOWER_LAG = 'per follower: from a post to each follower\'s timeline write, weighted by deliveries (the SLO\'s figure); a replay takes it from the workers\' histograms and its probes of pulled posts';
const POST_LAG = 'per post: from a post to its last follower\'s timeline write';

export const FIGURES: readonly FigureDef[] = [
  lagFigure('lag_p50', 'fan-out lag p50, per follower', FOLLOWER_LAG, 'p50', false),
  lagFigure('lag_p99', 'fan-out lag p99, per follower', FOLLOWER_LAG, 'p99', false),
  lagFigure('lag_max', 'fan-out lag max, per follower', FOLLOWER_LAG, 'max', false),
  lagFigure('post_lag_p50', 'fan-out lag p50, per post', POST_LAG, 'p50', true),
  lagFigure('post_lag_p99', 'fan-out lag p99, per post', POST_LAG, 'p99', true),
  lagFigure('post_lag_max', 'fan-out lag max, per post', POST_LAG, 'max', true),
  {
    id: 'writes_per_second_mean',
    label: 'timeline writes/s, mean',
    unit: 'writes/s',
    group: 'fan-out work',
    about: "completed timeline writes per second over the run (a replay's per wall second, counted at Redis)",
    read: (r) => r.summary.fanout.writesPerSecond.mean,
  },
  {
    id: 'writes_per_second_peak',
    label: 'timeline writes/s, peak second',
    unit: 'writes/s',
    group: 'fan-out work',
    about: 'timeline writes in the busiest second',
    read: (r) => r.summary.fanout.writesPerSecond.peak,
  },
  {
    id: 'deliveries_per_post',
    label: 'timeline writes per post',
    unit: 'writes',
    group: 'fan-out work',
    about: 'timeline writes over posts made',
    read: (r) => r.summary.fanout.deliveriesPerPost,
  },
  {
    id: 'memory_bytes',
    label: 'Redis memory of the feeds at the end',
    unit: 'bytes',
    group: 'Redis memory',
    about: "the feeds' keys both sides count: home timelines, pulled authors' lists and readers' own lists, by MEMORY USAGE with the keyspace entry (a simulation by the memory model)",
    read: (r) => {
      const parts = [timelines(r), pulledLists(r), ownLists(r)];
      return parts.every((x): x is number => x !== null) ? parts[0] + parts[1] + parts[2] : null;
    },
  },
  {
    id: 'memory_total_bytes',
    label: 'Redis memory at the end, every key',
    unit: 'bytes',
    group: 'Redis memory',
    about: "every key of a replay's key space by MEMORY USAGE with the keyspace entry: the feeds, post bodies, the event log and the rest",
    read: (r) => (r.source === 'replay' ? r.summary.redis.memoryBytes.end : null),
    absentFrom: { simulate: 'post bodies and the event log not modelled' },
  },
  {
    id: 'memory_timelines_bytes',
    label: 'memory: home timelines',
    unit: 'bytes',
    group: 'Redis memory',
    about: "timeline keys by MEMORY USAGE with the keyspace entry: a replay's measured, a simulation's by the memory model (an older simulation document without them: its used_memory terms, about 6% above)",
    read: timelines,
  },
  {
    id: 'memory_lists_bytes',
    label: "memory: pulled authors' lists",
    unit: 'bytes',
    group: 'Redis memory',
    about: "the recent-post lists merged on read (a simulation's list memory; a replay's lists of pulled authors)",
    read: pulledLists,
  },
  {
    id: 'memory_own_lists_bytes',
    label: "memory: readers' own lists",
    unit: 'bytes',
    group: 'Redis memory',
    about: "the recent-post list the server keeps for every reader (merged into their own feed), pushed or not",
    read: ownLists,
  },
  { id: 'memory_bodies_bytes', label: 'memory: post bodies', unit: 'bytes', group: 'Redis memory', about: 'the cached post bodies', read: (r) => replayClass(r, 'bodies'), absentFrom: NOT_MODELLED },
  { id: 'memory_event_log_bytes', label: 'memory: event log', unit: 'bytes', group: 'Redis memory', about: "the event log's streams", read: (r) => replayClass(r, 'eventLog'), absentFrom: NOT_MODELLED },
  {
    id: 'memory_other_bytes',
    label: 'memory: other keys',
    unit: 'bytes',
    group: 'Redis memory',
    about: 'follows tokens, rebuild markers, the registry of pulled authors, metrics',
    read: (r) => replayClass(r, 'other'),
    absentFrom: NOT_MODELLED,
  },
  pageReadFigure('read_p50', 'home-feed read p50', 'p50'),
  pageReadFigure('read_p99', 'home-feed read p99', 'p99'),
  {
    id: 'commands_per_read',
    label: 'Redis commands per read',
    unit: 'commands',
    group: 'reads',
    about: "Redis commands of a session's first page (a replay's over a window of nothing but first pages; a simulation's over its sessions' first pages, or every page in an older document)",
    read: (r) => r.summary.reads.redisOpsPerRead.firstPages ?? r.summary.reads.redisOpsPerRead.mean,
  },
  {
    id: 'api_cpu',
    label: 'API CPU, cores busy (mean)',
    unit: 'cores',
    group: 'reads',
    about: "the API tier's CPU over the run: a simulation's, before shared cores stretch it (older documents have none); a replay's `feedlab serve` process from /proc (its outbox relay and timers included)",
    read: (r) => (r.source === 'replay' ? (r.replay?.cpu.share ? r.replay.cpu.share.server / 100 : null) : (r.summary.api?.cpuCores ?? null)),
    calibratedOnly: () => API_CPU,
  },
  { ...stage('stage_post_to_log_p50', 'postToLog', 'p50', "stage: a post's commit to its event in the log, p50", "the outbox relay and the event log: a post's createdAt to its stream entry's ms (a simulation: its postToLog draws)"), resolution: MS_CLOCKS },
  { ...stage('stage_post_to_log_p99', 'postToLog', 'p99', "stage: a post's commit to its event in the log, p99", "the same, p99"), resolution: MS_CLOCKS },
  // a mean of whole-ms differences is not off by a step (the stamps fall anywhere in their ms): no resolution
  stage('stage_pickup_mean', 'pickup', 'mean', 'stage: the log to a worker starting on the event, mean', "the event's wait for a worker (a replay's workers read both clocks to the ms, so the mean, not the p50)"),
  { ...stage('stage_pickup_p99', 'pickup', 'p99', 'stage: the log to a worker starting on the event, p99', 'the same, p99: a busy worker, a blocked event loop'), resolution: MS_CLOCKS },
  stage('stage_statements_p50', 'statements', 'p50', "stage: a worker's statement for an event, p50", "the author's follower count, from Postgres"),
  stage('stage_statements_p99', 'statements', 'p99', "stage: a worker's statement for an event, p99", 'the same, p99'),
  stage('stage_first_page_p50', 'firstPage', 'p50', "stage: a pushed post's first follower page, p50", 'the first page of followers, with the list add and the pulled-mark lookup sent beside it'),
  stage('stage_writes_p50', 'writes', 'p50', "stage: a pushed post's timeline writes, p50", 'its first follower page in hand to its last batch answered'),
  stage('stage_writes_p99', 'writes', 'p99', "stage: a pushed post's timeline writes, p99", 'the same, p99: the large posts'),
  {
    ...stage(
      'stage_large_writes_per_timeline_p50',
      'largeWritesPerTimeline',
      'p50',
      `stage: a large post's writes per timeline, p50`,
      `a pushed post of ${LARGE_POST_TIMELINES} timelines or more: its writes over the timelines it wrote (the per-follower lag's tail is made of such posts; older documents have none)`,
    ),
    whyNone: (r) => (r.summary.fanout.stagesSeconds?.largeWritesPerTimeline ? `no post of ${LARGE_POST_TIMELINES} timelines or more` : undefined),
  },
];

/** A post event's stage, per event, from `summary.fanout.stagesSeconds` (older documents have none). */
function stage(id: FigureId, of: StageId, pick: 'p50' | 'p99' | 'mean', label: string, about: string): FigureDef {
  return { id, label, unit: 's', group: 'fan-out stages', about, read: (r) => r.summary.fanout.stagesSeconds?.[of]?.[pick] ?? null };
}

const BY_ID = new Map<string, FigureDef>(FIGURES.map((f) => [f.id, f]));

export function figureDef(id: string): FigureDef | undefined {
  return BY_ID.get(id);
}

/** "not measured" for a replay, "not in the document" for a simulation that has no such value. */
const noValue = (r: RunResult): string => (r.source === 'replay' ? 'not measured' : 'not in the document');

/** One figure of one document. Missing paths read as null too: an older document lacks newer sections. */
export function readFigure(def: FigureDef, r: RunResult): FigureReading {
  const absent = def.absentFrom?.[r.source];
  if (absent) return { value: null, why: absent };
  let v: number | null | undefined;
  try {
    v = def.read(r);
  } catch {
    v = null;
  }
  return typeof v === 'number' && Number.isFinite(v) ? { value: v } : { value: null, why: def.whyNone?.(r) ?? noValue(r) };
}
