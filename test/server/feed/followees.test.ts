// FolloweeCache: batched loads (one token MGET and one statement for the loads asked together),
// the token read before the statement, the age rules (used, reloaded in the background, reloaded
// before use), and pulledOf's union of the over-threshold followees with the registry's marks.
import { describe, expect, it } from 'vitest';
import { keyspace } from '../../../server/cache/redis.js';
import { MetricsRegistry } from '../../../server/http/metrics.js';
import type { RedisLike } from '../../../server/cache/redis-like.js';
import { FolloweeCache, LOAD_REASONS, MAX_BATCH, pulledOf, REFRESH_BACKOFF_MS, type Followees } from '../../../server/feed/followees.js';
import { DatabaseUnavailableError } from '../../../server/store/errors.js';
import { BadRequestError, type FeedRepository, type Followees as FolloweeRows } from '../../../server/store/repository.js';

const keys = keyspace('t:');
const TTL = 60_000;

/** Reader -> followees; authors over the threshold; tokens by reader. */
function world(follows: Record<number, number[]>, over: number[], opts: { redisDown?: boolean; tokens?: Record<number, string> } = {}) {
  const log: string[] = [];
  const statements: number[][] = [];
  const mgets: string[][] = [];
  const tokens = new Map(Object.entries(opts.tokens ?? {}).map(([k, v]) => [keys.key(`feed:{u:${k}}:follows`), v]));
  let hold: Promise<void> | null = null;
  let failing: false | true | 'database' = false;
  const repo = {
    async followeesOfMany(ids: readonly number[]): Promise<Map<number, FolloweeRows>> {
      log.push('statement');
      statements.push([...ids]);
      await new Promise((r) => setTimeout(r, 2));
      if (hold) await hold;
      if (failing === 'database') throw new DatabaseUnavailableError('Postgres is unreachable: connection reset');
      if (failing) throw new Error('Postgres is down');
      return new Map(ids.map((id) => [id, { all: [...(follows[id] ?? [])], over: (follows[id] ?? []).filter((a) => over.includes(a)) }]));
    },
  } as unknown as FeedRepository;
  const redis = {
    status: opts.redisDown ? 'reconnecting' : 'ready',
    async mget(k: string[]) {
      log.push('mget');
      mgets.push(k);
      if (opts.redisDown) throw new Error('Connection is closed.');
      return k.map((key) => tokens.get(key) ?? null);
    },
    async set(key: string, value: string) {
      tokens.set(key, value);
      return 'OK';
    },
  } as unknown as RedisLike;
  let now = 1_000_000;
  const registry = new MetricsRegistry();
  const loads = registry.counter('loads_total', 'loads', { labelNames: ['reason'] });
  const staleUsed = registry.counter('stale_total', 'stale sets used');
  const cache = new FolloweeCache({ repo, redis, keys, threshold: 10, ttlMs: TTL, clock: () => now, loads, staleUsed });
  return {
    cache,
    loads,
    staleUsed,
    statements,
    mgets,
    log,
    tokens,
    advance: (ms: number) => (now += ms),
    fail: (on: boolean | 'database') => (failing = on),
    holdStatements: () => {
      let release!: () => void;
      hold = new Promise((r) => (release = r));
      return () => {
        hold = null;
        release();
      };
    },
  };
}

