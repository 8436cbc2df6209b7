// The API tier: processes serving home-feed pages and posts on their cores (infrastructure.api).
// A request's CPU time (a page: cpuPerRead + cpuPerList per merged list and cpuPerListEntry per entry
// they return + cpuPerPost per hydrated post; a post: cpuPerWrite), moved by draws from the service-time spread (drawJitter), queues for a core first
// come, first served, after the client's network hop. A Node process serves on one event loop, so a
// core is a server and the Redis round trips of a request do not hold it; but when one comes back
// the handler resumes only once its event loop has finished what it runs (resumeWait).
//
// Without population scaling every request is simulated: the cores are an exact multi-server FIFO
// (WorkerPool). At scale a sampled request stands for many, so its wait is drawn from the M/M/c
// queue (Erlang C) at the utilisation the whole population put on the tier over the last minute
// (a sampled session's pages arrive at once, each standing for many: a second alone is lumpy).
// `instances: none` sizes the tier so that it is 50% busy at the run's peak, a cold-start storm's
// returning readers included: the tier is then never what a run is short of (the number is
// reported); give `instances` to see it queue.
import { Rng } from '../../core/random.js';
import { quantileAt, quantileMean } from '../scenario/quantiles.js';
import type { ApiTier } from '../scenario/types.js';
import { firstSlice, listsPerPage, ROUND_TRIPS_PER_PAGE } from '../../core/read-plan.js';
import { meanPagesPerSession } from '../workload/activity.js';
import type { ModelContext } from './context.js';
import { fullListsCpuSeconds, listCpuSeconds, listReadSeconds } from './list-reads.js';
import { erlangC, type SharedCores } from './machine.js';
import { WorkerPool } from './worker-pool.js';
import { ScenarioError } from '../scenario-error.js';

/**
 * The page `feedlab calibrate` measures the spread on (and fits its CPU around): no pulled followee
 * (the timeline and the own list), 20 posts; its lists return the timeline's full first slice (the
 * calibration's readers post nothing: their own lists are empty).
 */
export const SPREAD_REFERENCE_PAGE = { pulled: 0, posts: 20, entries: firstSlice(20) } as const;
const REFERENCE_LISTS = listsPerPage(SPREAD_REFERENCE_PAGE.pulled);
const REFERENCE_POSTS = SPREAD_REFERENCE_PAGE.posts;
const REFERENCE_ENTRIES = SPREAD_REFERENCE_PAGE.entries;
/**
 * Where the spread's stalls begin, those a request meets more often the more it allocates: the
 * spread's top 2% (calibrate's paced reads met a collection once in 80-110 reads, 2026-12-04; that
 * calibration's spread rose from 2.38 of the mean at p95 to 3.55 at p98 and 4.31 at p99). Taking
 * everything over the p90 as stalls put a pull replay's simulated read p99 at 1.49 of the measured;
 * the top 2%, at 0.90-0.92 (and threshold:1000's from 0.71 to 0.82-0.88, the compare bench's documents).
 */
export const STALL_FROM = 0.98;
/** A jitter below the mean never takes a request under this share of its CPU. */
const JITTER_FLOOR = 0.25;

function jittered(cpu: number, jitter: number): number {
  return Math.max(cpu * JITTER_FLOOR, cpu + jitter);
}

const NO_IDLE_EXTRA = { wait: 0, cpu: 0 } as const;

/**
 * The waits a post's handler resumes from before its author's list holds the post
 * (FeedService.createPost): its Postgres statement, then the list add in Redis.
 */
const POST_RESUMPTIONS = 2;

/**
 * The pieces a request's handler runs in on its event loop, split by its waits: a page's before,
 * between and after its two Redis round trips, a post's around its statement and its list add. A
 * handler resuming waits for the rest of one such piece, not of a whole request: drawn from a
 * whole request's, pull's posts (beside 3 ms pages on a server 17-22% busy) reached their list at
 * 1.29-1.41 times the replays' median, where the server's own Server-Timing under that load (p50
 * 3.2 ms) was no slower than calibrate's one at a time (3.3-3.5 ms; the compare bench, 2026-12-06).
 */
