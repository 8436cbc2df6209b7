// Starting while a service is down (server/start-up.ts): the start is tried again with backoff until
// the service answers, one line each time; --fail-fast, a failure that is not an outage and a
// failure after the start are not waited out. And `feedlab worker` and `feedlab serve` started with
// Postgres refusing connections (a proxy in front of this machine's Postgres, cut): each waits
// (serve answering /healthz 200, /readyz and the API 503 meanwhile) and is ready once Postgres
// answers; with --fail-fast each exits 3.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DATABASE_URL } from '../../core/service-url.js';
import { connectRedis, keyspace, redisUrlFromEnv } from '../../server/cache/redis.js';
import { startWhenReachable } from '../../server/start-up.js';
import { migrate } from '../../server/store/migrate.js';
import { DatabaseUnavailableError } from '../../server/store/errors.js';
import { createStore, type Store } from '../../server/store/pool.js';
import { CliChild, ensureBuilt, proxyInFront, type FaultProxy } from './e2e/helpers.js';
import { dropPostgresState, dropRedisState, skipWithoutServices } from './services.js';

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
let proxy: FaultProxy;
let env: NodeJS.ProcessEnv;
const children: CliChild[] = [];

beforeAll(async () => {
  if (SKIP) return;
  ensureBuilt();
  store = createStore({ schema, max: 2 });
  await migrate(store);
  let through: string;
  ({ proxy, url: through } = await proxyInFront(process.env.DATABASE_URL || DEFAULT_DATABASE_URL, 5432));
  env = { ...process.env, DATABASE_URL: through, FEED_STATUS_MS: '0' };
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(children.map((c) => c.stop(5_000)));
  await proxy?.close();
  await dropPostgresState(store, schema);
  // the workers made their event log's keys before they stopped
  if (!SKIP) await dropRedisState(await connectRedis({ url: redisUrlFromEnv() }), keys);
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

describe.skipIf(SKIP)('feedlab serve started while Postgres is down', () => {
  const serveArgs = ['serve', '--port', '0', '--schema', schema, '--key-prefix', keys.prefix, '--stream-prefix', `${keys.prefix}events`];
  const serveEnv = () => ({ ...env, FEED_TOKEN_SECRET: 'start-up-test-token-secret-0123456789abcdef' });

  it('answers /healthz 200 and everything else 503 while it waits, then serves on the same port', async () => {
    proxy.cut();
    const s = new CliChild('serve', serveArgs, serveEnv());
    children.push(s);
    let restored = false;
    try {
      const [, url] = await s.line(/answering 503 on (http:\/\/\S+) until the services answer/, 15_000);
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'starting' });
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({ error: 'not ready: starting, waiting for the database' });
      const feed = await fetch(`${url}/v1/feed`);
      expect(feed.status).toBe(503);
      expect(feed.headers.get('retry-after')).toBe('1');
      const body = await feed.text();
      expect(JSON.parse(body)).toEqual({ error: 'the server is starting, waiting for the database; retry shortly' });
      expect(body).not.toContain('postgres://');
      expect(s.lines.some((l) => /^feedlab serve: not started: Postgres at .* trying again/.test(l))).toBe(true);

      proxy.restore();
      restored = true;
      const [, listening] = await s.line(/listening on (http:\/\/\S+)/, 20_000);
      expect(listening).toBe(url);
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      expect((await fetch(`${url}/v1/feed`)).status).toBe(401); // the real API: no token
      s.proc.kill('SIGTERM');
      expect((await s.exited).code).toBe(0);
    } finally {
      if (!restored) proxy.restore();
    }
  });

  it('exits 3 with --fail-fast', async () => {
    proxy.cut();
    try {
      const s = new CliChild('serve', [...serveArgs, '--fail-fast'], serveEnv());
      children.push(s);
      expect((await s.exited).code).toBe(3);
      expect(s.lines.some((l) => l.includes('answering 503'))).toBe(false);
    } finally {
      proxy.restore();
    }
  });
});
