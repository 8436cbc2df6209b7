// What replay reads of the server's /metrics: the counters it follows, and their change over a window.
import { describe, expect, it } from 'vitest';
import { counterDelta, parseMetrics, serverCounters } from '../../../sim/replay/server-metrics.js';

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
});
