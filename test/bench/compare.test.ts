// The compare bench's summary of the report's stages column: what a reader of `npm run bench` sees
// of the simulations with the replays' own stages, now that no second compare prints them.
import { describe, expect, it } from 'vitest';
import { stagesLines } from '../../bench/compare.js';
import type { CompareDocument } from '../../sim/compare/compare.js';

const fig = (policy: string, id: string, stages?: { verdict: string; ratio: number | null }) => ({ policy, id, verdict: 'outside', ratio: 0.5, replayStages: stages && { simulated: 1, noise: 0.1, ...stages } });

describe('the compare bench', () => {
  it("counts each policy's stages verdicts and names the figures they leave outside, skipping what they do not judge", () => {
    const doc = {
      measurement: { contended: false },
      policies: [{ policy: 'push' }, { policy: 'pull' }, { policy: 'none' }],
      figures: [
        fig('push', 'lag_p50', { verdict: 'within', ratio: 1.02 }),
        fig('push', 'lag_p99', { verdict: 'noise', ratio: 0.8 }),
        fig('push', 'lag_max', { verdict: 'outside', ratio: 0.66 }),
        fig('push', 'memory_bodies_bytes', { verdict: 'n/a', ratio: null }),
        fig('pull', 'read_p50', { verdict: 'within', ratio: 0.99 }),
        fig('pull', 'read_p99', { verdict: 'outside', ratio: null }),
        // a document without the stages column for this policy: no line
        fig('none', 'lag_p50'),
      ],
    } as unknown as CompareDocument;
    expect(stagesLines('s.yaml', doc)).toEqual([
      "compare s.yaml push (the replays' stages): 1 of 3 figures within 15%, 1 inside the noise, 1 outside (lag_max 0.66)",
      "compare s.yaml pull (the replays' stages): 1 of 2 figures within 15%, 0 inside the noise, 1 outside (read_p99 no ratio)",
    ]);
    // measured on a contended machine: said on every line, as the calibrated counts say it
    const contended = { ...doc, measurement: { ...doc.measurement, contended: true } } as CompareDocument;
    for (const line of stagesLines('s.yaml', contended)) expect(line.endsWith(' !!! measured while CONTENDED')).toBe(true);
  });
});
