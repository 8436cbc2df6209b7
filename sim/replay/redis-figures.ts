// What replay reads from Redis with a client of its own (sim never imports server): commands by
// name (INFO commandstats), used memory, the timeline writes the workers counted per second, the
// metrics the workers publish, and the event log's backlog. Key names come from core/keys.ts, the
// published metrics' format from core/worker-metrics.ts, the same definitions the server uses.
import type { Redis } from 'ioredis';
import * as hdr from 'hdr-histogram-js';
import { EVENT_STREAM_FIELD, eventStreamKey, TIMELINE_WRITES_KEY, WORKER_METRICS_KEY } from '../../core/keys.js';
import { newHistogram } from './http-client.js';
import { HISTOGRAM_UNITS_PER_MS, parseExportedMetrics, type CounterName, type HistogramName } from '../../core/worker-metrics.js';
import { mean } from 'simple-statistics';
import type { CommandTime } from '../scenario/calibration.js';

/** Calls per command since the server started (or CONFIG RESETSTAT), scripts' inner commands included. */
export async function commandCalls(redis: Redis): Promise<Map<string, number>> {
  return new Map([...(await commandTimes(redis))].map(([cmd, t]) => [cmd, t.calls]));
}

/** Calls and microseconds of Redis's own time per command since the server started (INFO commandstats). */
export async function commandTimes(redis: Redis): Promise<Map<string, CommandTime>> {
  const info = await redis.info('commandstats');
  const out = new Map<string, CommandTime>();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) out.set(m[1], { calls: Number(m[2]), usec: Number(m[3]) });
  return out;
}

/** Redis's own seconds a call (NaN with no call). */
export function secondsPerCall(t: CommandTime): number {
  return t.calls > 0 ? t.usec / t.calls / 1e6 : NaN;
}

/**
 * Redis's own seconds of the scripts (EVALSHA) per list they trimmed (ZREMRANGEBYRANK, once for each
 * list an add writes or a rebuild rewrites): a timeline write's time, its share of its add call's
 * included, the way costs.zadd is measured. Null without a script or a trim.
 */
export function secondsPerListWrite(evalsha: CommandTime | undefined, trims: CommandTime | undefined): number | null {
  return evalsha && trims && evalsha.calls > 0 && trims.calls > 0 ? evalsha.usec / trims.calls / 1e6 : null;
}

/** b - a of calls and Redis's own microseconds, per command, dropping those that were not called. */
export function timesDelta(a: Map<string, CommandTime>, b: Map<string, CommandTime>): Map<string, CommandTime> {
  const out = new Map<string, CommandTime>();
  for (const [cmd, t] of b) {
    const calls = t.calls - (a.get(cmd)?.calls ?? 0);
    if (calls > 0) out.set(cmd, { calls, usec: t.usec - (a.get(cmd)?.usec ?? 0) });
  }
  return out;
}

/** b - a, per command, dropping those that did not move. */
export function callsDelta(a: Map<string, number>, b: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [cmd, n] of b) {
    const d = n - (a.get(cmd) ?? 0);
    if (d > 0) out.set(cmd, d);
  }
  return out;
}

export async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN);
}

/** Redis's own CPU seconds (user + system) since it started. */
export async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const num = (k: string) => Number(new RegExp(`${k}:([0-9.]+)`).exec(info)?.[1] ?? 0);
  return num('used_cpu_sys') + num('used_cpu_user');
}

/** Timeline writes per unix second, as the workers' batches counted them at Redis. */
export async function timelineWritesBySecond(redis: Redis, keyPrefix: string): Promise<Map<number, number>> {
  const all = await redis.hgetall(keyPrefix + TIMELINE_WRITES_KEY);
  const out = new Map<number, number>();
  for (const [second, n] of Object.entries(all)) out.set(Number(second), Number(n));
  return out;
}