describe('FolloweeCache', () => {
  it('loads the readers asked together with one token MGET, then one statement', async () => {
    const { cache, statements, mgets, log } = world({ 1: [10, 11, 12], 2: [11, 13], 3: [], 4: [12, 14] }, [10], { tokens: { 2: 'tok2' } });
    const [a, b, c, d] = await Promise.all([1, 2, 3, 4].map((id) => cache.get(id)));
    expect(statements).toEqual([[1, 2, 3, 4]]);
    expect(mgets).toEqual([[1, 2, 3, 4].map((id) => cache.tokenKey(id))]);
    // The token is read before the rows: a follow committed after the statement moves it later.
    expect(log).toEqual(['mget', 'statement']);
    expect([...a.all]).toEqual([10, 11, 12]);
    expect(a.over).toEqual([10]);
    expect(b.token).toBe('tok2');
    expect(a.token).toBeNull();
    expect(c.all.size).toBe(0);
    expect(d.over).toEqual([]);
    expect([a, b, c, d].every((f) => f.tokened)).toBe(true);
    // Cached: no statement for the next reads.
    await Promise.all([1, 2, 3, 4].map((id) => cache.get(id)));
    expect(statements).toHaveLength(1);
  });

  it('splits a burst into batches of at most MAX_BATCH readers', async () => {
    const n = 3 * MAX_BATCH + 5;
    const follows: Record<number, number[]> = {};
    for (let i = 1; i <= n; i++) follows[i] = [100_000 + i];
    const { cache, statements } = world(follows, [100_001]);
    const loaded = await Promise.all(Array.from({ length: n }, (_, i) => cache.get(i + 1)));
    expect(statements.length).toBeGreaterThanOrEqual(4);
    expect(statements.every((s) => s.length <= MAX_BATCH)).toBe(true);
    expect(statements.flat().sort((x, y) => x - y)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(loaded[0].over).toEqual([100_001]);
    expect(loaded[1].over).toEqual([]);
  });

  it('uses a set younger than half the TTL as it is, reloads an older one in the background while using it, and waits for one past the TTL', async () => {
    const w = world({ 1: [10] }, []);
    const first = await w.cache.get(1);
    w.advance(TTL / 2 - 1);
    expect(await w.cache.get(1)).toBe(first);
    expect(w.statements).toHaveLength(1);

    // Past half the TTL: answered at once from the cache, even while the reload hangs.
    w.advance(1);
    const release = w.holdStatements();
    const during = await w.cache.get(1);
    expect(during).toBe(first);
    await new Promise((r) => setTimeout(r, 10));
    expect(w.statements).toHaveLength(2);
    release();
    await new Promise((r) => setTimeout(r, 10));
    const refreshed = await w.cache.get(1);
    expect(refreshed).not.toBe(first);
    expect(w.statements).toHaveLength(2);

    // Past the TTL: the read waits for a fresh load.
    w.advance(TTL);
    const release2 = w.holdStatements();
    let settled = false;
    const waiting = w.cache.get(1).then((f) => ((settled = true), f));
    await new Promise((r) => setTimeout(r, 10));
    expect(settled).toBe(false);
    release2();
    expect((await waiting).loadedAt).toBeGreaterThan(refreshed.loadedAt);
    expect(Object.fromEntries(await Promise.all(LOAD_REASONS.map(async (reason) => [reason, await w.loads.get({ reason })])))).toEqual({ new: 1, expired: 1, refresh: 1, token: 0, stranger: 0 });
  });

  it('after a background refresh failed (Postgres down), starts no other for REFRESH_BACKOFF_MS, and keeps answering from the set', async () => {
    const w = world({ 1: [10], 2: [20] }, []);
    const [one, two] = await Promise.all([w.cache.get(1), w.cache.get(2)]);
    w.advance(TTL / 2);
    w.fail(true);
    expect(await w.cache.get(1)).toBe(one); // starts a refresh, which fails
    await new Promise((r) => setTimeout(r, 10));
    expect(w.statements).toHaveLength(2);
    expect(await w.cache.get(2)).toBe(two);
    expect(await w.cache.get(1)).toBe(one);
    await new Promise((r) => setTimeout(r, 10));
    expect(w.statements).toHaveLength(2); // paused
    w.advance(REFRESH_BACKOFF_MS);
    w.fail(false);
    await w.cache.get(2);
    await new Promise((r) => setTimeout(r, 10));
    expect(w.statements).toHaveLength(3);
    expect(await w.cache.get(2)).not.toBe(two);
  });

  it('past the TTL with Postgres unavailable, a read uses the old set (counted), tries no other load for REFRESH_BACKOFF_MS, and reloads once Postgres is back', async () => {
    const w = world({ 1: [10], 2: [20] }, []);
    const [one, two] = await Promise.all([w.cache.get(1), w.cache.get(2)]);
    w.advance(TTL);
    w.fail('database');
    expect(await w.cache.get(1)).toBe(one);
    expect(w.statements).toHaveLength(2);
    // paused: the other reader's old set at once, no statement sent at a Postgres that is down
    expect(await w.cache.get(2)).toBe(two);
    expect(w.statements).toHaveLength(2);
    expect(await w.staleUsed.get()).toBe(2);
    w.advance(REFRESH_BACKOFF_MS);
    w.fail(false);
    const fresh = await w.cache.get(1);
    expect(fresh).not.toBe(one);
    expect(fresh.loadedAt).toBeGreaterThan(one.loadedAt);
    // any other failure is the read's error, not a reason to use an old set; a reader never loaded has none
    w.advance(TTL + REFRESH_BACKOFF_MS);
    w.fail(true);
    await expect(w.cache.get(2)).rejects.toThrow('Postgres is down');
    w.fail('database');
    await expect(w.cache.get(3)).rejects.toThrow(DatabaseUnavailableError);
  });

  it('reload does not join a background refresh that read Postgres before the change it is for', async () => {
    const follows: Record<number, number[]> = { 1: [10] };
    const w = world(follows, []);
    await w.cache.get(1);
    w.advance(TTL / 2);
    const release = w.holdStatements();
    await w.cache.get(1); // starts the background refresh, whose statement is now under way
    await new Promise((r) => setTimeout(r, 5));
    follows[1] = [10, 20]; // a follow committed after that statement read its rows
    const fresh = w.cache.reload(1, 'stranger');
    release();
    expect([...(await fresh).all]).toEqual([10, 20]);
    expect(w.statements).toHaveLength(3);
    expect([...(await w.cache.get(1)).all]).toEqual([10, 20]); // the refresh's older rows were not kept
  });

  it('followsChanged forgets the set here and moves the token other instances compare', async () => {
    const w = world({ 1: [10] }, []);
    const before = await w.cache.get(1);
    expect(before.token).toBeNull();
    await w.cache.followsChanged(1);
    const token = w.tokens.get(w.cache.tokenKey(1));
    expect(token).toMatch(/^[A-Za-z0-9_-]{12}$/);
    const after = await w.cache.get(1);
    expect(w.statements).toHaveLength(2);
    expect(after.token).toBe(token);
    await w.cache.followsChanged(1);
    expect(w.tokens.get(w.cache.tokenKey(1))).not.toBe(token);
  });

  it('without Redis: Postgres only, not kept; a Postgres-only load reads no token', async () => {
    const down = world({ 1: [10, 11] }, [10], { redisDown: true });
    const f = await down.cache.get(1);
    expect(f.tokened).toBe(false);
    expect(f.over).toEqual([10]);
    expect(down.cache.size).toBe(0);
    const up = world({ 1: [10, 11] }, [10]);
    const pgOnly = await up.cache.get(1, false);
    expect(pgOnly.over).toEqual([10]);
    expect(up.mgets).toHaveLength(0);
    expect(up.cache.size).toBe(0);
  });

  it('refuses a TTL that is not a whole number of ms', () => {
    const repo = {} as FeedRepository;
    const redis = {} as RedisLike;
    for (const ttlMs of [-1, 1.5, Number.NaN]) {
      expect(() => new FolloweeCache({ repo, redis, keys, threshold: 1, ttlMs })).toThrow(`followee TTL ${ttlMs} ms must be a non-negative integer`);
    }
  });

  it('refuses a bad user id alone, not the batch it would join', async () => {
    const { cache } = world({ 1: [10] }, []);
    const [bad, good] = await Promise.allSettled([cache.get(-1), cache.get(1)]);
    expect(bad.status === 'rejected' && bad.reason).toBeInstanceOf(BadRequestError);
    expect(good.status === 'fulfilled' && [...good.value.all]).toEqual([10]);
  });
});

describe('pulledOf', () => {
  const f = (all: number[], over: number[]): Followees => ({ all: new Set(all), over, token: null, loadedAt: 0, tokened: true });

  it('is the over-threshold followees plus the marked ones the reader follows, ascending', () => {
    expect(pulledOf(f([3, 5, 7, 9], [7]), new Set([9, 3, 100]))).toEqual([3, 7, 9]);
    // A registry larger than the followee set is walked from the followee side: same answer.
    expect(pulledOf(f([3, 5], [5]), new Set([1, 2, 3, 4, 6, 8, 10]))).toEqual([3, 5]);
    expect(pulledOf(f([3, 5], [5]), new Set([5]))).toEqual([5]);
  });

  it('without the registry (Redis down) or with nobody marked: the over-threshold followees only', () => {
    expect(pulledOf(f([3, 5], [5]), null)).toEqual([5]);
    expect(pulledOf(f([3, 5], []), new Set())).toEqual([]);
  });
});
