// One rebuild per missing list, however many readers ask at once.
//
// In one process, SingleFlight shares the promise of a running call among every caller of the
// same key. Across processes (API instances), a Redis lock (SET NX PX with a random token) lets
// one rebuild; the others poll for the rebuilt key instead of rebuilding it again. The lock is
// released only by its owner (a Lua compare-and-delete), extended while the rebuild runs, and
// expires by itself if the owner dies, after which a waiter takes it over.
import { randomUUID } from 'node:crypto';
import { LuaScript } from './lua.js';
import { derivedKey, type Keyspace } from './redis.js';
import type { RedisLike } from './redis-like.js';

/** Concurrent calls with the same key share one promise; the next call after it settles runs anew. */
export class SingleFlight<T> {
  private readonly flights = new Map<string, Promise<T>>();

  run(key: string, fn: () => Promise<T>): Promise<T> {
    const running = this.flights.get(key);
    if (running) return running;
    const flight = (async () => {
      try {
        return await fn();
      } finally {
        this.flights.delete(key);
      }
    })();
    this.flights.set(key, flight);
    return flight;
  }

  /** Whether a call with this key is running (a run() now would join it). */
  has(key: string): boolean {
    return this.flights.has(key);
  }

  /** Calls in flight. */
  get size(): number {
    return this.flights.size;
  }
}

// KEYS: lock. ARGV: token. Delete only if we still own it.
const RELEASE = new LuaScript('lock-release', `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`);
// KEYS: lock. ARGV: token, ttl ms. Extend only if we still own it.
const EXTEND = new LuaScript('lock-extend', `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`);

export interface RedisLock {
  readonly key: string;
  readonly token: string;
  /** True if it was still ours. */
  release(): Promise<boolean>;
  /** True if it was still ours and now lives `ttlMs` more. */
  extend(ttlMs: number): Promise<boolean>;
}

/** Take the lock at `key` for `ttlMs`, or null when someone holds it. */
export async function tryLock(redis: RedisLike, key: string, ttlMs: number): Promise<RedisLock | null> {
  const token = randomUUID();
  if ((await redis.set(key, token, 'PX', ttlMs, 'NX')) !== 'OK') return null;
  return {
    key,
    token,
    release: async () => (await RELEASE.run(redis, [key], [token])) === 1,
    extend: async (ms: number) => (await EXTEND.run(redis, [key], [token, ms])) === 1,
  };
}

/** Waiting for another process's rebuild took too long: answer 503 (or 206 with a retry hint). */
export class RebuildTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RebuildTimeoutError';
  }
}

export interface RebuildCoordinatorOptions {
  /** Lock lifetime; extended every third of it while the rebuild runs (default 30 s). */
  lockTtlMs?: number;
  /** Longest wait for another process's rebuild before RebuildTimeoutError (default 30 s). */
  waitMs?: number;
  /** First poll interval; doubles up to pollMaxMs (defaults 10 and 100 ms). */
  pollMinMs?: number;
  pollMaxMs?: number;
}

/** present: it was there; rebuilt: this process rebuilt it; waited: another rebuilt it while we waited. */
/** present: it was there; rebuilt: this caller's flight rebuilt it; joined: another caller of this
 * process rebuilt it while this one waited; waited: another process rebuilt it. */
export type EnsureOutcome = 'present' | 'rebuilt' | 'joined' | 'waited';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class RebuildCoordinator {
  private readonly flights = new SingleFlight<EnsureOutcome>();
  private readonly lockTtlMs: number;
  private readonly waitMs: number;
  private readonly pollMinMs: number;
  private readonly pollMaxMs: number;

  constructor(
    readonly redis: RedisLike,
    readonly keys: Keyspace,
    options: RebuildCoordinatorOptions = {},
  ) {
    this.lockTtlMs = options.lockTtlMs ?? 30_000;
    this.waitMs = options.waitMs ?? 30_000;
    this.pollMinMs = options.pollMinMs ?? 10;
    this.pollMaxMs = options.pollMaxMs ?? 100;
  }

  /** The lock key of a schema key (same hash slot). */
  lockKey(name: string): string {
    return derivedKey(this.keys.key(name), 'lock');
  }

  /**
   * Make sure the key `name` (a schema key, e.g. timelineKey(id)) exists, running `build` at most
   * once across every caller of this process and every process sharing the Redis. `build` must
   * create the key (TimelineCache.rebuild writes the sentinel even for an empty list). If it
   * fails, its callers get the error and the lock is released, so the next caller retries.
   */
  async ensure(name: string, build: () => Promise<unknown>): Promise<EnsureOutcome> {
    const joining = this.flights.has(name);
    const outcome = await this.flights.run(name, () => this.ensureAcrossProcesses(name, build));
    // One rebuild is one 'rebuilt', however many callers shared it (metrics count rebuilds).
    return joining && outcome === 'rebuilt' ? 'joined' : outcome;
  }

  private async ensureAcrossProcesses(name: string, build: () => Promise<unknown>): Promise<EnsureOutcome> {
    const key = this.keys.key(name);
    const lockKey = this.lockKey(name);
    const deadline = Date.now() + this.waitMs;
    let waited = false;
    let delay = this.pollMinMs;
    for (;;) {
      if ((await this.redis.exists(key)) === 1) return waited ? 'waited' : 'present';
      const lock = await tryLock(this.redis, lockKey, this.lockTtlMs);
      if (lock) {
        try {
          // The previous holder may have finished between our EXISTS and our SET NX.
          if ((await this.redis.exists(key)) === 1) return waited ? 'waited' : 'present';
          await this.withHeartbeat(lock, build);
          return 'rebuilt';
        } finally {
          await lock.release().catch(() => false);
        }
      }
      waited = true;
      if (Date.now() >= deadline) {
        throw new RebuildTimeoutError(`${name} is being rebuilt by another process and was not ready within ${this.waitMs} ms`);
      }
      await sleep(Math.min(delay, Math.max(1, deadline - Date.now())));
      delay = Math.min(delay * 2, this.pollMaxMs);
    }
  }

  private async withHeartbeat(lock: RedisLock, build: () => Promise<unknown>): Promise<void> {
    const timer = setInterval(() => void lock.extend(this.lockTtlMs).catch(() => false), Math.max(1, Math.floor(this.lockTtlMs / 3)));
    timer.unref();
    try {
      await build();
    } finally {
      clearInterval(timer);
    }
  }
}
