// The plain-text report of a run, for people at a terminal or in a log.
import type { RunResult } from '../sim/result.js';
import { formatBytes, formatCount } from '../sim/scenario/units.js';
import { sparkline, stepsPerColumn } from './sparkline.js';
import { calibrationLine, eventLines, fmtSeconds, headline, partialLine, sloHeading, sloLines, summarySections } from './summary-lines.js';
import { replaySections } from './replay.js';
import { maxOf } from '../sim/metrics/series.js';

export function terminalReport(r: RunResult): string {
  const notes = [calibrationLine(r.scenario), partialLine(r)].filter((l): l is string => l !== null);
  const out: string[] = [headline(r), ...notes, ''];
  for (const s of [...summarySections(r), ...replaySections(r)]) {
    out.push(s.title);
    const w = Math.max(...s.rows.map(([k]) => k.length));
    for (const [k, v] of s.rows) out.push(`  ${k.padEnd(w)}  ${v}`);
    out.push('');
  }
  const se = r.series;
  // a column is the max of the steps it covers: of two steps when a run has twice the columns' minutes
  const perColumn = stepsPerColumn(se.writesPerSecond.length);
  out.push(`Over time (a column ${perColumn === 1 ? 'a step' : `the max of ${perColumn} steps`} of ${fmtSeconds(se.intervalSeconds)}; backlog sampled at each step's end)`);
  out.push(`  writes/s    ${sparkline(se.writesPerSecond)}  peak ${formatCount(maxOf(se.writesPerSecond))}/s`);
  // the Fan-out section's backlog peak is at any post; these are its values at the steps' ends
  out.push(`  backlog     ${sparkline(se.backlogWrites)}  peak ${formatCount(maxOf(se.backlogWrites))} at a step's end (${formatCount(r.summary.fanout.backlog.peakWrites)} at any post)`);
  out.push(`  lag p99     ${sparkline(se.lagP99Seconds)}  peak ${fmtSeconds(maxOf(se.lagP99Seconds))}`);
  out.push(`  read p99    ${sparkline(se.readP99Ms)}  peak ${maxOf(se.readP99Ms).toFixed(2)} ms`);
  out.push(`  memory      ${sparkline(se.memoryBytes)}  peak ${formatBytes(maxOf(se.memoryBytes))}`);
  out.push('');
  const events = eventLines(r);
  if (events.length > 0) {
    out.push('Events');
    for (const e of events) out.push(`  ${e}`);
    out.push('');
  }
  out.push(sloHeading(r));
  for (const l of sloLines(r)) out.push(`  ${l}`);
  return out.join('\n') + '\n';
}
