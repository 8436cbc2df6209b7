// A replay's measurements as the result document every mode writes (feedlab.result/1, source
// "replay"): the same summary fields as a simulation, each taken from what was measured on the live
// stack, so that reports, --check and thresholds work on it unchanged, plus a `replay` section with
// the mapping, what was offered and sent, and each figure's source beside the other sources of it
// (the workers' histograms and the probes, the Redis counter and commandstats, the memory model).
//
// Figures a replay does not measure are NaN (null in the JSON), never a made-up number: event-log
// partition utilisation, the Postgres connections' busy share, the adaptive threshold's changes.
import type { Reconciliation } from './reconcile.js';
import { mean } from 'simple-statistics';
import * as hdr from 'hdr-histogram-js';
import { isDormant } from '../../core/timeline-rules.js';
import type { FollowerGraph } from '../graph/graph.js';
import { followerDistribution } from '../graph/follower-distribution.js';
import type { FiredEvent } from '../model/metrics.js';
import type { Population } from '../model/population.js';
import { backlogDrainSeconds, FEEDLAB_VERSION, RESULT_SCHEMA, type LatencySummary, type RunResult } from '../result.js';
import { perTimeline } from '../metrics/recorder.js';
import type { Scenario } from '../scenario/types.js';
import { documentProvenance, type CommandTime } from '../scenario/calibration.js';
import { sloVerdict } from '../slo.js';
import type { MaterializedSchedule } from '../workload/schedule.js';
import type { OfferedLoad } from './capacity.js';
import type { CpuShare } from './cpu.js';
import { encodeHistograms, type DriverResult, type ReadsDuring } from './driver.js';
import type { ProbeFigures } from './fanout-probe.js';
import type { ReplayMapping } from './mapping.js';
import type { MemoryByClass } from './memory-classes.js';
import { encodeMerged, latencySeconds, secondsPerListWrite, type FleetFigures, type HopFigures } from './redis-figures.js';
import type { SaturationFigure } from './saturation.js';
import { bucketQuantile, type ServerCounters } from './server-metrics.js';

/** A run whose other processes took more than this share of the machine on average is marked contended. */
export const CONTENDED_OTHER_SHARE = 0.25;
/** ... and so is one whose Redis grew by more than this much besides the replay's own keys (another tenant wrote to it). */
export const CONTENDED_MEMORY_SHARE = 0.25;

/** Where a self-contained replay kept its data (all of it removed afterwards). */
export interface Scratchpad {
  database: string;
  keyPrefix: string;
  streamPrefix: string;
}

/** One series interval's samples, taken as it closed. */
export interface IntervalSample {
  /** End of the interval, ms from the window's start. */
  atMs: number;
  usedMemory: number;
  backlogEvents: number;
  /** The server's cumulative counters at that moment. */
  coldStarts: number;
  /** For the live view: timeline writes per second over the interval (the Redis counter), the probes' follower lag p99 over it. */
  writesPerSecond: number;
  lagP99Seconds: number;
  /** The probes' follower lag p99 over the run so far, seconds. */
  followerLagP99SoFar: number;
  /** CPU of the interval, % of one core. */
  cpu: CpuShare | null;
  /** Resident memory of each process at its end, bytes, by name ('server', 'worker 1', ..., 'driver'; a restarted one's new pid). */
  residentBytes?: Record<string, number>;
}

