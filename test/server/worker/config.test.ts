// The worker's configuration: flags over environment over defaults, one-line errors naming the
// setting and what is valid, and a start-up description with passwords redacted. No services.
import { describe, expect, it } from 'vitest';
import { describeWorkerConfig, loadWorkerConfig, WorkerConfigError } from '../../../server/worker/config.js';
import { MemoryMetrics } from '../../../server/worker/metrics.js';

const load = (flags: Parameters<typeof loadWorkerConfig>[0], env: Record<string, string> = {}) => loadWorkerConfig(flags, env);
const error = (flags: Parameters<typeof loadWorkerConfig>[0], env: Record<string, string> = {}) => {
  try {
    load(flags, env);
  } catch (err) {
    expect(err).toBeInstanceOf(WorkerConfigError);
    return (err as Error).message;
  }
  throw new Error('no error');
};

describe('worker configuration', () => {
  it('defaults to the documents\' numbers and the local services', () => {
    const c = load({});
    expect(c).toMatchObject({
      bus: 'redis',
      redisUrl: 'redis://127.0.0.1:6379',
      pgSchema: 'public',
      group: 'fanout',
      concurrency: 1,
      relay: false,
      timelineCap: 800,
      listLength: 100,
      leaseDays: 7,
      dormantDays: 14,
      batchSize: 1000,
      policy: { kind: 'threshold', threshold: 25_000, skipDormant: true },
    });
    expect(c.consumer).toMatch(new RegExp(`-${process.pid}$`));
  });

  it('takes flags over environment, policy specs, and switches', () => {
    const env = { FEED_THRESHOLD: '10k', FEED_BATCH_SIZE: '500', FEED_CONCURRENCY: '3', FEED_RELAY: 'yes', FEED_BUS: 'kafka', KAFKA_BROKERS: 'k1:9092, k2:9093' };
    const c = load({ 'batch-size': '250', policy: 'adaptive:skip-dormant' }, env);
    expect(c).toMatchObject({ batchSize: 250, concurrency: 3, relay: true, bus: 'kafka', kafkaBrokers: ['k1:9092', 'k2:9093'] });
    expect(c.policy).toMatchObject({ kind: 'adaptive', threshold: 10_000, skipDormant: true });
    expect(load({ policy: 'reader-cap:500:all-followers' }).policy).toMatchObject({ kind: 'reader-cap', readerCap: 500, skipDormant: false });
    expect(load({ concurrency: '4', relay: true }, { FEED_RELAY: '0' })).toMatchObject({ concurrency: 4, relay: true });
  });

  it('refuses bad values in one line naming the setting', () => {
    expect(error({}, { FEED_BATCH_SIZE: 'lots' })).toBe('FEED_BATCH_SIZE="lots": must be a whole number from 1 to 100000');
    expect(error({ concurrency: '0' })).toBe('--concurrency="0": must be a whole number from 1 to 256');
    expect(error({}, { FEED_BUS: 'rabbit' })).toBe('FEED_BUS="rabbit": must be redis or kafka');
    expect(error({}, { FEED_LEASE_DAYS: '-1' })).toMatch(/^FEED_LEASE_DAYS="-1": must be a number of days above 0/);
    expect(error({}, { FEED_RELAY: 'maybe' })).toMatch(/^FEED_RELAY="maybe": must be/);
    expect(error({}, { KAFKA_BROKERS: 'nohost' })).toMatch(/^KAFKA_BROKERS: "nohost" is not host:port/);
    expect(error({}, { REDIS_URL: 'http://x' })).toMatch(/^REDIS_URL="http:\/\/x\/?": must start with redis:\/\/ or rediss:\/\/$/);
    expect(error({ 'key-prefix': 'a{b}' })).toMatch(/no braces/);
    expect(error({ policy: 'sometimes' })).toMatch(/^--policy: unknown policy "sometimes"/);
    expect(error({ policy: 'rate' })).toMatch(/^--policy: the rate policy decides per \(author, reader\) pair/);
    expect(error({}, { FEED_TIMELINE_CAP: '100001' })).toMatch(/^FEED_TIMELINE_CAP="100001": must be a whole number from 1 to 100000/);
    expect(error({ policy: 'threshold:10000' }, { FEED_THRESHOLD: '5000' })).toBe(
      '--policy=threshold:10000 and FEED_THRESHOLD=5000 disagree on the threshold: set one of them',
    );
    for (const m of [error({}, { FEED_PAGE_SIZE: '1e9' }), error({}, { DATABASE_URL: 'mysql://x' })]) expect(m).not.toContain('\n');
  });

  it('prints its settings with passwords redacted', () => {
    const c = load({}, { REDIS_URL: 'redis://:s3cret@cache:6379', DATABASE_URL: 'postgres://app:hunter2@db/feed' });
    const text = describeWorkerConfig(c).join('\n');
    expect(text).not.toMatch(/s3cret|hunter2/);
    expect(text).toContain('redis://:***@cache:6379');
    expect(text).toContain('postgres://app:***@db/feed');
    expect(text).toContain('threshold:25000:skip-dormant');
  });
});

describe('worker metrics', () => {
  it('merges HDR histograms and counters across exports and renders Prometheus text', () => {
    const a = new MemoryMetrics();
    const b = new MemoryMetrics();
    for (let i = 1; i <= 100; i++) a.observe('fanoutLagPushMs', i);
    for (let i = 101; i <= 200; i++) b.observe('fanoutLagPushMs', i);
    a.count('timelineWrites', 5);
    b.count('timelineWrites', 7);
    const merged = new MemoryMetrics();
    merged.merge(JSON.parse(JSON.stringify(a.exportMetrics('a'))));
    merged.merge(b.exportMetrics('b'));
    const lag = merged.summary('fanoutLagPushMs');
    expect(lag.count).toBe(200);
    expect(lag.mean).toBeCloseTo(100.5, 6);
    expect(lag.p50).toBeCloseTo(100, 0);
    expect(lag.max).toBeCloseTo(200, 0);
    expect(merged.counter('timelineWrites')).toBe(12);
    expect(lag.p99).toBeCloseTo(198, 0);
  });
});
