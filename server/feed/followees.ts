// Whom a reader follows, and which of them are pulled (their recent-post lists are merged at read
// time), cached briefly per reader in this process.
//
// Pulled is "more followers than the threshold" (FeedRepository.followees, the same
// comparison the fan-out worker makes) OR "marked pulled by the worker": an author whose follower
// count dropped under the threshold keeps posts that only ever went into their recent list until
// the worker's first push after the drop has backfilled them into the timelines, and the worker
// marks such an author at `feed:{u:ID}:recent:pulled` until then (server/worker/fanout.ts,
// pulledMarkerKey; the key is derived the same way here so the read path does not depend on the
// worker's module). Merging the lists of both kinds shows every post once, whatever threshold each
// side had at the time (the merge drops duplicates by id).
//
// The whole followee set is kept too: it is the read path's filter for posts of authors the reader
// no longer follows (an entry a fan-out pushed while the unfollow was being applied).
//
// Staleness: an entry lives ttlMs (default 10 s). Follows and unfollows made through this process
// invalidate the reader's entry at once; those made through another API instance are seen within
// ttlMs (the read path also reloads early when a page holds a post of an author it does not know,
// see ReadPath). A load that raced with an invalidation is used for its own request but not kept.
//
// Loads are batched: those asked in the same event-loop turn, or while MAX_BATCHES are in flight,
// go out together, one Postgres statement and one MGET of the marks (each author once) per batch
// of up to MAX_BATCH readers. A burst of readers back after the ttl (a busy minute, a restart)
// otherwise queued one statement each for the pool, and reads waited tens of ms behind it.
import { authorPostsKey } from '../../core/keys.js';
import { derivedKey, type Keyspace } from '../cache/redis.js';
import type { RedisLike } from '../cache/redis-like.js';
import { mgetBySlot } from '../cache/slots.js';
import { SingleFlight } from '../cache/single-flight.js';
import { BadRequestError, type FeedRepository } from '../store/repository.js';
import { isCacheUnavailable } from './faults.js';

export interface Followees {
  /** Everyone the reader follows. */
  readonly all: ReadonlySet<number>;
  /** The followees whose recent lists are merged, ascending. */
  readonly pulled: readonly number[];
  /** When it was loaded (clock ms). */
  readonly loadedAt: number;
  /** False when the worker's pulled marks could not be read (Redis down): not cached. */
  readonly marks: boolean;
}

export interface FolloweeCacheOptions {
  repo: FeedRepository;
  redis: RedisLike;
  keys: Keyspace;
  /** Followees with more followers than this are pulled. */
  threshold: number;
  /** How long an entry is used (default 10 s). */
  ttlMs?: number;
  /** Entries kept at most; the oldest loaded go first (default 100,000). */
  maxEntries?: number;
  clock?: () => number;
}

export const DEFAULT_FOLLOWEE_TTL_MS = 10_000;
/** Readers per batched load at most. */
export const MAX_BATCH = 32;
/** Batched loads in flight at most (loads asked meanwhile wait for the next batch). */
export const MAX_BATCHES = 4;

/** One reader's place in a batch: followees, over the threshold, and the marked authors (null:
 * the marks could not be read; undefined: not asked). */
interface Loaded {
  all: number[];
  over: number[];
  marked?: ReadonlySet<number> | null;
}

interface Waiter {
  userId: number;
  withMarks: boolean;
  resolve(loaded: Loaded): void;
  reject(err: unknown): void;
}

/** The worker's "pulled" mark of an author (beside the recent list, same hash slot). */
export function pulledMarkKey(keys: Keyspace, authorId: number): string {
  return derivedKey(keys.key(authorPostsKey(authorId)), 'pulled');
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

  constructor(private readonly o: FolloweeCacheOptions) {
    this.ttlMs = o.ttlMs ?? DEFAULT_FOLLOWEE_TTL_MS;
    this.maxEntries = o.maxEntries ?? 100_000;
    this.clock = o.clock ?? Date.now;
  }

  /** The reader's followees, from the cache when loaded within ttlMs. Without marks (Redis
   * down), a load reads Postgres only and is not kept. */
  get(userId: number, marks = true): Promise<Followees> {
    const entry = this.entries.get(userId);
    if (entry && this.clock() - entry.loadedAt < this.ttlMs) return Promise.resolve(entry);
    return this.load(userId, marks);
  }

  /** Load now (sharing a load already running for the same version). */
  load(userId: number, marks = true): Promise<Followees> {
    const version = this.versions.get(userId) ?? 0;
    return this.flights.run(`${userId}:${version}:${marks ? 'm' : '-'}`, () => this.fetch(userId, version, marks));
  }

  /** Forget the reader's entry (after they followed or unfollowed someone). */
  invalidate(userId: number): void {
    this.entries.delete(userId);
    this.versions.set(userId, (this.versions.get(userId) ?? 0) + 1);
    if (this.versions.size > 4 * this.maxEntries) this.versions.clear(); // a version only guards loads in flight
  }

  get size(): number {
    return this.entries.size;
  }

  private async fetch(userId: number, version: number, withMarks: boolean): Promise<Followees> {
    const loadedAt = this.clock();
    const { all, over, marked } = await this.batched(userId, withMarks);
    const pulled = new Set(over);
    let marks = withMarks;
    if (withMarks) {
      if (!marked) marks = false;
      else for (const a of all) if (marked.has(a)) pulled.add(a);
    }
    const result: Followees = { all: new Set(all), pulled: [...pulled].sort((a, b) => a - b), loadedAt, marks };
    if (marks && (this.versions.get(userId) ?? 0) === version) {
      this.entries.delete(userId); // re-insert: Map order is load order, the oldest first
      this.entries.set(userId, result);
      if (this.entries.size > this.maxEntries) {
        const oldest = this.entries.keys().next();
        if (!oldest.done) this.entries.delete(oldest.value);
      }
    }
    return result;
  }

  private batched(userId: number, withMarks: boolean): Promise<Loaded> {
    // A bad id is refused alone, not with the batch it would join.
    if (!Number.isSafeInteger(userId) || userId < 0) return Promise.reject(new BadRequestError(`user id ${String(userId)} is not a user id`));
    return new Promise((resolve, reject) => {
      this.queue.push({ userId, withMarks, resolve, reject });
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
      const rows = await this.o.repo.followeesOfMany([...new Set(batch.map((w) => w.userId))], this.o.threshold);
      const candidates = new Set<number>();
      for (const w of batch) {
        if (!w.withMarks) continue;
        const f = rows.get(w.userId) as Loaded;
        const over = new Set(f.over);
        for (const a of f.all) if (!over.has(a)) candidates.add(a);
      }
      let marked: ReadonlySet<number> | null = new Set();
      try {
        if (candidates.size > 0) marked = new Set(await this.marked([...candidates]));
      } catch (err) {
        if (!isCacheUnavailable(err, this.o.redis)) throw err;
        marked = null;
      }
      for (const w of batch) {
        const f = rows.get(w.userId) as Loaded;
        w.resolve({ all: f.all, over: f.over, marked: w.withMarks ? marked : undefined });
      }
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }

  /** Which of these authors carry the worker's pulled mark: MGETs of up to 1,000 keys, pipelined
   * (one per slot on a cluster: every author's mark has its own hash tag). */
  private async marked(authorIds: readonly number[]): Promise<number[]> {
    if (authorIds.length === 0) return [];
    const values = await mgetBySlot(this.o.redis, authorIds.map((id) => pulledMarkKey(this.o.keys, id)));
    return authorIds.filter((_, i) => values[i] !== null);
  }
}
