// Fan-out workers in closed form: enough for the peak write rate with headroom, and enough for
// the lag objective. The objective is the p99 over every delivery (as the simulator checks it),
// so the few posts with huge audiences (named celebrities pushed, a celebrity burst) matter once
// their deliveries are more than 1% of all of them: then the p99 delivery sits inside those posts.
import type { Scenario } from '../scenario/types.js';
import type { Load } from './load.js';

export interface LagModel {
  /** Writes per second of one worker, the fleet's round trip and batch, the post expansion. */
  perWorker: number;
  rtt: number;
  batchSize: number;
  expand: number;
  runSeconds: number;
}

export function lagModel(sc: Scenario): LagModel {
  const i = sc.infrastructure;
  return { perWorker: i.writesPerSecondPerWorker, rtt: i.costs.rtt, batchSize: i.batchSize, expand: i.costs.expand, runSeconds: sc.duration };
}

/**
 * The p99 follower lag the closed form expects from `workers` workers at a load:
 * - the post the p99 delivery belongs to (the deliveries-weighted 99th percentile audience): its
 *   expansion, then its batches spread over the workers, each a round trip plus its writes at a
 *   worker's rate, stretched by 1 / (1 - utilisation) for the queue at the peak;
 * - when big posts carry a share B > 1% of the run's deliveries, the p99 delivery is at q = 1 - 1%/B
 *   into them: q x (largest audience) / (spare fleet rate) for one post, and for a burst of them
 *   q x (burst deliveries / spare rate - window), the queue it builds beyond its own window.
 */
export function lagEstimate(workers: number, load: Load, m: LagModel): number {
  const capacity = workers * m.perWorker;
  const spare = capacity - load.writesPeak;
  if (spare <= 0) return Infinity;
  const rho = load.writesPeak / capacity;
  // the post the p99 delivery is in: its batches share the fleet, one round trip and batch at a time per worker
  const a = Math.max(1, load.audienceP99);
  const batches = Math.ceil(a / m.batchSize);
  const ordinary = (m.expand + Math.ceil(batches / workers) * (m.rtt + Math.min(a, m.batchSize) / m.perWorker)) / (1 - rho);
  const burst = load.burst?.deliveries ?? 0;
  // both over the run (its window of the day, its events): the named accounts' share of the run's deliveries
  const big = load.namedWritesRunMean * m.runSeconds + burst;
  const total = load.writesRunMean * m.runSeconds + burst;
  const share = total > 0 ? big / total : 0;
  if (share <= 0.01) return ordinary;
  const q = 1 - 0.01 / share;
  const largest = Math.max(load.largestPost * (load.namedWritesMean > 0 ? 1 : 0), load.burst?.largest ?? 0);
  const single = (q * largest) / spare;
  const pile = load.burst ? q * Math.max(0, burst / spare - load.burst.window) : 0;
  return Math.max(ordinary, single, pile);
}

/**
 * The least lag a delivery can have however many workers there are: its post's expansion, one
 * round trip, and one batch (of the p99 post's audience, at most a full batch) at one worker's rate.
 */
export function lagFloor(load: Pick<Load, 'audienceP99'>, m: LagModel): { seconds: number; batch: number } {
  const batch = Math.min(m.batchSize, Math.max(1, Math.round(load.audienceP99)));
  return { seconds: m.expand + m.rtt + batch / m.perWorker, batch };
}

/** The fewest workers whose closed-form lag meets the objective (lag falls as workers grow). */
export function workersForLag(load: Load, m: LagModel, lagSlo: number, max = 10_000_000): number {
  let hi = 1;
  while (lagEstimate(hi, load, m) > lagSlo) {
    hi *= 2;
    if (hi > max) return Infinity;
  }
  let lo = Math.floor(hi / 2);
  if (lo < 1 || lagEstimate(lo, load, m) <= lagSlo) return lo < 1 ? 1 : lo;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (lagEstimate(mid, load, m) <= lagSlo) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** Workers for the peak write rate at (1 - headroom) busy. */
export function workersForThroughput(load: Load, perWorker: number, headroom: number): number {
  return Math.max(1, Math.ceil(load.writesPeak / (perWorker * (1 - headroom)) - 1e-9));
}
