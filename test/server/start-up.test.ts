// Starting while a service is down (server/start-up.ts): the start is tried again with backoff until
// the service answers, one line each time; --fail-fast, a failure that is not an outage and a
// failure after the start are not waited out. And `feedlab worker` started with Postgres refusing
// connections (a proxy in front of this machine's Postgres, cut): it waits, and is ready once
// Postgres answers; with --fail-fast it exits 3.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DATABASE_URL } from '../../core/service-url.js';
import { keyspace } from '../../server/cache/redis.js';
import { startWhenReachable } from '../../server/start-up.js';
import { migrate } from '../../server/store/migrate.js';
import { DatabaseUnavailableError } from '../../server/store/errors.js';
import { createStore, type Store } from '../../server/store/pool.js';
import { CliChild, ensureBuilt, TcpProxy } from './e2e/helpers.js';
import { dropPostgresState, skipWithoutServices } from './services.js';

const quick = { initialMs: 1, maxMs: 4 };
const down = () => new DatabaseUnavailableError('Postgres at postgres://db/x refused the connection (is it running?)', 'ECONNREFUSED');

describe('startWhenReachable', () => {
  it('waits out outages before the start, one line each, and resolves with the start', async () => {
    const lines: string[] = [];
    let calls = 0;
    const got = await startWhenReachable(
      async (started) => {
        if (++calls < 3) throw down();
        started();
        return 'up';
      },
      { signal: new AbortController().signal, failFast: false, say: (l) => lines.push(l), retry: quick },
    );
    expect(got).toBe('up');
    expect(lines).toEqual([
      'not started: Postgres at postgres://db/x refused the connection (is it running?); trying again in 0.0 s (attempt 1; --fail-fast exits instead)',
      'not started: Postgres at postgres://db/x refused the connection (is it running?); trying again in 0.0 s (attempt 2; --fail-fast exits instead)',
    ]);
  });

  it('does not wait with failFast, for what is not an outage, or after the start', async () => {
    const opts = { signal: new AbortController().signal, failFast: true, say: () => {}, retry: quick };
    await expect(startWhenReachable(async () => Promise.reject(down()), opts)).rejects.toThrow(DatabaseUnavailableError);
    await expect(startWhenReachable(async () => Promise.reject(new Error('schema x has no feedlab tables')), { ...opts, failFast: false })).rejects.toThrow(/no feedlab tables/);
    const late = startWhenReachable(
      async (started) => {
        started();
        throw down();
      },
      { ...opts, failFast: false },
    );
    await expect(late).rejects.toThrow(DatabaseUnavailableError);
  });

  it('resolves null when stopped while it waits', async () => {
    const stop = new AbortController();
    const waiting = startWhenReachable(async () => Promise.reject(down()), { signal: stop.signal, failFast: false, say: () => stop.abort(), retry: { initialMs: 60_000, maxMs: 60_000 } });
    expect(await waiting).toBe(null);
  });
});

const SKIP = await skipWithoutServices('test/server/start-up.test.ts');
const tag = `${process.pid}_${randomBytes(3).toString('hex')}`;
const schema = `fl_test_startup_${tag}`;
const keys = keyspace(`feedlab:test:startup:${tag}:`);
let store: Store;
let proxy: TcpProxy;
let env: NodeJS.ProcessEnv;
const children: CliChild[] = [];

beforeAll(async () => {
  if (SKIP) return;
  ensureBuilt();
  store = createStore({ schema, max: 2 });
  await migrate(store);
  const base = new URL(process.env.DATABASE_URL || DEFAULT_DATABASE_URL);
  proxy = new TcpProxy(base.hostname, Number(base.port || 5432));
  await proxy.start();
  const through = new URL(base.href);
  through.hostname = '127.0.0.1';
  through.port = String(proxy.port);
  env = { ...process.env, DATABASE_URL: through.href, FEED_STATUS_MS: '0' };
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(children.map((c) => c.stop(5_000)));
  await proxy?.close();
  await dropPostgresState(store, schema);
});

const workerArgs = ['worker', '--schema', schema, '--key-prefix', keys.prefix, '--stream-prefix', `${keys.prefix}events`];

describe.skipIf(SKIP)('feedlab worker started while Postgres is down', () => {
  it('waits for Postgres, saying so, and is ready once it answers; stops with 0 on SIGTERM', async () => {
    proxy.cut();
    const w = new CliChild('worker', workerArgs, env);
    children.push(w);
    await w.line(/not started: Postgres .* trying again in 1\.0 s \(attempt 2/, 15_000);
    expect(w.running).toBe(true);
    proxy.restore();
    await w.line(/ready: 1 consumer of group fanout/, 20_000);
    w.proc.kill('SIGTERM');
    expect((await w.exited).code).toBe(0);
  });

  it('exits 3 at once with --fail-fast', async () => {
    proxy.cut();
    try {
      const started = Date.now();
      const w = new CliChild('worker', [...workerArgs, '--fail-fast'], env);
      children.push(w);
      expect((await w.exited).code).toBe(3);
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(w.lines.some((l) => l.startsWith('feedlab worker: not started'))).toBe(false);
    } finally {
      proxy.restore();
    }
  });
});
