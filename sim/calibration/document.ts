// The calibration document (feedlab.calibration/1): provenance, every measurement with its spread,
// and the `infrastructure` block the scenario format takes, in its own keys and units. Numbers
// that are not sound (a fit with a slope <= 0, or an r² far from 1 whose line leaves its points'
// spreads, a cost <= 0, too few samples)
// are refused: the key is left out of the block (the scenario's own value or the default applies)
// and the reason is one line in `refused`.
import type { CommandTime } from '../scenario/calibration.js';
import type { CoreWait } from '../replay/core-wait.js';
import { firstSlice } from '../../core/read-plan.js';
import { FEEDLAB_VERSION } from '../result.js';
import type { CalibratedKey } from '../scenario/calibration.js';
import type { Fit, Spread } from './figures.js';

export const CALIBRATION_SCHEMA = 'feedlab.calibration/1';

/** A fit below this r² is refused. */
export const MIN_R_SQUARED = 0.9;
/** Other processes above this share of the machine mark the calibration contended (as replay does). */
export const CONTENDED_SHARE = 0.25;
/** The quantiles of the distributions written (postToLog, api.spread). */
export const QUANTILES = [0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 1] as const;
/** Fewest samples a distribution is written from. */
export const MIN_DISTRIBUTION_SAMPLES = 50;

export interface Distribution {
  points: { p: number; value: number }[];
  /** Samples it was taken from. */
  n: number;
}

export interface ApiMeasurements {
  /** CPU seconds of the server process per feed page against merged lists (timeline, own list, pulled authors), at `at.posts` posts a page. */
  lists: Fit;
  /** The same with the pulled authors' lists empty (quiet accounts); absent from older files. */
  quietLists?: Fit;
  /** Entries a full list's read returns in these fits (the page's first slice); the shared shape's lists hold that many in all (the timeline's: the readers post nothing). */
  fullListEntries?: number;
  /** The same against posts a page, at `at.lists` lists. */
  posts: Fit;
  /** The shape both fits share. */
  at: { lists: number; posts: number };
  /** Server CPU seconds per POST /v1/posts (the outbox relay's share included). */
  write: Spread;
  /** GET /healthz one at a time: the round trip, and the server's CPU per request. */
  trivialRoundTrip: Spread;
  trivialCpu: Spread;
  /**
   * Reads of the shape `at`, one at a time with idle gaps between them (a replay's pace): latency
   * less the network, as quantiles (seconds), and its mean; `modelled`: what the fits give the same
   * page (its CPU, two round trips and its Redis work), set when the file is written; `cpu`: the
   * server's CPU per such read, less what it burns with no request (`idleCpuPerSecond`, its timers
   * and polls) over the same time (absent from calibrations before 2026-12-05): each second's, and
   * `idleCpuRate`, all of them pooled.
   */
  service: Distribution & { mean: number; modelled?: number; cpu?: Spread; idleCpuPerSecond?: Spread; idleCpuRate?: number };
}

/**
 * A post event's stages as running workers spend them, from their own histograms (seconds): the
 * log to a worker starting on it, its statements, its first follower page's wait beyond them, its
 * writes. `source`: the worker calibrate started for the hop's posts, or a deployment's workers
 * since they started.
 */
export interface WorkerStages {
  source: 'calibrate-worker' | 'deployment-workers';
  /** Post events they handled meanwhile. */
  events: number;
  /** Every first delivery's, read to the ms on two clocks, as the workers recorded them. */
  pickup: Distribution & { mean: number };
  /**
   * The pickup of the events that entered the log while the read that took them waited (the worker
   * idle, the model's costs.pickup; the others waited behind its work, which the model has), with
   * `unrounded`, the same with each whole-ms reading spread over its millisecond
   * (cli/calibrate/worker-stages.ts): the table the model draws from. n 0 from workers that do not
   * publish it.
   */
  pickupIdle: Distribution & { mean: number; unrounded: Distribution['points'] };
  statements: Distribution & { mean: number };
  firstPage: Distribution & { mean: number };
  writes: Distribution & { mean: number };
}

