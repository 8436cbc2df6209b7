// Figures as the dashboard prints them: the reports' own formats, plus a clock and a wall time.
import { fmtMs, fmtSeconds } from '../../reports/summary-lines.js';
import { formatBytes, formatCount } from '../../sim/scenario/units.js';
import type { Slo } from '../../sim/scenario/types.js';

export { fmtMs, fmtSeconds, formatBytes, formatCount };

export const fmtRate = (perSecond: number): string => `${formatCount(perSecond)}/s`;

/** Simulated time as a clock: 0:42:00, 26:00:00. */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return `${h}:${String(m).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}

/** Wall time: 4.2s, 3m07s. */
export function wall(seconds: number): string {
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  // whole seconds first: 239.6 s is 4m00s, not 3m60s
  const whole = Math.round(seconds);
  const m = Math.floor(whole / 60);
  return `${m}m${String(whole - m * 60).padStart(2, '0')}s`;
}

export function bar(fraction: number, width: number): string {
  const f = Math.min(1, Math.max(0, fraction));
  const full = Math.round(f * width);
  return '█'.repeat(full) + '░'.repeat(width - full);
}

/** One SLO check as the dashboard shows it: the figure against its target, and the verdict. */
export interface SloState {
  id: 'fanoutLagP99' | 'readP99' | 'redisMemory';
  text: string;
  pass: boolean | null;
}

export function sloStates(slo: Slo, soFar: { followerLagP99Seconds: number; readP99Ms: number; peakMemoryBytes: number } | null): Record<SloState['id'], SloState> {
  const state = (id: SloState['id'], actual: string, target: string, pass: boolean | null): SloState => ({ id, text: `${actual} / ${target}`, pass });
  const memoryTarget = Number.isFinite(slo.redisMemory) ? formatBytes(slo.redisMemory) : null;
  if (!soFar) {
    return {
      fanoutLagP99: state('fanoutLagP99', '-', fmtSeconds(slo.fanoutLagP99), null),
      readP99: state('readP99', '-', fmtMs(slo.readP99 * 1000), null),
      redisMemory: memoryTarget ? state('redisMemory', '-', memoryTarget, null) : { id: 'redisMemory', text: 'no budget', pass: null },
    };
  }
  return {
    fanoutLagP99: state('fanoutLagP99', fmtSeconds(soFar.followerLagP99Seconds), fmtSeconds(slo.fanoutLagP99), soFar.followerLagP99Seconds <= slo.fanoutLagP99),
    readP99: state('readP99', fmtMs(soFar.readP99Ms), fmtMs(slo.readP99 * 1000), soFar.readP99Ms <= slo.readP99 * 1000),
    redisMemory: memoryTarget
      ? state('redisMemory', formatBytes(soFar.peakMemoryBytes), memoryTarget, soFar.peakMemoryBytes <= slo.redisMemory)
      : { id: 'redisMemory', text: `${formatBytes(soFar.peakMemoryBytes)}, no budget`, pass: null },
  };
}

export const word = (pass: boolean | null): string => (pass === null ? '' : pass ? 'PASS' : 'FAIL');
