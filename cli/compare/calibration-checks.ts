// Whether the calibrations the simulated side runs with measured the machine the replays ran on, as it
// was then. This machine's costs drifted within the hour (five calibrations of one world between
// 12:16 and 13:45 on 2026-12-03: a write 29-60 us a follower, the pickup 0.58-3.80 ms), so costs
// measured long before or after the replays, elsewhere, or on a busy machine make the simulated side
// model another machine; compare says so rather than report the gap as the model's.
import type { RunResult } from '../../sim/result.js';
import type { Scenario } from '../../sim/scenario/types.js';

/** A calibration further than this from a replay's start is said to be of another hour. */
export const CALIBRATION_FRESH_MINUTES = 30;

type Calibration = NonNullable<Scenario['calibration']>;

/**
 * One line per doubt about the calibrations the simulated side ran with against these replays; none
 * without a calibration. Each replay is held to the calibration measured nearest its start (compare
 * SCENARIO calibrates just before each replay).
 */
export function calibrationChecks(calibrations: readonly Calibration[], replays: readonly RunResult[]): string[] {
  if (calibrations.length === 0) return [];
  const out: string[] = [];
  const of = (cs: readonly Calibration[]) => `the costs (${cs.map((c) => `${c.file}, ${c.date}`).join('; ')})`;
  for (const c of calibrations.filter((c) => c.contended)) {
    out.push(`${of([c])} were measured CONTENDED, over a quarter of the machine taken by other processes: the simulated side charges a busy machine's costs; calibrate again on a quiet one`);
  }
  const ran = replays.map((r) => r.replay?.ran).filter((x) => x !== undefined);
  for (const c of calibrations) {
    const elsewhere = [...new Set(ran.map((r) => r.host).filter((h) => !c.machine.startsWith(`${h},`)))];
    if (elsewhere.length > 0) {
      out.push(`${of([c])} were measured on ${c.machine.split(',')[0]}, the replays ran on ${elsewhere.join(', ')}: the simulated side models another machine`);
    }
  }
  const at = calibrations.map((c) => Date.parse(c.date)).filter(Number.isFinite);
  if (at.length > 0 && ran.length > 0) {
    const minutes = ran.map((r) => Math.min(...at.map((t) => Math.abs(Date.parse(r.startedAt) - t))) / 60_000).filter(Number.isFinite);
    const furthest = Math.max(...minutes);
    if (furthest > CALIBRATION_FRESH_MINUTES) {
      out.push(
        `${of(calibrations)} were measured ${furthest >= 120 ? `${(furthest / 60).toFixed(1)} h` : `${Math.round(furthest)} min`} from a replay's start${calibrations.length > 1 ? ' (the nearest of them)' : ''} (more than ${CALIBRATION_FRESH_MINUTES} min): a shared machine's costs drift within the hour, so a time figure's gap may be the machine's, not the model's; calibrate beside the replays (compare without --calibration does)`,
      );
    }
  }
  return out;
}
