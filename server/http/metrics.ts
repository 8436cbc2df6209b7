// The process's Prometheus metrics, on prom-client: counters, gauges and histograms with fixed
// buckets, rendered in the text exposition format (version 0.0.4) by prom-client's registry. One
// registry per process is shared by the API (feed latency, requests), the fan-out workers' figures
// mirrored from Redis (fleet-metrics.ts) and the read path (cache hits, cold starts, rebuilds): each
// asks for its metrics by name, and asking again for the same name and kind returns the same metric,
// so two modules can declare one metric without coordinating.
//
// What this module adds to prom-client: the shared declaration by name; a labelled series must name
// every declared label (prom-client would make a series of a partial set); a collector that throws
// keeps the gauge's last values instead of failing the scrape; and series mirrored from elsewhere
// (another process's totals and bucket counts), which prom-client's metrics cannot be set to.
// Labels must have bounded values (route patterns, status codes), never ids.
import { Counter as PromCounter, Gauge as PromGauge, Histogram as PromHistogram, Registry } from 'prom-client';

/** A series' label values, and one value of a metric as prom-client's get() gives it (its types are not exported). */
type LabelValues<T extends string> = Partial<Record<T, string | number>>;
type MetricValue<T extends string> = { value: number; labels: LabelValues<T>; metricName?: string };
type MetricValueWithName<T extends string> = MetricValue<T> & { metricName: string };

export const PROMETHEUS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/**
 * Request and read latencies, seconds: 0.5 ms .. 10 s. Dense from 1 to 25 ms, where a read's p99
 * lands: a quantile is interpolated inside its bucket, and with 2.5-5 and 10-25 ms buckets the
 * replays' server p99 read 3.37 ms where the model gave 2.19 (2026-12-05), anything from 2.5 to 5.
 */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = Object.freeze([
  0.0005, 0.001, 0.0015, 0.002, 0.0025, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
]);

/** Fan-out lag (post creation to last follower written), seconds: 5 ms .. 10 min. */
export const LAG_BUCKETS_SECONDS: readonly number[] = Object.freeze([
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
]);

export type Labels = Readonly<Record<string, string | number>>;
export type MetricKind = 'counter' | 'gauge' | 'histogram';

export interface MetricOptions {
  labelNames?: readonly string[];
}

export interface GaugeOptions extends MetricOptions {
  /** Called before each scrape, to set values computed on demand (a backlog, a pool size). */
  collect?: (gauge: Gauge) => void;
}

export interface HistogramOptions extends MetricOptions {
  /** Upper bounds, strictly increasing and finite; +Inf is implied. Default LATENCY_BUCKETS_SECONDS. */
  buckets?: readonly number[];
}

export interface HistogramSnapshot {
  /** Upper bounds, without +Inf. */
  buckets: readonly number[];
  /** Cumulative counts per bound (observations <= bound), without +Inf. */
  cumulative: number[];
  count: number;
  sum: number;
}

/** The labels exactly as declared, or a TypeError naming the declaration. */
function checkedLabels(name: string, names: readonly string[], labels: Labels | undefined): LabelValues<string> {
  const given = labels ?? {};
  let count = 0;
  for (const _ in given) count++;
  if (count !== names.length) throw new TypeError(`metric ${name} takes labels {${names.join(', ')}}, got {${Object.keys(given).join(', ')}}`);
  for (const n of names) if (given[n] === undefined) throw new TypeError(`metric ${name}: label ${n} is missing`);
  return given as LabelValues<string>;
}

/** The value of the series with exactly these labels in a prom-client metric's values (0: none). */
function seriesValue(values: readonly MetricValue<string>[], labels: Labels | undefined, metricName?: string): number {
  const want = labels ?? {};
  const keys = Object.keys(want);
  const found = values.find(
    (v) => (metricName === undefined || v.metricName === metricName) && keys.every((k) => String(v.labels[k]) === String(want[k])) && Object.keys(v.labels).filter((k) => k !== 'le').length === keys.length,
  );
  return found?.value ?? 0;
}

abstract class Metric {
  abstract readonly kind: MetricKind;
  constructor(
    readonly name: string,
    readonly labelNames: readonly string[],
  ) {
    // Prometheus keeps names starting with __ for itself; prom-client checks the rest of the syntax
    for (const label of labelNames) if (label.startsWith('__')) throw new TypeError(`label name "${label}" of metric ${name} is reserved (__)`);
  }

  protected labels(labels: Labels | undefined): LabelValues<string> | undefined {
    if (this.labelNames.length === 0 && labels === undefined) return undefined;
    return checkedLabels(this.name, this.labelNames, labels);
  }
}

export class Counter extends Metric {
  readonly kind = 'counter';
  private readonly prom: PromCounter<string>;

  constructor(registry: Registry, name: string, help: string, labelNames: readonly string[]) {
    super(name, labelNames);
    this.prom = new PromCounter({ name, help, labelNames: [...labelNames], registers: [registry] });
  }

