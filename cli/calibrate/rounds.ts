// How every figure is sampled: rounds, the first thrown away (warm-up), each of the others one
// sample (of every size, for a fit). The caller's progress moves a step per round.
export interface Rounds {
  samples: number;
  warmup: number;
  /** Called after each round (progress). */
  onRound?: () => void;
  /** Stops between rounds (Ctrl-C). */
  signal?: AbortSignal;
  /** Says a step's extra rounds (a fit retried); silent without it. */
  log?: (line: string) => void;
}

/** Calibrate was stopped (Ctrl-C): nothing is written. */
export class CalibrationStopped extends Error {}

export async function inRounds(r: Rounds, round: (keep: boolean, index: number) => Promise<void>): Promise<void> {
  for (let i = 0; i < r.warmup + r.samples; i++) {
    if (r.signal?.aborted) throw new CalibrationStopped('calibrate stopped');
    await round(i >= r.warmup, i);
    r.onRound?.();
  }
}

/**
 * Another `r.samples` kept rounds (no warm-up), at most `sets` times, while `unsettled()` names a
 * reason: a fit whose medians scatter gets twice the samples before it is refused. On a shared
 * machine one busy spell can bend a line of five samples a point (r² 0.62 and 0.85 in one run,
 * 0.97 and 0.9999 in the next minutes, 2026-12-04).
 */
export async function moreRoundsWhile(r: Rounds, sets: number, unsettled: () => string | null, round: (index: number) => Promise<void>): Promise<number> {
  let added = 0;
  for (let set = 0; set < sets; set++) {
    const why = unsettled();
    if (why === null) break;
    r.log?.(`${why}: measuring ${r.samples} more samples`);
    for (let i = 0; i < r.samples; i++) {
      if (r.signal?.aborted) throw new CalibrationStopped('calibrate stopped');
      await round(added++);
    }
  }
  return added;
}

/** Rounds per figure: the warm-up and the samples. */
export const roundCount = (r: Pick<Rounds, 'samples' | 'warmup'>): number => r.warmup + r.samples;
