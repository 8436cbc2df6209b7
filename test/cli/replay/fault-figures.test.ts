// What a fault cost, counted from the driver's outcomes: the posts due or in flight by answer, the
// reads by the 100 ms of their due time or in flight at its start, the first 201 after it, and the
// lag against before.
import { describe, expect, it } from 'vitest';
import { faultLag, firstAckAfter, postsDuring, readsDuring, reconciledDuring } from '../../../cli/replay/fault-figures.js';
import { READ_DROPPED, READ_NETWORK, READ_OK, READ_TIMEOUT, ReadTally, readClass, type DriverResult, type PostOutcome } from '../../../sim/replay/driver.js';

function post(intendedMs: number, o: Partial<PostOutcome>): PostOutcome {
  return { id: null, authorId: 1, burst: false, createdAt: null, intendedMs, sentMs: intendedMs, answeredMs: intendedMs + 5, status: 201, outcome: 'created', ...o };
}

function driver(posts: PostOutcome[], tally = new ReadTally()): DriverResult {
  return { posts, readTally: tally } as unknown as DriverResult;
}

describe('a fault\'s cost', () => {
  it('counts the posts due in its span and those in flight at its start, by answer', () => {
    const d = driver([
      post(900, {}), // before, answered before: not counted
      post(950, { answeredMs: 960, status: 0, outcome: 'network-error' }), // cut before: not counted
      post(990, { answeredMs: 1400, status: 0, outcome: 'network-error' }), // in flight at 1000: counted
      post(1100, { answeredMs: 3100 }), // held, answered 2 s late
      post(1200, { status: 503, outcome: 'failed' }),
      post(1300, { status: 500, outcome: 'failed' }),
      post(1400, { status: 0, sentMs: null, answeredMs: null, outcome: 'dropped' }),
      post(2100, {}), // after: not counted
    ]);
    expect(postsDuring(d, { fromMs: 1000, toMs: 2000 })).toEqual({ due: 5, acknowledged: 1, failed: 4, status503: 1, status5xx: 1, networkErrors: 1, other: 1, maxWaitSeconds: 2 });
    expect(firstAckAfter(d, 2000)).toBeCloseTo(0.105, 9); // the one answered at 2105
    expect(firstAckAfter(d, 5000)).toBeNaN();
    // the reconciliation's findings, by post index: only those of the span count
    const byPost = { lost: new Set([2, 7]), duplicated: new Set([3]), missing: new Set([0, 3]) };
    expect(reconciledDuring(d, { byPost }, { fromMs: 1000, toMs: 2000 })).toEqual({ lost: 1, duplicated: 1, missingDeliveries: 1 });
  });

  it('counts reads by the 100 ms of their due time, in whole bins', () => {
    const t = new ReadTally();
    t.record(50, READ_OK);
    t.record(1_000, readClass(503));
    t.record(1_050, readClass(502));
    t.record(1_099, READ_NETWORK);
    t.record(1_150, readClass(404));
    t.record(1_500, READ_DROPPED);
    t.record(250_000, READ_OK); // grows past its first 1,024 bins
    expect(readsDuring(driver([], t), { fromMs: 1_000, toMs: 1_199 })).toEqual({ due: 4, ok: 0, status503: 1, status5xx: 1, statusOther: 1, networkErrors: 1, timeouts: 0, dropped: 0 });
    expect(t.between(0, 300_000).due).toBe(7);
    expect(t.between(249_950, 250_010).ok).toBe(1);
  });

  it("counts a read in flight at a window's start in that window, as a post: a kill fails reads due before it", () => {
    const t = new ReadTally();
    t.record(50, READ_NETWORK, 60, 1_250); // due long before, cut at 1,250 ms
    t.record(1_020, READ_OK, 1_030, 1_900); // due in the window: counted once, not again as in flight
    t.record(900, READ_OK, 950, 990); // ended before the window
    t.record(500, READ_DROPPED); // never sent: only by its due time
    expect(t.between(1_000, 1_199)).toMatchObject({ due: 2, ok: 1, networkErrors: 1, dropped: 0 });
    expect(t.between(1_100, 1_199)).toMatchObject({ due: 2, ok: 1, networkErrors: 1 });
    expect(t.between(1_300, 1_400)).toMatchObject({ due: 1, ok: 1, networkErrors: 0 });
    expect(t.between(2_000, 3_000).due).toBe(0);
    expect(t.between(0, 3_000)).toMatchObject({ due: 4, ok: 2, networkErrors: 1, dropped: 1 });
    t.record(1_000, READ_TIMEOUT, 1_000, 250_000); // in flight across 2,490 bins: the table grows
    expect(t.between(249_950, 250_010)).toMatchObject({ due: 1, timeouts: 1 });
  });

  it('the lag paid: the worst interval p99 from the fault to its recovery, against the median before the first fault', () => {
    const byBucket = [0.1, 0.3, 0.2, NaN, 4, 9, 0.5];
    // 3 s intervals; before 9 s: 0.1, 0.3, 0.2 -> 0.2; from 10 s to 17 s: buckets 3-5 -> 9
    expect(faultLag(byBucket, 3, 10, 17, 9)).toEqual({ worstP99Seconds: 9, beforeP99Seconds: 0.2 });
    // never recovered: to the end of the series
    expect(faultLag(byBucket, 3, 16, Infinity, 9).worstP99Seconds).toBe(9);
    expect(faultLag(byBucket, 3, 19, 20, 9).worstP99Seconds).toBe(0.5);
    expect(faultLag([], 3, 0, 5, 0)).toEqual({ worstP99Seconds: NaN, beforeP99Seconds: NaN });
  });
});