/** Everything one policy's replay measured. */
export interface ReplayMeasurements {
  scenario: Scenario;
  mapping: ReplayMapping;
  graph: FollowerGraph;
  population: Population;
  schedule: MaterializedSchedule;
  digest: string;
  offered: OfferedLoad;
  policy: string;
  target: { mode: 'self-contained' | 'target'; url: string; scratch: Scratchpad | null; processes: { name: string; pid: number }[] };
  world: { users: number; follows: number; historyPosts: number; loadSeconds: number; warm: { readers: number; seconds: number } | null };
  intervalSeconds: number;
  /** Wall seconds the window ran (the mapping's, or less when stopped). */
  windowSeconds: number;
  windowStartEpochMs: number;
  /** The machine the replay ran from (os.hostname()). */
  host: string;
  driver: DriverResult;
  probe: ProbeFigures;
  /** What the workers did in the window (their published figures less those before it). */
  fleet: FleetFigures & { exact: boolean };
  /** The hop from each post's commit to its event in the log (the stream entry's ms), seconds. */
  hop: HopFigures;
  /** Unix second -> timeline writes (the workers' counter at Redis). */
  writesBySecond: Map<number, number>;
  samples: IntervalSample[];
  /** used_memory before the replay's keys were written. */
  baselineUsedMemory: number;
  memory: MemoryByClass;
  /** The server's counters over the window and the settling (the reads-only window is before it), and as they were before it. */
  server: ServerCounters;
  serverBefore: ServerCounters;
  /** Commands per name over the measured window; over the reads-only window (before the measured one, on the warm
   * steady state; an idle window's share taken off) with its completed reads. */
  commands: { window: Record<string, number>; usecWindow: Record<string, number>; readsOnly: { reads: number; seconds: number; calls: Record<string, number> } | null };
  /**
   * Postgres's own statistics of the database over the window and the settling (pg_stat_database):
   * transactions (each statement outside a transaction is one), rows read and written. `own`: the
   * replay's scratch database (only the server's and the workers' work in it), else a deployment's.
   */
  postgres: { database: string; own: boolean; transactions: number; rowsRead: number; rowsWritten: number };
  cpu: CpuShare | null;
  workerProcesses: string[];
  saturation: { own: SaturationFigure | null; autocannon: SaturationFigure | null };
  events: FiredEvent[];
  cacheLosses: { atSeconds: number; keys: number; timelines: number }[];
  /** The scenario's workerCrash and apiCrash events as injected: who was killed, when, and what it cost. */
  faults: CrashFigures[];
  /** The scenario's eventLogLoss and redisFlush events: the event log's keys deleted (a flush's cache keys are its cacheLosses entry). */
  keyLosses: KeyLossFigures[];
  /** The scenario's redisOutage and postgresOutage events, through the stack's proxies. */
  outages: OutageFigures[];
  /** What the server acknowledged against what its stores hold, once settled (reconcile.ts); null when it could not run. */
  reconciliation: Reconciliation | null;
  /** Seconds after the window's start when the event log's backlog was empty again (NaN: never seen empty). */
  drainedAtSeconds: number;
  /** The backlog when the window ended, in post events. */
  endBacklogEvents: number;
  stoppedAtSeconds: number | null;
}

