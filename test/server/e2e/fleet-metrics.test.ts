// The fan-out workers' metrics in the API's /metrics (server/http/fleet-metrics.ts): the workers'
// published HDR histograms turned into Prometheus histograms at scrape time (fan-out lag by path,
// per post and per follower, batch and event timing) with exact bucket counts, the workers'
// counters summed, stale and foreign entries left out, a failed Redis read keeping the last
// figures; and `feedlab serve --with-worker` in this process counting its own worker's fan-outs
// once (not once from the worker and once from the registry). Everything under a Redis key prefix
// and a Postgres schema of its own, removed afterwards. Without Redis (or Postgres, for the server
// run) the tests are skipped with one loud line, except under CI=true where they fail.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signToken } from '../../../server/auth/token.js';
import { connectRedis, keyspace, redisUrlFromEnv } from '../../../server/cache/redis.js';
import { FleetMetrics, addHdrToBuckets } from '../../../server/http/fleet-metrics.js';
import { MetricsRegistry } from '../../../server/http/metrics.js';
import { loadServeConfig, startServer } from '../../../server/serve.js';
import { createStore, probeDatabase, type Store } from '../../../server/store/pool.js';
import { MemoryMetrics } from '../../../server/worker/metrics.js';
import { dropPostgresState, dropRedisState } from '../services.js';
import { METRICS_KEY } from '../../../server/worker/process.js';
import { TIMELINE_WRITES_KEY } from '../../../core/keys.js';
import { CI, redisDown, sample, waitFor } from './helpers.js';

const FILE = 'test/server/e2e/fleet-metrics.test.ts';
const REDIS_DOWN = await redisDown();
const PG_DOWN = REDIS_DOWN ? undefined : await probeDatabase(process.env.DATABASE_URL, 2000);
const SKIP_REDIS = REDIS_DOWN !== null && !CI;
const SKIP_SERVER = (REDIS_DOWN !== null || PG_DOWN !== undefined) && !CI;
if (SKIP_REDIS || SKIP_SERVER) console.warn(`\n!!! SKIPPED ${SKIP_REDIS ? FILE : `the server run of ${FILE}`}: ${REDIS_DOWN ?? PG_DOWN} (under CI=true this fails) !!!\n`);

const tag = `${process.pid}_${randomBytes(3).toString('hex')}`;
const keys = keyspace(`feedlab:test:fleet:${tag}:`);
const serverKeys = keyspace(`feedlab:test:fleet-serve:${tag}:`);
const schema = `fl_test_fleet_${tag}`;
const SECRET = 'fleet-metrics-test-token-secret-0123456789abcdef';

let redis: Redis;
let store: Store | undefined;

beforeAll(async () => {
  if (SKIP_REDIS) return;
  redis = await connectRedis({ url: redisUrlFromEnv() });
});

afterAll(async () => {
  await dropRedisState(redis, keys, serverKeys);
  await dropPostgresState(store, schema);
});

function worker(lagPushMs: number[], extra: (m: MemoryMetrics) => void = () => {}): MemoryMetrics {
  const m = new MemoryMetrics();
  for (const v of lagPushMs) m.observe('fanoutLagPushMs', v);
  extra(m);
  return m;
}

describe('addHdrToBuckets', () => {
  it('puts each HDR value into the bucket of its bound, values on a bound included (le)', () => {
    const m = worker([0.5, 1, 1.0004, 2, 2.5, 9_999, 10_000, 10_000.5, 86_400_000]);
    const encoded = m.exportMetrics('w').histograms.fanoutLagPushMs!.encoded;
    const counts = [0, 0, 0, 0];
    addHdrToBuckets(encoded, [0.001, 0.002, 10], counts);
    // <= 1 ms: 0.5, 1, 1.0004 (recorded as whole microseconds: 1000); <= 2 ms: 2; <= 10 s: 2.5,
    // 9.999 s, 10 s, 10.0005 s (within HDR's 0.1% of the bound); beyond: a day.
    expect(counts).toEqual([3, 1, 4, 1]);
  });
});