/**
 * A running worker's first follower page and timeline writes against a post's followers (seconds):
 * per size, the median of that size's posts (their p10-p90 and count beside it), and the line
 * through them.
 */
export interface WorkerBySize {
  /** Post events the worker handled over the sizes. */
  events: number;
  firstPage: Fit;
  writes: Fit;
  /** Redis's own time of the EVALSHAs over those posts per timeline they wrote (commandstats, sim/replay/redis-figures.ts secondsPerListWrite), as a replay records it; absent from older files. */
  redisSecondsPerWrite?: number | null;
  /**
   * Redis's INFO commandstats over those posts, by command: calls and Redis's own microseconds (a
   * script's inner commands counted apart), as a replay keeps its window's
   * (replay.fanout.redisCommands); absent from older files.
   */
  redisCommands?: Record<string, CommandTime>;
  /** A post's writes over its size's median, pooled over the sizes of cli/calibrate's workerBySize.spreadFrom followers or more (values are ratios); absent from older files. */
  writesSpread?: Distribution | null;
}

/**
 * A running worker's stages after idle time before each event (sim/model/idle-wake.ts): per pace,
 * the typical idle gap (seconds) and the median statement with its p10-p90 and count, and the same
 * of the small posts' first page and writes (absent from older files), ascending in gap;
 * `referenceGap` the hop's, at which costs.eventStatements was measured (its point is this
 * phase's posts at the hop's pace; in files before 2381d62, 2026-12-06 19:37, the hop's own posts).
 */
export interface StatementsByIdle {
  points: ({ gap: number; firstPage?: Spread; writes?: Spread } & Spread)[];
  referenceGap: number;
}

type IdleCurveField = 'eventStatementsByIdle' | 'eventFirstPageByIdle' | 'eventWritesByIdle';
type IdlePointMeasured = StatementsByIdle['points'][number];

/** The stages with a curve by idle time: the `costs` field each is written to, its points, and what it is. */
interface IdleCurve {
  field: IdleCurveField;
  stage: (p: IdlePointMeasured) => Spread | undefined;
  what: string;
}
const IDLE_CURVES: readonly IdleCurve[] = [
  { field: 'eventStatementsByIdle', stage: (p) => p, what: "a running worker's statement after idle time" },
  { field: 'eventFirstPageByIdle', stage: (p) => p.firstPage, what: "a running worker's first follower page after idle time" },
  { field: 'eventWritesByIdle', stage: (p) => p.writes, what: "a running worker's writes after idle time" },
];

/** The keys the curves by idle time write, with the reference gap they are moved about (the statement's curve and the gap refused together, the others with them or alone). */
export const IDLE_CURVE_KEYS: readonly CalibratedKey[] = [...IDLE_CURVES.map((c) => `costs.${c.field}` as const), 'costs.eventStatementsGap'];

/** Fewest events a point of the statement by idle time is taken from. */
export const MIN_IDLE_POINT_EVENTS = 40;

export interface Measurements {
  /** One PING round trip from this process. */
  rtt: Spread;
  /** Wall time of one pipelined batch against the timelines it writes (x), and Redis's own time per timeline written. */
  timelineWrites: { fit: Fit; redisPerWrite: Spread };
  /** Redis time of one ZREVRANGEBYSCORE of a page; of an MGET of a page's bodies, per key. */
  pageRead: Spread;
  /** Redis time of one ZREVRANGEBYSCORE against the entries it returns (x); absent from older files. */
  pageReadByEntries?: Fit;
  mgetPerKey: Spread;
  /** Wall time of one follower page from Postgres against the rows it returns (x). */
  expansion: Fit;
  eventStatements: Spread;
  rebuild: Spread;
  api: ApiMeasurements | null;
  /** From a post's createdAt to its event's entry in the event log (the entry id's ms). */
  postToLog: Distribution | null;
  /** The same posts' creation to their author's list holding them, by the server's Server-Timing (null: not measured; absent from older files). */
  postListed?: Distribution | null;
  /** The workers' own stages (null: not measured; absent from files written before they were). */
  worker?: WorkerStages | null;
  /** A running worker's first page and writes by a post's followers (null: not measured; absent from older files). */
  workerBySize?: WorkerBySize | null;
  /** A running worker's statement by its idle time (null: not measured; absent from older files). */
  statementsByIdle?: StatementsByIdle | null;
}

