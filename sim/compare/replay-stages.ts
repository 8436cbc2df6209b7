// The model fed the replay's own stages (`feedlab compare SCENARIO`: the gap column, or with
// --replay-stages the simulated side): a calibration's
// scenario with what the replay measured of each stage in place of what calibrate measured of it. A
// figure outside 15% with the calibrated stages and within it with the replay's says the model adds
// the stages up right and calibrate measured them otherwise than the replay met them (its mix, its
// heap, how busy the machine was); one still outside says the model lacks something between them.
//
// Swapped in, each from the replay's document:
// - infrastructure.postToLog: the commit to the event log, its quantiles scaled to its mean (atMean);
// - costs.eventStatements: the worker's statement per event; its idle curve is dropped (the
//   replay's statements were met at the replay's own idle times);
// - costs.pickup: the log to an idle worker starting on the event (replay.fanout.workers.pickupIdle:
//   the events that found their worker's read waiting, as calibrate's), scaled alike. An older
//   document keeps only every event's, those that waited behind the worker's own batch included,
//   which the model adds again (its own such waits: the simulated pickup's mean over the calibrated
//   draws', said beside);
// - writesPerSecondPerWorker: a large post's writes per timeline, the line's slope moved by the
//   replay's p50 less the calibrated simulation's;
// - costs.batch: a batch's own cost moved by the replay's pushed posts' writes p50 less the
//   calibrated simulation's (most posts are one batch; at most to 0);
// - costs.expand: the first follower page's line moved alike by its p50 (a replay keeps no line
//   by size: its slope stays calibrated);
// - api.spread: the server's own histogram of its feed handler over its mean. It holds the waits
//   the model adds itself (a resumption behind other work, a queue, a Redis pipeline), which at a
//   replay's few percent of a core are a small part of it.
// What the replay does not measure stays calibrated: the API's CPU and the Redis costs of a read; so
// does a pulled post's time to its author's list (api.postListed), not swapped (sim/compare/figures.ts
// calibratedOnly names what each figure hangs on of these).
import type { RunResult, StageId } from '../result.js';
import { bucketQuantile } from '../replay/server-metrics.js';
import { idlePickupOf } from '../replay/result.js';
import { QUANTILES } from '../calibration/document.js';
import { quantileAt, quantileMean, type QuantileDistribution } from '../scenario/quantiles.js';
import type { Scenario } from '../scenario/types.js';
import type { DurationSummary } from '../metrics/recorder.js';
import { mean } from 'simple-statistics';

/** One input swapped: its name in the scenario, calibrate's value and the replay's, in words. */
export interface SwappedStage {
  key: string;
  calibrated: string;
  replay: string;
}

export interface ReplayFed {
  sc: Scenario;
  swapped: SwappedStage[];
}

const ms = (s: number) => `${(s * 1000).toFixed(2)} ms`;
const us = (s: number) => `${(s * 1e6).toFixed(1)} us`;

/** A stage summary (mean, p50, p90, p99, p99.9, max) as a distribution from `min`; null without a p50. */
export function summaryDistribution(s: Partial<Record<keyof DurationSummary, number | null>> | undefined, min: number): QuantileDistribution | null {
  if (!s || typeof s.p50 !== 'number' || !Number.isFinite(s.p50)) return null;
  const at: [number, number | null | undefined][] = [
    [0, Math.min(min, s.p50)],
    [0.5, s.p50],
    [0.9, s.p90],
    [0.99, s.p99],
    [0.999, s.p999],
    [1, s.max],
  ];
  const points: { p: number; value: number }[] = [];
  for (const [p, v] of at) {
    if (typeof v !== 'number' || !Number.isFinite(v)) continue;
    // a summary's quantiles from a histogram never fall, but a missing one leaves the next to hold the line
    points.push({ p, value: Math.max(v, points.at(-1)?.value ?? 0) });
  }
  if (points.at(-1)!.p < 1) points.push({ p: 1, value: points.at(-1)!.value });
  return { points: withTails(points) };
}

/** Points a tail segment is filled with (tailPoint). */
const TAIL_STEPS = 8;

/**
 * The summary's segments from p90 up (short of max) filled in as a power law: log(value) linear in
 * log(1 - p), as a heavy tail falls. Straight lines between p99 and p99.9 put as many draws near
 * p99.9 as near p99: a replay's statements (p99 6.36 ms, p99.9 37 ms) drawn 2,000 times came out at
 * p99 8.5-14.5 ms.
 */
