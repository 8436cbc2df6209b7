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
 * The calibration replay `run` (1-based) runs with and is held to: the one in its place (compare
 * SCENARIO measures one just before each replay; given files pair with the replays in their order),
 * the last one past them.
 */
export function pairedCalibration<T>(run: number, calibrations: readonly T[]): T | undefined {
  return calibrations.length === 0 ? undefined : calibrations[Math.min(run, calibrations.length) - 1];
}

/**
 * One line per doubt about the calibrations the simulated side ran with against these replays (each
 * run's documents); none without a calibration. Each calibration is held to the replays it pairs
 * with (pairedCalibration; a calibration past the replays to the last one), and a stale one is named
 * alone.
 */
export function calibrationChecks(calibrations: readonly Calibration[], runs: readonly (readonly RunResult[])[]): string[] {
  if (calibrations.length === 0) return [];
  const out: string[] = [];
  const of = (c: Calibration) => `the costs (${c.file}, ${c.date})`;
  for (const c of calibrations.filter((c) => c.contended)) {
    out.push(`${of(c)} were measured CONTENDED, over a quarter of the machine taken by other processes: the simulated side charges a busy machine's costs; calibrate again on a quiet one`);
  }
  const ran = runs.map((docs) => docs.map((r) => r.replay?.ran).filter((x) => x !== undefined));
  for (const c of calibrations) {
    const elsewhere = [...new Set(ran.flat().map((r) => r.host).filter((h) => !c.machine.startsWith(`${h},`)))];
    if (elsewhere.length > 0) {
      out.push(`${of(c)} were measured on ${c.machine.split(',')[0]}, the replays ran on ${elsewhere.join(', ')}: the simulated side models another machine`);
    }
  }
  calibrations.forEach((c, k) => {
    const at = Date.parse(c.date);
    // each replay it pairs with, by number, and how far its start was
    const paired = ran.flatMap((docs, i) => (pairedCalibration(i + 1, calibrations) === c || (k >= ran.length && i === ran.length - 1) ? docs.map((r) => ({ run: i + 1, minutes: Math.abs(Date.parse(r.startedAt) - at) / 60_000 })) : []));
    const timed = paired.filter((p) => Number.isFinite(p.minutes));
    if (timed.length === 0) return;
    const { run, minutes: furthest } = timed.reduce((a, b) => (b.minutes > a.minutes ? b : a));
    if (furthest > CALIBRATION_FRESH_MINUTES) {
      const from = calibrations.length === 1 ? "a replay's start" : `the start of the replay it pairs with (replay ${run})`;
      out.push(
        `${of(c)} were measured ${furthest >= 120 ? `${(furthest / 60).toFixed(1)} h` : `${Math.round(furthest)} min`} from ${from} (more than ${CALIBRATION_FRESH_MINUTES} min): a shared machine's costs drift within the hour, so a time figure's gap may be the machine's, not the model's; calibrate beside the replays (compare without --calibration does)`,
      );
    }
  });
  return out;
}
