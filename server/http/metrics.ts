// A small Prometheus registry: counters, gauges and histograms with fixed buckets, rendered in the
// text exposition format (version 0.0.4). One registry per process is shared by the API (feed
// latency, requests), the fan-out worker (lag, batches, backlog) and the read path (cache hits,
// cold starts, rebuilds): each asks for its metrics by name, and asking again for the same name
// and kind returns the same metric, so two modules can declare one metric without coordinating.
//
// Hot-path cost: an observation is a bucket scan over a dozen numbers; labelled series are found
// through a Map keyed by their label values. Labels must have bounded values (route patterns,
// status codes), never ids.

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Request and read latencies, seconds: 0.5 ms .. 10 s. */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = Object.freeze([
  0.0005, 0.001, 0.0025, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
]);

/** Fan-out lag (post creation to last follower written), seconds: 5 ms .. 10 min. */
export const LAG_BUCKETS_SECONDS: readonly number[] = Object.freeze([
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
]);

export type Labels = Readonly<Record<string, string | number>>;
export type MetricKind = 'counter' | 'gauge' | 'histogram';

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

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

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

abstract class Metric<S> {
  abstract readonly kind: MetricKind;
  readonly labelNames: readonly string[];
  protected readonly series = new Map<string, { labels: string; state: S }>();

  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly string[],
    reserved: readonly string[] = [],
  ) {
    if (!METRIC_NAME.test(name)) throw new TypeError(`metric name "${name}" is not valid (${METRIC_NAME.source})`);
    for (const label of labelNames) {
      if (!LABEL_NAME.test(label) || label.startsWith('__') || reserved.includes(label)) {
        throw new TypeError(`label name "${label}" of metric ${name} is not valid`);
      }
    }
    if (new Set(labelNames).size !== labelNames.length) throw new TypeError(`metric ${name} repeats a label name`);
    this.labelNames = Object.freeze([...labelNames]);
  }

  protected abstract initial(): S;

  /** The state of the series for these label values (exactly the declared labels), created at first use. */
  protected state(labels: Labels | undefined): S {
    const names = this.labelNames;
    let key = '';
    if (names.length > 0 || labels !== undefined) {
      const given = labels ?? {};
      const count = Object.keys(given).length;
      if (count !== names.length) {
        throw new TypeError(`metric ${this.name} takes labels {${names.join(', ')}}, got {${Object.keys(given).join(', ')}}`);
      }
      for (const n of names) {
        const v = given[n];
        if (v === undefined) throw new TypeError(`metric ${this.name}: label ${n} is missing`);
        key += `${String(v)}\u0000`;
      }
    }
    let entry = this.series.get(key);
    if (entry === undefined) {
      const text = names.map((n) => `${n}="${escapeLabelValue(String((labels ?? {})[n]))}"`).join(',');
      entry = { labels: text, state: this.initial() };
      this.series.set(key, entry);
    }
    return entry.state;
  }

  /** HELP, TYPE and the samples, each line ending in \n. */
  render(): string {
    let out = `# HELP ${this.name} ${escapeHelp(this.help)}\n# TYPE ${this.name} ${this.kind}\n`;
    // An unlabelled metric shows 0 before its first use, like the client libraries do.
    if (this.series.size === 0 && this.labelNames.length === 0) this.state(undefined);
    for (const { labels, state } of this.series.values()) out += this.samples(labels, state);
    return out;
  }

  protected abstract samples(labels: string, state: S): string;

  /** Forget every series (tests, or a registry reused across runs). */
  reset(): void {
    this.series.clear();
  }
}

function braces(labels: string, extra = ''): string {
  const all = labels && extra ? `${labels},${extra}` : labels || extra;
  return all ? `{${all}}` : '';
}

export class Counter extends Metric<{ value: number }> {
  readonly kind = 'counter';
  protected initial() {
    return { value: 0 };
  }
  /** Add a non-negative amount (default 1). */
  inc(labels?: Labels, amount = 1): void {
    if (!(amount >= 0) || !Number.isFinite(amount)) throw new RangeError(`counter ${this.name} can only go up (got ${amount})`);
    this.state(labels).value += amount;
  }
  get(labels?: Labels): number {
    return this.state(labels).value;
  }
  /**
   * Set the total of a counter kept elsewhere (another process's, read at scrape time: see
   * fleet-metrics.ts). Such a total may go down when its source restarts or leaves, which
   * Prometheus takes as a counter reset; this process's own counters only ever inc().
   */
  mirror(value: number, labels?: Labels): void {
    if (!(value >= 0) || !Number.isFinite(value)) throw new RangeError(`counter ${this.name} cannot be ${value}`);
    this.state(labels).value = value;
  }
  protected samples(labels: string, s: { value: number }): string {
    return `${this.name}${braces(labels)} ${formatValue(s.value)}\n`;
  }
}

export class Gauge extends Metric<{ value: number }> {
  readonly kind = 'gauge';
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly collect?: (gauge: Gauge) => void,
  ) {
    super(name, help, labelNames);
  }
  protected initial() {
    return { value: 0 };
  }
  set(value: number, labels?: Labels): void {
    this.state(labels).value = value;
  }
  inc(labels?: Labels, amount = 1): void {
    this.state(labels).value += amount;
  }
  dec(labels?: Labels, amount = 1): void {
    this.state(labels).value -= amount;
  }
  get(labels?: Labels): number {
    return this.state(labels).value;
  }
  override render(): string {
    try {
      this.collect?.(this);
    } catch {
      // A failing collector leaves the last values: one bad gauge must not fail the scrape.
    }
    return super.render();
  }
  protected samples(labels: string, s: { value: number }): string {
    return `${this.name}${braces(labels)} ${formatValue(s.value)}\n`;
  }
}

