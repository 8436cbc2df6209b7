// The Markdown report of a run: what a team pastes into a design review.
import type { RunResult } from '../sim/result.js';
import { formatBytes, formatCount } from '../sim/scenario/units.js';
import { sparkline } from './sparkline.js';
import { calibrationLine, eventLines, fmtSeconds, headline, partialLine, sloHeading, sloLines, summarySections } from './summary-lines.js';
import { replaySections } from './replay.js';
import { maxOf } from '../sim/metrics/series.js';

export function markdownReport(r: RunResult): string {
  const out: string[] = [`# ${r.scenario.name}: ${r.policy}`, '', r.scenario.description ? `${r.scenario.description}\n` : '', headline(r), ''];
  const calibrated = calibrationLine(r.scenario);
  if (calibrated) out.push(calibrated, '');
  const partial = partialLine(r);
  if (partial) out.push(`**${partial}**`, '');
  out.push(`**${sloHeading(r)}**`, '');
  for (const l of sloLines(r)) out.push(`- ${l}`);
  out.push('');
  for (const s of [...summarySections(r), ...replaySections(r)]) {
    out.push(`## ${s.title}`, '', '| figure | value |', '|---|---|');
    for (const [k, v] of s.rows) out.push(`| ${k} | ${v} |`);
    out.push('');
  }
  const se = r.series;
  out.push('## Over time', '', '| series | shape | peak |', '|---|---|---|');
  out.push(`| timeline writes/s | \`${sparkline(se.writesPerSecond)}\` | ${formatCount(maxOf(se.writesPerSecond))}/s |`);
  out.push(`| backlog (writes) | \`${sparkline(se.backlogWrites)}\` | ${formatCount(maxOf(se.backlogWrites))} |`);
  out.push(`| fan-out lag p99 | \`${sparkline(se.lagP99Seconds)}\` | ${fmtSeconds(maxOf(se.lagP99Seconds))} |`);
  out.push(`| read p99 | \`${sparkline(se.readP99Ms)}\` | ${maxOf(se.readP99Ms).toFixed(2)} ms |`);
  out.push(`| Redis memory | \`${sparkline(se.memoryBytes)}\` | ${formatBytes(maxOf(se.memoryBytes))} |`);
  out.push('');
  const events = eventLines(r);
  if (events.length > 0) {
    out.push('## Events', '');
    for (const e of events) out.push(`- ${e}`);
    out.push('');
  }
  out.push(`Result schema \`${r.schema}\`, feedlab ${r.tool.version}. The same figures are in report.json.`, '');
  return out.join('\n');
}