describe.skipIf(SKIP_REDIS)('FleetMetrics', () => {
  it('renders the workers\' published metrics as Prometheus histograms and counters, leaving out stale and foreign entries', async () => {
    const now = Date.now();
    const a = worker([3, 7, 20, 1_500], (m) => {
      m.observe('fanoutLagPullMs', 40);
      m.observe('fanoutFollowerLagPushMs', 4, 1_000);
      m.observe('fanoutFollowerLagPushMs', 30, 250);
      m.observe('fanoutFollowerLagPullMs', 40, 20_000);
      m.observe('batchMs', 0.4);
      m.observe('batchMs', 2);
      m.observe('eventMs', 30);
      m.count('eventsCreated', 5);
      m.count('timelineWrites', 100);
    });
    const b = worker([7, 700_000], (m) => {
      m.count('eventsCreated', 2);
      m.observe('fanoutFollowerLagPushMs', 7, 3);
    });
    const stale = worker([1], (m) => m.count('eventsCreated', 1000));
    await redis.hset(keys.key(METRICS_KEY), {
      'host-1': JSON.stringify(a.exportMetrics('host-1', now - 1_000)),
      'host-2': JSON.stringify(b.exportMetrics('host-2', now)),
      'host-3': JSON.stringify(stale.exportMetrics('host-3', now - 60_000)),
      junk: '{"not": "metrics"',
      other: JSON.stringify({ schema: 'something/1', at: now }),
    });

    const registry = new MetricsRegistry();
    const fleet = new FleetMetrics({ registry, redis, keys });
    // Before the first scrape: both lag paths present, at zero.
    expect((await registry.render())).toContain('feedlab_fanout_lag_seconds_count{path="pull"} 0\n');
    await fleet.refresh();
    const text = (await registry.render());
    const lines = text.split('\n');
    const value = (series: string) => {
      const line = lines.find((l) => l.startsWith(series + ' '));
      if (!line) throw new Error(`no ${series} in\n${text}`);
      return Number(line.slice(series.length + 1));
    };

    expect(lines.filter((l) => l === '# TYPE feedlab_fanout_lag_seconds histogram')).toHaveLength(1);
    const push = (le: string) => value(`feedlab_fanout_lag_seconds_bucket{path="push",le="${le}"}`);
    expect([push('0.005'), push('0.01'), push('0.025'), push('1'), push('2.5'), push('600'), push('+Inf')]).toEqual([1, 3, 4, 4, 5, 5, 6]);
    expect(value('feedlab_fanout_lag_seconds_count{path="push"}')).toBe(6);
    expect(value('feedlab_fanout_lag_seconds_sum{path="push"}')).toBeCloseTo((3 + 7 + 20 + 1_500 + 7 + 700_000) / 1000, 6);
    expect(value('feedlab_fanout_lag_seconds_bucket{path="pull",le="0.025"}')).toBe(0);
    expect(value('feedlab_fanout_lag_seconds_bucket{path="pull",le="0.05"}')).toBe(1);
    expect(value('feedlab_fanout_lag_seconds_count{path="pull"}')).toBe(1);
    // Per follower: each sample weighted by the timelines (push) or followers (pull) it stands for.
    const followerPush = (le: string) => value(`feedlab_fanout_follower_lag_seconds_bucket{path="push",le="${le}"}`);
    expect([followerPush('0.005'), followerPush('0.01'), followerPush('0.025'), followerPush('0.05'), followerPush('+Inf')]).toEqual([1_000, 1_003, 1_003, 1_253, 1_253]);
    expect(value('feedlab_fanout_follower_lag_seconds_count{path="push"}')).toBe(1_253);
    expect(value('feedlab_fanout_follower_lag_seconds_sum{path="push"}')).toBeCloseTo((4 * 1_000 + 30 * 250 + 7 * 3) / 1000, 6);
    expect(value('feedlab_fanout_follower_lag_seconds_bucket{path="pull",le="0.025"}')).toBe(0);
    expect(value('feedlab_fanout_follower_lag_seconds_bucket{path="pull",le="0.05"}')).toBe(20_000);
    expect(value('feedlab_fanout_follower_lag_seconds_sum{path="pull"}')).toBeCloseTo(800, 6);
    expect(value('feedlab_fanout_batch_seconds_bucket{le="0.0005"}')).toBe(1);
    expect(value('feedlab_fanout_batch_seconds_bucket{le="0.0025"}')).toBe(2);
    expect(value('feedlab_fanout_batch_seconds_count')).toBe(2);
    expect(value('feedlab_fanout_event_seconds_count')).toBe(1);
    expect(value('feedlab_fanout_events_created_total')).toBe(7);
    expect(value('feedlab_fanout_timeline_writes_total')).toBe(100);
    expect(value('feedlab_fanout_handler_failures_total')).toBe(0);
    expect(value('feedlab_fanout_workers')).toBe(2);
    expect(value('feedlab_fanout_metrics_read_failures_total')).toBe(0);

    // Buckets cumulative and ending at the count, for every histogram series.
    const buckets = new Map<string, number[]>();
    for (const l of lines) {
      const m = /^(feedlab_fanout_\w+)_bucket\{(.*?)le="[^"]+"\} (\d+)$/.exec(l);
      if (m) buckets.set(m[1] + m[2], [...(buckets.get(m[1] + m[2]) ?? []), Number(m[3])]);
    }
    // lag and follower lag by path, batch, event, the event's four stages and an idle worker's pickup,
    // a large post's writes per 1,000 timelines and the loops' delay (zero until a worker records one)
    expect(buckets.size).toBe(13);
    expect(value('feedlab_fanout_eventloop_delay_seconds_count')).toBe(0);
    expect(value('feedlab_fanout_event_stage_seconds_count{stage="pickup"}')).toBe(0);
    expect(value('feedlab_fanout_event_stage_seconds_count{stage="pickup_idle"}')).toBe(0);
    expect(value('feedlab_fanout_event_stage_seconds_count{stage="writes"}')).toBe(0);
    for (const series of buckets.values()) expect([...series].sort((x, y) => x - y)).toEqual(series);

    // A scrape sees the current figures, not a sum over scrapes.
    await fleet.refresh();
    expect((await registry.render())).toBe(text);

    // The workers gone (stopped longer than the age limit): zeros, and no worker.
    await redis.del(keys.key(METRICS_KEY));
    await fleet.refresh();
    const empty = (await registry.render());
    expect(empty).toContain('feedlab_fanout_lag_seconds_count{path="push"} 0\n');
    expect(empty).toContain('feedlab_fanout_events_created_total 0\n');
    expect(empty).toContain('feedlab_fanout_workers 0\n');
  });

  it('takes a republished document anew, drops a field gone, and ages out a document it has seen by its own time', async () => {
    let now = 1_000_000;
    const registry = new MetricsRegistry();
    const fleet = new FleetMetrics({ registry, redis, keys, maxAgeMs: 30_000, clock: () => now });
    // what a scrape naming metrics reads Redis for: the workers' own, not the API's backlog gauge
    expect([fleet.covers('feedlab_fanout_lag_seconds'), fleet.covers('feedlab_fanout_events_created_total'), fleet.covers('feedlab_fanout_workers')]).toEqual([true, true, true]);
    expect([fleet.covers('feedlab_fanout_backlog_events'), fleet.covers('feedlab_feed_latency_seconds')]).toEqual([false, false]);
    const count = async () => /feedlab_fanout_lag_seconds_count\{path="push"\} (\d+)\n/.exec(await registry.render())?.[1];
    const publish = (field: string, lags: number[], at: number) => redis.hset(keys.key(METRICS_KEY), field, JSON.stringify(worker(lags).exportMetrics(field, at)));
    await redis.del(keys.key(METRICS_KEY));
    await publish('w1', [5], now);
    await publish('w2', [5, 6], now);
    await fleet.refresh();
    expect(await count()).toBe('3');
    // w1 publishes again with more observations; w2 unchanged
    await publish('w1', [5, 7, 9, 11], now + 5_000);
    await fleet.refresh();
    expect(await count()).toBe('6');
    // w2's unchanged document grows old: it drops out though its text is the one read before
    now += 31_000;
    await fleet.refresh();
    expect(await count()).toBe('4');
    expect(await registry.render()).toContain('feedlab_fanout_workers 1\n');
    await redis.hdel(keys.key(METRICS_KEY), 'w1');
    await fleet.refresh();
    expect(await count()).toBe('0');
  });

  it('keeps the last figures and counts the failure when Redis does not answer', async () => {
    await redis.hset(keys.key(METRICS_KEY), 'host-1', JSON.stringify(worker([5]).exportMetrics('host-1')));
    const lost = await connectRedis({ url: redisUrlFromEnv(), reconnect: false });
    const registry = new MetricsRegistry();
    const fleet = new FleetMetrics({ registry, redis: lost, keys, readTimeoutMs: 500 });
    await fleet.refresh();
    expect((await registry.render())).toContain('feedlab_fanout_lag_seconds_count{path="push"} 1\n');
    lost.disconnect();
    const began = Date.now();
    await fleet.refresh();
    expect(Date.now() - began).toBeLessThan(1_500);
    const text = (await registry.render());
    expect(text).toContain('feedlab_fanout_lag_seconds_count{path="push"} 1\n');
    expect(text).toContain('feedlab_fanout_workers 1\n');
    expect(text).toContain('feedlab_fanout_metrics_read_failures_total 1\n');
  });
});

