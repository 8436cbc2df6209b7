// The registry of pulled authors: every author the fan-out worker last fanned out by pull within
// a lease. Their newest posts may be only in their recent lists, so every reader who follows one
// merges that list, whatever the reader's own threshold says (server/worker/fanout.ts explains the
// threshold crossings that make this necessary).
//
// One sorted set, member = author id, score = when the mark lapses (ms), beside a version counter
// bumped whenever the membership changes; both share one hash tag, so the scripts touch one slot.
// API instances keep a copy (PulledAuthorsView): one GET of the version a second, and when it
// moved, a read of the marks made since; not one lookup per followee.
//
// Marks are renewed on every pulled post (the score grows with every mark) and cleared only with
// the score that was read before a backfill: a pull marked meanwhile keeps its mark. Lapsed
// members are dropped by the next mark and ignored by every lookup.
import { PULLED_AUTHORS_KEY, PULLED_VERSION_KEY } from '../../core/keys.js';
import { LuaScript } from './lua.js';
import type { Keyspace } from './redis.js';
import type { RedisLike } from './redis-like.js';
import { SingleFlight } from './single-flight.js';

/** How often a view asks whether the registry changed (default). */
export const DEFAULT_PULLED_POLL_MS = 1_000;

// KEYS: registry, version. ARGV: author, lapses at (ms), now (ms). Returns 1 when the author was
// not marked before (the version moved), else 0. Every mark moves the score up, by 1 ms when the
// asked lapse time is not later (a pull in the same ms, a consumer whose clock is behind), so a
// backfill's clear, which compares the score it read, never removes a mark made after that read.
const MARK = new LuaScript(
  'pulled-authors-mark',
  `local lapsed = redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
local had = redis.call('ZSCORE', KEYS[1], ARGV[1])
local score = tonumber(ARGV[2])
if had and tonumber(had) >= score then score = tonumber(had) + 1 end
redis.call('ZADD', KEYS[1], score, ARGV[1])
if lapsed > 0 or not had then redis.call('INCR', KEYS[2]) end
if had then return 0 end
return 1`,
);

// KEYS: registry, version. ARGV: author, the score read before. Returns 1 when cleared.
const CLEAR = new LuaScript(
  'pulled-authors-clear',
  `local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s and tonumber(s) == tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('INCR', KEYS[2])
  return 1
end
return 0`,
);

export class PulledAuthorRegistry {
  readonly key: string;
  readonly versionKey: string;

  constructor(
    readonly redis: RedisLike,
    keys: Keyspace,
    private readonly clock: () => number = Date.now,
  ) {
    this.key = keys.key(PULLED_AUTHORS_KEY);
    this.versionKey = keys.key(PULLED_VERSION_KEY);
  }

  /** Mark an author pulled until `lapsesAt` (ms; a mark lapsing later is moved 1 ms further
   * instead: never shortened, always changed). True when they were not marked. */
  async mark(authorId: number, lapsesAt: number): Promise<boolean> {
    return (await MARK.run(this.redis, [this.key, this.versionKey], [authorId, Math.floor(lapsesAt), this.clock()])) === 1;
  }

  /** When the author's mark lapses (ms), or null when they are not marked. */
  async markOf(authorId: number): Promise<number | null> {
    const score = await this.redis.zscore(this.key, String(authorId));
    if (score === null) return null;
    const lapsesAt = Number(score);
    return lapsesAt > this.clock() ? lapsesAt : null;
  }

  /** Clear the mark if it still lapses at `lapsesAt` (no pull renewed it since it was read). */
  async clear(authorId: number, lapsesAt: number): Promise<boolean> {
    return (await CLEAR.run(this.redis, [this.key, this.versionKey], [authorId, lapsesAt])) === 1;
  }

  /** Which of these authors are marked (one ZMSCORE). */
  async marked(authorIds: readonly number[]): Promise<Set<number>> {
    const out = new Set<number>();
    if (authorIds.length === 0) return out;
    const scores = (await this.redis.zmscore(this.key, ...authorIds.map(String))) as (string | null)[];
    const now = this.clock();
    scores.forEach((s, i) => s !== null && Number(s) > now && out.add(authorIds[i]));
    return out;
  }

  /** The version (changes whenever the membership does; null before the first mark). */
  version(): Promise<string | null> {
    return this.redis.get(this.versionKey);
  }

