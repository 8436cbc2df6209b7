// The plain-text report of a run, for people at a terminal or in a log.
import type { RunResult } from '../sim/result.js';
import { formatBytes, formatCount } from '../sim/scenario/units.js';
import { sparkline } from './sparkline.js';
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
  out.push(`Over time (${fmtSeconds(se.intervalSeconds)} per step, max per column)`);
  out.push(`  writes/s    ${sparkline(se.writesPerSecond)}  peak ${formatCount(maxOf(se.writesPerSecond))}/s`);
  out.push(`  backlog     ${sparkline(se.backlogWrites)}  peak ${formatCount(maxOf(se.backlogWrites))}`);
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