export interface FleetFigures {
  workers: number;
  /** When the least recently published of them published (ms since the epoch; Infinity: none). */
  oldestAt: number;
  /** When each published last, newest first (a killed worker's stays old: liveOldestAt leaves it out). */
  publishedAt: number[];
  counters: Partial<Record<CounterName, number>>;
  /** HDR histograms of microseconds, merged over the workers, with their weighted sums in ms. */
  histograms: Map<HistogramName, { h: hdr.Histogram; sumMs: number }>;
}

/** The metrics every worker published (each worker's latest), merged. */
export async function fleetFigures(redis: Redis, keyPrefix: string): Promise<FleetFigures> {
  const all = await redis.hgetall(keyPrefix + WORKER_METRICS_KEY);
  const out: FleetFigures = { workers: 0, oldestAt: Infinity, publishedAt: [], counters: {}, histograms: new Map() };
  for (const text of Object.values(all)) {
    const doc = parseExportedMetrics(text);
    if (!doc) continue;
    out.workers++;
    out.oldestAt = Math.min(out.oldestAt, doc.at);
    out.publishedAt.push(doc.at);
    for (const [name, n] of Object.entries(doc.counters) as [CounterName, number][]) out.counters[name] = (out.counters[name] ?? 0) + n;
    for (const [name, v] of Object.entries(doc.histograms) as [HistogramName, { encoded: string; sumMs: number }][]) {
      if (!v) continue;
      const decoded = hdr.decodeFromCompressedBase64(v.encoded, 64, false);
      let entry = out.histograms.get(name);
      if (!entry) out.histograms.set(name, (entry = { h: newHistogram(), sumMs: 0 }));
      entry.h.add(decoded);
      entry.sumMs += v.sumMs;
    }
  }
  out.publishedAt.sort((a, b) => b - a);
  return out;
}

/** When the least recent of the `live` most recently published workers published (Infinity: fewer published). */
export function liveOldestAt(f: FleetFigures, live: number): number {
  return live > 0 && f.publishedAt.length >= live ? f.publishedAt[live - 1] : Infinity;
}

/**
 * What the workers did between two readings: counters and histograms of `after` less `before` (a
 * running deployment's workers publish since they started). A worker that restarted meanwhile
 * cannot be subtracted: its figures are then taken whole, and `exact` says so.
 */
export function fleetDelta(before: FleetFigures, after: FleetFigures): FleetFigures & { exact: boolean } {
  let exact = true;
  const counters: FleetFigures['counters'] = {};
  for (const [name, n] of Object.entries(after.counters) as [CounterName, number][]) {
    const d = n - (before.counters[name] ?? 0);
    if (d < 0) exact = false;
    counters[name] = d < 0 ? n : d;
  }
  const histograms: FleetFigures['histograms'] = new Map();
  for (const [name, a] of after.histograms) {
    const b = before.histograms.get(name);
    const h = newHistogram();
    h.add(a.h);
    let sumMs = a.sumMs;
    if (b && b.h.totalCount > 0) {
      try {
        if (b.h.totalCount > a.h.totalCount) throw new RangeError('fewer samples after than before');
        h.subtract(b.h);
        sumMs -= b.sumMs;
      } catch {
        exact = false;
        h.reset();
        h.add(a.h);
        sumMs = a.sumMs;
      }
    }
    histograms.set(name, { h, sumMs });
  }
  return { workers: after.workers, oldestAt: after.oldestAt, publishedAt: after.publishedAt, counters, histograms, exact };
}

/** Seconds: mean, p50, p90, p99, p99.9, max of merged histograms (NaN when empty). */
export function latencySeconds(...entries: ({ h: hdr.Histogram; sumMs: number } | undefined)[]): { count: number; mean: number; p50: number; p90: number; p99: number; p999: number; max: number } {
  const h = newHistogram();
  let sumMs = 0;
  for (const e of entries) {
    if (!e) continue;
    h.add(e.h);
    sumMs += e.sumMs;
  }
  const n = h.totalCount;
  const at = (p: number) => (n === 0 ? NaN : h.getValueAtPercentile(p) / HISTOGRAM_UNITS_PER_MS / 1000);
  return { count: n, mean: n === 0 ? NaN : sumMs / n / 1000, p50: at(50), p90: at(90), p99: at(99), p999: at(99.9), max: n === 0 ? NaN : h.maxValue / HISTOGRAM_UNITS_PER_MS / 1000 };
}

