// A worker woken from idle answers its first statement slower than one kept busy. Measured here
// (2026-12-03, a one-row prepared SELECT from a Node process, Poisson gaps): p50 0.37 ms at 5 ms
// gaps, 0.77 at 20, 0.99 at 100, 1.16 at 250; a running worker's statement 0.81 ms with posts at
// 40/s, 0.79 at 10/s, 1.35 at 2.5/s, against 1.53 ms in a replay whose workers took about 4 events
// a second. Not a straight line in the gap or its log (r² 0.71), so the model follows the measured
// points: costs.eventStatementsByIdle, the median statement after each idle time, linear in log2 of
// the idle time between them and held at the ends. A statement drawn from costs.eventStatements
// (measured at costs.eventStatementsGap) is moved by the curve's difference between its own idle
// time and that one; the rest of the event is slowed in the curve's ratio (wakeFactor).
import type { Costs, IdlePoint } from '../scenario/types.js';

/** A move never takes a statement under this share of its draw. */
const STATEMENT_FLOOR = 0.25;

/** The curve at `gap` seconds (points ascending in gap): linear in log2(gap) between points, held at the ends. */
export function curveAt(points: readonly IdlePoint[], gap: number): number {
  const first = points[0];
  const last = points[points.length - 1];
  if (!(gap > first.gap)) return first.statement;
  if (gap >= last.gap) return last.statement;
  let i = 1;
  while (points[i].gap < gap) i++;
  const a = points[i - 1];
  const b = points[i];
  const f = Math.log2(gap / a.gap) / Math.log2(b.gap / a.gap);
  return a.statement + f * (b.statement - a.statement);
}

/** What an idle time (seconds; <= 0: the worker was busy) adds to a statement drawn at the reference gap (negative: takes off). */
export function idleShift(costs: Costs, gap: number): number {
  const curve = costs.eventStatementsByIdle;
  if (curve === null || curve.length === 0) return 0;
  return curveAt(curve, gap) - curveAt(curve, costs.eventStatementsGap);
}

/**
 * How much slower the rest of the event runs (its first follower page, its timeline writes) after
 * `gap` seconds idle: the statement curve's ratio to its reference point, 1 without a curve. The
 * stages after the statement were not measured by idle time; they are taken to slow in the same
 * proportion, as the replays measured (2026-12-03: their first page 1.7-2.1x and their writes
 * 1.4-1.8x what calibrate's worker took at 10 posts a second, their statement 1.2-1.5x).
 */
export function wakeFactor(costs: Costs, gap: number): number {
  const curve = costs.eventStatementsByIdle;
  if (curve === null || curve.length === 0) return 1;
  return curveAt(curve, gap) / curveAt(curve, costs.eventStatementsGap);
}

/** A statement drawn from costs.eventStatements, after the worker was idle for `gap` seconds. */
export function statementAfterIdle(costs: Costs, drawn: number, gap: number): number {
  return Math.max(drawn * STATEMENT_FLOOR, drawn + idleShift(costs, gap));
}
