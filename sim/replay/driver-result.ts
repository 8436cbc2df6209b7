// The result of a replay driver run (sim/replay/driver.ts): what became of every request, by kind
// and per interval, latency summaries and the raw HDR histograms. JSON-friendly except the raw
// histograms (not enumerable; encodeHistograms gives them as compressed base64 text).
import * as hdr from 'hdr-histogram-js';
import { newHistogram, pct } from './http-client.js';


export const OUTCOME_NOT_OFFERED = 0;
export const OUTCOME_ANSWERED = 1;
export const OUTCOME_NETWORK = 2;
export const OUTCOME_TIMEOUT = 3;
export const OUTCOME_DROPPED = 4;
export const OUTCOME_NOT_SENT = 5;
/** By outcome code; an answered post is 'created' or 'failed' by its status. */
export const OUTCOME_NAMES: readonly PostOutcome['outcome'][] = ['not-offered', 'created', 'network-error', 'timeout', 'dropped', 'not-sent'];

const BUCKET_FIELDS = ['readsOffered', 'readsCompleted', 'readsFailed', 'postsOffered', 'postsCompleted', 'postsFailed', 'status503', 'networkErrors', 'timeouts', 'dropped', 'sentLate'] as const;
type BucketField = (typeof BUCKET_FIELDS)[number];

/**
 * The time series of a run, in buckets of intervalMs from t0 (times here are offsets from t0):
 * requests offered count in the bucket of their intended time, everything else in the open
 * bucket (the one in which it happened); the open bucket's latencies are summarised as it closes.
 * The caller closes buckets (closeUpTo) before counting anything at a new time.
 */
export class IntervalSeries {
  readonly closed: IntervalFigures[] = [];
  private readonly n: number;
  private readonly b: Record<BucketField, Uint32Array>;
  private cur = 0;
  private readonly reads = newHistogram();
  private readonly posts = newHistogram();
  /** Every read so far, for the live view's "SLO so far". */
  private readonly readsSoFar = newHistogram();

  constructor(
    private readonly intervalMs: number,
    spanMs: number,
    private readonly onClose: (fig: IntervalFigures) => void,
  ) {
    this.n = Math.ceil(spanMs / intervalMs) + 2;
    this.b = Object.fromEntries(BUCKET_FIELDS.map((f) => [f, new Uint32Array(this.n)])) as Record<BucketField, Uint32Array>;
  }

  /** The end of the open bucket. */
  get openEndMs(): number {
    return (this.cur + 1) * this.intervalMs;
  }

  offered(field: 'readsOffered' | 'postsOffered', intendedMs: number): void {
    this.b[field][Math.min(this.n - 1, Math.max(this.cur, Math.floor(intendedMs / this.intervalMs)))]++;
  }

  count(field: BucketField): void {
    this.b[field][this.cur]++;
  }

  /** A 2xx answer and its latency from the intended send, µs. */
  completed(post: boolean, fromIntendedUs: number): void {
    (post ? this.posts : this.reads).recordValue(fromIntendedUs);
    if (!post) this.readsSoFar.recordValue(fromIntendedUs);
    this.b[post ? 'postsCompleted' : 'readsCompleted'][this.cur]++;
  }

  closeUpTo(nowMs: number): void {
    while (this.cur < this.n - 1 && nowMs >= this.openEndMs) this.close(this.openEndMs);
  }

  /** Close the open bucket at the end of the run; it takes what was counted ahead of it (offered within a ms of a stop). */
  closeLast(nowMs: number): void {
    this.closeUpTo(nowMs);
    for (const f of BUCKET_FIELDS) for (let j = this.cur + 1; j < this.n; j++) this.b[f][this.cur] += this.b[f][j];
    this.close(Math.max(nowMs, this.cur * this.intervalMs + 1e-3));
  }