function withTails(points: { p: number; value: number }[]): { p: number; value: number }[] {
  const out = [points[0]];
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1];
    const b = points[i];
    if (a.p >= 0.9 && b.p < 1 && a.value > 0 && b.value > a.value) {
      for (let k = 1; k < TAIL_STEPS; k++) out.push(tailPoint(a, b, k / TAIL_STEPS));
    }
    out.push(b);
  }
  return out;
}

/** The point a share `f` of the way from a to b in log(1 - p), its value on the power law through them. */
export function tailPoint(a: { p: number; value: number }, b: { p: number; value: number }, f: number): { p: number; value: number } {
  const p = 1 - (1 - a.p) * ((1 - b.p) / (1 - a.p)) ** f;
  return { p, value: a.value * (b.value / a.value) ** f };
}

/**
 * `d` scaled to `mean`: the hop and the pickup are read off millisecond clocks, where a quantile is
 * a whole ms (a pickup of 0.75 ms on average reads p50 1 ms) but the mean is exact (the stamps fall
 * anywhere in their ms). Unscaled, a burst replay's pickup drew a mean of 1.2 times the replay's.
 */
export function atMean(d: QuantileDistribution | null, mean: number | null | undefined): QuantileDistribution | null {
  if (!d || typeof mean !== 'number' || !(mean > 0)) return d;
  const k = mean / quantileMean(d);
  return Number.isFinite(k) && k > 0 ? { points: d.points.map((q) => ({ p: q.p, value: q.value * k })) } : d;
}

/** The server's feed-handler buckets (cumulative, seconds) over their mean, at calibrate's quantiles; null when empty. */
export function serverSpread(buckets: readonly { le: number; count: number }[] | undefined): QuantileDistribution | null {
  if (!buckets || buckets.length === 0 || !(buckets[buckets.length - 1].count > 0)) return null;
  const b = [...buckets];
  const lowest = b.find((x) => x.count > 0)!;
  const points = QUANTILES.map((p) => ({ p, value: p === 0 ? 0 : bucketQuantile(b, p) }));
  // the +Inf bucket reads as the last finite bound; the first bucket's floor is 0, not below its bound
  points[0].value = Math.min(points[1].value, lowest.le / 2);
  for (let i = 1; i < points.length; i++) points[i].value = Math.max(points[i].value, points[i - 1].value);
  const mean = quantileMean({ points });
  if (!(mean > 0)) return null;
  return { points: points.map((q) => ({ p: q.p, value: q.value / mean })) };
}

const stageOf = (r: RunResult, id: StageId) => r.summary.fanout.stagesSeconds?.[id];

/**
 * `sc` (a calibration's scenario) with the stages `replay` measured swapped in. `simulated`: the
 * same calibration's simulations of that replay's world (the slope, the batch and the first page
 * move by the replay's figure less theirs). Inputs a replay did not measure stay as they were, and
 * are not listed.
 */
