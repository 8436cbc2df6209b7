import { describe, expect, it } from 'vitest';
import { expectedSeconds } from '../../../cli/calibrate/progress.js';
import { curvePaces, idleCurveOutOfReach, postsAtPace, typicalGap } from '../../../cli/calibrate/statements-by-idle.js';
import { MIN_IDLE_POINT_EVENTS } from '../../../sim/calibration/document.js';

describe('the statement by idle time', () => {
  it('posts 16 a sample at each pace, but no pace longer than 50 s', () => {
    expect(postsAtPace(5, 40)).toBe(80);
    expect(postsAtPace(5, 1)).toBe(50);
    expect(postsAtPace(3, 1)).toBe(48);
    expect(postsAtPace(2, 2.5)).toBe(32);
  });

  it("puts a pace's point at its typical idle time, e^-γ / r", () => {
    expect(typicalGap(1)).toBeCloseTo(0.5615, 4);
    expect(typicalGap(40)).toBeCloseTo(0.01404, 5);
  });

  it('is not measured when the samples cannot give every pace the events a point needs, and says which would', () => {
    expect(MIN_IDLE_POINT_EVENTS).toBe(40);
    expect(idleCurveOutOfReach(1)).toBe("a worker's stages by its idle time need 40 posts at each pace, and --samples 1 sends 16 at 40 a second: --samples 3 or more measures them");
    expect(idleCurveOutOfReach(2)).toBe("a worker's stages by its idle time need 40 posts at each pace, and --samples 2 sends 32 at 40 a second: --samples 3 or more measures them");
    for (const samples of [3, 5, 20]) expect(idleCurveOutOfReach(samples), String(samples)).toBeNull();
    // and calibrate's ETA counts no time for it then: a minute less at 2 samples
    expect(expectedSeconds(2, true)['statements by idle']).toBe(0);
    expect(expectedSeconds(3, true)['statements by idle']).toBeCloseTo(48 / 40 + 48 / 20 + 48 / 10 + 48 / 5 + 48 / 2.5 + 48 / 1 + 6 * 0.5, 6);
  });

  it("measures the hop's own pace again beside the others, once, so that the reference point is of the curve's phase", () => {
    // the hop posts at 10 a second: its point sits between 20 and 5, ascending in idle time
    expect(curvePaces()).toEqual([40, 20, 10, 5, 2.5, 1]);
    expect(curvePaces(5)).toEqual([40, 20, 5, 2.5, 1]);
    expect(curvePaces(3).map(typicalGap)).toEqual([...curvePaces(3).map(typicalGap)].sort((a, b) => a - b));
    expect(curvePaces(3)).toContain(3);
  });
});
