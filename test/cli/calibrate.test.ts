// feedlab calibrate's bad usage, and against a running deployment (read only). The self-contained
// calibration end to end is the first step of the compare cycle (compare-cycle.test.ts), which uses
// its file.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { signToken } from '../../server/auth/token.js';
import { closeRedis, connectRedis, dropKeyspace, keyspace } from '../../server/cache/redis.js';
import { createStore, type Store } from '../../server/store/pool.js';
import { WORKER_METRICS_KEY } from '../../core/keys.js';
import type { CalibrationDocument } from '../../sim/calibration/document.js';
import { CALIBRATED_KEYS, parseCalibration } from '../../sim/scenario/calibration.js';
import { expectInputErrors, feedlab, keysUnder, oneLine, ROOT, scratchDir } from './cli-helpers.js';
import { skipWithoutServices } from '../server/services.js';

const skip = await skipWithoutServices('feedlab calibrate end to end');

let redis: Redis | undefined;
let store: Store | undefined;

beforeAll(async () => {
  if (skip) return;
  redis = await connectRedis({ url: process.env.REDIS_URL, reconnect: false });
  store = createStore({ databaseUrl: process.env.DATABASE_URL, max: 1 });
});

afterAll(async () => {
  if (redis) await closeRedis(redis);
  await store?.pool.end();
});

describe('feedlab calibrate: bad usage', () => {
  it('refuses in one line, before anything is measured', () => {
    expectInputErrors([
      [['calibrate', '--samples', '1'], /^feedlab: --samples must be at least 2, got 1$/],
      [['calibrate', 'scenarios/celebrity-burst.yaml'], /^feedlab: calibrate: too many arguments for 'calibrate'/],
      [['calibrate', '--schema', 'x'], /^feedlab: calibrate: --schema, --stream-prefix and --key-prefix go with --target/],
      [['calibrate', '--key-prefix', ''], /^feedlab: calibrate: --schema, --stream-prefix and --key-prefix go with --target/],
      [['calibrate', '--target', 'ftp://x'], /^feedlab: calibrate: --target must be an http:\/\/ URL/],
      [['calibrate', '--out', '/etc/hostname/cal.yaml'], /^feedlab: --out \/etc\/hostname: \/etc\/hostname is not a directory$/],
      [['calibrate', '--out', '/tmp'], /^feedlab: --out \/tmp: give a file name \(e\.g\. calibration\.yaml\), not a directory$/],
    ]);
  });

  it.skipIf(skip)('an unreachable target is exit 3, one line', () => {
    const r = feedlab(['calibrate', '--target', 'http://127.0.0.1:1', '--out', join(scratchDir(), 'cal.yaml')]);
    expect(r.code).toBe(3);
    expect(oneLine(r.stderr)).toMatch(/^feedlab: calibrate: --target http:\/\/127\.0\.0\.1:1\/ is unreachable/);
  });
});

