// What replay reads of the server's /metrics: the counters it follows, and their change over a window.
import { describe, expect, it } from 'vitest';
import { bucketsOf, counterDelta, parseMetrics, serverCounters } from '../../../sim/replay/server-metrics.js';

const scrape = (loads: Record<string, number>, answered: number) =>
  parseMetrics(
    [
      '# HELP feedlab_feed_followee_loads_total readers\' followee sets loaded from Postgres',
      '# TYPE feedlab_feed_followee_loads_total counter',
      ...Object.entries(loads).map(([reason, n]) => `feedlab_feed_followee_loads_total{reason="${reason}"} ${n}`),
      `feedlab_http_requests_total{route="/v1/feed",method="GET",status="200"} ${answered}`,
      'feedlab_http_requests_total{route="/v1/posts",method="POST",status="503"} 2',
    ].join('\n'),
  );

describe("the server's counters", () => {
  it('counts the followee loads a read waited for apart from the background refreshes', () => {
    const before = serverCounters(scrape({ new: 3, expired: 0, refresh: 10, token: 1, stranger: 0 }, 100));
    expect(before.followeeLoads).toBe(14);
    expect(before.followeeLoadsWaited).toBe(4);
    const after = serverCounters(scrape({ new: 5, expired: 2, refresh: 40, token: 1, stranger: 1 }, 300));
    const d = counterDelta(before, after);
    expect([d.feedAnswered, d.followeeLoads, d.followeeLoadsWaited]).toEqual([200, 35, 5]);
    expect([after.http5xx, after.http503]).toEqual([2, 2]);
  });

  it("sums a labelled histogram's series by bound, and takes the window's GC pauses and loop waits", () => {
    const gc = (minor: number[], major: number[], sum: number, loop: number[]) =>
      parseMetrics(
        [
          ...['0.001', '0.01', '+Inf'].map((le, i) => `feedlab_gc_pause_seconds_bucket{kind="minor",le="${le}"} ${minor[i]}`),
          ...['0.001', '0.01', '+Inf'].map((le, i) => `feedlab_gc_pause_seconds_bucket{kind="major",le="${le}"} ${major[i]}`),
          `feedlab_gc_pause_seconds_sum{kind="minor"} ${sum / 2}`,
          `feedlab_gc_pause_seconds_sum{kind="major"} ${sum / 2}`,
          ...['0.001', '0.01', '+Inf'].map((le, i) => `feedlab_eventloop_delay_seconds_bucket{le="${le}"} ${loop[i]}`),
        ].join('\n'),
      );
    const before = gc([5, 9, 10], [0, 1, 2], 0.05, [90, 99, 100]);
    expect(bucketsOf(before, 'feedlab_gc_pause_seconds')).toEqual([
      { le: 0.001, count: 5 },
      { le: 0.01, count: 10 },
      { le: Infinity, count: 12 },
    ]);
    const d = counterDelta(serverCounters(before), serverCounters(gc([8, 14, 16], [0, 1, 3], 0.09, [180, 198, 200])));
    expect(d.gcPauses.map((b) => b.count)).toEqual([3, 5, 7]);
    expect(d.gcPauseSeconds).toBeCloseTo(0.04, 12);
    expect(d.loopDelay.map((b) => b.count)).toEqual([90, 99, 100]);
  });
});
