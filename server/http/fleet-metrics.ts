// The fan-out workers' metrics in the API's /metrics, read from Redis at scrape time.
//
// Every worker process (`feedlab worker`, or the one `feedlab serve --with-worker` runs in the
// API's process) publishes its own MemoryMetrics every few seconds into one Redis hash (consumer
// name -> ExportedMetrics JSON: HDR histograms of fan-out lag, batch and event timing, counters).
// A scrape of the API's /metrics reads that hash and shows the fleet's totals:
//
//   feedlab_fanout_lag_seconds{path="push"|"pull"}   histogram: post creation to the last follower
//                                                    timeline written (push), or to the author's
//                                                    recent-list write (pull)
//   feedlab_fanout_follower_lag_seconds{path=...}    histogram, one observation per follower: post
//                                                    creation to that follower's timeline batch
//                                                    written (push), or to the recent-list write,
//                                                    counted once per follower of the author (pull)
//   feedlab_fanout_batch_seconds                     histogram: one pipelined round trip of writes
//   feedlab_fanout_event_seconds                     histogram: handling one post event
//   feedlab_fanout_event_stage_seconds{stage=...}    histogram: an event's stages: pickup (log to
//                                                    worker), pickup_idle (those that found it
//                                                    waiting), statements, first_page, writes, and
//                                                    large_writes_per_1000_timelines (a large post's
//                                                    writes scaled to 1,000 of its timelines)
//   feedlab_fanout_<counter>_total                   the workers' counters (events, timeline writes...)
//   feedlab_fanout_workers                           worker processes in these figures
//   feedlab_fanout_metrics_read_failures_total       scrapes that could not read the hash
//
// Counted once: the API process records none of these itself, and a worker running in the same
// process publishes to Redis like any other, so it is in the hash once. Workers that stopped
// publishing (stopped or killed) drop out after maxAgeMs; the totals then go down, which
// Prometheus takes as a counter reset. Every API instance shows the whole fleet: aggregate across
// API instances with max(), not sum(). The figures are as fresh as the workers' last publish
// (METRICS_INTERVAL_MS). HDR values (microseconds, 3 significant digits) are placed in the bucket
// of the lowest value they stand for, so a bucket is exact to 0.1% of its bound.
import * as hdr from 'hdr-histogram-js';
import type { Keyspace } from '../cache/redis.js';
import type { RedisLike } from '../cache/redis-like.js';
import { LARGE_WRITES_PER_TIMELINES } from '../../core/fanout-worker.js';
import { WORKER_METRICS_KEY } from '../../core/keys.js';
import { COUNTERS, HISTOGRAMS, parseExportedMetrics, type CounterName, type HistogramName } from '../../core/worker-metrics.js';
import { METRICS_INTERVAL_MS } from '../worker/process.js';
import { LOOP_PROBE_MS } from '../../core/runtime-metrics.js';
import { RUNTIME_PAUSE_BUCKETS_SECONDS } from './runtime-metrics.js';
import { LAG_BUCKETS_SECONDS, LATENCY_BUCKETS_SECONDS, type Counter, type Gauge, type MetricsRegistry, type MirroredHistogram } from './metrics.js';
import { withTimeout } from '../timeout.js';

export const METRIC_FANOUT_LAG = 'feedlab_fanout_lag_seconds';
export const METRIC_FANOUT_FOLLOWER_LAG = 'feedlab_fanout_follower_lag_seconds';
export const METRIC_FANOUT_BATCH = 'feedlab_fanout_batch_seconds';
export const METRIC_FANOUT_EVENT = 'feedlab_fanout_event_seconds';
export const METRIC_FANOUT_EVENT_STAGE = 'feedlab_fanout_event_stage_seconds';
export const METRIC_FANOUT_LOOP_DELAY = 'feedlab_fanout_eventloop_delay_seconds';
export const METRIC_FANOUT_WORKERS = 'feedlab_fanout_workers';
export const METRIC_FANOUT_READ_FAILURES = 'feedlab_fanout_metrics_read_failures_total';

