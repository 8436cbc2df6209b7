// A worker woken from idle answers slower than one kept busy. Measured here (2026-12-03, a one-row
// prepared SELECT from a Node process, Poisson gaps): p50 0.37 ms at 5 ms gaps, 0.77 at 20, 0.99 at
// 100, 1.16 at 250. Not a straight line in the gap or its log (r² 0.71), so the model follows the
// measured points: for each stage of an event (its statement, its first follower page, its writes)
// calibrate's running worker gives the stage's median after each idle time (costs.eventStatementsByIdle,
// eventFirstPageByIdle, eventWritesByIdle), linear in log2 of the idle time between them and held at
// the ends. A stage measured at the reference gap (costs.eventStatementsGap, the hop's) is moved by
// its own curve's difference between the worker's idle time and that one: a shift, not a ratio.
// The stages wake differently: on 2026-12-05 (AMD EPYC) the statement rose 0.78 ms from the hop's
// gap to a replay's, its first page 0.54 ms and its writes nothing, so the statement's ratio (2.6x)
// had put a replay's first page at 1.78x and its writes at 2.3x what the replay measured.
import type { Costs, IdlePoint } from '../scenario/types.js';

/** A move never takes a stage under this share of its draw. */
const STAGE_FLOOR = 0.25;

/** The curve at `gap` seconds (points ascending in gap): linear in log2(gap) between points, held at the ends. */
export function curveAt(points: readonly IdlePoint[], gap: number): number {
  const first = points[0];
  const last = points[points.length - 1];
  if (!(gap > first.gap)) return first.value;
  if (gap >= last.gap) return last.value;
  let i = 1;
  while (points[i].gap < gap) i++;
  const a = points[i - 1];
  const b = points[i];
  const f = Math.log2(gap / a.gap) / Math.log2(b.gap / a.gap);
  return a.value + f * (b.value - a.value);
}

/** What an idle time (seconds; <= 0: the worker was busy) adds to a stage measured at the reference gap (negative: takes off); 0 without a curve. */
export function idleShift(curve: readonly IdlePoint[] | null, costs: Costs, gap: number): number {
  if (curve === null || curve.length === 0) return 0;
  return curveAt(curve, gap) - curveAt(curve, costs.eventStatementsGap);
}

/** A stage's `drawn` seconds (measured at the reference gap) after the worker was idle for `gap` seconds, on the stage's curve. */
function afterIdle(curve: readonly IdlePoint[] | null, costs: Costs, drawn: number, gap: number): number {
  return Math.max(drawn * STAGE_FLOOR, drawn + idleShift(curve, costs, gap));
}

/** A statement drawn from costs.eventStatements, after the worker was idle for `gap` seconds. */
export function statementAfterIdle(costs: Costs, drawn: number, gap: number): number {
  return afterIdle(costs.eventStatementsByIdle, costs, drawn, gap);
}

/** A first follower page of `page` seconds (the expansion line), after the worker was idle for `gap` seconds. */
export function firstPageAfterIdle(costs: Costs, page: number, gap: number): number {
  return afterIdle(costs.eventFirstPageByIdle, costs, page, gap);
}

/**
 * What a post's writes take once, before its first batch, after the worker was idle for `gap`
 * seconds (negative: a busy worker's are quicker than the line's reference): the writes curve's
 * move, never taking a small post's writes (the curve at the reference gap) under STAGE_FLOOR of them.
 */
export function writesWake(costs: Costs, gap: number): number {
  const curve = costs.eventWritesByIdle;
  if (curve === null || curve.length === 0) return 0;
  const small = curveAt(curve, costs.eventStatementsGap);
  return afterIdle(curve, costs, small, gap) - small;
}
