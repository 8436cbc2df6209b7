// The Server-Timing metric the server sends on a 201 and the replay and calibrate read back.
import { describe, expect, it } from 'vitest';
import { LISTED_TIMING, listedAfterMs, serverTiming, serverTimingDuration } from '../../core/server-timing.js';

describe('Server-Timing', () => {
  it('writes name;dur=ms to the microsecond and reads it back', () => {
    expect(serverTiming(LISTED_TIMING, 3.21449)).toBe('listed;dur=3.214');
    expect(serverTimingDuration(serverTiming(LISTED_TIMING, 0.0004), LISTED_TIMING)).toBe(0);
    expect(serverTimingDuration(serverTiming(LISTED_TIMING, 12.5), LISTED_TIMING)).toBe(12.5);
    // a clock that stepped back never gives a negative time
    expect(serverTiming(LISTED_TIMING, -1)).toBe('listed;dur=0.000');
  });

  it('finds its metric among others, with a description, quotes, spaces and any case', () => {
    expect(serverTimingDuration('db;dur=53, listed;desc="in the list";dur=2.5', 'listed')).toBe(2.5);
    expect(serverTimingDuration('cache;desc="Cache Read";dur=23.2, Listed ; dur = "7"', 'listed')).toBe(7);
    expect(serverTimingDuration('listed;dur=1.5,listed;dur=9', 'listed')).toBe(1.5);
  });

  it("reads a 201's listed time, and nothing from an answer without the header", () => {
    expect(listedAfterMs('db;dur=1, listed;dur=2.25')).toBe(2.25);
    expect(listedAfterMs('db;dur=1')).toBeUndefined();
    expect(listedAfterMs(undefined)).toBeUndefined();
  });

  it('gives undefined for another metric, a metric without dur and a dur that is not a number', () => {
    expect(serverTimingDuration('db;dur=53', 'listed')).toBeUndefined();
    expect(serverTimingDuration('listed', 'listed')).toBeUndefined();
    expect(serverTimingDuration('listed;desc=x', 'listed')).toBeUndefined();
    expect(serverTimingDuration('listed;dur=abc', 'listed')).toBeUndefined();
    expect(serverTimingDuration('listed;dur=-3', 'listed')).toBeUndefined();
    expect(serverTimingDuration('', 'listed')).toBeUndefined();
    // a name that only starts the same is another metric
    expect(serverTimingDuration('listedx;dur=4', 'listed')).toBeUndefined();
  });
});
