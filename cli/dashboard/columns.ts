// The dashboard's x axis: the whole run's minutes laid over a fixed number of character columns,
// so a sparkline fills from left to right as simulated time passes and an event marker sits under
// the minute it fired in. Columns take the max of their minutes, as reports/sparkline.ts does.
import { sparkline } from '../../reports/sparkline.js';
import type { FiredEvent } from '../../sim/model/metrics.js';

export interface Axis {
  /** Minutes in the whole run. */
  minutes: number;
  /** Columns the minutes are bucketed into (at most one per minute). */
  columns: number;
  /** Characters per column: a short run is stretched to use the width. */
  repeat: number;
}

export function axisFor(durationSeconds: number, intervalSeconds: number, width: number): Axis {
  const minutes = Math.max(1, Math.ceil(durationSeconds / intervalSeconds));
  const columns = Math.max(1, Math.min(width, minutes));
  return { minutes, columns, repeat: Math.max(1, Math.floor(width / columns)) };
}

/** The minutes [lo, hi) of column b: the same buckets reports/sparkline.ts uses for a full series. */
export function columnMinutes(axis: Axis, b: number): [number, number] {
  const lo = Math.floor((b * axis.minutes) / axis.columns);
  const hi = Math.max(lo + 1, Math.floor(((b + 1) * axis.minutes) / axis.columns));
  return [lo, hi];
}

export function columnOfMinute(axis: Axis, minute: number): number {
  for (let b = 0; b < axis.columns; b++) {
    const [lo, hi] = columnMinutes(axis, b);
    if (minute >= lo && minute < hi) return b;
  }
  return axis.columns - 1;
}

/** The sparkline of the minutes simulated so far, on the run's axis (blank where time has not come yet). */
export function liveSparkline(values: number[], axis: Axis): string {
  const cols: number[] = [];
  for (let b = 0; b < axis.columns; b++) {
    const [lo, hi] = columnMinutes(axis, b);
    if (lo >= values.length) break;
    let m = -Infinity;
    for (let i = lo; i < Math.min(hi, values.length); i++) if (values[i] !== undefined && values[i] > m) m = values[i];
    cols.push(Number.isFinite(m) ? m : 0);
  }
  const line = sparkline(cols, cols.length);
  return [...line].map((c) => c.repeat(axis.repeat)).join('');
}

/** One letter per kind of scenario event. */
export const EVENT_MARKS: Record<string, string> = {
  celebrityBurst: 'B',
  breakingNews: 'N',
  coldStartStorm: 'S',
  cacheLoss: 'L',
};

export const eventMark = (kind: string): string => EVENT_MARKS[kind] ?? '*';

/** A row as wide as the sparklines with each fired event's letter under the minute it fired in. */
export function markerRow(events: FiredEvent[], axis: Axis, intervalSeconds: number): string {
  const row = Array.from({ length: axis.columns * axis.repeat }, () => ' ');
  for (const e of events) {
    const b = columnOfMinute(axis, Math.floor(e.at / intervalSeconds));
    const at = b * axis.repeat;
    row[at] = row[at] === ' ' || row[at] === eventMark(e.kind) ? eventMark(e.kind) : '+';
  }
  return row.join('').trimEnd();
}