const RUNS_PER_REQUEST = ROUND_TRIPS_PER_PAGE + 1;

/**
 * The CPU a request spends beyond its own on a tier `utilisation` busy (api.idleCpu, at most
 * idleOverhead): all of it on an idle tier, none on a full one. The simulator's tier (idleExtra),
 * its automatic sizing and `plan`'s API instances charge it alike.
 */
export function idleCpuAt(spec: Pick<ApiTier, 'idleCpu' | 'idleOverhead'>, utilisation: number): number {
  return Math.min(spec.idleCpu, spec.idleOverhead) * (1 - Math.min(1, Math.max(0, utilisation)));
}

/** The cores a process `utilisation` busy gives requests, its background (api.backgroundCpu) taken out. */
export function requestCoresPerProcess(spec: Pick<ApiTier, 'coresPerInstance' | 'backgroundCpu'>, utilisation: number): number {
  return utilisation * spec.coresPerInstance - spec.backgroundCpu;
}

/**
 * Processes that serve `busyCores` of requests' CPU with each process `utilisation` busy, its
 * background (api.backgroundCpu) included: the simulator's `instances: none` and `plan` alike. A
 * background that fills the share on its own is bad input.
 */
export function instancesFor(spec: Pick<ApiTier, 'coresPerInstance' | 'backgroundCpu'>, busyCores: number, utilisation: number): number {
  const perProcess = requestCoresPerProcess(spec, utilisation);
  if (!(perProcess > 0)) {
    throw new ScenarioError(`infrastructure.api.backgroundCpu ${spec.backgroundCpu} leaves an API process nothing of the ${Math.round(utilisation * 100)}% of its ${spec.coresPerInstance} cores it is sized to be busy: give instances, or a smaller backgroundCpu`);
  }
  return Math.max(1, Math.ceil(busyCores / perProcess - 1e-9));
}

/** Seconds of load a scaled run's Erlang waits are drawn at. */
const ERLANG_WINDOW_SECONDS = 60;

/** The utilisation `instances: none` sizes the tier for, at the peak rate. */
export const AUTO_API_UTILISATION = 0.5;

export class ApiStage {
  readonly spec: ApiTier | null;
  /** API processes (resolved from `none`), and their cores. */
  readonly instances: number;
  readonly servers: number;
  /** Core seconds handed out (CPU stretched by the shared cores), for utilisation. */
  busySeconds = 0;
  /** CPU seconds of requests before the stretch. */
  cpuSeconds = 0;
  /** Cores the tier keeps busy with no request (api.backgroundCpu on every process). */
  private readonly background: number;
  private readonly exact: WorkerPool | null;
  private readonly rng: Rng;
  /** api.postListed's draws, a stream of their own (the other draws stay as they were without it). */
  private readonly listedRng: Rng;
  /** resumeWait's draws, a stream of their own too. */
  private readonly resumeRng: Rng;
  /** The extra stall draws of requests heavier than the reference page, a stream of their own too. */
  private readonly stallRng: Rng;
  private readonly spreadMean: number;
  /** The model's mean service of the page calibrate measures the spread on, at no load, and its CPU. */
  private readonly referenceService: number;
  private readonly referenceCpu: number;
  /** The spread's value at STALL_FROM: above it a draw is a stall (a collection, a preemption). */
  private readonly stallFrom: number;
  private readonly stallTop: number;
  /** CPU seconds and requests per second of the run (scaled runs' Erlang waits read the second before). */
  private readonly work: Float64Array;
  private readonly requests: Float64Array;