/** Default: a worker that has not published for this long is left out (as readFleetMetrics does). */
export const DEFAULT_FLEET_MAX_AGE_MS = 6 * METRICS_INTERVAL_MS;
/** Default bound on the Redis read of one scrape. */
export const DEFAULT_FLEET_READ_TIMEOUT_MS = 1_000;

export interface FleetMetricsOptions {
  registry: MetricsRegistry;
  redis: RedisLike;
  keys: Keyspace;
  maxAgeMs?: number;
  readTimeoutMs?: number;
  clock?: () => number;
}

/** The metric name of a worker counter in the API's /metrics: feedlab_fanout_<snake case>_total. */
export function fanoutCounterName(name: CounterName): string {
  return `feedlab_fanout_${name.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase())}_total`;
}

/** Where each worker histogram goes: metric, labels, bounds. */
const SERIES: Record<HistogramName, { metric: string; labels?: Record<string, string> }> = {
  fanoutLagPushMs: { metric: METRIC_FANOUT_LAG, labels: { path: 'push' } },
  fanoutLagPullMs: { metric: METRIC_FANOUT_LAG, labels: { path: 'pull' } },
  fanoutFollowerLagPushMs: { metric: METRIC_FANOUT_FOLLOWER_LAG, labels: { path: 'push' } },
  fanoutFollowerLagPullMs: { metric: METRIC_FANOUT_FOLLOWER_LAG, labels: { path: 'pull' } },
  batchMs: { metric: METRIC_FANOUT_BATCH },
  eventMs: { metric: METRIC_FANOUT_EVENT },
  eventPickupMs: { metric: METRIC_FANOUT_EVENT_STAGE, labels: { stage: 'pickup' } },
  eventPickupIdleMs: { metric: METRIC_FANOUT_EVENT_STAGE, labels: { stage: 'pickup_idle' } },
  eventStatementsMs: { metric: METRIC_FANOUT_EVENT_STAGE, labels: { stage: 'statements' } },
  eventFirstPageMs: { metric: METRIC_FANOUT_EVENT_STAGE, labels: { stage: 'first_page' } },
  eventWritesMs: { metric: METRIC_FANOUT_EVENT_STAGE, labels: { stage: 'writes' } },
  largeWritesPerThousandMs: { metric: METRIC_FANOUT_EVENT_STAGE, labels: { stage: `large_writes_per_${LARGE_WRITES_PER_TIMELINES}_timelines` } },
  eventLoopDelayMs: { metric: METRIC_FANOUT_LOOP_DELAY },
};

interface Accumulated {
  counts: number[];
  sumSeconds: number;
}

/** A worker's published document as a scrape takes it: its time, histograms in buckets, counters. */
interface Published {
  at: number;
  histograms: ReadonlyMap<HistogramName, Accumulated>;
  counters: Readonly<Record<string, unknown>>;
}

/**
 * Per-bucket counts (not cumulative; the last one +Inf) of an HDR histogram of microseconds, for
 * bounds in seconds, added into `into`. A slot goes to the first bound its lowest value is within:
 * the slots up to the one holding a bound. Walking the slots' counts up to the largest value with the
 * bounds' slot indices found once took a scrape of two workers' eleven histograms from 9.7 ms to
 * 4 ms (2026-12-04, 20k observations each); asking each slot for its value was 6 of the 9.7.
 */
export function addHdrToBuckets(encoded: string, boundsSeconds: readonly number[], into: number[]): void {
  const h = hdr.decodeFromCompressedBase64(encoded, 64, false) as unknown as hdr.JsHistogram;
  if (h.totalCount === 0) return;
  const last = Math.min(h.countsArrayLength - 1, h.countsArrayIndex(h.maxValue));
  const edgeOf = (b: number) => (b < boundsSeconds.length ? h.countsArrayIndex(Math.round((boundsSeconds[b] as number) * 1e6)) : Infinity);
  let bucket = 0;
  let edge = edgeOf(0);
  for (let i = 0; i <= last; i++) {
    while (i > edge) edge = edgeOf(++bucket);
    const n = h.getCountAtIndex(i);
    if (n !== 0) into[bucket] = (into[bucket] as number) + n;
  }
}

