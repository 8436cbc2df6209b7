// Whom a reader follows, cached per reader in this process, and which of them are pulled (their
// recent-post lists are merged at read time).
//
// Pulled is "more followers than the threshold" (FeedRepository.followees, the same comparison
// the fan-out worker makes) OR "marked pulled by the worker" (the registry of pulled authors,
// server/cache/pulled-authors.ts, of which every API instance keeps a copy): an author whose
// follower count dropped under the threshold keeps posts that only ever went into their recent
// list until the worker's first push after the drop has backfilled them into the timelines, and
// an author who crossed it upwards has new posts only there. Merging the lists of both kinds shows
// every post once, whatever threshold each side had at the time (the merge drops duplicates by
// id). pulledOf() combines a cached set with the registry at read time, so a mark reaches readers
// whose set was loaded before it.
//
// The whole followee set is kept too: it is the read path's filter for posts of authors the reader
// no longer follows (an entry a fan-out pushed while the unfollow was being applied).
//
// Staleness. Every follow or unfollow sets the reader's follows token in Redis to a new random
// value (followsChanged); a set is loaded after reading the token, and a read checks the token in
// the same round trip as its lists (ReadPath): a set whose token moved is reloaded before the page
// is assembled (reload: a load of its own, not one already in flight), so a change made through
// any API instance shows on the next read. What the token cannot see (a follow whose token write
// failed while Redis was down, follows loaded into Postgres behind the API's back) is picked up by
// age: a set older than half of ttlMs (default 5 minutes) is reloaded in the background while it
// is still used, and one older than ttlMs is reloaded before use, unless Postgres is unavailable:
// then the old set is used (a page a few minutes stale rather than a 503; counted), and no reload
// is tried for REFRESH_BACKOFF_MS, so a hung Postgres costs one statement timeout a second, not
// one per read. A load that raced with an invalidation is used for its own request but not kept.
//
// Loads are batched: those asked in the same event-loop turn, or while MAX_BATCHES are in flight,
// go out together, one MGET of the tokens and one Postgres statement per batch of up to MAX_BATCH
// readers. A burst of readers (a restart, a busy minute) otherwise queued one statement each for
// the pool, and reads waited tens of ms behind it.
import { randomBytes } from 'node:crypto';
import { followsTokenKey } from '../../core/keys.js';
import type { Keyspace } from '../cache/redis.js';
import type { RedisLike } from '../cache/redis-like.js';
import { mgetBySlot } from '../cache/slots.js';
import { SingleFlight } from '../cache/single-flight.js';
import type { Counter } from '../http/metrics.js';
import { DatabaseUnavailableError } from '../store/errors.js';
import { BadRequestError, type FeedRepository } from '../store/repository.js';
import { isCacheUnavailable } from './faults.js';

export interface Followees {
  /** Everyone the reader follows. */
  readonly all: ReadonlySet<number>;
  /** The followees over the threshold when loaded, ascending. */
  readonly over: readonly number[];
  /** The reader's follows token read before the load (null: none set). */
  readonly token: string | null;
  /** When it was loaded (clock ms). */
  readonly loadedAt: number;
  /** False when the token could not be read (Redis down): such a set is not cached. */
  readonly tokened: boolean;
}

export interface FolloweeCacheOptions {
  repo: FeedRepository;
  redis: RedisLike;
  keys: Keyspace;
  /** Followees with more followers than this are pulled. */
  threshold: number;
  /** The oldest set used (default 5 minutes); from half of it on, a read also reloads it in the background. */
  ttlMs?: number;
  /** Entries kept at most; the oldest loaded go first (default 100,000). */
  maxEntries?: number;
  clock?: () => number;
  /** A background reload failed (the set in use stays until ttlMs). */
  onError?: (err: unknown) => void;
  /** Readers' sets loaded from Postgres, by reason (label `reason`, LoadReason). */
  loads?: Counter;
  /** Reads that used a set past ttlMs because Postgres was unavailable. */
  staleUsed?: Counter;
}

/** Why a set was loaded: none cached (or invalidated here), past ttlMs, past half of it (in the
 * background), the follows token moved, a page held a post of an author not in the set. */
