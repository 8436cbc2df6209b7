// A post event's stages as a running fan-out worker spends them, read from the worker's own
// histograms (core/worker-metrics.ts: eventPickupMs, eventStatementsMs, eventFirstPageMs,
// eventWritesMs): self-contained, one `feedlab worker` that calibrate starts for the hop's posts
// (posted at a replay's pace), counted between two of its publications (after the warm-up, and each
// size of worker-by-size.ts after the hop); against a target, the deployment's workers since they
// started. What calibrate's own process cannot see: the worker's event loop woken by the log, its
// statement as it sends it beside its other work, its pages and writes. It publishes at its usual
// interval (METRICS_INTERVAL_MS), as a replay's workers do: publishing blocks its event loop for a
// moment, and more often would delay more of the events it takes. Once what was posted is handled,
// calibrate asks its worker for its figures at once (a wait of 2.5 s on average otherwise, at each
// of a calibration's 8-13 reads).
import * as hdr from 'hdr-histogram-js';
import type { Redis } from 'ioredis';
import { METRICS_INTERVAL_MS, type HistogramName } from '../../core/worker-metrics.js';
import { QUANTILES, type WorkerStages } from '../../sim/calibration/document.js';
import { eventBacklog, fleetDelta, fleetFigures, type FleetFigures } from '../../sim/replay/redis-figures.js';
import { sleep } from './pace.js';

/** Longest wait for the worker to handle what was posted and publish it (it publishes every METRICS_INTERVAL_MS). */
const SETTLE_TIMEOUT_MS = 3 * METRICS_INTERVAL_MS;
const POLL_MS = 50;

export interface WorkerLog {
  redis: Redis;
  keyPrefix: string;
  streamPrefix: string;
  partitions: number;
  group: string;
  /**
   * Ask the worker to publish now (calibrate's own, SIGUSR2), and the outbox's rows not yet in the
   * log: a post answered 201 reaches the log a relay's poll later, and asked at once the worker would
   * publish before the last post's event (it came in the next size's figures). Absent: the worker's
   * next publication is waited for (seconds: the relay is long done by then).
   */
  askToPublish?: () => void;
  outboxBacklog?: () => Promise<number>;
}

/** The distributions' quantiles, with the p10 a fit's point gives beside its p90. */
const STAGE_QUANTILES = [...QUANTILES.slice(0, 1), 0.1, ...QUANTILES.slice(1)];

/**
 * The idle pickup's table, drawn from: every 5% below the tail. About half its readings are 0, and
 * with STAGE_QUANTILES the draws, linear between points, put its mean 8% over the readings' (0.78
 * against 0.72 ms, a calibration of 2026-12-06).
 */
const PICKUP_TABLE = [...Array.from({ length: 20 }, (_, i) => i / 20), ...QUANTILES.filter((p) => p > 0.95)];

const STAGES: Record<keyof Omit<WorkerStages, 'events' | 'source'>, HistogramName> = {
  pickup: 'eventPickupMs',
  pickupIdle: 'eventPickupIdleMs',
  statements: 'eventStatementsMs',
  firstPage: 'eventFirstPageMs',
  writes: 'eventWritesMs',
};

/** The stages of the workers' figures (HDR histograms of microseconds) as distributions in seconds. */
export function workerStages(fleet: FleetFigures, source: WorkerStages['source']): WorkerStages {
  const stage = (name: HistogramName) => {
    const e = fleet.histograms.get(name);
    const n = e?.h.totalCount ?? 0;
    return {
      n,
      mean: n > 0 ? e!.sumMs / n / 1000 : NaN,
      points: STAGE_QUANTILES.map((p) => ({ p, value: n > 0 ? (p === 1 ? e!.h.maxValue : e!.h.getValueAtPercentile(p * 100)) / 1e6 : NaN })),
    };
  };
  const idle = fleet.histograms.get(STAGES.pickupIdle);
  return {
    source,
    events: (fleet.counters.eventsCreated ?? 0) + (fleet.counters.eventsDeleted ?? 0),
    pickup: stage(STAGES.pickup),
    pickupIdle: { ...stage(STAGES.pickupIdle), unrounded: idle && idle.h.totalCount > 0 ? wholeMsQuantiles(idle.h, PICKUP_TABLE) : [] },
    statements: stage(STAGES.statements),
    firstPage: stage(STAGES.firstPage),
    writes: stage(STAGES.writes),
  };
}