describe.skipIf(skip)('feedlab calibrate --target', () => {
  const schema = `calibrate_target_${process.pid}`;
  const prefix = `${schema}:`;
  const streams = `${schema}-events`;
  const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64');
  let server: ChildProcess | undefined;

  afterAll(async () => {
    if (server?.pid) process.kill(-server.pid, 'SIGKILL');
    await store?.pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    for (const p of [prefix, streams]) if (redis) await dropKeyspace(redis, keyspace(p));
  });

  it("measures a running deployment's Redis and Postgres read only and its log's newest posts; says the API tier is not measured", async () => {
    const dir = scratchDir();
    const graph = join(dir, 'g.fgraph');
    expect(feedlab(['graph', 'generate', '--users', '5000', '--avg-follows', '20', '--alpha', '2.1', '--seed', '3', '--out', graph]).code).toBe(0);
    const loaded = feedlab(['load-graph', graph, '--schema', schema, '--quiet']);
    expect(loaded.code, loaded.stderr).toBe(0);
    server = spawn(process.execPath, [join(ROOT, 'dist/cli/main.js'), 'serve', '--with-worker', '--port', '0', '--schema', schema, '--key-prefix', prefix, '--stream-prefix', streams], {
      env: { ...process.env, FEED_TOKEN_SECRET: secret },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let log = '';
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the server did not start: ${log}`)), 30_000);
      const take = (d: Buffer) => {
        log += d.toString('utf8');
        const m = /listening on http:\/\/[0-9.]+:(\d+)/.exec(log);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      };
      server!.stdout!.on('data', take);
      server!.stderr!.on('data', take);
    });
    // its own traffic: 60 posts, in the log before calibrate reads it
    for (let i = 0; i < 60; i++) {
      const r = await fetch(`http://127.0.0.1:${port}/v1/posts`, { method: 'POST', headers: { authorization: `Bearer ${signToken((i * 37) % 5000, secret)}`, 'content-type': 'application/json' }, body: JSON.stringify({ text: `post ${i}` }) });
      expect(r.status).toBe(201);
    }
    // the worker has published its figures (every 5 s): its keys are all there
    for (let t = 0; t < 100 && (await redis!.exists(`${prefix}${WORKER_METRICS_KEY}`)) === 0; t++) await new Promise((r) => setTimeout(r, 200));
    const before = { keys: (await keysUnder(redis!, prefix)).sort(), posts: (await store!.pool.query(`SELECT count(*)::int AS n FROM ${schema}.posts`)).rows[0].n as number };

    const out = join(dir, 'target.yaml');
    const r = feedlab(['calibrate', '--target', `http://127.0.0.1:${port}`, '--schema', schema, '--stream-prefix', streams, '--key-prefix', prefix, '--samples', '2', '--out', out, '--json']);
    expect([0, 1], r.stderr).toContain(r.code);
    const doc = JSON.parse(r.stdout) as CalibrationDocument;
    const refused = doc.calibration.refused;
    // exit 1 only for a number refused as unsound (a contended machine scatters a fit); the API tier is not measured, which is no failure
    expect(r.code, r.stderr).toBe(refused.some((x) => !x.notMeasured) ? 1 : 0);
    expect(doc.calibration.mode).toBe('target');
    // no worker of calibrate's own ran: no waits for a core to set beside a replay's
    expect(doc.calibration.coreWaits).toBeUndefined();
    const idleKeys = ['costs.eventStatementsByIdle', 'costs.eventFirstPageByIdle', 'costs.eventWritesByIdle', 'costs.eventStatementsGap', 'costs.eventWritesSpread'];
    expect(refused.filter((x) => x.notMeasured).map((x) => x.key)).toEqual([...CALIBRATED_KEYS.filter((k) => k.startsWith('api.')), ...idleKeys]);
    expect(r.stderr).toMatch(/^feedlab: calibrate did not measure costs\.eventStatementsByIdle, costs\.eventFirstPageByIdle, costs\.eventWritesByIdle, costs\.eventStatementsGap: a worker's stages by its idle time need posts at paces calibrate chooses, and it posts nothing to a target/m);
    expect(r.stderr).toMatch(/^feedlab: calibrate did not measure api\.cpuPerRead, api\.cpuPerList, api\.cpuPerListEntry, api\.cpuPerPost, api\.cpuPerWrite, api\.network, api\.idleOverhead, api\.idleCpu, api\.backgroundCpu, api\.spread: the server's CPU is read from its process on this machine/m);
    expect(r.stderr).toMatch(/^feedlab: calibrate did not measure costs\.eventWritesSpread: how a post's writes scatter about their line needs posts of each size calibrate sends/m);
    expect(r.stderr).toMatch(/^feedlab: calibrate did not measure api\.postListed: a post's time to its author's list comes from the 201s of posts calibrate sends, and it posts nothing to a target/m);
    expect(doc.infrastructure.api).toBeUndefined();
    // every other key is written, or refused as unsound
    const written = [...parseCalibration(readFileSync(out, 'utf8'), out).values.keys()];
    for (const k of CALIBRATED_KEYS.filter((k) => !k.startsWith('api.') && !idleKeys.includes(k))) expect(written.includes(k) || refused.some((x) => x.key === k && !x.notMeasured), k).toBe(true);
    expect(doc.calibration.measurements.postToLog!.n).toBe(60);
    expect(doc.calibration.measurements.expansion.slope).toBeGreaterThan(0);
    expect(written.some((k) => k.startsWith('api.'))).toBe(false);

    // read only: the deployment's keys and rows as they were; calibrate's own keys gone
    const after = await keysUnder(redis!, prefix);
    expect(after.filter((k) => !before.keys.includes(k))).toEqual([]);
    expect(after.length).toBe(before.keys.length);
    expect((await store!.pool.query(`SELECT count(*)::int AS n FROM ${schema}.posts`)).rows[0].n).toBe(before.posts);
    const [, scratch] = /lists of our own under (\S+) /.exec(r.stderr)!;
    expect(scratch).toMatch(/^feedlab:calibrate:\d+_[0-9a-f]+:$/);
    expect(await keysUnder(redis!, scratch)).toEqual([]);
  }, 120_000);
});