export const LOAD_REASONS = ['new', 'expired', 'refresh', 'token', 'stranger'] as const;
export type LoadReason = (typeof LOAD_REASONS)[number];

export const DEFAULT_FOLLOWEE_TTL_MS = 300_000;
/** A follows token lives this long after the last change (a missing token costs one reload). */
export const FOLLOWS_TOKEN_TTL_MS = 86_400_000;
/** Readers per batched load at most. */
export const MAX_BATCH = 32;
/** Batched loads in flight at most (loads asked meanwhile wait for the next batch). */
export const MAX_BATCHES = 4;
/** After a reload failed (Postgres down), no other starts for this long: reads use the sets they have. */
export const REFRESH_BACKOFF_MS = 1_000;

/** The followees whose lists a read merges: over the threshold, or marked pulled (null: the
 * registry could not be read, so only the first), ascending. */
export function pulledOf(f: Followees, marked: ReadonlySet<number> | null): number[] {
  if (!marked || marked.size === 0) return f.over as number[];
  const pulled = new Set(f.over);
  // Walk the smaller side: a reader follows hundreds, the registry may hold thousands.
  if (marked.size < f.all.size) {
    for (const a of marked) if (f.all.has(a)) pulled.add(a);
  } else {
    for (const a of f.all) if (marked.has(a)) pulled.add(a);
  }
  if (pulled.size === f.over.length) return f.over as number[];
  return [...pulled].sort((a, b) => a - b);
}

/** One reader's place in a batch. */
interface Loaded {
  all: number[];
  over: number[];
  /** The token read before the statement; undefined: not read (not asked, or Redis down). */
  token?: string | null;
}

interface Waiter {
  userId: number;
  withToken: boolean;
  resolve(loaded: Loaded): void;
  reject(err: unknown): void;
}

export class FolloweeCache {
  readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly clock: () => number;
  private readonly entries = new Map<number, Followees>();
  /** Bumped by invalidate(): a load that began under an older version is not kept. */
  private readonly versions = new Map<number, number>();
  private readonly flights = new SingleFlight<Followees>();
  private queue: Waiter[] = [];
  private batches = 0;
  private scheduled = false;
  /** Clock ms before which no background refresh starts (one failed). */
  private refreshPausedUntil = -Infinity;

  constructor(private readonly o: FolloweeCacheOptions) {
    this.ttlMs = o.ttlMs ?? DEFAULT_FOLLOWEE_TTL_MS;
    if (!Number.isInteger(this.ttlMs) || this.ttlMs < 0) throw new RangeError(`followee TTL ${this.ttlMs} ms must be a non-negative integer`);
    this.maxEntries = o.maxEntries ?? 100_000;
    this.clock = o.clock ?? Date.now;
  }

  /** The Redis key of a reader's follows token. */
  tokenKey(userId: number): string {
    return this.o.keys.key(followsTokenKey(userId));
  }

  /** The reader's followees, from the cache when loaded within ttlMs (reloaded in the background
   * from half of it). Without the token (Redis down), a load reads Postgres only and is not kept. */
  get(userId: number, withToken = true): Promise<Followees> {
    const entry = this.entries.get(userId);
    if (entry) {
      const age = this.clock() - entry.loadedAt;
      if (age < this.ttlMs) {
        if (2 * age >= this.ttlMs && withToken && this.clock() >= this.refreshPausedUntil) {
          this.load(userId, 'refresh').catch((err) => {
            // Postgres down: the sets in use stay (up to ttlMs); do not send every read's refresh at it.
            this.refreshPausedUntil = this.clock() + REFRESH_BACKOFF_MS;
            this.o.onError?.(err);
          });
        }
        return Promise.resolve(entry);
      }
    }
    if (!entry) return this.load(userId, 'new', withToken);
    const stale = () => {
      this.o.staleUsed?.inc();
      return entry;
    };
    if (this.clock() < this.refreshPausedUntil) return Promise.resolve(stale());
    return this.load(userId, 'expired', withToken).catch((err) => {
      if (!(err instanceof DatabaseUnavailableError)) throw err;
      this.refreshPausedUntil = this.clock() + REFRESH_BACKOFF_MS;
      this.o.onError?.(err);
      return stale();
    });
  }