/**
 * Quantiles (s) of readings taken to the whole ms, a histogram of microseconds (the worker's pickup:
 * the log's ms clock against its own): a reading of k ms stands for the times from k - 0.5 to
 * k + 0.5 ms spread evenly, so that draws from them are not bunched on whole ms. A 0 stays 0: its
 * times are under 1 ms but cannot be negative, and spread over 0-0.5 ms they had put the mean 0.12 ms
 * (18%) over the readings' (a calibration of 2026-12-06), which is exact (the mean of a difference of
 * two whole-ms stamps is the mean of the true differences).
 */
export function wholeMsQuantiles(h: hdr.Histogram, ps: readonly number[]): { p: number; value: number }[] {
  if (!(h instanceof hdr.JsHistogram)) throw new TypeError('wholeMsQuantiles reads a JS histogram (hdr.build without WebAssembly)');
  const counts = new Map<number, number>();
  const it = h.recordedValuesIterator;
  it.reset();
  while (it.hasNext()) {
    const v = it.next();
    const k = Math.round(v.valueIteratedTo / 1000);
    counts.set(k, (counts.get(k) ?? 0) + v.countAtValueIteratedTo);
  }
  const readings = [...counts.entries()].sort((a, b) => a[0] - b[0]);
  return ps.map((p) => {
    const target = p * h.totalCount;
    let below = 0;
    for (const [i, [k, c]] of readings.entries()) {
      if (below + c >= target || i === readings.length - 1) {
        const from = k === 0 ? 0 : k - 0.5;
        const to = k === 0 ? 0 : k + 0.5;
        return { p, value: (from + (to - from) * Math.min(1, Math.max(0, (target - below) / c))) / 1000 };
      }
      below += c;
    }
    return { p, value: NaN };
  });
}

/** The worker calibrate started: its figures from `mark()` on. */
export class WorkerStageProbe {
  private before: FleetFigures | null = null;

  constructor(private readonly log: WorkerLog) {}

  /** Everything posted so far handled and published: the figures after this count. */
  async mark(): Promise<void> {
    this.before = await this.settled();
  }

  /** Everything posted handled and published: the stages since mark(), which then counts from here. */
  async since(): Promise<WorkerStages> {
    const after = await this.settled();
    const before = this.before;
    this.before = after;
    return workerStages(before ? fleetDelta(before, after) : after, 'calibrate-worker');
  }

  /** Waits until the log's backlog is empty and the worker has published since; its figures then. */
  private async settled(): Promise<FleetFigures> {
    const { redis, keyPrefix, streamPrefix, partitions, group } = this.log;
    const until = Date.now() + SETTLE_TIMEOUT_MS;
    while (((await this.log.outboxBacklog?.()) ?? 0) > 0 || (await eventBacklog(redis, streamPrefix, partitions, group)) > 0) {
      if (Date.now() > until) throw new Error(`calibrate: the worker left post events unhandled ${SETTLE_TIMEOUT_MS / 1000} s after the last was posted`);
      await sleep(POLL_MS);
    }
    const since = Date.now();
    this.log.askToPublish?.();
    for (;;) {
      const f = await fleetFigures(redis, keyPrefix);
      if (f.workers > 0 && f.oldestAt >= since) return f;
      if (Date.now() > until) throw new Error(`calibrate: the worker did not publish its figures within ${SETTLE_TIMEOUT_MS / 1000} s`);
      await sleep(POLL_MS);
    }
  }
}

/** A distribution's p10, p50 and p90 and its count, as a fit's point. */
export function point(d: WorkerStages['writes']) {
  const at = (p: number) => d.points.find((q) => q.p === p)?.value ?? NaN;
  return { median: at(0.5), p10: at(0.1), p90: at(0.9), n: d.n };
}