describe.skipIf(SKIP_SERVER)('feedlab serve --with-worker: /metrics', () => {
  it('shows the fan-out lag and batch timing of the worker in its own process once', async () => {
    store = createStore({ schema, max: 2 });
    const config = loadServeConfig(
      { port: '0', schema, 'key-prefix': serverKeys.prefix, 'stream-prefix': `${serverKeys.prefix}events`, threshold: '5', 'with-worker': true },
      { ...process.env, FEED_TOKEN_SECRET: SECRET, FEED_PARTITIONS: '2' },
    );
    const server = await startServer(config, {
      log: () => {},
      env: { ...process.env, FEED_STATUS_MS: '0', FEED_POLICY_POLL_MS: '0', FEED_CONSUMER: `fleet-${tag}` },
    });
    try {
      await store.pool.query(`INSERT INTO users (id, handle) VALUES (1, 'author'), (2, 'reader')`);
      const call = async (user: number, method: string, path: string, body?: unknown) => {
        const res = await fetch(server.url + path, {
          method,
          headers: { authorization: `Bearer ${signToken(user, SECRET)}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
        return { status: res.status, body: (await res.json()) as { id: string; posts: Array<{ id: string }> } };
      };
      expect((await call(2, 'PUT', '/v1/follows/1')).status).toBe(200);
      expect((await call(2, 'GET', '/v1/feed')).status).toBe(200); // the reader's timeline exists
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const made = await call(1, 'POST', '/v1/posts', { text: `post ${i}` });
        expect(made.status).toBe(201);
        ids.push(made.body.id);
      }
      // Fanned out by the worker (the reader's timeline exists, so only the worker puts them there).
      await waitFor(
        'the three posts in the reader\'s feed',
        async () => (await call(2, 'GET', '/v1/feed?limit=10')).body.posts.map((p) => p.id).sort().join() === [...ids].sort().join() || false,
        15_000,
      );

      // The worker publishes every 5 s: wait for the publish that holds the three events.
      const text = await waitFor(
        'the worker\'s metrics in /metrics',
        async () => {
          const res = await fetch(server.url + '/metrics');
          const body = await res.text();
          return res.status === 200 && /^feedlab_fanout_events_created_total 3$/m.test(body) ? body : false;
        },
        20_000,
        250,
      );
      expect(sample(text, 'feedlab_fanout_lag_seconds_count{path="push"}')).toBe(3); // once, not twice
      expect(sample(text, 'feedlab_fanout_lag_seconds_count{path="pull"}')).toBe(0);
      expect(sample(text, 'feedlab_fanout_lag_seconds_bucket{path="push",le="+Inf"}')).toBe(3);
      expect(sample(text, 'feedlab_fanout_lag_seconds_sum{path="push"}')).toBeGreaterThan(0);
      expect(sample(text, 'feedlab_fanout_follower_lag_seconds_count{path="push"}')).toBe(3); // one reader, three posts
      // And counted at Redis as they landed, second by second.
      const perSecond = Object.values(await redis.hgetall(serverKeys.key(TIMELINE_WRITES_KEY))).map(Number);
      expect(perSecond.reduce((x, y) => x + y, 0)).toBe(3);
      expect(sample(text, 'feedlab_fanout_batch_seconds_count')).toBe(3);
      expect(sample(text, 'feedlab_fanout_timeline_writes_total')).toBe(3);
      expect(sample(text, 'feedlab_fanout_workers')).toBe(1);
      expect(text.match(/^# TYPE feedlab_fanout_lag_seconds /gm)).toHaveLength(1);
      // The API's own figures beside them.
      expect(sample(text, 'feedlab_feed_latency_seconds_count')).toBeGreaterThanOrEqual(1);
      expect(text).toMatch(/^feedlab_outbox_backlog \d+$/m);

      // A scrape naming one of the workers' metrics reads their latest publish too.
      expect((await call(1, 'POST', '/v1/posts', { text: 'post 3' })).status).toBe(201);
      const named = await waitFor(
        'the fourth event in a scrape of that metric alone',
        async () => {
          const body = await (await fetch(server.url + '/metrics?name=feedlab_fanout_events_created_total')).text();
          return /^feedlab_fanout_events_created_total 4$/m.test(body) ? body : false;
        },
        20_000,
        250,
      );
      expect(named.split('\n').filter((l) => l !== '' && !l.startsWith('#'))).toEqual(['feedlab_fanout_events_created_total 4']);
    } finally {
      await server.close();
    }
  });
});