  /** Add a non-negative amount (default 1). */
  inc(labels?: Labels, amount = 1): void {
    if (!(amount >= 0) || !Number.isFinite(amount)) throw new RangeError(`counter ${this.name} can only go up (got ${amount})`);
    const l = this.labels(labels);
    if (l) this.prom.inc(l, amount);
    else this.prom.inc(amount);
  }

  async get(labels?: Labels): Promise<number> {
    return seriesValue((await this.prom.get()).values, labels);
  }

  /**
   * Set the total of a counter kept elsewhere (another process's, read at scrape time: see
   * fleet-metrics.ts). Such a total may go down when its source restarts or leaves, which
   * Prometheus takes as a counter reset; this process's own counters only ever inc().
   */
  mirror(value: number, labels?: Labels): void {
    if (!(value >= 0) || !Number.isFinite(value)) throw new RangeError(`counter ${this.name} cannot be ${value}`);
    const l = this.labels(labels);
    if (l) {
      this.prom.remove(l);
      this.prom.inc(l, value);
    } else {
      this.prom.reset();
      this.prom.inc(value);
    }
  }
}

export class Gauge extends Metric {
  readonly kind = 'gauge';
  private readonly prom: PromGauge<string>;

  constructor(registry: Registry, name: string, help: string, labelNames: readonly string[], collect?: (gauge: Gauge) => void) {
    super(name, labelNames);
    const self = this;
    this.prom = new PromGauge({
      name,
      help,
      labelNames: [...labelNames],
      registers: [registry],
      // A failing collector leaves the last values: one bad gauge must not fail the scrape.
      collect: collect
        ? () => {
            try {
              collect(self);
            } catch {
              // the last values stay
            }
          }
        : undefined,
    });
  }

  set(value: number, labels?: Labels): void {
    const l = this.labels(labels);
    if (l) this.prom.set(l, value);
    else this.prom.set(value);
  }

  inc(labels?: Labels, amount = 1): void {
    const l = this.labels(labels);
    if (l) this.prom.inc(l, amount);
    else this.prom.inc(amount);
  }

  dec(labels?: Labels, amount = 1): void {
    const l = this.labels(labels);
    if (l) this.prom.dec(l, amount);
    else this.prom.dec(amount);
  }

  async get(labels?: Labels): Promise<number> {
    return seriesValue((await this.prom.get()).values, labels);
  }
}

function checkBuckets(name: string, buckets: readonly number[]): readonly number[] {
  if (buckets.length === 0) throw new TypeError(`histogram ${name} needs at least one bucket`);
  for (let i = 0; i < buckets.length; i++) {
    const b = buckets[i] as number;
    if (!Number.isFinite(b) || (i > 0 && b <= (buckets[i - 1] as number))) throw new TypeError(`histogram ${name}: buckets must be finite and strictly increasing`);
  }
  return Object.freeze([...buckets]);
}

export class Histogram extends Metric {
  readonly kind = 'histogram';
  readonly buckets: readonly number[];
  private readonly prom: PromHistogram<string>;

  constructor(registry: Registry, name: string, help: string, labelNames: readonly string[], buckets: readonly number[]) {
    super(name, labelNames);
    this.buckets = checkBuckets(name, buckets);
    this.prom = new PromHistogram({ name, help, labelNames: [...labelNames], buckets: [...this.buckets], registers: [registry] });
  }

  observe(value: number, labels?: Labels): void {
    if (Number.isNaN(value)) return;
    const l = this.labels(labels);
    if (l) this.prom.observe(l, value);
    else this.prom.observe(value);
  }

  /** Observe the seconds elapsed since a process.hrtime.bigint() reading. */
  observeSince(startNs: bigint, labels?: Labels): void {
    this.observe(Number(process.hrtime.bigint() - startNs) / 1e9, labels);
  }

  async snapshot(labels?: Labels): Promise<HistogramSnapshot> {
    const values = (await this.prom.get()).values;
    const of = (suffix: string, le?: number) => seriesValue(values.filter((v) => le === undefined || v.labels.le === le), labels, `${this.name}${suffix}`);
    return { buckets: this.buckets, cumulative: this.buckets.map((b) => of('_bucket', b)), count: of('_count'), sum: of('_sum') };
  }
}

/**
 * A histogram whose series are distributions kept elsewhere (other processes' histograms, read at
 * scrape time: see fleet-metrics.ts), set whole by mirror(); prom-client's registry renders it.
 */
export class MirroredHistogram extends Metric {
  readonly kind = 'histogram';
  readonly buckets: readonly number[];
  private readonly series = new Map<string, { labels: LabelValues<string>; counts: number[]; sum: number }>();