export interface ReplaySection {
  /** Where and when the window began (absent from documents written before it was recorded). */
  ran?: { host: string; startedAt: string };
  mode: 'self-contained' | 'target';
  target: string;
  scratch: Scratchpad | null;
  /** The processes the replay started (self-contained), stopped before the document was written. */
  processes: { name: string; pid: number }[];
  mapping: {
    users: number;
    follows: number;
    timeScale: number;
    simulatedSeconds: number;
    wallSeconds: number;
    population: number;
    celebrityScale: number;
    workers: ReplayMapping['workers'];
    warm: boolean;
    notes: string[];
  };
  schedule: { digest: string; posts: number; sessions: number; pages: number };
  offered: OfferedLoad;
  world: ReplayMeasurements['world'];
  driver: Omit<DriverResult, 'posts' | 'intervals' | 'histograms' | 'readTally'> & { histograms: Record<string, string> };
  fanout: {
    workers: {
      postLag: ReturnType<typeof latencySeconds>;
      followerLag: ReturnType<typeof latencySeconds>;
      /** A worker's handling of one post event, and of one pipelined batch of timeline writes (seconds). */
      event: ReturnType<typeof latencySeconds>;
      batch: ReturnType<typeof latencySeconds>;
      /** How late their event loops ran a timer due every 10 ms (seconds); absent from older workers. */
      loopDelay?: ReturnType<typeof latencySeconds>;
      /**
       * The pickup (seconds) of the events that found their worker's read waiting: an idle worker
       * woken, what calibrate's costs.pickup is; summary.fanout.stagesSeconds.pickup is every
       * event's, those behind the worker's own batch too. Absent from older documents.
       */
      pickupIdle?: ReturnType<typeof latencySeconds>;
      counters: FleetFigures['counters'];
      processes: number;
    };
    /** From each post's commit to its event in the log, as the simulator's postToLog draws it. */
    hop: HopFigures;
    probes: Omit<ProbeFigures, 'histogram' | 'pulledHistogram' | 'pulledPostHistogram' | 'lagP99ByBucket'>;
    /** Probe over workers, per follower and per post, p50 and p99: 1 is agreement (the probes poll every pollMs). */
    agreement: { followerP50: number; followerP99: number; postP50: number; postP99: number };
    /**
     * `redisSecondsPerWrite`: Redis's own time of the scripts over the window per list they trimmed
     * (commandstats: EVALSHA's time over ZREMRANGEBYRANK's calls, sim/replay/redis-figures.ts): a
     * timeline write with its share of its add call, beside a few per post (its list add, the pulled
     * marks), as calibrate's costs.zadd is measured; null without either (absent from older
     * documents, whose `redisSecondsPerScript` was per call when a call wrote one timeline).
     */
    writes: { counted: number; commandstatsZadd: number; workersCounter: number; redisSecondsPerWrite?: number | null };
    /**
     * Redis's INFO commandstats over the window, by command: calls and Redis's own microseconds. A
     * script's commands count under their own names as well as in its EVALSHA, so each command's
     * time a call says where a script's time goes. Absent from older documents.
     */
    redisCommands?: Record<string, CommandTime>;
  };
  memory: MemoryByClass & { baselineUsedMemory: number };
  reads: {
    server: {
      p50Ms: number;
      p90Ms: number;
      p99Ms: number;
      answered: number;
      /** How late its event loop ran a timer due every 10 ms (a read arriving then waited as long); absent from an older server. */
      loopDelay?: { p50Ms: number; p99Ms: number; probes: number };
      /** Its GC pauses over the window: how many, their ms in all and their p99. */
      gc?: { pauses: number; totalMs: number; p99Ms: number };
    };
    commandsPerRead: { total: number; byCommand: Record<string, number>; reads: number; seconds: number } | null;
    counters: ServerCounters;
  };
  postgres: ReplayMeasurements['postgres'];
  /** contended: other processes took over CONTENDED_OTHER_SHARE of the machine, or Redis grew by foreignMemoryBytes (other tenants') over CONTENDED_MEMORY_SHARE of the replay's own memory. */
  cpu: { share: CpuShare | null; perInterval: (CpuShare | null)[]; contended: boolean; otherShare: number; foreignMemoryBytes: number; workerProcesses: string[] };
  /** Each process's resident memory at every sample (the window's and the settling's), bytes: whether it levels off (absent from older documents). */
  processMemory?: { atSeconds: number[]; residentBytes: Record<string, number[]> };
  saturation: ReplayMeasurements['saturation'];
  cacheLosses: ReplayMeasurements['cacheLosses'];
  reconciliation: ReplayMeasurements['reconciliation'];
  faults: ReplayMeasurements['faults'];
  keyLosses: ReplayMeasurements['keyLosses'];
  outages: ReplayMeasurements['outages'];
}

/** An eventLogLoss or redisFlush as the replay injected it; seconds of wall time from the window's start. */
export interface KeyLossFigures {
  kind: 'eventLogLoss' | 'redisFlush';
  atSeconds: number;
  /** The event log's keys deleted. */
  keys: number;
  /** Until the workers' consumer group was on the log again (NaN: not within the run). */
  groupBackAfterSeconds: number;
}

/** One workerCrash or apiCrash as the replay injected it; seconds of wall time from the window's start. */
export interface CrashFigures extends FaultCost {
  kind: 'workerCrash' | 'apiCrash';
  atSeconds: number;
  /** The workers killed (SIGKILL, whatever they held), by index; none for the API. */
  workers: number[];
  /** When they were started again, and how long until ready. */
  restartedAtSeconds: number;
  readyAfterSeconds: number;
  /** Post events waiting in the log just before the kill, and at the restart. */
  backlogBefore: number;
  backlogAtRestart: number;
  /** From the restart until the backlog was back to where it was before the kill (NaN: not within the window and the settling). */
  recoveredAfterSeconds: number;
}

/**
 * What a crash or an outage cost, over its span (from its instant until the process was ready again,
 * or the service back): the posts in flight at its start or due within it, the reads (every page)
 * due within it, the first 201 after it (a crash: after the restart), the fan-out lag (the probes'
 * worst per-interval p99 from the fault to its recovery, against their median interval before the
 * first fault; NaN: nothing probed then), and what the reconciliation found among its posts (absent
 * when it could not run).
 */
