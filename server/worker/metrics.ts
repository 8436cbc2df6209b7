// What the fan-out worker measures, behind a small sink interface: fan-out lag per post (post
// creation to the last follower's timeline written, or to the recent-list write of a pulled author)
// and per follower (a sample per timeline written, weighted by count: a pushed post's batch records
// its lag once per timeline it wrote, a pulled post its list write once per follower), per-batch
// timing of the pipelined timeline writes, per-event handling time, and counters. The names and the
// exchange format are core/worker-metrics.ts (replay reads the exports without the server's code).
//
// MemoryMetrics keeps the histograms as HDR histograms (microsecond resolution, 3 significant
// digits), so percentiles are exact to 0.1% and histograms merge across consumers and processes:
// `exportMetrics()` gives a JSON document with the compressed histograms, `merge()` adds one in.
// The API's /metrics shows the workers' exports merged (server/http/fleet-metrics.ts).
import * as hdr from 'hdr-histogram-js';
import { COUNTERS, HISTOGRAMS, HISTOGRAM_UNITS_PER_MS, WORKER_METRICS_SCHEMA, type CounterName, type ExportedMetrics, type HistogramName } from '../../core/worker-metrics.js';

export { COUNTERS, HISTOGRAMS, WORKER_METRICS_SCHEMA, type CounterName, type ExportedMetrics, type HistogramName } from '../../core/worker-metrics.js';

/** Where the worker reports. Calls are synchronous and cheap; the sink aggregates. */
export interface MetricsSink {
  /** A sample of a histogram, in ms, `count` times (a whole number, default 1; below 1 records nothing). */
  observe(name: HistogramName, ms: number, count?: number): void;
  /** Add n (default 1) to a counter. */
  count(name: CounterName, n?: number): void;
}

/** A sink that drops everything. */
export const NO_METRICS: MetricsSink = { observe() {}, count() {} };

export interface HistogramSummary {
  count: number;
  /** ms */
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

const newHistogram = () => hdr.build({ bitBucketSize: 64, autoResize: true, numberOfSignificantValueDigits: 3 });

/** HDR histograms and counters in memory. */
export class MemoryMetrics implements MetricsSink {
  private readonly histograms = new Map<HistogramName, { h: hdr.Histogram; sumMs: number }>();
  private readonly counters = new Map<CounterName, number>();

  observe(name: HistogramName, ms: number, count = 1): void {
    if (!Number.isFinite(ms) || !Number.isSafeInteger(count) || count < 1) return;
    const v = Math.max(0, ms);
    let entry = this.histograms.get(name);
    if (!entry) this.histograms.set(name, (entry = { h: newHistogram(), sumMs: 0 }));
    entry.h.recordValueWithCount(Math.round(v * HISTOGRAM_UNITS_PER_MS), count);
    entry.sumMs += v * count;
  }

  count(name: CounterName, n = 1): void {
    if (n !== 0) this.counters.set(name, (this.counters.get(name) ?? 0) + n);
  }

  counter(name: CounterName): number {
    return this.counters.get(name) ?? 0;
  }

  /** Percentiles of a histogram in ms (zeros when empty). */
  summary(name: HistogramName): HistogramSummary {
    const entry = this.histograms.get(name);
    if (!entry || entry.h.totalCount === 0) return { count: 0, mean: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0 };
    const { h, sumMs } = entry;
    const at = (p: number) => h.getValueAtPercentile(p) / HISTOGRAM_UNITS_PER_MS;
    return { count: h.totalCount, mean: sumMs / h.totalCount, p50: at(50), p90: at(90), p99: at(99), p999: at(99.9), max: h.maxValue / HISTOGRAM_UNITS_PER_MS };
  }

  /** Every counter and histogram summary, for a status line or a JSON result. */
  snapshot(): { counters: Record<CounterName, number>; histograms: Record<HistogramName, HistogramSummary> } {
    const counters = {} as Record<CounterName, number>;
    for (const name of Object.keys(COUNTERS) as CounterName[]) counters[name] = this.counter(name);
    const histograms = {} as Record<HistogramName, HistogramSummary>;
    for (const name of Object.keys(HISTOGRAMS) as HistogramName[]) histograms[name] = this.summary(name);
    return { counters, histograms };
  }

  exportMetrics(source: string, at: number = Date.now()): ExportedMetrics {
    const out: ExportedMetrics = { schema: WORKER_METRICS_SCHEMA, source, at, counters: {}, histograms: {} };
    for (const [name, n] of this.counters) out.counters[name] = n;
    for (const [name, { h, sumMs }] of this.histograms) out.histograms[name] = { encoded: hdr.encodeIntoCompressedBase64(h), sumMs };
    return out;
  }

  /** Add an export (another consumer's or process's) into this one. Unknown names are ignored. */
  merge(other: ExportedMetrics): void {
    if (other?.schema !== WORKER_METRICS_SCHEMA) throw new Error(`not a ${WORKER_METRICS_SCHEMA} document`);
    for (const [name, n] of Object.entries(other.counters)) {
      if (name in COUNTERS && typeof n === 'number') this.count(name as CounterName, n);
    }
    for (const [name, v] of Object.entries(other.histograms)) {
      if (!(name in HISTOGRAMS) || !v) continue;
      const decoded = hdr.decodeFromCompressedBase64(v.encoded, 64, false);
      let entry = this.histograms.get(name as HistogramName);
      if (!entry) this.histograms.set(name as HistogramName, (entry = { h: newHistogram(), sumMs: 0 }));
      entry.h.add(decoded);
      entry.sumMs += v.sumMs;
    }
  }
}

/** Several sinks as one (e.g. the process's total and a per-consumer one). */
export function teeMetrics(...sinks: MetricsSink[]): MetricsSink {
  return {
    observe: (name, ms, count) => sinks.forEach((s) => s.observe(name, ms, count)),
    count: (name, n) => sinks.forEach((s) => s.count(name, n)),
  };
}