  constructor(
    private readonly ctx: ModelContext,
    private readonly machine: SharedCores,
  ) {
    const spec = ctx.sc.infrastructure.api;
    this.spec = spec;
    this.rng = Rng.derive(ctx.sc.seed, 'api');
    this.listedRng = Rng.derive(ctx.sc.seed, 'post-listed');
    this.resumeRng = Rng.derive(ctx.sc.seed, 'api-resume');
    this.stallRng = Rng.derive(ctx.sc.seed, 'api-stalls');
    this.work = new Float64Array(Math.ceil(ctx.duration) + 1);
    this.requests = new Float64Array(Math.ceil(ctx.duration) + 1);
    this.spreadMean = spec ? quantileMean(spec.spread) : 1;
    this.stallFrom = spec ? quantileAt(spec.spread, STALL_FROM) : 0;
    this.stallTop = spec ? quantileAt(spec.spread, 1) : 0;
    const c = ctx.sc.infrastructure.costs;
    this.referenceCpu = spec ? this.pageCpuOf(spec, REFERENCE_LISTS, REFERENCE_ENTRIES, REFERENCE_POSTS) : 0;
    // as calibrate measures it: one at a time, finding the tier idle
    this.referenceService = spec
      ? this.pageCpuOf(spec, REFERENCE_LISTS, REFERENCE_ENTRIES, REFERENCE_POSTS) + 2 * c.rtt + listReadSeconds(c, REFERENCE_LISTS, REFERENCE_ENTRIES) + c.mgetPerKey * REFERENCE_POSTS + spec.idleOverhead
      : 0;
    if (!spec) {
      this.instances = 0;
      this.servers = 0;
      this.background = 0;
      this.exact = null;
      return;
    }
    this.instances = spec.instances ?? autoInstances(ctx, spec);
    this.background = spec.backgroundCpu * this.instances;
    this.servers = this.instances * spec.coresPerInstance;
    this.exact = ctx.spread ? null : new WorkerPool(this.servers, 1, 0, Infinity, ctx.duration);
  }

  /** CPU of one page that merges `lists` lists holding `entries` entries and hydrates `posts` posts. */
  pageCpu(lists: number, entries: number, posts: number): number {
    return this.pageCpuOf(this.spec!, lists, entries, posts);
  }

  private pageCpuOf(s: ApiTier, lists: number, entries: number, posts: number): number {
    return s.cpuPerRead + listCpuSeconds(s, lists, entries) + s.cpuPerPost * posts;
  }

  /**
   * A request's deviation from its mean service time, in seconds (0 without an API tier), for a
   * request of `cpu` seconds of CPU (default: the reference page's). The spread is measured on whole
   * requests one at a time (`feedlab calibrate`: a page of the reference shape, its CPU and Redis
   * round trips), and what stretches a request there (a collection, a scheduling delay) stretches a
   * bigger one by as much, not in proportion: so a draw is the spread's deviation times the
   * reference request's mean, added. But collections come with allocation, which grows with a
   * request's work: one of k times the reference page's CPU meets k times its stalls. So it takes
   * one draw whole and k - 1 more (the fraction as the chance of one) for their stall alone, what a
   * draw has beyond the spread's STALL_FROM quantile: the body of the spread stays one draw's (k
   * whole draws moved a pull page's median by k times the spread's median deviation). Under pull,
   * pages of ~35 lists had a server p99 of 23.7 ms where one draw gave 19.5 (2026-12-04, the compare
   * bench).
   */
  drawJitter(cpu = this.referenceCpu): number {
    if (!this.spec) return 0;
    let sum = quantileAt(this.spec.spread, this.rng.float()) / this.spreadMean - 1;
    const k = this.referenceCpu > 0 ? cpu / this.referenceCpu : 1;
    // a spread without a tail above STALL_FROM (a constant one) has no stall to add, nor a draw to spend on it
    if (k > 1 && this.stallTop > this.stallFrom) {
      const more = Math.floor(k - 1) + (this.stallRng.float() < k - 1 - Math.floor(k - 1) ? 1 : 0);
      // the draws that land in the stall, skipped to geometrically (a pull page is tens of reference pages)
      for (let i = this.drawsToStall(); i < more; i += 1 + this.drawsToStall()) {
        sum += (quantileAt(this.spec.spread, STALL_FROM + (1 - STALL_FROM) * this.stallRng.float()) - this.stallFrom) / this.spreadMean;
      }
    }
    return sum * this.referenceService;
  }

  /** Draws of the spread before the next one above STALL_FROM (geometric). */
  private drawsToStall(): number {
    return Math.floor(Math.log(1 - this.stallRng.float()) / Math.log(STALL_FROM));
  }

