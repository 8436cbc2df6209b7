// server/service-settings.ts: one table of the settings serve and worker share. Both commands read
// them through it (the same bounds, defaults and messages), their flags' help lines come from it,
// and `serve --with-worker` hands its worker the settings it read.
import { describe, expect, it } from 'vitest';
import { SERVE_OPTIONS, SERVICE_OPTIONS, WORKER_OPTIONS } from '../../cli/spec/service.js';
import { loadServeConfig } from '../../server/serve.js';
import { SERVICE_SETTINGS, settingHelp, type SettingRow } from '../../server/service-settings.js';
import { loadWorkerConfig } from '../../server/worker/config.js';

const SECRET = 'x'.repeat(32);
const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({ FEED_TOKEN_SECRET: SECRET, ...extra });
const rows = Object.values(SERVICE_SETTINGS) as SettingRow[];

/** serve's and worker's message for the same flags and environment ('' when both accept them). */
function bothRefuse(flags: Record<string, string>, extra: Record<string, string> = {}): [string, string] {
  const message = (fn: () => unknown) => {
    try {
      fn();
      return '';
    } catch (err) {
      return (err as Error).message;
    }
  };
  return [message(() => loadServeConfig(flags, env(extra))), message(() => loadWorkerConfig(flags, env(extra)))];
}

describe('the settings serve and worker share', () => {
  it("every row with a flag is an option of serve and of worker, with the row's help line", () => {
    for (const r of rows.filter((x) => x.flag !== undefined)) {
      const option = (SERVICE_OPTIONS as Record<string, { help: string }>)[r.flag!];
      expect(option?.help, r.flag).toBe(settingHelp(r));
      expect(Object.keys(SERVE_OPTIONS)).toContain(r.flag);
      expect(Object.keys(WORKER_OPTIONS)).toContain(r.flag);
    }
    expect(settingHelp(SERVICE_SETTINGS.timelineCap)).toBe('entries per timeline (FEED_TIMELINE_CAP, default 800, 1..100000)');
    expect(settingHelp(SERVICE_SETTINGS.keyPrefix)).toBe('the prefix of every cache key (FEED_KEY_PREFIX, default none)');
  });

  it('are read the same by both, from flags over the environment over the table defaults', () => {
    const flags = { 'timeline-cap': '400', 'key-prefix': 'k:', policy: 'reader-cap:500' };
    const extra = { FEED_LIST_LENGTH: '50', FEED_PARTITIONS: '8', FEED_BACKLOG_BOUND: '7', FEED_LEASE_DAYS: '3' };
    const serve = loadServeConfig(flags, env(extra));
    const worker = loadWorkerConfig(flags, env(extra));
    for (const key of ['bus', 'kafkaBrokers', 'redisUrl', 'databaseUrl', 'pgSchema', 'keyPrefix', 'streamPrefix', 'partitions', 'group', 'policy', 'timelineCap', 'listLength', 'leaseDays', 'dormantDays'] as const) {
      expect(worker[key], key).toEqual(serve[key]);
    }
    expect([serve.timelineCap, serve.keyPrefix, serve.listLength, serve.partitions, serve.leaseDays]).toEqual([400, 'k:', 50, 8, 3]);
    // the reader cap and the adaptive bounds were the defaults in serve whatever the environment said
    expect(serve.policy).toMatchObject({ kind: 'reader-cap', readerCap: 500, backlogBound: 7 });
  });

  it('refuse the same values with the same line', () => {
    const cases: [Record<string, string>, Record<string, string>, RegExp][] = [
      [{ 'timeline-cap': '100001' }, {}, /^--timeline-cap="100001": must be a whole number from 1 to 100000$/],
      [{}, { FEED_TIMELINE_CAP: '1000000' }, /^FEED_TIMELINE_CAP="1000000": must be a whole number from 1 to 100000$/],
      [{ policy: 'rate' }, {}, /^--policy: /],
      [{ policy: 'threshold:5', threshold: '6' }, {}, /^--policy=threshold:5 and --threshold=6 disagree on the threshold: set one of them$/],
      [{ bus: 'rabbit' }, {}, /^--bus="rabbit": must be redis or kafka$/],
      [{}, { KAFKA_BROKERS: 'nohost' }, /^KAFKA_BROKERS: "nohost" is not host:port/],
      [{ 'lease-days': '0' }, {}, /^--lease-days="0": must be a number of days above 0/],
    ];
    for (const [flags, extra, message] of cases) {
      const [serve, worker] = bothRefuse(flags, extra);
      expect(serve, JSON.stringify(flags)).toMatch(message);
      expect(worker, JSON.stringify(flags)).toBe(serve);
    }
  });

  it("serve --with-worker's worker takes the settings serve read, not a copy through the environment", () => {
    const serve = loadServeConfig({ 'with-worker': true, policy: 'push:all-followers', 'timeline-cap': '300', concurrency: '3' }, env());
    // an environment that says otherwise does not reach the worker's shared settings
    const worker = loadWorkerConfig({ ...serve.workerFlags }, env({ FEED_TIMELINE_CAP: '900', FEED_POLICY: 'pull' }), serve.shared);
    expect([worker.policy, worker.timelineCap, worker.concurrency]).toEqual([serve.policy, 300, 3]);
    expect(worker.policy).toMatchObject({ kind: 'push', skipDormant: false });
  });
});
