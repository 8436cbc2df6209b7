// What the reference server says about itself in GET /metrics, read by replay at the start, every
// series interval and the end: its own home-feed latency histogram, cold starts and rebuilds, HTTP
// answers by status, and the fan-out backlog it samples. Only the sample lines of the server's own
// exposition are read (`name{labels} value`); comments and other metrics are skipped.

/** Samples by metric name: each label set (as written, e.g. `{le="0.005"}`, '' without labels) and its value. */
export type MetricSamples = Map<string, Map<string, number>>;

import { METRIC_GC_PAUSE, METRIC_LOOP_DELAY } from '../../core/runtime-metrics.js';

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/;

export function parseMetrics(text: string): MetricSamples {
  const out: MetricSamples = new Map();
  for (const line of text.split('\n')) {
    if (line.length === 0 || line[0] === '#') continue;
    const m = SAMPLE.exec(line);
    if (!m) continue;
    const v = m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : Number(m[3]);
    if (Number.isNaN(v) && m[3] !== 'NaN') continue;
    let series = out.get(m[1]);
    if (!series) out.set(m[1], (series = new Map()));
    series.set(m[2] ?? '', v);
  }
  return out;
}

/** Sum of a metric over the label sets that contain every `match` fragment (e.g. `route="/v1/feed"`). */
export function sumOf(s: MetricSamples, name: string, ...match: string[]): number {
  const series = s.get(name);
  if (!series) return 0;
  let total = 0;
  for (const [labels, v] of series) if (match.every((m) => labels.includes(m))) total += v;
  return total;
}

/** A histogram's cumulative buckets (le -> count) from `<name>_bucket`, ascending, summed over its other labels. */
export function bucketsOf(s: MetricSamples, name: string): { le: number; count: number }[] {
  const series = s.get(`${name}_bucket`);
  if (!series) return [];
  const byLe = new Map<number, number>();
  for (const [labels, v] of series) {
    const m = /le="([^"]+)"/.exec(labels);
    if (!m) continue;
    const le = m[1] === '+Inf' ? Infinity : Number(m[1]);
    byLe.set(le, (byLe.get(le) ?? 0) + v);
  }
  return [...byLe].map(([le, count]) => ({ le, count })).sort((a, b) => a.le - b.le);
}

/** Buckets of b minus a (what happened between two scrapes). */
export function bucketDelta(a: { le: number; count: number }[], b: { le: number; count: number }[]): { le: number; count: number }[] {
  const before = new Map(a.map((x) => [x.le, x.count]));
  return b.map((x) => ({ le: x.le, count: x.count - (before.get(x.le) ?? 0) }));
}

/**
 * The q-quantile (0..1) of cumulative buckets, interpolated linearly within its bucket as
 * Prometheus's histogram_quantile does; NaN when empty, the last finite bound when it falls in +Inf.
 */
export function bucketQuantile(buckets: { le: number; count: number }[], q: number): number {
  const total = buckets.length > 0 ? buckets[buckets.length - 1].count : 0;
  if (!(total > 0)) return NaN;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const b of buckets) {
    if (b.count >= rank) {
      if (!Number.isFinite(b.le)) return prevLe;
      const inBucket = b.count - prevCount;
      return inBucket > 0 ? prevLe + ((b.le - prevLe) * (rank - prevCount)) / inBucket : b.le;
    }
    prevLe = b.le;
    prevCount = b.count;
  }
  return prevLe;
}

/** The counters replay follows, from one scrape. */
export interface ServerCounters {
  feedAnswered: number;
  /** Reads that found the reader's timeline missing (cold reads). */
  coldStarts: number;
  /** Timelines rebuilt from Postgres, and authors' recent lists rebuilt. */
  rebuilds: number;
  listRebuilds: number;
  fallbackReads: number;
  followeeLoads: number;
  /** Those a read waited for (every reason but a background refresh: none cached, expired, the token moved, a stranger's post). */
  followeeLoadsWaited: number;
  bodyMisses: number;
  bodyHits: number;
  /** Answers by status class over every route. */
  http2xx: number;
  http4xx: number;
  http5xx: number;
  http503: number;
  /** Post events the workers' group has not handled (the server samples it every 5 s). */
  fanoutBacklogEvents: number;
  feedLatency: { le: number; count: number }[];
  /** How late the server's event loop ran a timer due every 10 ms (server/http/runtime-metrics.ts); empty from a server without it. */
  loopDelay: { le: number; count: number }[];
  /** The server's GC pauses (every kind), and their seconds in all. */
  gcPauses: { le: number; count: number }[];
  gcPauseSeconds: number;
}