export interface FaultCost {
  posts: PostsDuring;
  reads: ReadsDuring;
  firstAckAfterSeconds: number;
  lag: FaultLag;
  reconciled?: FaultReconciled;
}

/** A redisOutage or postgresOutage as the replay injected it through its proxy; seconds of wall time from the window's start. */
export interface OutageFigures extends FaultCost {
  kind: 'redisOutage' | 'postgresOutage';
  mode: 'reset' | 'hang';
  atSeconds: number;
  endedAtSeconds: number;
  /** Connections through the proxy when it began; those that arrived during it, held (a hang) or refused (a reset). */
  connections: { open: number; held: number; refused: number };
  /** Post events waiting in the log just before it, and at its end. */
  backlogBefore: number;
  backlogAtEnd: number;
  /** From its end until the backlog was back to where it was before it (NaN: not within the window and the settling). */
  recoveredAfterSeconds: number;
}

/**
 * Posts during a fault: answered 201 (maybe late: the driver holds a request for a connection up to
 * 10 s), and not (by answer: 503, another 5xx, a network error; other: 4xx, timed out, dropped); the
 * longest a 201 took from its due time.
 */
export interface PostsDuring {
  due: number;
  acknowledged: number;
  failed: number;
  status503: number;
  status5xx: number;
  networkErrors: number;
  other: number;
  maxWaitSeconds: number;
}

/** The reconciliation's findings among a fault's posts: acknowledged and not stored, stored twice, a delivery missing once settled. */
export interface FaultReconciled {
  lost: number;
  duplicated: number;
  missingDeliveries: number;
}

export interface FaultLag {
  worstP99Seconds: number;
  beforeP99Seconds: number;
}

function residentSeries(samples: IntervalSample[]): NonNullable<ReplaySection['processMemory']> {
  const names = [...new Set(samples.flatMap((s) => Object.keys(s.residentBytes ?? {})))];
  return {
    atSeconds: samples.map((s) => s.atMs / 1000),
    residentBytes: Object.fromEntries(names.map((n) => [n, samples.map((s) => s.residentBytes?.[n] ?? NaN)])),
  };
}

/** The whole machine in % of one core (200 on two cores): every part of a share added up. */
function machinePct(c: CpuShare): number {
  return c.generator + Object.values(c.processes).reduce((a, b) => a + b, 0) + c.redis + c.postgres + c.other + c.idle;
}

const toLatency = (l: ReturnType<typeof latencySeconds>): LatencySummary => ({ mean: l.mean, p50: l.p50, p90: l.p90, p99: l.p99, p999: l.p999, max: l.max });

/** Posts whose author had no follower the fan-out reaches (none active, when dormant followers are skipped). */
function postsWithoutAudience(m: ReplayMeasurements, skipDormant: boolean): number {
  const g = m.graph;
  let n = 0;
  for (const p of m.driver.posts) {
    if (p.outcome !== 'created') continue;
    let reached = false;
    for (let e = g.followerOffsets[p.authorId]; e < g.followerOffsets[p.authorId + 1] && !reached; e++) {
      reached = !skipDormant || !isDormant(m.population.lastSeen[g.followerIds[e]], 0, m.scenario.policy.dormantDays);
    }
    if (!reached) n++;
  }
  return n;
}

/** A replay document's pickup of an idle worker (workers.pickupIdle), or null where it kept none (an older document, or no event found its worker waiting). */
export function idlePickupOf(r: RunResult): ReplaySection['fanout']['workers']['pickupIdle'] | null {
  const x = r.replay?.fanout.workers.pickupIdle;
  return x !== undefined && x.count > 0 ? x : null;
}