  private close(endMs: number): void {
    const i = this.cur;
    const b = this.b;
    const startMs = i * this.intervalMs;
    const s = (endMs - startMs) / 1000;
    const fig: IntervalFigures = {
      index: i,
      startMs,
      endMs,
      reads: { offered: b.readsOffered[i], completed: b.readsCompleted[i], failed: b.readsFailed[i], offeredPerSecond: b.readsOffered[i] / s, completedPerSecond: b.readsCompleted[i] / s, p50Ms: pct(this.reads, 50), p99Ms: pct(this.reads, 99), p99SoFarMs: pct(this.readsSoFar, 99) },
      posts: { offered: b.postsOffered[i], completed: b.postsCompleted[i], failed: b.postsFailed[i], offeredPerSecond: b.postsOffered[i] / s, completedPerSecond: b.postsCompleted[i] / s, p99Ms: pct(this.posts, 99) },
      status503: b.status503[i],
      networkErrors: b.networkErrors[i],
      timeouts: b.timeouts[i],
      dropped: b.dropped[i],
      sentLate: b.sentLate[i],
    };
    this.reads.reset();
    this.posts.reset();
    this.closed.push(fig);
    this.cur++;
    this.onClose(fig);
  }
}

/**
 * What became of the requests of one kind. Every offered request has exactly one outcome:
 * offered = completed + status4xx + status429 + status5xx + status503 + statusOther + networkErrors
 * + timeouts + dropped + notSent. `sent` excludes dropped and notSent; the late ones are among the sent.
 */
export interface KindCounts {
  offered: number;
  sent: number;
  /** Answered 2xx. */
  completed: number;
  /** 4xx other than 429; 5xx other than 503; any other status (1xx, 3xx). */
  status4xx: number;
  status429: number;
  status5xx: number;
  status503: number;
  statusOther: number;
  networkErrors: number;
  /** Sent, no answer by the end of the drain (or of the wait after a stop). */
  timeouts: number;
  /** Not sent within dropAfterMs of its intended time, or still waiting at the end. */
  dropped: number;
  /** Not sent because the run was stopped. */
  notSent: number;
  /** Sent more than 1 ms late: the driver itself was behind (timers, its event loop). */
  lateGenerator: number;
  /** Sent more than 1 ms late after waiting for a free connection. */
  lateNoConnection: number;
}

export function emptyCounts(): KindCounts {
  return { offered: 0, sent: 0, completed: 0, status4xx: 0, status429: 0, status5xx: 0, status503: 0, statusOther: 0, networkErrors: 0, timeouts: 0, dropped: 0, notSent: 0, lateGenerator: 0, lateNoConnection: 0 };
}

export function addCounts(a: KindCounts, b: KindCounts): KindCounts {
  const out = emptyCounts();
  for (const k of Object.keys(out) as (keyof KindCounts)[]) out[k] = a[k] + b[k];
  return out;
}

export function countStatus(c: KindCounts, status: number): void {
  if (status === 429) c.status429++;
  else if (status === 503) c.status503++;
  else if (status >= 400 && status < 500) c.status4xx++;
  else if (status >= 500 && status < 600) c.status5xx++;
  else c.statusOther++;
}

/** What became of the reads (every page) due in a span, a fault's window, or in flight at its start. */
export interface ReadsDuring {
  due: number;
  /** Answered 2xx. */
  ok: number;
  status503: number;
  /** 5xx other than 503. */
  status5xx: number;
  /** Any other status (4xx, 429, ...). */
  statusOther: number;
  networkErrors: number;
  timeouts: number;
  dropped: number;
}

const READ_CLASSES = ['ok', 'status503', 'status5xx', 'statusOther', 'networkErrors', 'timeouts', 'dropped'] as const;
export const READ_OK = 0;
export const READ_503 = 1;
export const READ_5XX = 2;
export const READ_OTHER = 3;
export const READ_NETWORK = 4;
export const READ_TIMEOUT = 5;
export const READ_DROPPED = 6;