/** The merged histograms of these names, compressed (mergeable with hdr-histogram-js). */
export function encodeMerged(fleet: FleetFigures, names: HistogramName[]): string {
  const h = newHistogram();
  for (const n of names) {
    const e = fleet.histograms.get(n);
    if (e) h.add(e.h);
  }
  return hdr.encodeIntoCompressedBase64(h);
}

/**
 * Post events the workers' group has not handled: entries not yet delivered (the group's lag) plus
 * delivered and not acknowledged, over every partition stream; a stream the group has not read yet
 * counts whole.
 */
export async function eventBacklog(redis: Redis, streamPrefix: string, partitions: number, group: string): Promise<number> {
  const p = redis.pipeline();
  for (let i = 0; i < partitions; i++) {
    const key = eventStreamKey(streamPrefix, i);
    p.xinfo('GROUPS', key);
    p.xlen(key);
  }
  const replies = ((await p.exec()) ?? []) as [Error | null, unknown][];
  let total = 0;
  for (let i = 0; i < partitions; i++) {
    const [err, groups] = replies[2 * i];
    if (err) continue; // no such stream yet: nothing posted to that partition
    const info = (groups as unknown[][]).map((g) => {
      const f = new Map<string, unknown>();
      for (let k = 0; k + 1 < g.length; k += 2) f.set(String(g[k]), g[k + 1]);
      return f;
    });
    const mine = info.find((f) => f.get('name') === group);
    if (!mine) {
      total += Number(replies[2 * i + 1][1] ?? 0);
      continue;
    }
    const lag = mine.get('lag');
    total += Number(mine.get('pending') ?? 0) + (lag === null || lag === undefined ? 0 : Number(lag));
  }
  return total;
}

/**
 * The hop from a post's commit to its event in the log, for the posts made from `sinceMs` on: the
 * stream entry id's millisecond less the event's createdAt, over every partition stream (entries
 * the log has trimmed are not counted). Seconds.
 */
export interface HopFigures {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export async function postToLogLags(redis: Redis, streamPrefix: string, partitions: number, sinceMs: number): Promise<HopFigures> {
  const p = redis.pipeline();
  for (let i = 0; i < partitions; i++) p.xrange(eventStreamKey(streamPrefix, i), `${Math.floor(sinceMs)}-0`, '+');
  const replies = ((await p.exec()) ?? []) as [Error | null, [string, string[]][] | null][];
  const lags: number[] = [];
  for (const [err, entries] of replies) {
    if (err || !entries) continue;
    for (const [id, fields] of entries) {
      const at = fields.indexOf(EVENT_STREAM_FIELD);
      if (at < 0) continue;
      let e: { kind?: unknown; createdAt?: unknown };
      try {
        e = JSON.parse(fields[at + 1]) as typeof e;
      } catch {
        continue;
      }
      if (e.kind !== 'PostCreated' || typeof e.createdAt !== 'number') continue;
      lags.push((Number(id.split('-')[0]) - e.createdAt) / 1000);
    }
  }
  lags.sort((a, b) => a - b);
  const n = lags.length;
  // nearest rank: a quantile is one of the hops measured (on millisecond clocks, a whole ms)
  const q = (x: number) => (n === 0 ? NaN : lags[Math.min(n - 1, Math.ceil(x * n) - 1)]);
  return { count: n, mean: n === 0 ? NaN : mean(lags), p50: q(0.5), p90: q(0.9), p99: q(0.99), max: n === 0 ? NaN : lags[n - 1] };
}