  /** A page's jitter (drawJitter at that page's CPU). */
  drawPageJitter(lists: number, entries: number, posts: number): number {
    return this.spec ? this.drawJitter(this.pageCpu(lists, entries, posts)) : 0;
  }

  /**
   * Seconds from sending a page request to its handler being done with the CPU (0 without an API
   * tier), its CPU moved by `jitter` (a drawJitter draw; the core is held for it too).
   */
  serveRead(t: number, lists: number, entries: number, posts: number, weight: number, jitter: number): number {
    if (!this.spec) return 0;
    const idle = this.idleExtra(t);
    return this.spec.network + idle.wait + this.serve(t, jittered(this.pageCpu(lists, entries, posts), jitter) + idle.cpu, weight);
  }

  /**
   * What finding the tier idle adds to a request at t (api.idleOverhead): all of it when the cores
   * were idle over the last second, none when they were fully busy. Its api.idleCpu share is the
   * process's own CPU and holds the core (calibrate's paced reads cost the server 0.9-1.15 ms of CPU
   * where the closed loops' fits give 0.35, 2026-12-05, and a replay's server burned 1.4-1.9 ms a
   * request); the rest is waiting, with no core held.
   */
  private idleExtra(t: number): { wait: number; cpu: number } {
    const spec = this.spec!;
    if (spec.idleOverhead === 0) return NO_IDLE_EXTRA;
    const prev = Math.floor(t) - 1;
    const busy = Math.min(1, ((prev < 0 ? 0 : this.work[Math.min(prev, this.work.length - 1)]) + this.background) / this.servers);
    return { wait: (spec.idleOverhead - idleCpuAt(spec, 0)) * (1 - busy), cpu: idleCpuAt(spec, busy) };
  }

  /**
   * A post sent at t: when its handler starts (and stamps the post's createdAt, from which the
   * fan-out lag counts) and when its author's list holds it (the post committed, then added, just
   * before the answer; a pulled post is delivered from then): seconds after t. The second is drawn
   * from api.postListed, the server's own Server-Timing (its CPU, the transaction's commit and the
   * list add), which the CPU's own service does not cover. Without an API tier: 0 and a round trip.
   */
  acceptPost(t: number, weight: number): { started: number; listed: number } {
    const rtt = this.ctx.sc.infrastructure.costs.rtt;
    if (!this.spec) return { started: 0, listed: rtt };
    const idle = this.idleExtra(t);
    const arrived = this.spec.network / 2 + idle.wait;
    const { wait, service } = this.serve(t + arrived, jittered(this.spec.cpuPerWrite, this.drawJitter(this.spec.cpuPerWrite)) + idle.cpu, weight, true);
    const started = arrived + wait;
    let listed = started + Math.max(service, quantileAt(this.spec.postListed, this.listedRng.float()));
    for (let i = 0; i < POST_RESUMPTIONS; i++) listed += this.resumeWait(t + listed);
    return { started, listed };
  }

  /**
   * The wait of a handler resuming at t after a Redis round trip or a Postgres statement: its
   * process's event loop first finishes the run it is in, one of the RUNS_PER_REQUEST pieces of
   * another request (or a timer). With the chance the process was busy over the second before (its
   * requests and its background), the rest of such a run, exponential with that second's mean
   * service over RUNS_PER_REQUEST. What calibrate measures one request at a time (the spread,
   * api.postListed) has none: nothing else runs. 0 without an API tier, or before a second has passed.
   */
  resumeWait(t: number): number {
    if (!this.spec) return 0;
    const prev = Math.min(Math.floor(t) - 1, this.work.length - 1);
    if (prev < 0 || this.requests[prev] === 0) return 0;
    const busy = Math.min(0.99, (this.work[prev] + this.background) / this.servers);
    if (this.resumeRng.float() >= busy) return 0;
    return this.resumeRng.exponential((RUNS_PER_REQUEST * this.requests[prev]) / this.work[prev]);
  }

