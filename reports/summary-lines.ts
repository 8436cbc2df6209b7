// The figures of a run as labelled lines, shared by the terminal and Markdown reports.
import type { RunResult } from '../sim/result.js';
import type { SloCheck, SloUnit } from '../sim/slo.js';
import { formatBytes, formatCount, formatDuration } from '../sim/scenario/units.js';

/** A figure the document does not have: NaN in memory, null once written as JSON (a replay measures
 * some figures a simulation has, and the other way round). */
const missing = (v: number | null | undefined): v is null | undefined => v === null || v === undefined || Number.isNaN(v);
const NA = 'n/a';

export const fmtSeconds = (s: number): string => (missing(s) ? NA : s === 0 ? '0 s' : formatDuration(s));
export const fmtMs = (ms: number): string => (missing(ms) ? NA : ms < 1 ? `${(ms * 1000).toFixed(0)} us` : ms < 100 ? `${ms.toFixed(2)} ms` : formatDuration(ms / 1000));
export const fmtRate = (perSecond: number): string => (missing(perSecond) ? NA : `${formatCount(perSecond)}/s`);
const bytes = (v: number): string => (missing(v) ? NA : formatBytes(v));
const count = (v: number): string => (missing(v) ? NA : formatCount(v));
const fixed = (v: number, digits: number): string => (missing(v) ? NA : v.toFixed(digits));
const percent = (share: number, digits = 1): string => (missing(share) ? NA : `${(share * 100).toFixed(digits)}%`);

export interface Section {
  title: string;
  rows: [string, string][];
}

export function headline(r: RunResult): string {
  const sc = r.scenario;
  const pop = sc.scale > 1 ? `${formatCount(sc.population)} users (${formatCount(sc.sampledUsers)} sampled, x${formatCount(sc.scale)})` : `${formatCount(sc.sampledUsers)} users`;
  const span = r.partial ? `${fmtSeconds(r.partial.stoppedAtSeconds)} of ${fmtSeconds(sc.durationSeconds)}` : fmtSeconds(sc.durationSeconds);
  if (r.source === 'replay' && r.replay) {
    const m = r.replay.mapping;
    return `${sc.name}: policy ${r.policy}, seed ${sc.seed}, ${formatCount(sc.sampledUsers)} live users, ${formatCount(sc.sampledEdges)} follows, ${span} replayed on the live stack (x${m.timeScale}: ${fmtSeconds(m.simulatedSeconds)} simulated)`;
  }
  return `${sc.name}: policy ${r.policy}, seed ${sc.seed}, ${pop}, ${formatCount(sc.sampledEdges)} sampled follows, ${span} simulated`;
}

/** Where the infrastructure's measured costs came from: "calibrated from FILE (machine, date[, CONTENDED])"; null without a calibration. */
export function calibrationLine(sc: { calibration?: { file: string; machine: string; date: string; contended: boolean } }): string | null {
  const c = sc.calibration;
  return c ? `calibrated from ${c.file} (${c.machine}, ${c.date}${c.contended ? ', CONTENDED' : ''})` : null;
}

/** For a run stopped early: one line saying so, which every report shows under its headline. */
export function partialLine(r: RunResult): string | null {
  if (!r.partial) return null;
  const at = fmtSeconds(r.partial.stoppedAtSeconds);
  return `partial: stopped at ${at} of ${fmtSeconds(r.scenario.durationSeconds)}; every figure covers the first ${at} only`;
}

/** The backlog's drain time, when it had one (documents written before it was measured have none). */
const drain = (seconds: number | undefined): string =>
  seconds !== undefined && seconds > 0 ? `; drain time ${fmtSeconds(seconds)} (the longest stretch above one second of the fleet's work, by the minute)` : '';