export interface Provenance {
  machine: { hostname: string; cpu: string; cores: number; memoryBytes: number };
  date: string;
  versions: { node: string; redis: string; postgres: string; feedlab: string };
  mode: 'self-contained' | 'target';
  target: string | null;
  /** Other processes' share of the whole machine (all cores) over the measurements. */
  contention: { otherShare: number; contended: boolean; overSeconds: number };
  samples: number;
  /** What was measured on: the world's sizes and shapes. */
  world: Record<string, number | string>;
  /**
   * Each process's waits for a core over the running worker's measurements (the hop, the statements
   * by idle, the sizes): 'worker', 'server', 'redis', 'postgres' (the backends), 'driver' (calibrate
   * itself); compare sets them beside the replays'. Absent against a target and in older files.
   */
  coreWaits?: Record<string, CoreWait>;
}

export interface Refusal {
  key: CalibratedKey;
  why: string;
  /** Not measured at all here (a target's API tier, a sample others' commands got into): no number failed a check. */
  notMeasured?: true;
}

/** Keys taken from calibrate's own measurement because the running worker's was not sound. */
export interface FellBack {
  keys: CalibratedKey[];
  why: string;
  /** A key kept from the running worker on calibrate's own slope: its level (the first page's costs.expand), seconds. */
  levelled?: { key: CalibratedKey; value: number };
}

export interface CalibrationDocument {
  schema: typeof CALIBRATION_SCHEMA;
  tool: { name: 'feedlab'; version: string };
  calibration: Provenance & { measurements: Measurements; refused: Refusal[]; fellBack: FellBack[] };
  /** The scenario format's keys, as written to the file (durations with units). */
  infrastructure: InfrastructureBlock;
}

export interface InfrastructureBlock {
  writesPerSecondPerWorker?: number;
  costs?: Partial<Record<'rtt' | 'zadd' | 'batch' | 'zrange' | 'zrangePerEntry' | 'mgetPerKey' | 'expand' | 'expandPerFollower' | 'rebuild' | 'eventStatementsGap', string>> & Partial<Record<'eventStatements' | 'pickup', string | Record<string, string>>> & Partial<Record<IdleCurveField, Record<string, string>>> & { eventWritesSpread?: Record<string, number> };
  postToLog?: Record<string, string>;
  api?: Partial<Record<'cpuPerRead' | 'cpuPerList' | 'cpuPerListEntry' | 'cpuPerPost' | 'cpuPerWrite' | 'network' | 'idleOverhead' | 'idleCpu', string>> & { backgroundCpu?: number } & { spread?: Record<string, number>; postListed?: Record<string, string> };
}

/** A duration as the scenario format writes it, to four significant digits: 95.12us, 6.1ms, 1.2s. */
export function durationText(seconds: number): string {
  const [factor, unit] = seconds >= 1 ? [1, 's'] : seconds >= 1e-3 ? [1e3, 'ms'] : [1e6, 'us'];
  return `${Number((seconds * factor).toPrecision(4))}${unit}`;
}

/** A quantile's key as the scenario format writes it: min, p50, p99.9, max. */
export function quantileKey(p: number): string {
  return p === 0 ? 'min' : p === 1 ? 'max' : `p${Number((p * 100).toPrecision(6))}`;
}

const usText = (s: number) => `${Number((s * 1e6).toPrecision(3))} us`;

/** Entries the shared shape's lists return when an older measurement does not say: the timeline's first slice. */
function firstSliceOfShape(a: ApiMeasurements): number {
  return firstSlice(a.at.posts);
}