export function serverCounters(s: MetricSamples): ServerCounters {
  const http = s.get('feedlab_http_requests_total') ?? new Map<string, number>();
  let c2 = 0;
  let c4 = 0;
  let c5 = 0;
  let c503 = 0;
  for (const [labels, v] of http) {
    const status = Number(/status="(\d+)"/.exec(labels)?.[1] ?? 0);
    if (status >= 200 && status < 300) c2 += v;
    else if (status >= 400 && status < 500) c4 += v;
    else if (status >= 500) c5 += v;
    if (status === 503) c503 += v;
  }
  return {
    feedAnswered: sumOf(s, 'feedlab_http_requests_total', 'route="/v1/feed"', 'status="200"'),
    coldStarts: sumOf(s, 'feedlab_feed_cold_starts_total', 'list="timeline"'),
    rebuilds: sumOf(s, 'feedlab_feed_rebuilds_total', 'list="timeline"'),
    listRebuilds: sumOf(s, 'feedlab_feed_rebuilds_total', 'list="recent"'),
    fallbackReads: sumOf(s, 'feedlab_feed_fallback_reads_total'),
    followeeLoads: sumOf(s, 'feedlab_feed_followee_loads_total'),
    followeeLoadsWaited: sumOf(s, 'feedlab_feed_followee_loads_total') - sumOf(s, 'feedlab_feed_followee_loads_total', 'reason="refresh"'),
    bodyHits: sumOf(s, 'feedlab_feed_body_lookups_total', 'result="hit"'),
    bodyMisses: sumOf(s, 'feedlab_feed_body_lookups_total', 'result="miss"'),
    http2xx: c2,
    http4xx: c4,
    http5xx: c5,
    http503: c503,
    fanoutBacklogEvents: sumOf(s, 'feedlab_fanout_backlog_events'),
    feedLatency: bucketsOf(s, 'feedlab_feed_latency_seconds'),
    loopDelay: bucketsOf(s, METRIC_LOOP_DELAY),
    gcPauses: bucketsOf(s, METRIC_GC_PAUSE),
    gcPauseSeconds: sumOf(s, `${METRIC_GC_PAUSE}_sum`),
  };
}

/** b - a for every counter (the backlog and the histogram as of b, the histogram as a delta). */
/** Two deltas added (the windows of one server process and of the one started after it); the backlog is b's. */
export function addCounters(a: ServerCounters, b: ServerCounters): ServerCounters {
  const out = { ...b };
  for (const k of Object.keys(b) as (keyof ServerCounters)[]) {
    const x = a[k];
    const y = b[k];
    if (k === 'fanoutBacklogEvents') continue;
    if (typeof x === 'number' && typeof y === 'number') (out[k] as number) = x + y;
    else if (Array.isArray(x) && Array.isArray(y)) {
      const first = new Map(x.map((e) => [e.le, e.count]));
      (out[k] as { le: number; count: number }[]) = y.map((e) => ({ le: e.le, count: e.count + (first.get(e.le) ?? 0) }));
    }
  }
  return out;
}

export function counterDelta(a: ServerCounters, b: ServerCounters): ServerCounters {
  const d = (k: keyof Omit<ServerCounters, 'feedLatency' | 'loopDelay' | 'gcPauses' | 'fanoutBacklogEvents'>) => b[k] - a[k];
  return {
    feedAnswered: d('feedAnswered'),
    coldStarts: d('coldStarts'),
    rebuilds: d('rebuilds'),
    listRebuilds: d('listRebuilds'),
    fallbackReads: d('fallbackReads'),
    followeeLoads: d('followeeLoads'),
    followeeLoadsWaited: d('followeeLoadsWaited'),
    bodyHits: d('bodyHits'),
    bodyMisses: d('bodyMisses'),
    http2xx: d('http2xx'),
    http4xx: d('http4xx'),
    http5xx: d('http5xx'),
    http503: d('http503'),
    fanoutBacklogEvents: b.fanoutBacklogEvents,
    feedLatency: bucketDelta(a.feedLatency, b.feedLatency),
    loopDelay: bucketDelta(a.loopDelay, b.loopDelay),
    gcPauses: bucketDelta(a.gcPauses, b.gcPauses),
    gcPauseSeconds: d('gcPauseSeconds'),
  };
}