  constructor(
    registry: Registry,
    name: string,
    readonly help: string,
    labelNames: readonly string[],
    buckets: readonly number[],
  ) {
    super(name, labelNames);
    if (labelNames.includes('le')) throw new TypeError(`label name "le" of metric ${name} is reserved (a histogram's bucket)`);
    this.buckets = checkBuckets(name, buckets);
    registry.registerMetric(this.collector() as never);
  }

  /** `counts` per bucket, not cumulative, one per bound and a last one for +Inf; `sum` of the observed values. */
  mirror(counts: readonly number[], sum: number, labels?: Labels): void {
    if (counts.length !== this.buckets.length + 1) throw new RangeError(`histogram ${this.name}: ${counts.length} bucket counts for ${this.buckets.length} bounds and +Inf`);
    if (!counts.every((c) => c >= 0 && Number.isFinite(c))) throw new RangeError(`histogram ${this.name}: bucket counts must be finite and not negative`);
    const l = this.labels(labels) ?? {};
    this.series.set(JSON.stringify(this.labelNames.map((n) => String(l[n]))), { labels: l, counts: [...counts], sum });
  }

  /** What prom-client's registry asks a metric for: its values, as its own histograms give them. */
  private collector() {
    const get = async () => {
      const values: MetricValueWithName<string>[] = [];
      for (const { labels, counts, sum } of this.series.values()) {
        let running = 0;
        this.buckets.forEach((le, i) => values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le }, value: (running += counts[i] as number) }));
        running += counts[this.buckets.length] as number;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: '+Inf' }, value: running });
        values.push({ metricName: `${this.name}_sum`, labels, value: sum });
        values.push({ metricName: `${this.name}_count`, labels, value: running });
      }
      return { name: this.name, help: this.help, type: 'histogram', values, aggregator: 'sum' };
    };
    return { name: this.name, help: this.help, type: 'histogram', get, reset: () => this.series.clear() };
  }
}

type AnyMetric = Counter | Gauge | Histogram | MirroredHistogram;

function sameList(a: readonly (string | number)[], b: readonly (string | number)[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

export class MetricsRegistry {
  private readonly prom = new Registry();
  private readonly metrics = new Map<string, AnyMetric>();

  /** The counter of this name, created on first request. */
  counter(name: string, help: string, options: MetricOptions = {}): Counter {
    return this.register(name, 'counter', options, () => new Counter(this.prom, name, help, options.labelNames ?? [])) as Counter;
  }

  /** The gauge of this name, created on first request (a `collect` given later is ignored). */
  gauge(name: string, help: string, options: GaugeOptions = {}): Gauge {
    return this.register(name, 'gauge', options, () => new Gauge(this.prom, name, help, options.labelNames ?? [], options.collect)) as Gauge;
  }

  /** The histogram of this name, created on first request; asking again with other buckets throws. */
  histogram(name: string, help: string, options: HistogramOptions = {}): Histogram {
    return this.histogramOf(name, help, options, Histogram) as Histogram;
  }

  /** A histogram set whole from elsewhere (MirroredHistogram), created on first request. */
  mirroredHistogram(name: string, help: string, options: HistogramOptions = {}): MirroredHistogram {
    return this.histogramOf(name, help, options, MirroredHistogram) as MirroredHistogram;
  }

  private histogramOf(name: string, help: string, options: HistogramOptions, kind: typeof Histogram | typeof MirroredHistogram): Histogram | MirroredHistogram {
    const buckets = options.buckets ?? LATENCY_BUCKETS_SECONDS;
    const h = this.register(name, 'histogram', options, () => new kind(this.prom, name, help, options.labelNames ?? [], buckets)) as Histogram | MirroredHistogram;
    if (!(h instanceof kind)) throw new TypeError(`histogram ${name} is already registered ${kind === MirroredHistogram ? 'as observed here' : 'as mirrored'}`);
    if (!sameList(h.buckets, buckets)) throw new TypeError(`histogram ${name} is already registered with other buckets`);
    return h;
  }

  private register(name: string, kind: MetricKind, options: MetricOptions, create: () => AnyMetric): AnyMetric {
    const existing = this.metrics.get(name);
    if (existing) {
      if (existing.kind !== kind) throw new TypeError(`metric ${name} is already registered as a ${existing.kind}`);
      if (!sameList(existing.labelNames, options.labelNames ?? [])) {
        throw new TypeError(`metric ${name} is already registered with labels {${existing.labelNames.join(', ')}}`);
      }
      return existing;
    }
    const metric = create();
    this.metrics.set(name, metric);
    return metric;
  }

  get(name: string): AnyMetric | undefined {
    return this.metrics.get(name);
  }

  /** Every metric in the Prometheus text format in registration order, or those named, each once, in the order named. */
  async render(names?: readonly string[]): Promise<string> {
    if (!names) return this.prom.metrics();
    const parts = await Promise.all([...new Set(names)].map((n) => this.prom.getSingleMetricAsString(n)));
    return parts.map((p) => p + '\n').join('');
  }
}