export function summarySections(r: RunResult): Section[] {
  const f = r.summary.fanout;
  const m = r.summary.redis;
  const rd = r.summary.reads;
  const p = r.summary.posts;
  const lag = f.lagSeconds;
  const fl = f.followerLagSeconds;
  const sections: Section[] = [
    {
      title: 'Fan-out',
      rows: [
        ['posts', `${count(p.total)} (${fmtRate(p.perSecond.mean)} mean, ${fmtRate(p.perSecond.peak)} peak ${r.source === 'replay' ? 'interval' : 'minute'}); ${count(p.pulled)} pulled`],
        ['timeline writes', `${count(f.deliveries)} (${fixed(f.deliveriesPerPost, 1)} per post), ${count(f.listWrites)} list writes`],
        ['writes per second', `${fmtRate(f.writesPerSecond.mean)} mean, ${fmtRate(f.writesPerSecond.peak)} peak second`],
        ['post lag', `p50 ${fmtSeconds(lag.p50)}, p99 ${fmtSeconds(lag.p99)}, max ${fmtSeconds(lag.max)} (mean ${fmtSeconds(lag.mean)})`],
        ['follower wait', `p50 ${fmtSeconds(fl.p50)}, p99 ${fmtSeconds(fl.p99)}, max ${fmtSeconds(fl.max)} (mean ${fmtSeconds(fl.mean)})`],
        ['backlog', `peak ${count(f.backlog.peakWrites)} writes; ${f.backlog.endWrites > 0 ? `${count(f.backlog.endWrites)} still queued at the end, drained at ${fmtSeconds(f.backlog.drainedAtSeconds)}` : 'empty at the end'}${drain(f.backlog.drainSeconds)}${r.source === 'replay' ? "; estimated: the event log's waiting posts x the run's mean writes per pushed post" : ''}`],
        ['utilisation', `workers ${percent(f.workerUtilisation)}${r.source === 'replay' ? ' (their processes\' CPU)' : ''}, event-log partitions ${percent(f.partitionUtilisation)}`],
      ],
    },
    {
      title: 'Redis',
      rows: [
        ['memory', `peak ${bytes(m.memoryBytes.peak)}, end ${bytes(m.memoryBytes.end)} (${count(m.timelines)} timelines, lists ${bytes(m.listBytes)})${r.source === 'replay' ? "; the replay's own keys by MEMORY USAGE at the end, the peak from used_memory over the window" : ''}`],
        [
          'documents\' 24 B/entry',
          // under pull no timeline holds an entry: a ratio of 0 B ("0.0x") says nothing
          m.naiveMemoryBytes.end > 0
            ? `${bytes(m.naiveMemoryBytes.end)}: ${fixed(m.naiveUnderestimate, 1)}x under ${r.source === 'replay' ? 'what Redis used (MEMORY USAGE)' : 'the encoding model'}`
            : 'no timeline entries at the end to count (every post pulled, or none pushed)',
        ],
        ['per shard', `${m.perShard.endBytes.length} shards, largest/mean ${fixed(m.perShard.imbalance, 3)}, peak utilisation ${percent(m.peakShardUtilisation)}`],
        ...(m.saturatedShards > 0
          ? ([['SATURATED', `${m.saturatedShards} shard(s) had more work than a second per second: their queues (and reads on them) grow without bound`]] as [string, string][])
          : []),
      ],
    },
    {
      title: 'Reads',
      rows: [
        ['feed pages', `${count(rd.total)} (${fmtRate(rd.perSecond.mean)})`],
        ['latency', `p50 ${fmtMs(rd.latencyMs.p50)}, p99 ${fmtMs(rd.latencyMs.p99)}, max ${fmtMs(rd.latencyMs.max)} (mean ${fmtMs(rd.latencyMs.mean)})`],
        ['Redis ops per read', fixed(rd.redisOpsPerRead.mean, 2)],
        ['cold reads', `${percent(rd.coldShare, 2)} (${count(rd.rebuilds)} rebuilds from Postgres, connections ${percent(rd.postgresUtilisation)} busy)`],
      ],
    },
  ];
  if (f.adaptive) sections[0].rows.push(['adaptive threshold', `${f.adaptive.thresholdChanges} changes, lowest ${formatCount(f.adaptive.minThreshold)}`]);
  return sections;
}

/** A check's target or actual in its unit; "n/a" for a figure the document does not have. */
export function sloValue(unit: SloUnit, v: number | null): string {
  if (missing(v)) return NA;
  switch (unit) {
    case 's':
      return fmtSeconds(v);
    case 'ms':
      return fmtMs(v);
    case 'bytes':
      return formatBytes(v);
    case 'share':
      return fmtShare(v);
    case 'writes/s':
      return fmtRate(v);
    case 'servers':
      return formatCount(v);
  }
}

/** A share as a percentage, three significant digits: 1%, 0.0312%, 12.5%. */
export const fmtShare = (share: number): string => `${share === 0 ? 0 : Number((share * 100).toPrecision(3))}%`;

/** "target <= 5 s" for an objective, "threshold < 30 s" for a threshold. */
export function sloTarget(c: SloCheck): string {
  return c.threshold ? `threshold ${c.threshold.op} ${targetValue(c)}` : `target <= ${targetValue(c)}`;
}

/** A check's target in its unit; a threshold's round milliseconds read as written ("20 ms", not "20.00 ms"). */
export function targetValue(c: SloCheck): string {
  return c.threshold && c.unit === 'ms' ? formatDuration(c.target / 1000) : sloValue(c.unit, c.target);
}

/** Whether the verdict has thresholds beside the objectives: the headings then say so. */
export const hasThresholdChecks = (r: RunResult): boolean => r.summary.slo.checks.some((c) => c.threshold);

/** The verdict's heading: "SLO: all met", or with thresholds "SLO and thresholds: NOT MET (1 of 4 thresholds failed)". */
export function sloHeading(r: RunResult): string {
  const s = r.summary.slo;
  const first = r.partial ? ` (first ${fmtSeconds(r.partial.stoppedAtSeconds)} only)` : '';
  if (!hasThresholdChecks(r)) return `SLO${first}: ${s.pass ? 'all met' : 'NOT MET'}`;
  const thresholds = s.checks.filter((c) => c.threshold);
  const failed = thresholds.filter((c) => !c.pass).length;
  const objectives = s.checks.filter((c) => !c.threshold && !c.pass).length;
  const why = [objectives > 0 ? `${objectives} of ${s.checks.length - thresholds.length} objectives` : '', failed > 0 ? `${failed} of ${thresholds.length} thresholds` : ''].filter(Boolean).join(' and ');
  return `SLO and thresholds${first}: ${s.pass ? 'all met' : `NOT MET (${why} failed)`}`;
}

export function sloLines(r: RunResult): string[] {
  return checkLines(r.summary.slo.checks);
}

/** "PASS  home-feed read p99: 3.04 ms (threshold < 5 ms)", a line a check. */
export function checkLines(checks: readonly SloCheck[]): string[] {
  return checks.map((c) => `${c.pass ? 'PASS' : 'FAIL'}  ${c.description}: ${sloValue(c.unit, c.actual)} (${sloTarget(c)})`);
}

export function eventLines(r: RunResult): string[] {
  return r.events.map((e) => `${fmtSeconds(e.at)}  ${e.kind}: ${e.detail}`);
}