/** The read class of an answered status. */
export function readClass(status: number): number {
  if (status >= 200 && status < 300) return READ_OK;
  if (status === 503) return READ_503;
  if (status >= 500 && status < 600) return READ_5XX;
  return READ_OTHER;
}

/**
 * Reads by outcome class and by the 100 ms of their intended send (offsets from t0): what a fault
 * cost the readers, counted after the run over any window. A read also counts in a window it was
 * in flight at the start of, as a post does (cli/replay/fault-figures.ts): a server killed while
 * slow reads are out fails reads due seconds before the kill. 7 counters per bin and two tables
 * (by due time; in flight at the bin's start), grown as needed.
 */
export class ReadTally {
  static readonly BIN_MS = 100;
  private due = new Uint32Array(READ_CLASSES.length * 1024);
  /** Reads sent before this bin's start, due in an earlier bin, and not yet ended at its start. */
  private inFlight = new Uint32Array(READ_CLASSES.length * 1024);

  /** A read due at `intendedMs`, of class `cls`; `sentMs` and `endedMs` when it was sent (a dropped one never was). */
  record(intendedMs: number, cls: number, sentMs?: number, endedMs?: number): void {
    const b = bin(intendedMs);
    this.count('due', b, cls);
    if (sentMs === undefined || endedMs === undefined) return;
    for (let k = Math.max(b + 1, Math.ceil(sentMs / ReadTally.BIN_MS)); k * ReadTally.BIN_MS <= endedMs; k++) this.count('inFlight', k, cls);
  }

  /** The reads due from `fromMs` to `toMs` (whole bins: up to 100 ms more on each side), and those in flight at the first bin's start. */
  between(fromMs: number, toMs: number): ReadsDuring {
    const out: ReadsDuring = { due: 0, ok: 0, status503: 0, status5xx: 0, statusOther: 0, networkErrors: 0, timeouts: 0, dropped: 0 };
    const n = READ_CLASSES.length;
    const add = (table: Uint32Array, b: number) => {
      for (let c = 0; c < n; c++) {
        out[READ_CLASSES[c]] += table[b * n + c];
        out.due += table[b * n + c];
      }
    };
    const first = bin(fromMs);
    if (first < this.inFlight.length / n) add(this.inFlight, first);
    const last = Math.min(bin(toMs), this.due.length / n - 1);
    for (let b = first; b <= last; b++) add(this.due, b);
    return out;
  }

  private count(table: 'due' | 'inFlight', b: number, cls: number): void {
    const n = READ_CLASSES.length;
    const at = b * n + cls;
    if (at >= this[table].length) {
      const grown = new Uint32Array(Math.max(this[table].length * 2, (b + 1) * n));
      grown.set(this[table]);
      this[table] = grown;
    }
    this[table][at]++;
  }
}

function bin(ms: number): number {
  return Math.max(0, Math.floor(ms / ReadTally.BIN_MS));
}

/** Latency percentiles in ms (NaN without samples), of the 2xx answers. */
export interface LatencySummary {
  count: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  meanMs: number;
}

export function summary(h: hdr.Histogram): LatencySummary {
  const n = h.totalCount;
  return { count: n, p50Ms: pct(h, 50), p90Ms: pct(h, 90), p99Ms: pct(h, 99), p999Ms: pct(h, 99.9), maxMs: n ? h.maxValue / 1000 : NaN, meanMs: n ? h.mean / 1000 : NaN };
}

/** One bucket of the time series; offered counts by intended time, the rest by when it happened. */
export interface IntervalFigures {
  index: number;
  /** From t0, ms. */
  startMs: number;
  endMs: number;
  /** failed: answered other than 2xx. p50/p99 from the intended send, of the 2xx answers in the bucket (NaN: none). */
  /** p99SoFarMs: every read answered so far, from t0 to this bucket's end. */
  reads: { offered: number; completed: number; failed: number; offeredPerSecond: number; completedPerSecond: number; p50Ms: number; p99Ms: number; p99SoFarMs: number };
  posts: { offered: number; completed: number; failed: number; offeredPerSecond: number; completedPerSecond: number; p99Ms: number };
  status503: number;
  networkErrors: number;
  timeouts: number;
  dropped: number;
  sentLate: number;
}