interface HistogramState {
  counts: Float64Array; // per bucket, not cumulative; the last slot is +Inf
  count: number;
  sum: number;
}

export class Histogram extends Metric<HistogramState> {
  readonly kind = 'histogram';
  readonly buckets: readonly number[];
  private readonly bucketText: string[];

  constructor(name: string, help: string, labelNames: readonly string[], buckets: readonly number[]) {
    super(name, help, labelNames, ['le']);
    if (buckets.length === 0) throw new TypeError(`histogram ${name} needs at least one bucket`);
    for (let i = 0; i < buckets.length; i++) {
      const b = buckets[i] as number;
      if (!Number.isFinite(b) || (i > 0 && b <= (buckets[i - 1] as number))) {
        throw new TypeError(`histogram ${name}: buckets must be finite and strictly increasing`);
      }
    }
    this.buckets = Object.freeze([...buckets]);
    this.bucketText = this.buckets.map((b) => `le="${formatValue(b)}"`);
  }

  protected initial(): HistogramState {
    return { counts: new Float64Array(this.buckets.length + 1), count: 0, sum: 0 };
  }

  observe(value: number, labels?: Labels): void {
    if (Number.isNaN(value)) return;
    const s = this.state(labels);
    const b = this.buckets;
    let i = 0;
    while (i < b.length && value > (b[i] as number)) i++;
    s.counts[i]!++;
    s.count++;
    s.sum += value;
  }

  /**
   * Replace a series with a distribution kept elsewhere (other processes' histograms, read at
   * scrape time: see fleet-metrics.ts): `counts` per bucket, not cumulative, one per bound and a
   * last one for +Inf; `sum` of the observed values.
   */
  mirror(counts: readonly number[], sum: number, labels?: Labels): void {
    if (counts.length !== this.buckets.length + 1) {
      throw new RangeError(`histogram ${this.name}: ${counts.length} bucket counts for ${this.buckets.length} bounds and +Inf`);
    }
    if (!counts.every((c) => c >= 0 && Number.isFinite(c))) throw new RangeError(`histogram ${this.name}: bucket counts must be finite and not negative`);
    const s = this.state(labels);
    let count = 0;
    counts.forEach((c, i) => {
      s.counts[i] = c;
      count += c;
    });
    s.count = count;
    s.sum = sum;
  }

  /** Observe the seconds elapsed since a process.hrtime.bigint() reading. */
  observeSince(startNs: bigint, labels?: Labels): void {
    this.observe(Number(process.hrtime.bigint() - startNs) / 1e9, labels);
  }

  snapshot(labels?: Labels): HistogramSnapshot {
    const s = this.state(labels);
    const cumulative: number[] = [];
    let running = 0;
    for (let i = 0; i < this.buckets.length; i++) cumulative.push((running += s.counts[i] as number));
    return { buckets: this.buckets, cumulative, count: s.count, sum: s.sum };
  }

  protected samples(labels: string, s: HistogramState): string {
    let out = '';
    let running = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      running += s.counts[i] as number;
      out += `${this.name}_bucket${braces(labels, this.bucketText[i])} ${running}\n`;
    }
    out += `${this.name}_bucket${braces(labels, 'le="+Inf"')} ${s.count}\n`;
    out += `${this.name}_sum${braces(labels)} ${formatValue(s.sum)}\n`;
    out += `${this.name}_count${braces(labels)} ${s.count}\n`;
    return out;
  }
}

function sameList(a: readonly (string | number)[], b: readonly (string | number)[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

export class MetricsRegistry {
  private readonly metrics = new Map<string, Counter | Gauge | Histogram>();

  /** The counter of this name, created on first request. */
  counter(name: string, help: string, options: MetricOptions = {}): Counter {
    return this.register(name, 'counter', options, () => new Counter(name, help, options.labelNames ?? [])) as Counter;
  }

  /** The gauge of this name, created on first request (a `collect` given later is ignored). */
  gauge(name: string, help: string, options: GaugeOptions = {}): Gauge {
    return this.register(name, 'gauge', options, () => new Gauge(name, help, options.labelNames ?? [], options.collect)) as Gauge;
  }

  /** The histogram of this name, created on first request; asking again with other buckets throws. */
  histogram(name: string, help: string, options: HistogramOptions = {}): Histogram {
    const buckets = options.buckets ?? LATENCY_BUCKETS_SECONDS;
    const h = this.register(name, 'histogram', options, () => new Histogram(name, help, options.labelNames ?? [], buckets)) as Histogram;
    if (!sameList(h.buckets, buckets)) throw new TypeError(`histogram ${name} is already registered with other buckets`);
    return h;
  }

  private register(name: string, kind: MetricKind, options: MetricOptions, create: () => Counter | Gauge | Histogram) {
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

  get(name: string): Counter | Gauge | Histogram | undefined {
    return this.metrics.get(name);
  }

  /** Every metric in the Prometheus text format, in registration order. */
  render(): string {
    let out = '';
    for (const metric of this.metrics.values()) out += metric.render();
    return out;
  }
}
