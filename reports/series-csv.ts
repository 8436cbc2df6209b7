// The time series of a run (or of every run of a sweep) as CSV, for a spreadsheet or a plotting
// script: one row per series step, one column per figure, units in the header. Written by --out as
// series.csv beside report.json.
import type { RunResult } from '../sim/result.js';
import { runsOf, type SweepResult } from '../sim/sweep.js';

/** Header and where each column comes from; a figure a document does not measure (null) is an empty cell. */
const COLUMNS: [string, (s: RunResult['series'], i: number) => number | null | undefined][] = [
  ['start_seconds', (s, i) => s.startSeconds[i]],
  ['posts_per_second', (s, i) => s.postsPerSecond[i]],
  ['timeline_writes_per_second', (s, i) => s.writesPerSecond[i]],
  ['reads_per_second', (s, i) => s.readsPerSecond[i]],
  ['cold_reads_per_second', (s, i) => s.coldReadsPerSecond[i]],
  ['backlog_writes', (s, i) => s.backlogWrites[i]],
  ['lag_p99_seconds', (s, i) => s.lagP99Seconds[i]],
  ['read_p99_ms', (s, i) => s.readP99Ms[i]],
  ['redis_memory_bytes', (s, i) => s.memoryBytes[i]],
  ['documents_memory_bytes', (s, i) => s.naiveMemoryBytes[i]],
  ['largest_shard_bytes', (s, i) => s.maxShardBytes[i]],
  ['threshold', (s, i) => s.threshold?.[i]],
];

const cell = (v: number | null | undefined) => (v === null || v === undefined || !Number.isFinite(v) ? '' : String(v));

/** RFC 4180 rows: a policy spec has no comma, quote or line break, so no field needs quoting. */
export function seriesCsv(doc: RunResult | SweepResult): string {
  const runs = runsOf(doc);
  const lines = [['policy', ...COLUMNS.map(([name]) => name)].join(',')];
  for (const r of runs) {
    const s = r.series;
    for (let i = 0; i < s.startSeconds.length; i++) lines.push([r.policy, ...COLUMNS.map(([, at]) => cell(at(s, i)))].join(','));
  }
  return lines.join('\r\n') + '\r\n';
}
