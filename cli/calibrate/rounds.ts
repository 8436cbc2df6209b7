// How every figure is sampled: rounds, the first thrown away (warm-up), each of the others one
// sample (of every size, for a fit). The caller's progress moves a step per round.
export interface Rounds {
  samples: number;
  warmup: number;
  /** Called after each round (progress). */
  onRound?: () => void;
  /** Stops between rounds (Ctrl-C). */
  signal?: AbortSignal;
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

/** Rounds per figure: the warm-up and the samples. */
export const roundCount = (r: Pick<Rounds, 'samples' | 'warmup'>): number => r.warmup + r.samples;

