// Whether the calibration the simulated side runs with measured the machine the replays ran on, as it
// was then. This machine's costs drifted within the hour (five calibrations of one world between
// 12:16 and 13:45 on 2026-12-03: a write 29-60 us a follower, the pickup 0.58-3.80 ms), so costs
// measured long before or after the replays, elsewhere, or on a busy machine make the simulated side
// model another machine; compare says so rather than report the gap as the model's.
import type { RunResult } from '../../sim/result.js';
import type { Scenario } from '../../sim/scenario/types.js';

/** A calibration further than this from a replay's start is said to be of another hour. */
export const CALIBRATION_FRESH_MINUTES = 30;

/** One line per doubt about the calibration against these replays; none without a calibration. */
export function calibrationChecks(calibration: Scenario['calibration'], replays: readonly RunResult[]): string[] {
  if (!calibration) return [];
  const out: string[] = [];
  const of = `the costs (${calibration.file}, ${calibration.date})`;
  if (calibration.contended) {
    out.push(`${of} were measured CONTENDED, over a quarter of the machine taken by other processes: the simulated side charges a busy machine's costs; calibrate again on a quiet one`);
  }
  const ran = replays.map((r) => r.replay?.ran).filter((x) => x !== undefined);
  const elsewhere = [...new Set(ran.map((r) => r.host).filter((h) => !calibration.machine.startsWith(`${h},`)))];
  if (elsewhere.length > 0) {
    out.push(`${of} were measured on ${calibration.machine.split(',')[0]}, the replays ran on ${elsewhere.join(', ')}: the simulated side models another machine`);
  }
  const at = Date.parse(calibration.date);
  if (Number.isFinite(at) && ran.length > 0) {
    const minutes = ran.map((r) => Math.abs(Date.parse(r.startedAt) - at) / 60_000).filter(Number.isFinite);
    const furthest = Math.max(...minutes);
    if (furthest > CALIBRATION_FRESH_MINUTES) {
      out.push(
        `${of} were measured ${furthest >= 120 ? `${(furthest / 60).toFixed(1)} h` : `${Math.round(furthest)} min`} from a replay's start (more than ${CALIBRATION_FRESH_MINUTES} min): a shared machine's costs drift within the hour, so a time figure's gap may be the machine's, not the model's; calibrate beside the replays (compare without --calibration does)`,
      );
    }
  }
  return out;
}