/** The fleet's fan-out metrics, mirrored into a registry by refresh() (call it before rendering). */
export class FleetMetrics {
  private readonly histograms: Record<string, MirroredHistogram>;
  private readonly counters = new Map<CounterName, Counter>();
  private readonly workers: Gauge;
  private readonly failures: Counter;
  private readonly maxAgeMs: number;
  private readonly readTimeoutMs: number;
  private readonly clock: () => number;
  private inFlight: Promise<void> | null = null;
  /** The metrics this mirrors. */
  private readonly names: ReadonlySet<string>;
  /** The last document read from each field of the hash, and what it gave. */
  private readonly byField = new Map<string, { text: string; published: Published | null }>();

  constructor(private readonly o: FleetMetricsOptions) {
    const r = o.registry;
    this.maxAgeMs = o.maxAgeMs ?? DEFAULT_FLEET_MAX_AGE_MS;
    this.readTimeoutMs = o.readTimeoutMs ?? DEFAULT_FLEET_READ_TIMEOUT_MS;
    this.clock = o.clock ?? Date.now;
    this.histograms = {
      [METRIC_FANOUT_LAG]: r.mirroredHistogram(
        METRIC_FANOUT_LAG,
        "Fan-out lag in seconds, all workers: post creation to the last follower timeline written (path=push), or to the author's recent-list write (path=pull)",
        { labelNames: ['path'], buckets: LAG_BUCKETS_SECONDS },
      ),
      [METRIC_FANOUT_FOLLOWER_LAG]: r.mirroredHistogram(
        METRIC_FANOUT_FOLLOWER_LAG,
        "Fan-out lag per follower in seconds, all workers: post creation to each follower's timeline written (path=push), or to the author's recent-list write once per follower (path=pull)",
        { labelNames: ['path'], buckets: LAG_BUCKETS_SECONDS },
      ),
      [METRIC_FANOUT_BATCH]: r.mirroredHistogram(METRIC_FANOUT_BATCH, 'One pipelined round trip of timeline writes in seconds, all workers', { buckets: LATENCY_BUCKETS_SECONDS }),
      [METRIC_FANOUT_EVENT]: r.mirroredHistogram(METRIC_FANOUT_EVENT, 'Handling one post event in seconds, all workers', { buckets: LATENCY_BUCKETS_SECONDS }),
      [METRIC_FANOUT_EVENT_STAGE]: r.mirroredHistogram(
        METRIC_FANOUT_EVENT_STAGE,
        "A post event's stages in seconds, all workers: the log to a worker starting on it (stage=pickup; pickup_idle: those that found it waiting for them), the author's follower count (statements), the first follower page with the list add beside it (first_page), its timeline writes (writes)",
        { labelNames: ['stage'], buckets: LATENCY_BUCKETS_SECONDS },
      ),
      [METRIC_FANOUT_LOOP_DELAY]: r.mirroredHistogram(
        METRIC_FANOUT_LOOP_DELAY,
        `How late the workers' event loops ran a timer due every ${LOOP_PROBE_MS} ms in seconds, all workers (an event arriving then waited as long)`,
        { buckets: RUNTIME_PAUSE_BUCKETS_SECONDS },
      ),
    };
    for (const name of Object.keys(COUNTERS) as CounterName[]) {
      this.counters.set(name, r.counter(fanoutCounterName(name), `Fan-out workers, all: ${COUNTERS[name]}`));
    }
    this.workers = r.gauge(METRIC_FANOUT_WORKERS, `Fan-out worker processes whose metrics are in the feedlab_fanout_ figures (published within ${this.maxAgeMs / 1000} s)`);
    this.failures = r.counter(METRIC_FANOUT_READ_FAILURES, 'Scrapes that could not read the fan-out workers\' metrics from Redis (the last figures were shown)');
    this.names = new Set([...Object.keys(this.histograms), ...[...this.counters.keys()].map(fanoutCounterName), METRIC_FANOUT_WORKERS, METRIC_FANOUT_READ_FAILURES]);
    // Both paths of each lag are shown from the start, zero until a worker reports.
    this.apply([]);
  }

