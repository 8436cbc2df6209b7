import { describe, expect, it } from 'vitest';
import { CalibrationStopped, inRounds, moreRoundsWhile } from '../../../cli/calibrate/rounds.js';

describe('calibrate rounds', () => {
  it('throws the warm-up away and keeps the samples, a progress step each', async () => {
    const kept: boolean[] = [];
    let steps = 0;
    await inRounds({ samples: 3, warmup: 1, onRound: () => steps++ }, async (keep) => void kept.push(keep));
    expect(kept).toEqual([false, true, true, true]);
    expect(steps).toBe(4);
  });

  it('measures a scattered fit again, a set of samples at a time, saying why, until it settles or the sets run out', async () => {
    const lines: string[] = [];
    let taken = 0;
    // settles once 8 more samples are in: two sets of 4
    const added = await moreRoundsWhile({ samples: 4, warmup: 1, log: (l) => lines.push(l) }, 3, () => (taken < 8 ? `r² ${(0.8 + taken / 100).toFixed(2)}` : null), async () => void taken++);
    expect(added).toBe(8);
    expect(lines).toEqual(['r² 0.80: measuring 4 more samples', 'r² 0.84: measuring 4 more samples']);
  });

  it('stops after its sets however scattered, and takes nothing from a settled fit', async () => {
    let taken = 0;
    expect(await moreRoundsWhile({ samples: 5, warmup: 1 }, 1, () => 'scattered', async () => void taken++)).toBe(5);
    expect(await moreRoundsWhile({ samples: 5, warmup: 1 }, 3, () => null, async () => void taken++)).toBe(0);
    expect(taken).toBe(5);
  });

  it('stops between rounds on Ctrl-C', async () => {
    const stop = new AbortController();
    let taken = 0;
    const more = moreRoundsWhile({ samples: 5, warmup: 1, signal: stop.signal }, 2, () => 'scattered', async () => {
      if (++taken === 2) stop.abort();
    });
    await expect(more).rejects.toBeInstanceOf(CalibrationStopped);
    expect(taken).toBe(2);
  });
});