export function fedByReplay(sc: Scenario, replay: RunResult, simulated: readonly RunResult[]): ReplayFed {
  const infra = sc.infrastructure;
  const costs = { ...infra.costs };
  const next = { ...infra, costs };
  const swapped: SwappedStage[] = [];
  const dist = (d: QuantileDistribution) => `mean ${ms(quantileMean(d))}, p99 ${ms(quantileAt(d, 0.99))}`;
  // a stage's median in the replay and in the calibrated simulations (their mean): what a line moves by
  const medians = (id: StageId) => {
    const measured = stageOf(replay, id)?.p50;
    const model = meanOf(simulated.map((r) => stageOf(r, id)?.p50));
    return typeof measured === 'number' && Number.isFinite(measured) && Number.isFinite(model) ? { measured, model } : null;
  };

  const hop = atMean(summaryDistribution(stageOf(replay, 'postToLog'), 0), stageOf(replay, 'postToLog')?.mean);
  if (hop) {
    swapped.push({ key: 'postToLog', calibrated: dist(infra.postToLog), replay: dist(hop) });
    next.postToLog = hop;
  }
  const statements = summaryDistribution(stageOf(replay, 'statements'), infra.costs.eventStatements.points[0].value);
  if (statements) {
    swapped.push({ key: 'costs.eventStatements', calibrated: `${dist(infra.costs.eventStatements)}${infra.costs.eventStatementsByIdle ? ', moved by idle time' : ''}`, replay: dist(statements) });
    costs.eventStatements = statements;
    costs.eventStatementsByIdle = null;
  }
  const idlePickup = idlePickupOf(replay);
  const idle = idlePickup !== null;
  const pickupStage = idlePickup ?? stageOf(replay, 'pickup');
  const pickup = atMean(summaryDistribution(pickupStage, 0), pickupStage?.mean);
  if (pickup) {
    const busy = meanOf(simulated.map((r) => stageOf(r, 'pickup')?.mean)) - quantileMean(infra.costs.pickup);
    swapped.push({
      key: 'costs.pickup',
      // every event's pickup holds the waits behind a busy worker the model adds: said where they add a hundredth of a ms or more
      calibrated: `${dist(infra.costs.pickup)}${!idle && busy >= 1e-5 ? ` (the model's waits behind a busy worker add ${ms(busy)} to the mean, counted twice now)` : ''}`,
      replay: `${dist(pickup)}${idle ? ', the events that found the worker waiting' : ''}`,
    });
    costs.pickup = pickup;
  }
  const large = medians('largeWritesPerTimeline');
  if (large) {
    const perFollower = 1 / infra.writesPerSecondPerWorker + large.measured - large.model;
    if (perFollower > 0) {
      swapped.push({ key: 'writesPerSecondPerWorker', calibrated: `${us(1 / infra.writesPerSecondPerWorker)} a follower (a large post ${us(large.model)} a timeline)`, replay: `${us(perFollower)} a follower (a large post ${us(large.measured)} a timeline)` });
      next.writesPerSecondPerWorker = 1 / perFollower;
    }
  }
  // the first follower page: its line's intercept moved by the replay's median less the model's
  const page = medians('firstPage');
  if (page) {
    const expand = Math.max(0, infra.costs.expand + page.measured - page.model);
    swapped.push({ key: 'costs.expand', calibrated: `${ms(infra.costs.expand)} a first page (its p50 ${ms(page.model)})`, replay: `${ms(expand)} (its p50 ${ms(page.measured)})` });
    costs.expand = expand;
  }
  // most pushed posts are one batch: the median post's writes move with the batch's own cost
  const writes = medians('writes');
  if (writes) {
    const batch = Math.max(0, infra.costs.batch + writes.measured - writes.model);
    swapped.push({ key: 'costs.batch', calibrated: `${ms(infra.costs.batch)} a batch (a pushed post's writes p50 ${ms(writes.model)})`, replay: `${ms(batch)} a batch (a pushed post's writes p50 ${ms(writes.measured)})` });
    costs.batch = batch;
  }
  const spread = infra.api ? serverSpread(replay.replay?.reads.counters.feedLatency) : null;
  if (infra.api && spread) {
    const tail = (d: QuantileDistribution) => `p99 ${(quantileAt(d, 0.99) / quantileAt(d, 0.5)).toFixed(2)}x its p50`;
    swapped.push({ key: 'api.spread', calibrated: `one read at a time, ${tail(infra.api.spread)}`, replay: `the server's feed handler, ${tail(spread)}` });
    next.api = { ...infra.api, spread };
  }
  return { sc: { ...sc, infrastructure: next }, swapped };
}

/**
 * fedByReplay, then once more on its own simulations (`simulate`: the fed scenario's runs): the
 * slope, the batch and the first page are moved again by what the first move left (a slope that
 * rises for the large posts lengthens the small ones' writes too, which the batch's first move did
 * not see). Each swap keeps the calibrated value it replaced.
 */
export function fedByReplayRefined(sc: Scenario, replay: RunResult, simulated: readonly RunResult[], simulate: (fed: Scenario) => RunResult[]): ReplayFed {
  const first = fedByReplay(sc, replay, simulated);
  // nothing swapped (a replay document older than the stages): nothing to simulate again
  if (first.swapped.length === 0) return first;
  const again = fedByReplay(first.sc, replay, simulate(first.sc));
  const was = new Map(first.swapped.map((x) => [x.key, x.calibrated]));
  return { sc: again.sc, swapped: again.swapped.map((x) => ({ ...x, calibrated: was.get(x.key) ?? x.calibrated })) };
}

/** The mean of the finite values, NaN when there are none. */
function meanOf(xs: readonly (number | null | undefined)[]): number {
  const v = xs.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  return v.length > 0 ? mean(v) : NaN;
}