export interface PostOutcome {
  /** From the 201 answer (null: not created, or an answer without one). */
  id: string | null;
  authorId: number;
  burst: boolean;
  /** The server's creation time, epoch ms. */
  createdAt: number | null;
  /** Offsets from t0, ms; answeredMs: when its answer, or its network error, came (null: neither). */
  intendedMs: number;
  sentMs: number | null;
  answeredMs: number | null;
  /** HTTP status (0: no answer). */
  status: number;
  outcome: 'created' | 'failed' | 'network-error' | 'timeout' | 'dropped' | 'not-sent' | 'not-offered';
}

/** Microsecond HDR histograms of the 2xx answers: from the intended and from the actual send. */
export interface DriverHistograms {
  posts: { fromIntended: hdr.Histogram; fromSent: hdr.Histogram };
  firstPages: { fromIntended: hdr.Histogram; fromSent: hdr.Histogram };
  laterPages: { fromIntended: hdr.Histogram; fromSent: hdr.Histogram };
  reads: { fromIntended: hdr.Histogram; fromSent: hdr.Histogram };
  /** Actual minus intended send time of every sent request (0 when sent early). */
  sendDelay: hdr.Histogram;
}

export interface DriverResult {
  /** Stopped by the signal before the schedule was done. */
  partial: boolean;
  /** t0 as epoch ms (Date.now()), to relate the offsets to server times. */
  t0EpochMs: number;
  wallMs: number;
  lastScheduledMs: number;
  /** Scheduled but never offered (the run was stopped first). */
  notOffered: { posts: number; sessions: number };
  totals: { posts: KindCounts; firstPages: KindCounts; laterPages: KindCounts; reads: KindCounts };
  /** Every offered session ends once: complete (every page 2xx), endedEarly (a null nextCursor) or broken (a page failed, was dropped, timed out or cut by a stop). */
  sessions: { offered: number; complete: number; endedEarly: number; broken: number };
  /** lost: closed by the server or the network; reopened: opened to replace a lost one. */
  connections: { max: number; opened: number; lost: number; reopened: number; peak: number; connectErrors: number; maxQueued: number };
  latency: {
    posts: { fromIntended: LatencySummary; fromSent: LatencySummary };
    firstPages: { fromIntended: LatencySummary; fromSent: LatencySummary };
    laterPages: { fromIntended: LatencySummary; fromSent: LatencySummary };
    reads: { fromIntended: LatencySummary; fromSent: LatencySummary };
    sendDelay: LatencySummary;
  };
  intervals: IntervalFigures[];
  /** By post index. */
  posts: PostOutcome[];
  /** This process's CPU over the run (a server in the same process counts here too) and its event-loop delay. */
  driver: { cpuSeconds: number; cpuMicrosPerRequest: number; loopDelayP99Ms: number; loopDelayMaxMs: number };
  firstError: string | null;
  /** Raw histograms; not enumerable, so JSON.stringify skips them: see encodeHistograms. */
  histograms: DriverHistograms;
  /** The reads by outcome over time (not enumerable: a fault's figures are counted from it). */
  readTally: ReadTally;
}

/** The histograms as compressed base64 (hdr-histogram-js's format: decodeFromCompressedBase64, mergeable). */
export function encodeHistograms(h: DriverHistograms): Record<string, string> {
  const out: Record<string, string> = { sendDelay: hdr.encodeIntoCompressedBase64(h.sendDelay) };
  for (const k of ['posts', 'firstPages', 'laterPages', 'reads'] as const) {
    out[`${k}.fromIntended`] = hdr.encodeIntoCompressedBase64(h[k].fromIntended);
    out[`${k}.fromSent`] = hdr.encodeIntoCompressedBase64(h[k].fromSent);
  }
  return out;
}
