// The sweep table: one row per policy, and the recommendation with its reason.
import type { SweepResult } from '../sim/sweep.js';
import { formatBytes, formatCount } from '../sim/scenario/units.js';
import { fmtMs, fmtSeconds } from './summary-lines.js';

const HEAD = ['policy', 'lag p99', 'peak writes/s', 'peak memory', 'read p99', 'ops/read', 'servers', 'SLO'];

function cells(r: SweepResult['rows'][number]): string[] {
  return [
    r.policy,
    fmtSeconds(r.lagP99Seconds),
    formatCount(r.peakWritesPerSecond),
    formatBytes(r.peakMemoryBytes),
    fmtMs(r.readP99Ms),
    r.redisOpsPerRead.toFixed(2),
    r.servers.total.toFixed(1),
    r.sloPass ? 'pass' : `FAIL ${r.failed.join(',')}`,
  ];
}

export function sweepTable(s: SweepResult): string {
  const rows = [HEAD, ...s.rows.map(cells)];
  const widths = HEAD.map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  const out = [`${s.scenario.name}: ${s.rows.length} policies, seed ${s.scenario.seed}`, '', line(rows[0]), ...rows.slice(1).map(line), ''];
  out.push(s.recommended ? `recommended: ${s.recommended.policy}: ${s.recommended.reason}` : 'recommended: none: no policy meets every SLO');
  return out.join('\n') + '\n';
}

export function sweepMarkdown(s: SweepResult): string {
  const out = [`# Sweep: ${s.scenario.name}`, '', `| ${HEAD.join(' | ')} |`, `|${HEAD.map(() => '---').join('|')}|`];
  for (const r of s.rows) out.push(`| ${cells(r).join(' | ')} |`);
  out.push('', s.recommended ? `**Recommended: ${s.recommended.policy}**: ${s.recommended.reason}.` : '**No policy meets every SLO.**', '');
  out.push("Servers = Redis memory hosts (64 GB of peak memory each) + Redis cores (100k commands/s each) + fan-out workers (mean writes/s over one worker's rated writes/s).", '');
  return out.join('\n');
}
