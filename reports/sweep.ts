// The sweep table: one row per policy, and the recommendation with its reason.
import { formatServers, type SweepResult } from '../sim/sweep.js';
import { formatBytes, formatCount } from '../sim/scenario/units.js';
import { calibrationLine, fmtMs, fmtSeconds } from './summary-lines.js';

const HEAD = ['policy', 'lag p99', 'peak writes/s', 'peak memory', 'read p99', 'ops/read', 'servers', 'SLO'];

function cells(r: SweepResult['rows'][number]): string[] {
  return [
    r.policy,
    fmtSeconds(r.lagP99Seconds),
    formatCount(r.peakWritesPerSecond),
    formatBytes(r.peakMemoryBytes),
    // as the run's report says: reads on a saturated shard queue without bound
    (r.saturatedShards ?? 0) > 0 ? `${fmtMs(r.readP99Ms)} SATURATED` : fmtMs(r.readP99Ms),
    r.redisOpsPerRead.toFixed(2),
    formatServers(r.servers.total),
    r.sloPass ? 'PASS' : `FAIL ${r.failed.join(',')}`,
  ];
}

/** What a recommended policy meets: "SLO", or "SLO and threshold" when the scenario has thresholds. */
export function everything(s: SweepResult): string {
  return s.runs.some((r) => r.summary.slo.checks.some((c) => c.threshold)) ? 'SLO and threshold' : 'SLO';
}

export function sweepTable(s: SweepResult): string {
  const rows = [HEAD, ...s.rows.map(cells)];
  const widths = HEAD.map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  const partial = sweepPartialLine(s);
  const calibrated = calibrationLine(s.scenario);
  const out = [`${s.scenario.name}: ${s.rows.length} policies, seed ${s.scenario.seed}`, ...(calibrated ? [calibrated] : []), ...(partial ? [partial] : []), '', line(rows[0]), ...rows.slice(1).map(line), ''];
  const among = s.partial ? ` (among the ${s.rows.length} finished)` : '';
  out.push(s.recommended ? `recommended${among}: ${s.recommended.policy}: ${s.recommended.reason}` : `recommended${among}: none: no policy meets every ${everything(s)}`);
  return out.join('\n') + '\n';
}

/** For a sweep stopped early: which policy stopped where, and which never ran. */
export function sweepPartialLine(s: SweepResult): string | null {
  const p = s.partial;
  if (!p) return null;
  const parts = [`partial: stopped after ${s.rows.length} finished ${s.rows.length === 1 ? 'policy' : 'policies'}`];
  if (p.stoppedPolicy !== null && p.stoppedAtSeconds !== null) parts.push(`${p.stoppedPolicy} stopped at ${fmtSeconds(p.stoppedAtSeconds)} of ${fmtSeconds(s.scenario.durationSeconds)} (not compared)`);
  if (p.notRun.length > 0) parts.push(`not run: ${p.notRun.join(', ')}`);
  return parts.join('; ');
}

export function sweepMarkdown(s: SweepResult): string {
  const partial = sweepPartialLine(s);
  const calibrated = calibrationLine(s.scenario);
  const out = [`# Sweep: ${s.scenario.name}`, '', ...(calibrated ? [calibrated, ''] : []), ...(partial ? [`**${partial}**`, ''] : []), `| ${HEAD.join(' | ')} |`, `|${HEAD.map(() => '---').join('|')}|`];
  for (const r of s.rows) out.push(`| ${cells(r).join(' | ')} |`);
  out.push('', s.recommended ? `**Recommended: ${s.recommended.policy}**: ${s.recommended.reason}.` : `**No policy meets every ${everything(s)}.**`, '');
  out.push("Servers = Redis memory hosts (64 GB of peak memory each) + Redis cores (100k commands/s each) + fan-out workers (mean writes/s over one worker's rated writes/s), each rounded up.", '');
  return out.join('\n');
}

export { HEAD as SWEEP_HEAD, cells as sweepCells };