  /** Every marked author. */
  async members(): Promise<Set<number>> {
    return new Set((await this.markedAfter(this.clock())).keys());
  }

  /** Marked authors whose mark lapses after `after` (ms, exclusive; -Infinity for all), with that time. */
  async markedAfter(after: number): Promise<Map<number, number>> {
    const flat = await this.redis.zrangebyscore(this.key, Number.isFinite(after) ? `(${after}` : '-inf', '+inf', 'WITHSCORES');
    const out = new Map<number, number>();
    for (let i = 0; i + 1 < flat.length; i += 2) out.set(Number(flat[i]), Number(flat[i + 1]));
    return out;
  }
}

/** How often a view reads the whole registry again (default): clears and lapses reach it then. */
export const DEFAULT_PULLED_RESYNC_MS = 60_000;
/** A partial read starts this far below the latest lapse time seen: a mark by a worker whose clock
 * is up to this much behind is still caught. */
export const PULLED_CLOCK_SKEW_MS = 10_000;

/**
 * An API instance's copy of the registry. current() answers from the copy when it was checked
 * within pollMs; else it asks for the version (one GET, shared by the reads waiting meanwhile).
 * When the version moved, it reads only the marks that lapse after the latest lapse time it has
 * seen (less PULLED_CLOCK_SKEW_MS): every mark made since, new or renewed, lapses later than the
 * marks already seen, so a registry of many authors is not read whole every second. Clears and
 * lapses reach the copy at the next whole read (every resyncMs); until then it holds a few authors
 * too many, whose lists a read merges for nothing (the merge drops duplicates). A read therefore
 * sees every mark made more than pollMs before it began.
 */
export class PulledAuthorsView {
  readonly pollMs: number;
  readonly resyncMs: number;
  private members: ReadonlySet<number> | null = null;
  private version: string | null = null;
  private latest = -Infinity;
  private checkedAt = -Infinity;
  private syncedAt = -Infinity;
  private readonly flights = new SingleFlight<ReadonlySet<number>>();
  private readonly clock: () => number;

  constructor(
    readonly registry: PulledAuthorRegistry,
    options: { pollMs?: number; resyncMs?: number; clock?: () => number } = {},
  ) {
    this.pollMs = options.pollMs ?? DEFAULT_PULLED_POLL_MS;
    if (!(this.pollMs >= 0)) throw new RangeError(`poll interval ${this.pollMs} ms must be 0 or more`);
    this.resyncMs = options.resyncMs ?? DEFAULT_PULLED_RESYNC_MS;
    if (!(this.resyncMs >= 0)) throw new RangeError(`resync interval ${this.resyncMs} ms must be 0 or more`);
    this.clock = options.clock ?? Date.now;
  }

  /** The marked authors (rejects when Redis cannot be asked and nothing fresh is held). */
  current(): Promise<ReadonlySet<number>> {
    if (this.members && this.clock() - this.checkedAt < this.pollMs) return Promise.resolve(this.members);
    return this.flights.run('poll', () => this.poll());
  }

  private async poll(): Promise<ReadonlySet<number>> {
    const startedAt = this.clock();
    const version = await this.registry.version();
    // Marks read after the version: a change after both moves the version again.
    const held = this.members;
    if (!held || startedAt - this.syncedAt >= this.resyncMs) {
      const all = await this.registry.markedAfter(startedAt);
      this.members = new Set(all.keys());
      this.latest = -Infinity;
      this.noteLatest(all);
      this.syncedAt = startedAt;
    } else if (version !== this.version) {
      // Not before now either: a mark lapsing before now is no mark.
      const recent = await this.registry.markedAfter(Math.max(this.latest - PULLED_CLOCK_SKEW_MS, startedAt));
      const added = [...recent.keys()].filter((a) => !held.has(a));
      // A new set: a read that already holds the copy keeps the one it began with.
      if (added.length > 0) this.members = new Set([...held, ...added]);
      this.noteLatest(recent);
    }
    this.version = version;
    this.checkedAt = startedAt;
    return this.members as ReadonlySet<number>;
  }

  private noteLatest(marks: ReadonlyMap<number, number>): void {
    for (const lapsesAt of marks.values()) if (lapsesAt > this.latest) this.latest = lapsesAt;
  }
}