/** A distribution as the scenario format writes it: { min: 1ms, p50: 4ms, ... }. */
function quantileMap(d: Distribution): Record<string, string>;
function quantileMap<T>(d: Distribution, unit: (v: number) => T): Record<string, T>;
function quantileMap(d: Distribution, unit: (v: number) => unknown = durationText): Record<string, unknown> {
  return Object.fromEntries(d.points.map((q) => [quantileKey(q.p), unit(q.value)]));
}

/** The p50 of a distribution. */
function medianOf(d: Distribution): number {
  return d.points.find((q) => q.p === 0.5)?.value ?? NaN;
}

/** How far off the line a point's median may be when the line is taken by its points' spreads. */
const SPREAD_FIT_TOLERANCE = 0.1;

/**
 * Whether a line runs through every size's own spread: at three sizes or more, within each one's
 * p10-p90 and within SPREAD_FIT_TOLERANCE of its median. A small per-unit cost under a large base
 * gives a low r² however well the line fits (the API's CPU against hydrated posts, 2026-12-04 on a
 * quiet machine: 3 us a post over 341 us, r² 0.887, every median within 7% of the line): the
 * samples cannot tell the line from the truth, and refusing it left the defaults, 0.4 of the reads.
 */
function withinSpreads(f: Fit): boolean {
  return (
    f.points.length >= 3 &&
    f.points.every((p) => {
      const y = f.intercept + f.slope * p.x;
      return y > 0 && y >= p.p10 && y <= p.p90 && Math.abs(p.median / y - 1) <= SPREAD_FIT_TOLERANCE;
    })
  );
}

/** Why a fit is not sound, or null. */
export function unsoundFit(what: string, f: Fit, perUnit: string): string | null {
  if (!Number.isFinite(f.slope)) return `${what}: no fit (fewer than two sizes measured)`;
  if (f.slope <= 0) return `${what}: the fit's slope is ${usText(f.slope)} per ${perUnit}, not positive (r² ${f.rSquared.toFixed(3)}): noise swamps the cost`;
  if (!(f.rSquared >= MIN_R_SQUARED) && !withinSpreads(f)) {
    return `${what}: the fit's r² is ${f.rSquared.toFixed(3)}, under ${MIN_R_SQUARED}, and the line leaves a size's own spread: the samples scatter too much for a straight line`;
  }
  return null;
}

/** A flat fit's spread, as a share of what the full fit rises over the same sizes, under which it is taken as flat. */
const FLAT_FIT_SHARE = 0.25;

/**
 * An empty merged list's CPU (seconds) from the quiet fit, or why not. An empty list costs next to
 * nothing, so its fit is often flat noise (r² near 0): taken as flat, so its cost is its slope at
 * zero or more, when its points spread less than a quarter of what the full fit rises over the
 * same list counts; else it must be a sound line.
 */
function emptyListCost(full: Fit, quiet: Fit): number | string {
  const medians = quiet.points.map((q) => q.median);
  const xs = quiet.points.map((q) => q.x);
  if (medians.length >= 2 && full.slope > 0) {
    const spread = Math.max(...medians) - Math.min(...medians);
    const rise = full.slope * (Math.max(...xs) - Math.min(...xs));
    if (spread <= FLAT_FIT_SHARE * rise) return Math.max(0, quiet.slope);
  }
  return unsoundFit('API CPU against empty merged lists', quiet, 'list') ?? quiet.slope;
}

/** The level of a fit's points on another line's slope: the median over its sizes of the median less the slope's part. */
function levelOn(f: Fit, slope: number): number {
  const rest = f.points.map((p) => p.median - slope * p.x).sort((a, b) => a - b);
  if (rest.length === 0) return NaN;
  const mid = rest.length >> 1;
  return rest.length % 2 === 1 ? rest[mid] : (rest[mid - 1] + rest[mid]) / 2;
}

/** Why a fit is not a sound line with a cost at zero (slope > 0, r² high, intercept >= 0), or null. */
function soundLine(what: string, f: Fit, perUnit: string): string | null {
  return unsoundFit(what, f, perUnit) ?? (f.intercept < 0 ? `${what}: the fit's intercept is ${usText(f.intercept)}, negative` : null);
}