  /** Load now (sharing a load already running for the same version). */
  load(userId: number, reason: LoadReason, withToken = true): Promise<Followees> {
    const version = this.versions.get(userId) ?? 0;
    return this.flights.run(`${userId}:${version}:${withToken ? 't' : '-'}`, () => {
      this.o.loads?.inc({ reason });
      return this.fetch(userId, version, withToken);
    });
  }

  /** Load anew, not joining a load in flight (a background refresh may have read Postgres before
   * the change that prompted this: a moved token, a post of an author missing from the set). */
  reload(userId: number, reason: LoadReason): Promise<Followees> {
    this.invalidate(userId);
    return this.load(userId, reason);
  }

  /** Forget the reader's entry in this process (they followed or unfollowed someone here). */
  invalidate(userId: number): void {
    this.entries.delete(userId);
    this.versions.set(userId, (this.versions.get(userId) ?? 0) + 1);
    if (this.versions.size > 4 * this.maxEntries) this.versions.clear(); // a version only guards loads in flight
  }

  /** After a follow or unfollow committed: forget the entry here and move the reader's token, so
   * every other API instance reloads the set on the reader's next read. */
  async followsChanged(userId: number): Promise<void> {
    this.invalidate(userId);
    await this.o.redis.set(this.tokenKey(userId), randomBytes(9).toString('base64url'), 'PX', FOLLOWS_TOKEN_TTL_MS);
  }

  get size(): number {
    return this.entries.size;
  }

  private async fetch(userId: number, version: number, withToken: boolean): Promise<Followees> {
    const loadedAt = this.clock();
    const { all, over, token } = await this.batched(userId, withToken);
    const tokened = token !== undefined;
    const result: Followees = { all: new Set(all), over, token: token ?? null, loadedAt, tokened };
    if (tokened && (this.versions.get(userId) ?? 0) === version) {
      this.entries.delete(userId); // re-insert: Map order is load order, the oldest first
      this.entries.set(userId, result);
      if (this.entries.size > this.maxEntries) {
        const oldest = this.entries.keys().next();
        if (!oldest.done) this.entries.delete(oldest.value);
      }
    }
    return result;
  }

  private batched(userId: number, withToken: boolean): Promise<Loaded> {
    // A bad id is refused alone, not with the batch it would join.
    if (!Number.isSafeInteger(userId) || userId < 0) return Promise.reject(new BadRequestError(`user id ${String(userId)} is not a user id`));
    return new Promise((resolve, reject) => {
      this.queue.push({ userId, withToken, resolve, reject });
      this.pump();
    });
  }

  /** Send what is queued after this turn's other reads have queued theirs. */
  private pump(): void {
    if (this.scheduled || this.batches >= MAX_BATCHES || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      while (this.batches < MAX_BATCHES && this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH);
        this.batches++;
        void this.send(batch).finally(() => {
          this.batches--;
          this.pump();
        });
      }
    });
  }

  private async send(batch: Waiter[]): Promise<void> {
    try {
      const readers = [...new Set(batch.map((w) => w.userId))];
      // Tokens first: a follow committed after the statement read its rows moves the token after
      // this read of it, so the next read sees the move.
      const wanted = [...new Set(batch.filter((w) => w.withToken).map((w) => w.userId))];
      let tokens: Map<number, string | null> | null = new Map();
      try {
        if (wanted.length > 0) {
          const values = await mgetBySlot(this.o.redis, wanted.map((id) => this.tokenKey(id)));
          wanted.forEach((id, i) => tokens!.set(id, values[i]));
        }
      } catch (err) {
        if (!isCacheUnavailable(err, this.o.redis)) throw err;
        tokens = null;
      }
      const rows = await this.o.repo.followeesOfMany(readers, this.o.threshold);
      for (const w of batch) {
        const f = rows.get(w.userId) as Loaded;
        w.resolve({ all: f.all, over: f.over, token: w.withToken && tokens ? tokens.get(w.userId) : undefined });
      }
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
}