export function buildReplayResult(m: ReplayMeasurements): RunResult {
  const iv = m.intervalSeconds;
  const duration = m.windowSeconds;
  const intervals = Math.max(1, Math.ceil(duration / iv - 1e-9));
  const d = m.driver;
  const startSecond = m.windowStartEpochMs / 1000;

  // timeline writes per second of the window (and after it, until the backlog drained), at Redis
  // (and the settling's after it in the total, not in the window's rates or series)
  let writes = 0;
  let windowWrites = 0;
  let peakWrites = 0;
  const writesSeries = new Array<number>(intervals).fill(0);
  for (const [second, n] of m.writesBySecond) {
    const at = second - Math.floor(startSecond);
    if (at < -1) continue;
    writes += n;
    if (at >= duration) continue;
    windowWrites += n;
    if (n > peakWrites) peakWrites = n;
    writesSeries[Math.min(intervals - 1, Math.max(0, Math.floor(at / iv)))] += n;
  }
  const perInterval = (xs: number[]) => xs.map((x, i) => x / Math.min(iv, duration - i * iv));

  const posts = d.totals.posts.completed;
  const pushed = m.fleet.counters.postsPushed ?? 0;
  const writesPerPushed = pushed > 0 ? writes / pushed : 0;
  const bucketOf = (atMs: number) => Math.min(intervals - 1, Math.floor(atMs / 1000 / iv));
  const series = {
    posts: new Array<number>(intervals).fill(0),
    reads: new Array<number>(intervals).fill(0),
    readP99: new Array<number>(intervals).fill(NaN),
    cold: new Array<number>(intervals).fill(0),
    backlog: new Array<number>(intervals).fill(NaN),
    memory: new Array<number>(intervals).fill(NaN),
  };
  for (const b of d.intervals) {
    const i = bucketOf(b.startMs);
    series.posts[i] += b.posts.completed;
    series.reads[i] += b.reads.completed;
    if (Number.isFinite(b.reads.p99Ms)) series.readP99[i] = Math.max(Number.isFinite(series.readP99[i]) ? series.readP99[i] : 0, b.reads.p99Ms);
  }
  let lastCold = m.serverBefore.coldStarts;
  for (const s of m.samples) {
    // a sample is taken just after its interval closed; those of the settling after the window are not in the series
    const i = Math.max(0, Math.round(s.atMs / 1000 / iv) - 1);
    if (i >= intervals) break;
    // the API's count: none while it is down; from 0 again after a restart (what the killed one
    // counted after its last sample is lost with it)
    if (Number.isFinite(s.coldStarts)) {
      series.cold[i] += s.coldStarts >= lastCold ? s.coldStarts - lastCold : s.coldStarts;
      lastCold = s.coldStarts;
    }
    series.backlog[i] = s.backlogEvents * writesPerPushed;
    series.memory[i] = s.usedMemory - m.baselineUsedMemory;
  }
  const classes = m.memory.classes;
  const timelineBytes = classes.timelines.bytes;
  const listBytes = classes.pulledLists.bytes + classes.ownLists.bytes;
  // Redis memory of the replay's own keys at the end (MEMORY USAGE of every class and the keyspace's
  // entry per key), the peak from the instance's used_memory over the window anchored at that end
  const ownKeys = Object.values(classes).reduce((a, k) => a + k.keys, 0);
  const endMemory = Object.values(classes).reduce((a, k) => a + k.bytes, 0) + ownKeys * m.memory.keyspaceBytesPerKey;
  const instanceEnd = m.memory.usedMemory - m.baselineUsedMemory;
  const foreignMemory = instanceEnd - endMemory;
  // the series: the instance's used_memory over the start, less what at the end was not the replay's keys
  for (let i = 0; i < intervals; i++) if (Number.isFinite(series.memory[i])) series.memory[i] -= foreignMemory;
  const memorySeries = series.memory.filter((x) => Number.isFinite(x));
  const shardBytes = m.memory.shardBytes;
  const meanShard = shardBytes.length > 0 ? mean(shardBytes) : 0;

  // per post: the workers' pushed posts; pulled posts by the probes (a pulled post is in its author's
  // list before the 201: the worker's later list write finds it there and records no sample)
  const workersPostLag = latencySeconds(m.fleet.histograms.get('fanoutLagPushMs'), m.fleet.histograms.get('fanoutLagPullMs'));
  const pulledPostsByProbe = m.probe.pulledPostLag.count > 0
    ? { h: hdr.decodeFromCompressedBase64(m.probe.pulledPostHistogram, 64, false), sumMs: m.probe.pulledPostLag.mean * m.probe.pulledPostLag.count * 1000 }
    : undefined;
  const postLag = latencySeconds(m.fleet.histograms.get('fanoutLagPushMs'), pulledPostsByProbe);
  // per follower: the workers' pushed deliveries, exact; pulled posts by the probes, each weighted by its
  // live audience (the workers weigh a pulled post by users.follower_count, population-scale for a celebrity)
  const workersFollowerLag = latencySeconds(m.fleet.histograms.get('fanoutFollowerLagPushMs'));
  const pulledByProbe = m.probe.pulledFollowerLag.count > 0
    ? { h: hdr.decodeFromCompressedBase64(m.probe.pulledHistogram, 64, false), sumMs: m.probe.pulledFollowerLag.mean * m.probe.pulledFollowerLag.count * 1000 }
    : undefined;
  const followerLag = latencySeconds(m.fleet.histograms.get('fanoutFollowerLagPushMs'), pulledByProbe);
  const lagSeries = Array.from({ length: intervals }, (_, i) => m.probe.lagP99ByBucket[i] ?? NaN);

  const readsOnly = m.commands.readsOnly;
  // the window's calls and Redis's own microseconds by command, as calibrate keeps its running worker's
  const redisCommands: Record<string, CommandTime> = Object.fromEntries(Object.entries(m.commands.window).map(([cmd, calls]) => [cmd, { calls, usec: m.commands.usecWindow[cmd] ?? 0 }]));
  const commandsPerRead =
    readsOnly && readsOnly.reads > 0
      ? {
          total: Object.values(readsOnly.calls).reduce((a, b) => a + b, 0) / readsOnly.reads,
          byCommand: Object.fromEntries(Object.entries(readsOnly.calls).map(([k, v]) => [k, v / readsOnly.reads])),
          reads: readsOnly.reads,
          seconds: readsOnly.seconds,
        }
      : null;
  const server = m.server;
  const cpuShares = m.samples.map((s) => s.cpu);
  const otherShare = m.cpu ? m.cpu.other / machinePct(m.cpu) : NaN;
  const workerCpu = m.cpu ? m.workerProcesses.reduce((s, name) => s + (m.cpu!.processes[name] ?? 0), 0) : NaN;
  const redisBusiest = Math.max(0, ...cpuShares.map((c) => (c ? c.redis : 0))) / 100;
  const floorWrites = m.mapping.workers.started * m.scenario.infrastructure.writesPerSecondPerWorker;
  const backlogWrites = series.backlog.map((x) => (Number.isFinite(x) ? x : 0));
  const drainedAt = Number.isFinite(m.drainedAtSeconds) ? m.drainedAtSeconds : NaN;
  const ratio = (a: number, b: number) => (b > 0 && Number.isFinite(a) && Number.isFinite(b) ? a / b : NaN);
  const probeF = m.probe.followerLag;
  const probeP = m.probe.postLag;

  const doc: Omit<RunResult, 'summary'> & { summary: Omit<RunResult['summary'], 'slo'> & { slo?: RunResult['summary']['slo'] } } = {
    schema: RESULT_SCHEMA,
    tool: { name: 'feedlab', version: FEEDLAB_VERSION, mode: 'replay' },
    source: 'replay',
    scenario: {
      name: m.scenario.name,
      description: m.scenario.description,
      seed: m.scenario.seed,
      // the whole window, as a simulation gives its whole duration: a stopped run says where in `partial`
      durationSeconds: m.mapping.wallSeconds,
      population: m.graph.users,
      sampledUsers: m.graph.users,
      sampledEdges: m.graph.edges,
      scale: 1,
      graph: { ...m.graph.provenance },
      ...(m.scenario.calibration ? { calibration: documentProvenance(m.scenario.calibration) } : {}),
    },
    policy: m.policy,
    ...(m.stoppedAtSeconds === null ? {} : { partial: { stoppedAtSeconds: m.stoppedAtSeconds } }),
    summary: {
      posts: {
        total: posts,
        perSecond: { mean: posts / duration, peak: Math.max(0, ...perInterval(series.posts)) },
        pushed,
        pulled: m.fleet.counters.postsPulled ?? 0,
        withoutAudience: postsWithoutAudience(m, m.scenario.policy.skipDormant),
      },
      fanout: {
        lagSeconds: toLatency(postLag),
        followerLagSeconds: toLatency(followerLag),
        writesPerSecond: { mean: windowWrites / duration, peak: peakWrites },
        deliveries: writes,
        deliveriesPerPost: posts > 0 ? writes / posts : 0,
        listWrites: m.fleet.counters.listWrites ?? 0,
        backlog: {
          peakWrites: Math.max(0, ...backlogWrites),
          endWrites: m.endBacklogEvents * writesPerPushed,
          drainedAtSeconds: drainedAt,
          drainSeconds: backlogDrainSeconds(backlogWrites, iv, duration, Number.isFinite(drainedAt) ? drainedAt : duration, floorWrites),
        },
        workerUtilisation: workerCpu / (100 * Math.max(1, m.workerProcesses.length)),
        partitionUtilisation: NaN,
        adaptive: null,
        stagesSeconds: {
          postToLog: { mean: m.hop.mean, p50: m.hop.p50, p90: m.hop.p90, p99: m.hop.p99, p999: NaN, max: m.hop.max },
          pickup: toLatency(latencySeconds(m.fleet.histograms.get('eventPickupMs'))),
          statements: toLatency(latencySeconds(m.fleet.histograms.get('eventStatementsMs'))),
          firstPage: toLatency(latencySeconds(m.fleet.histograms.get('eventFirstPageMs'))),
          writes: toLatency(latencySeconds(m.fleet.histograms.get('eventWritesMs'))),
          largeWritesPerTimeline: perTimeline(toLatency(latencySeconds(m.fleet.histograms.get('largeWritesPerThousandMs')))),
        },
      },
      redis: {
        memoryBytes: { peak: Math.max(endMemory, ...memorySeries), end: endMemory },
        naiveMemoryBytes: { peak: m.memory.naiveTimelineBytes, end: m.memory.naiveTimelineBytes },
        naiveUnderestimate: m.memory.naiveTimelineBytes > 0 ? timelineBytes / m.memory.naiveTimelineBytes : 0,
        listBytes,
        timelines: classes.timelines.keys,
        perShard: { endBytes: shardBytes, imbalance: meanShard > 0 ? Math.max(...shardBytes) / meanShard : 1 },
        peakShardUtilisation: redisBusiest,
        saturatedShards: redisBusiest > 0.95 ? 1 : 0,
      },
      reads: {
        total: d.totals.reads.completed,
        perSecond: { mean: d.totals.reads.completed / duration },
        latencyMs: {
          mean: d.latency.reads.fromIntended.meanMs,
          p50: d.latency.reads.fromIntended.p50Ms,
          p90: d.latency.reads.fromIntended.p90Ms,
          p99: d.latency.reads.fromIntended.p99Ms,
          p999: d.latency.reads.fromIntended.p999Ms,
          max: d.latency.reads.fromIntended.maxMs,
        },
        // measured over a reads-only window of first pages: the mean is the first pages' figure
        redisOpsPerRead: { mean: commandsPerRead ? commandsPerRead.total : NaN, firstPages: commandsPerRead ? commandsPerRead.total : NaN },
        coldShare: server.feedAnswered > 0 ? server.coldStarts / server.feedAnswered : 0,
        coldReads: server.coldStarts,
        listRebuilds: server.listRebuilds,
        rebuilds: server.rebuilds,
        postgresUtilisation: NaN,
      },
    },
    events: m.events,
    series: {
      intervalSeconds: iv,
      startSeconds: Array.from({ length: intervals }, (_, i) => i * iv),
      postsPerSecond: perInterval(series.posts),
      writesPerSecond: perInterval(writesSeries),
      readsPerSecond: perInterval(series.reads),
      coldReadsPerSecond: perInterval(series.cold),
      backlogWrites: series.backlog,
      lagP99Seconds: lagSeries,
      readP99Ms: series.readP99,
      memoryBytes: series.memory,
      naiveMemoryBytes: new Array<number>(intervals).fill(NaN),
      maxShardBytes: new Array<number>(intervals).fill(NaN),
      threshold: null,
    },
    histograms: { postLagMicros: encodeMerged(m.fleet, ['fanoutLagPushMs', 'fanoutLagPullMs']), readLatencyMicros: hdr.encodeIntoCompressedBase64(d.histograms.reads.fromIntended) },
    followers: followerDistribution(m.graph),
    replay: {
      ran: { host: m.host, startedAt: new Date(m.windowStartEpochMs).toISOString() },
      mode: m.target.mode,
      target: m.target.url,
      scratch: m.target.scratch,
      processes: m.target.processes,
      mapping: {
        users: m.graph.users,
        follows: m.graph.edges,
        timeScale: m.mapping.timeScale,
        simulatedSeconds: m.mapping.simulatedSeconds,
        wallSeconds: m.mapping.wallSeconds,
        population: m.mapping.population,
        celebrityScale: m.mapping.celebrityScale,
        workers: m.mapping.workers,
        warm: m.mapping.warm,
        notes: m.mapping.notes,
      },
      schedule: { digest: m.digest, posts: m.schedule.posts.at.length, sessions: m.schedule.sessions.at.length, pages: m.offered.pages },
      offered: m.offered,
      world: m.world,
      driver: (() => {
        const { posts: _posts, intervals: _intervals, histograms, readTally: _tally, ...rest } = d;
        return { ...rest, histograms: encodeHistograms(histograms) };
      })(),
      fanout: {
        workers: {
          postLag: workersPostLag,
          followerLag: workersFollowerLag,
          event: latencySeconds(m.fleet.histograms.get('eventMs')),
          batch: latencySeconds(m.fleet.histograms.get('batchMs')),
          ...(m.fleet.histograms.has('eventLoopDelayMs') ? { loopDelay: latencySeconds(m.fleet.histograms.get('eventLoopDelayMs')) } : {}),
          ...(m.fleet.histograms.has('eventPickupIdleMs') ? { pickupIdle: latencySeconds(m.fleet.histograms.get('eventPickupIdleMs')) } : {}),
          counters: m.fleet.counters,
          processes: m.fleet.workers,
        },
        hop: m.hop,
        probes: (() => {
          const { histogram: _h, pulledHistogram: _p, pulledPostHistogram: _q, lagP99ByBucket: _b, ...rest } = m.probe;
          return rest;
        })(),
        agreement: {
          followerP50: ratio(probeF.p50, workersFollowerLag.p50),
          followerP99: ratio(probeF.p99, workersFollowerLag.p99),
          postP50: ratio(probeP.p50, workersPostLag.p50),
          postP99: ratio(probeP.p99, workersPostLag.p99),
        },
        writes: {
          counted: writes,
          commandstatsZadd: m.commands.window.zadd ?? 0,
          workersCounter: m.fleet.counters.timelineWrites ?? 0,
          redisSecondsPerWrite: secondsPerListWrite(redisCommands.evalsha, redisCommands.zremrangebyrank),
        },
        redisCommands,
      },
      memory: { ...m.memory, baselineUsedMemory: m.baselineUsedMemory },
      reads: {
        server: {
          p50Ms: bucketQuantile(server.feedLatency, 0.5) * 1000,
          p90Ms: bucketQuantile(server.feedLatency, 0.9) * 1000,
          p99Ms: bucketQuantile(server.feedLatency, 0.99) * 1000,
          answered: server.feedAnswered,
          ...runtimeWaits(server),
        },
        commandsPerRead,
        counters: server,
      },
      postgres: m.postgres,
      cpu: {
        share: m.cpu,
        perInterval: cpuShares,
        contended: otherShare > CONTENDED_OTHER_SHARE || foreignMemory > CONTENDED_MEMORY_SHARE * endMemory,
        otherShare,
        foreignMemoryBytes: foreignMemory,
        workerProcesses: m.workerProcesses,
      },
      processMemory: residentSeries(m.samples),
      saturation: m.saturation,
      cacheLosses: m.cacheLosses,
      reconciliation: m.reconciliation,
      faults: m.faults,
      keyLosses: m.keyLosses,
      outages: m.outages,
    },
  };
  doc.summary.slo = sloVerdict(m.scenario, doc);
  return doc as RunResult;
}

/** The event loop's waits and the GC's pauses over the window, when the server measures them. */
function runtimeWaits(server: ServerCounters): Pick<ReplaySection['reads']['server'], 'loopDelay' | 'gc'> {
  const out: Pick<ReplaySection['reads']['server'], 'loopDelay' | 'gc'> = {};
  const probes = server.loopDelay.at(-1)?.count ?? 0;
  if (probes > 0) out.loopDelay = { p50Ms: bucketQuantile(server.loopDelay, 0.5) * 1000, p99Ms: bucketQuantile(server.loopDelay, 0.99) * 1000, probes };
  const pauses = server.gcPauses.at(-1)?.count ?? 0;
  if (server.gcPauses.length > 0) out.gc = { pauses, totalMs: server.gcPauseSeconds * 1000, p99Ms: pauses > 0 ? bucketQuantile(server.gcPauses, 0.99) * 1000 : 0 };
  return out;
}