/** Why a stage's curve by idle time is not sound (a pace without it, a point from too few events, or without a median), or null. */
function unsoundIdleCurve(what: string, points: { gap: number; stage: Spread | undefined }[], referenceGap: number): string | null {
  if (points.length < 2) return `${what}: ${points.length} pace measured, fewer than two`;
  const missing = points.find((p) => p.stage === undefined);
  if (missing) return `${what}: not measured at the idle time ${durationText(missing.gap)}`;
  const few = points.find((p) => p.stage!.n < MIN_IDLE_POINT_EVENTS);
  if (few) return `${what}: ${few.stage!.n} events at the idle time ${durationText(few.gap)}, fewer than ${MIN_IDLE_POINT_EVENTS}`;
  if (points.some((p) => !(p.stage!.median > 0))) return `${what}: a median is not a positive duration`;
  if (!points.some((p) => p.gap === referenceGap)) return `${what}: no point at the hop's idle time ${durationText(referenceGap)}`;
  return null;
}

function unsoundCost(what: string, s: Spread): string | null {
  if (!(s.n > 0)) return `${what}: no samples`;
  if (!(s.median > 0)) return `${what}: the median is ${usText(s.median)}, not positive`;
  return null;
}

function unsoundDistribution(what: string, d: Distribution): string | null {
  if (d.n < MIN_DISTRIBUTION_SAMPLES) return `${what}: ${d.n} samples, fewer than ${MIN_DISTRIBUTION_SAMPLES}`;
  if (d.points.some((q) => !(q.value >= 0))) return `${what}: a quantile is negative or missing`;
  return null;
}

/**
 * The infrastructure block of these measurements, with every unsound figure refused (and the
 * refusals already made: figures that could not be measured here).
 */