  private serve(t: number, cpu: number, weight: number): number;
  private serve(t: number, cpu: number, weight: number, parts: true): { wait: number; service: number };
  private serve(t: number, cpu: number, weight: number, parts?: true): number | { wait: number; service: number } {
    const service = cpu * this.machine.factor(t);
    const sec = Math.min(this.work.length - 1, Math.floor(t));
    this.work[sec] += service * weight;
    this.requests[sec] += weight;
    this.busySeconds += service * weight;
    this.cpuSeconds += cpu * weight;
    this.machine.addWork(t, service * weight);
    const wait = this.exact ? this.exact.submit(t, service) - t - service : this.erlangWait(sec);
    return parts ? { wait, service } : wait + service;
  }

  /** A wait at the tier's M/M/c queue, at the load of the minute before (scaled runs). */
  private erlangWait(sec: number): number {
    const from = Math.max(0, sec - ERLANG_WINDOW_SECONDS);
    let work = 0;
    let requests = 0;
    for (let s = from; s < sec; s++) {
      work += this.work[s];
      requests += this.requests[s];
    }
    if (requests === 0) return 0;
    const meanService = work / requests;
    // an overloaded tier's queue would grow without bound; its wait is drawn near saturation instead
    const rho = Math.min(0.99, (work + this.background * (sec - from)) / ((sec - from) * this.servers));
    if (this.rng.float() >= erlangC(this.servers, rho)) return 0;
    return this.rng.exponential((this.servers * (1 - rho)) / meanService);
  }

  /** The tier's mean utilisation over `seconds`, its background included. */
  utilisation(seconds: number): number {
    return this.servers > 0 ? (this.busySeconds + this.background * seconds) / (this.servers * seconds) : 0;
  }

  /** The tier's CPU in cores over `seconds` (before the shared cores' stretch), its background included. */
  cpuCores(seconds: number): number {
    return seconds > 0 ? this.cpuSeconds / seconds + this.background : 0;
  }
}

/** Processes that keep the tier AUTO_API_UTILISATION busy at the peak page and post rates (storms included), their idle and background CPU included. */
function autoInstances(ctx: ModelContext, spec: ApiTier): number {
  const sch = ctx.schedule;
  const peakRead = peakFactor(ctx, (t) => sch.readProfile.factorAt(t));
  const peakPost = peakFactor(ctx, (t) => sch.postProfile.factorAt(t));
  // returning dormant readers arrive on top of the organic sessions, spread over their window
  let stormSessions = 0;
  for (const ev of ctx.sc.events) {
    if (ev.kind === 'coldStartStorm') stormSessions += (ev.share * ctx.pop.dormantUsers.length * ctx.scale) / ev.window;
  }
  let pulled = 0;
  const active = ctx.pop.activeUsers;
  for (let i = 0; i < active.length; i++) pulled += ctx.pulledOf[active[i] + 1] - ctx.pulledOf[active[i]];
  const meanLists = listsPerPage(active.length > 0 ? pulled / active.length : 0);
  const pagesPerSecond = (sch.sessionEventRate * ctx.scale * peakRead + stormSessions) * meanPagesPerSession(ctx.sc.activity.pagesPerSession);
  const postsPerSecond = sch.postEventRate * ctx.scale * peakPost;
  // every list charged a full slice: the tier sized for the heaviest pages
  const pageSize = ctx.sc.activity.pageSize;
  // a request on a tier that busy still finds it idle the rest of the time (idleExtra), and every
  // process keeps its background
  const idleCpu = idleCpuAt(spec, AUTO_API_UTILISATION);
  const cpu = pagesPerSecond * (spec.cpuPerRead + fullListsCpuSeconds(spec, meanLists, pageSize) + spec.cpuPerPost * pageSize + idleCpu) + postsPerSecond * (spec.cpuPerWrite + idleCpu);
  return instancesFor(spec, cpu, AUTO_API_UTILISATION);
}

/** The largest rate factor over the run, looked at every simulated minute. */
function peakFactor(ctx: ModelContext, factorAt: (t: number) => number): number {
  let m = 0;
  for (let t = 0; t <= ctx.duration; t += 60) m = Math.max(m, factorAt(t));
  return Math.max(m, factorAt(ctx.duration));
}