  /** Whether a metric is one of the workers' (read from Redis when a scrape names it). */
  covers(name: string): boolean {
    return this.names.has(name);
  }

  /**
   * Read the workers' published metrics and mirror them into the registry. Never throws: when
   * Redis does not answer within the read timeout the last figures stay and the failure is
   * counted. Concurrent scrapes share one read.
   */
  refresh(): Promise<void> {
    this.inFlight ??= this.read().finally(() => (this.inFlight = null));
    return this.inFlight;
  }

  private async read(): Promise<void> {
    let all: Record<string, string>;
    try {
      all = await withTimeout(this.o.redis.hgetall(this.o.keys.key(WORKER_METRICS_KEY)), this.readTimeoutMs);
    } catch {
      this.failures.inc();
      return;
    }
    const now = this.clock();
    const fresh: Published[] = [];
    for (const [field, text] of Object.entries(all)) {
      const p = this.published(field, text);
      if (p && now - p.at <= this.maxAgeMs) fresh.push(p);
    }
    for (const field of this.byField.keys()) if (!(field in all)) this.byField.delete(field);
    this.apply(fresh);
  }

  /**
   * One worker's document, its histograms in this registry's buckets; null when it is not ours or
   * torn (taken whole or not at all: a torn or foreign one must not skew the sums). A worker
   * publishes every METRICS_INTERVAL_MS and a scrape may come every second, so a document seen
   * before is taken as it was: decoding two workers' histograms held the API's event loop 4 ms.
   */
  private published(field: string, text: string): Published | null {
    const seen = this.byField.get(field);
    if (seen?.text === text) return seen.published;
    const doc = parseExportedMetrics(text);
    let published: Published | null = null;
    if (doc) {
      try {
        const histograms = new Map<HistogramName, Accumulated>();
        for (const [name, v] of Object.entries(doc.histograms ?? {})) {
          if (!(name in HISTOGRAMS) || !v || typeof v.encoded !== 'string') continue;
          const series = SERIES[name as HistogramName];
          const bounds = this.histograms[series.metric]!.buckets;
          const counts = new Array<number>(bounds.length + 1).fill(0);
          addHdrToBuckets(v.encoded, bounds, counts);
          histograms.set(name as HistogramName, { counts, sumSeconds: (Number(v.sumMs) || 0) / 1000 });
        }
        published = { at: doc.at, histograms, counters: doc.counters ?? {} };
      } catch {
        published = null;
      }
    }
    this.byField.set(field, { text, published });
    return published;
  }

  private apply(workers: readonly Published[]): void {
    const acc = new Map<HistogramName, Accumulated>();
    const totals = new Map<CounterName, number>();
    for (const w of workers) {
      for (const [name, a] of w.histograms) {
        const into = acc.get(name);
        if (!into) acc.set(name, { counts: [...a.counts], sumSeconds: a.sumSeconds });
        else {
          a.counts.forEach((c, i) => (into.counts[i] = (into.counts[i] as number) + c));
          into.sumSeconds += a.sumSeconds;
        }
      }
      for (const [name, n] of Object.entries(w.counters)) {
        if (name in COUNTERS && typeof n === 'number' && Number.isFinite(n) && n >= 0) totals.set(name as CounterName, (totals.get(name as CounterName) ?? 0) + n);
      }
    }
    for (const name of Object.keys(HISTOGRAMS) as HistogramName[]) {
      const series = SERIES[name];
      const h = this.histograms[series.metric]!;
      const a = acc.get(name) ?? { counts: new Array<number>(h.buckets.length + 1).fill(0), sumSeconds: 0 };
      h.mirror(a.counts, a.sumSeconds, series.labels);
    }
    for (const [name, counter] of this.counters) counter.mirror(totals.get(name) ?? 0);
    this.workers.set(workers.length);
  }
}