export function infrastructureBlock(m: Measurements, already: readonly Refusal[]): { block: InfrastructureBlock; refused: Refusal[]; fellBack: FellBack[] } {
  const refused: Refusal[] = [...already];
  const skip = (key: CalibratedKey) => refused.some((r) => r.key === key);
  /** Refuses the keys when `why` is given; true when any of them is refused (now, or already: not measured here). */
  const refuse = (keys: CalibratedKey[], why: string | null): boolean => {
    if (why !== null) for (const key of keys) if (!skip(key)) refused.push({ key, why });
    return keys.some(skip);
  };
  const costs: NonNullable<InfrastructureBlock['costs']> = {};
  const block: InfrastructureBlock = {};

  // a running worker's writes by a post's size when sound (its event loop and lanes beside the
  // batches), else calibrate's process's, one batch at a time
  const bySize = m.workerBySize ?? null;
  const fellBack: FellBack[] = [];
  /** The running worker's fit when measured and sound; else null, and why, when measured. */
  const workerFit = (keys: CalibratedKey[], f: Fit | undefined, why: string | null): Fit | null => {
    if (!f) return null;
    if (why === null) return f;
    fellBack.push({ keys, why });
    return null;
  };
  const writeKeys: CalibratedKey[] = ['writesPerSecondPerWorker', 'costs.batch'];
  const tw = m.timelineWrites;
  const workerWrites = workerFit(writeKeys, bySize?.writes, bySize && unsoundFit("a running worker's writes against a post's followers", bySize.writes, 'follower'));
  const writeFit = workerWrites ?? tw.fit;
  if (!refuse(writeKeys, workerWrites ? null : unsoundFit('timeline writes against batch size', tw.fit, 'timeline'))) {
    block.writesPerSecondPerWorker = Number((1 / writeFit.slope).toPrecision(3));
    costs.batch = durationText(Math.max(0, writeFit.intercept - m.rtt.median));
  }
  // how a post's writes scatter about that line: the running worker's own posts, so only with its line
  const spread = bySize?.writesSpread ?? null;
  if (spread && !workerWrites) {
    // measured, but about a line the file does not use: not a failed check (calibrate's exit stays 0)
    if (!skip('costs.eventWritesSpread')) refused.push({ key: 'costs.eventWritesSpread', why: "a running worker's writes over its line: that line was not used (the writes came from calibrate's own batches)", notMeasured: true });
  } else if (spread && !refuse(['costs.eventWritesSpread'], unsoundDistribution("a running worker's writes over its line", spread))) {
    // ratios, three significant digits: { min: 0.72, p50: 1, ... }
    costs.eventWritesSpread = quantileMap(spread, (v) => Number(v.toPrecision(3)));
  }
  if (!refuse(['costs.rtt'], unsoundCost('round trip', m.rtt))) costs.rtt = durationText(m.rtt.median);
  if (!refuse(['costs.zadd'], unsoundCost('Redis time per timeline write', tw.redisPerWrite))) costs.zadd = durationText(tw.redisPerWrite.median);
  // a list read: its empty-list part and its part per entry (a line over the slices), or the full slice's whole
  const rf = m.pageReadByEntries;
  const perEntryWhy = !rf
    ? null
    : (unsoundFit('Redis time of a page read against its entries', rf, 'entry') ?? (rf.intercept > 0 ? null : `Redis time of a page read against its entries: the intercept is ${usText(rf.intercept)}, not positive`));
  let zrange = NaN;
  let zrangePerEntry = 0;
  if (rf && perEntryWhy === null && !skip('costs.zrange')) {
    zrange = rf.intercept;
    zrangePerEntry = rf.slope;
    costs.zrange = durationText(zrange);
    costs.zrangePerEntry = durationText(zrangePerEntry);
  } else {
    if (rf) refuse(['costs.zrangePerEntry'], perEntryWhy);
    if (!refuse(['costs.zrange'], unsoundCost('Redis time of a page read', m.pageRead))) {
      zrange = m.pageRead.median;
      costs.zrange = durationText(zrange);
    }
  }
  if (!refuse(['costs.mgetPerKey'], unsoundCost('Redis time of MGET per key', m.mgetPerKey))) costs.mgetPerKey = durationText(m.mgetPerKey.median);
  // likewise a running worker's first page (its pooled connections' plans), else calibrate's reads
  const pageKeys: CalibratedKey[] = ['costs.expand', 'costs.expandPerFollower'];
  const pageWhat = "a running worker's first page against a post's followers";
  const pageWhy = bySize && soundLine(pageWhat, bySize.firstPage, 'follower');
  const processWhy = soundLine('follower pages against rows', m.expansion, 'follower');
  let pageFit: { intercept: number; slope: number } = m.expansion;
  if (bySize && pageWhy === null) pageFit = bySize.firstPage;
  else if (bySize && pageWhy !== null) {
    // The worker's small posts' pages flat within their scatter (the line itself unsound, not only
    // its intercept below zero), where calibrate's process's line alone put the page at a third of
    // the worker's (0.35 ms + 0.94 us against 0.95 ms + 1.29 us in a calibration ten minutes
    // before, 2026-12-05): the worker's level is kept, on that slope.
    const scattered = unsoundFit(pageWhat, bySize.firstPage, 'follower') !== null;
    const level = scattered && processWhy === null ? levelOn(bySize.firstPage, m.expansion.slope) : NaN;
    if (level > 0) {
      pageFit = { intercept: level, slope: m.expansion.slope };
      fellBack.push({ keys: ['costs.expandPerFollower'], why: pageWhy, levelled: { key: 'costs.expand', value: level } });
    } else fellBack.push({ keys: pageKeys, why: pageWhy });
  }
  if (!refuse(pageKeys, pageFit === m.expansion ? processWhy : null)) {
    costs.expand = durationText(pageFit.intercept);
    costs.expandPerFollower = durationText(pageFit.slope);
  }
  // a running worker's own statements when measured (as it sends them, at a replay's pace), else calibrate's process's
  const w = m.worker ?? null;
  if (w && !unsoundDistribution("a worker's statements", w.statements) && medianOf(w.statements) > 0) {
    // drawn per event: its tail is part of the fan-out lag's
    if (!skip('costs.eventStatements')) costs.eventStatements = quantileMap(w.statements);
    // and how its idle time before an event moves it and the event's other stages, about the hop's gap those quantiles are of
    const idle = m.statementsByIdle ?? null;
    // the stages' curves are moved about the statement's reference gap: refused with it
    const [statement, ...others] = IDLE_CURVES;
    const pointsOf = (idle: StatementsByIdle, c: IdleCurve) => idle.points.map((p) => ({ gap: p.gap, stage: c.stage(p) }));
    if (idle && !refuse([...IDLE_CURVE_KEYS], unsoundIdleCurve(statement.what, pointsOf(idle, statement), idle.referenceGap))) {
      costs.eventStatementsGap = durationText(idle.referenceGap);
      const curve = (c: IdleCurve) => Object.fromEntries(pointsOf(idle, c).map((p) => [durationText(p.gap), durationText(p.stage!.median)]));
      costs[statement.field] = curve(statement);
      for (const c of others) if (!refuse([`costs.${c.field}`], unsoundIdleCurve(c.what, pointsOf(idle, c), idle.referenceGap))) costs[c.field] = curve(c);
    }
  } else if (!refuse(['costs.eventStatements'], unsoundCost("the worker's statements per event", m.eventStatements))) costs.eventStatements = durationText(m.eventStatements.median);
  const idlePickup = w?.pickupIdle;
  const pickupWhy = !idlePickup || idlePickup.n < MIN_DISTRIBUTION_SAMPLES ? `the worker's pickup of events that found it waiting: ${idlePickup?.n ?? 0} events, fewer than ${MIN_DISTRIBUTION_SAMPLES}` : null;
  if (w && !refuse(['costs.pickup'], pickupWhy)) {
    // drawn per event: its tail is the pickup's p99 (of an idle worker: the model adds the waits
    // behind a busy one's work, which calibrate's every-event figure holds too). The log's clock and
    // the worker's are read to the ms, so the table is of the readings spread over their ms.
    costs.pickup = quantileMap({ points: idlePickup!.unrounded, n: idlePickup!.n });
  }
  if (!refuse(['costs.rebuild'], unsoundCost('timeline rebuild', m.rebuild))) costs.rebuild = durationText(m.rebuild.median);
  if (Object.keys(costs).length > 0) block.costs = costs;

  if (m.postToLog && !refuse(['postToLog'], unsoundDistribution('post to event log', m.postToLog))) {
    block.postToLog = quantileMap(m.postToLog);
  }
  const a = m.api;
  if (a) {
    const api: NonNullable<InfrastructureBlock['api']> = {};
    const listsBad = refuse(['api.cpuPerList'], unsoundFit('API CPU against merged lists', a.lists, 'list'));
    const postsBad = refuse(['api.cpuPerPost'], unsoundFit('API CPU against hydrated posts', a.posts, 'post'));
    // a list's CPU: an empty list's (the quiet fit's slope) and per entry what a full one costs more,
    // or, without that split, a full list's whole
    let perList = a.lists.slope;
    let perEntry = 0;
    const entries = a.fullListEntries ?? 0;
    if (!listsBad && a.quietLists && entries > 0) {
      const empty = emptyListCost(a.lists, a.quietLists);
      const more = typeof empty === 'number' ? a.lists.slope - empty : NaN;
      const why = typeof empty === 'string' ? empty : more > 0 ? null : `API CPU per list entry: a full list (${usText(a.lists.slope)}) costs no more than an empty one (${usText(empty)})`;
      if (!refuse(['api.cpuPerListEntry'], why)) {
        perList = empty as number;
        perEntry = more / entries;
        api.cpuPerListEntry = durationText(perEntry);
      }
    } else if (listsBad && a.quietLists) refuse(['api.cpuPerListEntry'], 'API CPU per list entry: needs the full lists\' fit');
    if (!listsBad) api.cpuPerList = durationText(perList);
    if (!postsBad) api.cpuPerPost = durationText(a.posts.slope);
    // the base: the shared shape's CPU less its lists and posts (the mean of both fits' values there);
    // its lists hold a full list's entries in all (the timeline's)
    const atShape = (a.lists.intercept + a.lists.slope * a.at.lists + a.posts.intercept + a.posts.slope * a.at.posts) / 2;
    const shapeLists = perEntry > 0 ? perList * a.at.lists + perEntry * entries : a.lists.slope * a.at.lists;
    const base = atShape - shapeLists - a.posts.slope * a.at.posts;
    if (!refuse(['api.cpuPerRead'], listsBad || postsBad ? 'API CPU per read: its base needs both fits' : base > 0 ? null : `API CPU per read: the base is ${usText(base)}, not positive`)) {
      api.cpuPerRead = durationText(base);
    }
    if (!refuse(['api.cpuPerWrite'], unsoundCost('API CPU per post', a.write))) api.cpuPerWrite = durationText(a.write.median);
    // A round trip not above its CPU (loopback: 33 us against 37 us here) leaves no hop to measure:
    // 0, not the 0.2 ms default, which would add ten times the hop other machines measured.
    const network = Math.max(0, a.trivialRoundTrip.median - a.trivialCpu.median);
    if (!refuse(['api.network'], Number.isFinite(network) ? null : `network: the trivial request's round trip (${usText(a.trivialRoundTrip.median)}) or its CPU (${usText(a.trivialCpu.median)}) was not measured`)) {
      api.network = durationText(network);
    }
    const s = a.service;
    if (!refuse(['api.spread'], unsoundDistribution('service time spread', s) ?? (s.mean > 0 ? null : 'service time spread: the mean service time is not positive'))) {
      api.spread = Object.fromEntries(s.points.map((q) => [quantileKey(q.p), Number((Math.max(0, q.value) / s.mean).toPrecision(3))]));
    }
    // what the model gives the spread's page at no load (its CPU, two round trips, its Redis work);
    // a paced read takes longer than that by what finding the server idle costs
    if (!listsBad && !postsBad && base > 0 && Number.isFinite(zrange) && m.mgetPerKey) {
      const redisLists = zrange * a.at.lists + zrangePerEntry * (zrangePerEntry > 0 ? entries || firstSliceOfShape(a) : 0);
      const pageCpu = base + shapeLists + a.posts.slope * a.at.posts;
      s.modelled = pageCpu + 2 * m.rtt.median + redisLists + m.mgetPerKey.median * a.at.posts;
      const idle = Math.max(0, s.mean - s.modelled);
      api.idleOverhead = durationText(idle);
      // what of it the server spends on its own core: a paced read's CPU beyond the fits' for the page
      if (s.cpu && !refuse(['api.idleCpu'], unsoundCost("a paced read's CPU", s.cpu))) {
        api.idleCpu = durationText(Math.min(idle, Math.max(0, s.cpu.median - pageCpu)));
      }
    } else refuse(['api.idleOverhead', 'api.idleCpu'], 'idle overhead: needs the CPU fits, the page read and the MGET');
    const quiet = s.idleCpuRate ?? s.idleCpuPerSecond?.median;
    if (quiet !== undefined && !refuse(['api.backgroundCpu'], quiet >= 0 ? null : 'the server with no request: no CPU sample')) {
      api.backgroundCpu = Number(quiet.toPrecision(3));
    }
    if (Object.keys(api).length > 0) block.api = api;
  }
  if (m.postListed && !refuse(['api.postListed'], unsoundDistribution("a post's creation to its author's list", m.postListed))) {
    (block.api ??= {}).postListed = quantileMap(m.postListed);
  }
  return { block, refused, fellBack };
}

export function calibrationDocument(provenance: Provenance, m: Measurements, refusedHere: readonly Refusal[]): CalibrationDocument {
  const { block, refused, fellBack } = infrastructureBlock(m, refusedHere);
  return { schema: CALIBRATION_SCHEMA, tool: { name: 'feedlab', version: FEEDLAB_VERSION }, calibration: { ...provenance, measurements: m, refused, fellBack }, infrastructure: block };
}
