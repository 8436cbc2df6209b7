// The Prometheus registry (server/http/metrics.ts): exposition format, fixed buckets, labels,
// shared registration.
import { describe, expect, it } from 'vitest';
import { LAG_BUCKETS_SECONDS, MetricsRegistry } from '../../../server/http/metrics.js';

describe('MetricsRegistry', () => {
  it('renders counters, gauges and histograms in the text format', async () => {
    const r = new MetricsRegistry();
    const c = r.counter('jobs_total', 'Jobs done', { labelNames: ['kind'] });
    c.inc({ kind: 'a' });
    c.inc({ kind: 'a' }, 2);
    c.inc({ kind: 'b"\\\nx' });
    const g = r.gauge('backlog', 'Events waiting\nin the log');
    g.set(7);
    g.dec(undefined, 2);
    const h = r.histogram('latency_seconds', 'Latency', { buckets: [0.25, 0.5, 1] });
    for (const v of [0.125, 0.25, 0.375, 0.75, 4]) h.observe(v);
    expect(await r.render()).toBe(
      [
        '# HELP jobs_total Jobs done',
        '# TYPE jobs_total counter',
        'jobs_total{kind="a"} 3',
        'jobs_total{kind="b\\"\\\\\\nx"} 1',
        '',
        '# HELP backlog Events waiting\\nin the log',
        '# TYPE backlog gauge',
        'backlog 5',
        '',
        '# HELP latency_seconds Latency',
        '# TYPE latency_seconds histogram',
        'latency_seconds_bucket{le="0.25"} 2',
        'latency_seconds_bucket{le="0.5"} 3',
        'latency_seconds_bucket{le="1"} 4',
        'latency_seconds_bucket{le="+Inf"} 5',
        'latency_seconds_sum 5.5',
        'latency_seconds_count 5',
        '',
      ].join('\n'),
    );
    expect((await h.snapshot())).toEqual({ buckets: [0.25, 0.5, 1], cumulative: [2, 3, 4], count: 5, sum: 5.5 });
  });

  it('labels histogram series and shows unused unlabelled metrics as zero', async () => {
    const r = new MetricsRegistry();
    const h = r.histogram('d_seconds', 'D', { labelNames: ['route'], buckets: [1] });
    h.observe(0.5, { route: '/v1/feed' });
    r.counter('cold_starts_total', 'Cold starts');
    const text = (await r.render());
    expect(text).toContain('d_seconds_bucket{le="1",route="/v1/feed"} 1\n');
    expect(text).toContain('d_seconds_bucket{le="+Inf",route="/v1/feed"} 1\n');
    expect(text).toContain('d_seconds_count{route="/v1/feed"} 1\n');
    expect(text).toContain('cold_starts_total 0\n');
  });

  it('returns the same metric to every module that asks for it, and refuses conflicting declarations', () => {
    const r = new MetricsRegistry();
    const a = r.histogram('feedlab_fanout_lag_seconds', 'Lag', { buckets: LAG_BUCKETS_SECONDS });
    expect(r.histogram('feedlab_fanout_lag_seconds', 'Lag', { buckets: LAG_BUCKETS_SECONDS })).toBe(a);
    expect(() => r.histogram('feedlab_fanout_lag_seconds', 'Lag', { buckets: [1, 2] })).toThrow(/other buckets/);
    expect(() => r.counter('feedlab_fanout_lag_seconds', 'Lag')).toThrow(/already registered as a histogram/);
    r.counter('hits_total', 'Hits', { labelNames: ['cache'] });
    expect(() => r.counter('hits_total', 'Hits')).toThrow(/already registered with labels/);
  });

  it('checks names, labels, buckets and counter increments', () => {
    const r = new MetricsRegistry();
    expect(() => r.counter('bad-name', 'x')).toThrow(/Invalid metric name/);
    expect(() => r.counter('x_total', 'x', { labelNames: ['__x'] })).toThrow(/reserved \(__\)/);
    expect(() => r.counter('y_total', 'x', { labelNames: ['a-b'] })).toThrow(/Invalid label name/);
    expect(() => r.histogram('h', 'x', { labelNames: ['le'] })).toThrow(/reserved label keyword/);
    expect(() => r.mirroredHistogram('h3', 'x', { labelNames: ['le'] })).toThrow(/reserved \(a histogram's bucket\)/);
    expect(() => r.histogram('h2', 'x', { buckets: [1, 1] })).toThrow(/strictly increasing/);
    const c = r.counter('c_total', 'x', { labelNames: ['a'] });
    expect(() => c.inc()).toThrow(/takes labels \{a\}/);
    expect(() => c.inc({ a: 1, b: 2 })).toThrow(/takes labels/);
    expect(() => c.inc({ a: 1 }, -1)).toThrow(/only go up/);
  });

  it("mirrors other processes' totals and distributions: set whole, never added to", async () => {
    const r = new MetricsRegistry();
    const lag = r.mirroredHistogram('lag_seconds', 'Lag', { labelNames: ['path'], buckets: [1, 2] });
    const writes = r.counter('writes_total', 'Writes');
    lag.mirror([1, 2, 3], 9.5, { path: 'push' });
    writes.mirror(40);
    lag.mirror([0, 1, 0], 1.5, { path: 'push' });
    writes.mirror(12); // a worker left: the total goes down (a counter reset to Prometheus)
    const text = await r.render();
    expect(text).toContain(['lag_seconds_bucket{path="push",le="1"} 0', 'lag_seconds_bucket{path="push",le="2"} 1', 'lag_seconds_bucket{path="push",le="+Inf"} 1', 'lag_seconds_sum{path="push"} 1.5', 'lag_seconds_count{path="push"} 1'].join('\n'));
    expect(text).toContain('writes_total 12\n');
    expect(await writes.get()).toBe(12);
    expect(() => lag.mirror([1, 2], 1, { path: 'push' })).toThrow(/3 bucket counts|2 bucket counts for 2 bounds/);
    expect(() => lag.mirror([1, -1, 0], 1, { path: 'push' })).toThrow(/not negative/);
    expect(() => lag.mirror([1, 0, 0], 1)).toThrow(/takes labels \{path\}/);
    expect(() => r.histogram('lag_seconds', 'Lag', { labelNames: ['path'], buckets: [1, 2] })).toThrow(/already registered as mirrored/);
  });

  it('runs gauge collectors at scrape time, keeping the last value when one fails', async () => {
    const r = new MetricsRegistry();
    let backlog = 3;
    let fail = false;
    r.gauge('backlog', 'B', {
      collect: (g) => {
        if (fail) throw new Error('redis down');
        g.set(backlog);
      },
    });
    expect((await r.render())).toContain('backlog 3\n');
    backlog = 9;
    expect((await r.render())).toContain('backlog 9\n');
    fail = true;
    expect((await r.render())).toContain('backlog 9\n');
  });
});
