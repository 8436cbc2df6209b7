// Readers' last-seen times, which decide who the fan-out worker skips as dormant, kept cheaply:
// at most one write per reader per minute, and off the request path for readers this process knows.
//
// The first read of a reader in this process (or the first in half a dormancy window) is checked
// against Postgres before anything else: an unknown user is a 404, and a reader who was dormant
// (not seen within the dormancy window) gets their cached timeline dropped before their last-seen
// time moves. The worker skipped them while they were dormant, so a timeline still leased (pushes
// renew the lease until a reader turns dormant) is missing posts; dropping it makes this read
// rebuild it from Postgres. The order matters: the drop and the touch commit before the rebuild
// reads Postgres, so a post fanned out while the worker still took the reader for dormant is
// committed before that read and lands in the rebuilt timeline, and every later one finds the
// reader active. If the drop fails (Redis down) the reader is not touched, so the next read checks
// again.
//
// Readers seen within that half window are touched in the background once a minute; their
// last-seen time is at most a minute old, far inside any dormancy window, so a rebuild need not
// wait for it. Those touches are batched: one statement (one commit, one pooled connection) per
// flushMs at most. One statement each let a burst of readers coming due together (all first seen
// in the same minute: a restart, a busy hour) fill the Postgres pool, and the reads' followee
// loads queued behind them for tens of ms.
import { SingleFlight } from '../cache/single-flight.js';
import type { TimelineCache } from '../cache/timelines.js';
import type { Counter } from '../http/metrics.js';
import { NotFoundError, type FeedRepository } from '../store/repository.js';
import { isCacheUnavailable } from './faults.js';

export const DEFAULT_TOUCH_EVERY_MS = 60_000;
/** Background touches wait at most this long to be written together. */
export const DEFAULT_TOUCH_FLUSH_MS = 250;
/** Readers per batched touch statement at most. */
export const TOUCH_BATCH = 250;

export interface UserActivityOptions {
  repo: FeedRepository;
  timelines: TimelineCache;
  /** Readers not seen for longer are dormant (the worker's window). */
  dormantMs: number;
  /** Write last_seen at most this often per reader (default 1 minute). */
  touchEveryMs?: number;
  /** Background touches are written together at most this often (default 250 ms). */
  flushMs?: number;
  /** Readers remembered at most (default 1,000,000; the oldest checked go first). */
  maxEntries?: number;
  clock?: () => number;
  /** Dormant readers whose timeline was dropped on return. */
  returns?: Counter;
  /** Background touches that failed (they are retried a minute later). */
  onError?: (err: unknown) => void;
}

interface Seen {
  /** When Postgres last confirmed the reader and their last-seen time (clock ms). */
  checkedAt: number;
  /** When we last wrote (or tried to write) their last-seen time. */
  touchedAt: number;
}

export class UserActivity {
  private readonly seen = new Map<number, Seen>();
  private readonly flights = new SingleFlight<void>();
  private readonly touchEveryMs: number;
  private readonly recheckMs: number;
  private readonly maxEntries: number;
  private readonly clock: () => number;
  private readonly flushMs: number;
  /** Background touches not yet written: reader -> seen at. */
  private readonly pending = new Map<number, number>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;

  constructor(private readonly o: UserActivityOptions) {
    if (!(o.dormantMs > 0)) throw new RangeError(`dormancy window ${o.dormantMs} ms must be above 0`);
    this.touchEveryMs = o.touchEveryMs ?? DEFAULT_TOUCH_EVERY_MS;
    this.recheckMs = Math.max(this.touchEveryMs, Math.floor(o.dormantMs / 2));
    this.maxEntries = o.maxEntries ?? 1_000_000;
    this.clock = o.clock ?? Date.now;
    this.flushMs = o.flushMs ?? DEFAULT_TOUCH_FLUSH_MS;
  }

  /**
   * A reader arrives. Resolves at once for a reader known here; otherwise after the Postgres check
   * (NotFoundError for an unknown user, DatabaseUnavailableError when Postgres is down).
   */
  arrive(userId: number): Promise<void> {
    const now = this.clock();
    const seen = this.seen.get(userId);
    if (seen && now - seen.checkedAt < this.recheckMs) {
      if (now - seen.touchedAt >= this.touchEveryMs) {
        seen.touchedAt = now;
        this.pending.set(userId, now);
        this.schedule();
      }
      return Promise.resolve();
    }
    return this.flights.run(String(userId), () => this.check(userId));
  }

  /** Write the background touches queued so far (and wait for a write under way). */
  async flush(): Promise<void> {
    while (this.flushing || this.pending.size > 0) {
      if (this.flushing) await this.flushing;
      else await this.writeBatch();
    }
  }

  /** Touches waiting to be written (tests, metrics). */
  get pendingTouches(): number {
    return this.pending.size;
  }

  private schedule(): void {
    if (this.timer || this.flushing || this.pending.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.flushing) void this.writeBatch();
    }, this.flushMs);
    this.timer.unref();
  }

  /** One statement for up to TOUCH_BATCH queued touches; failures are reported (and the readers
   * touched again a minute later). */
  private writeBatch(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = new Map<number, number>();
    for (const [id, at] of this.pending) {
      batch.set(id, at);
      this.pending.delete(id);
      if (batch.size >= TOUCH_BATCH) break;
    }
    const run = this.o.repo
      .touchUsers(batch, this.touchEveryMs)
      .then(
        () => {},
        (err) => this.o.onError?.(err),
      )
      .finally(() => {
        this.flushing = null;
        this.schedule();
      });
    this.flushing = run;
    return run;
  }

  /** Whether the reader is known here (tests). */
  knows(userId: number): boolean {
    return this.seen.has(userId);
  }

  /** Forget a reader (tests; or after their timeline was dropped elsewhere). */
  forget(userId: number): void {
    this.seen.delete(userId);
  }

  private async check(userId: number): Promise<void> {
    const now = this.clock();
    const user = await this.o.repo.getUser(userId);
    if (!user) throw new NotFoundError(`user ${userId} not found`);
    if (now - user.lastSeenAt > this.o.dormantMs) {
      try {
        await this.o.timelines.drop(userId);
        this.o.returns?.inc();
      } catch (err) {
        // Redis down: the read answers from Postgres; leave the reader dormant so the next read
        // drops the stale timeline before touching.
        if (isCacheUnavailable(err, this.o.timelines.redis)) return;
        throw err;
      }
    }
    await this.o.repo.touchUser(userId, now, this.touchEveryMs);
    this.seen.delete(userId);
    this.seen.set(userId, { checkedAt: now, touchedAt: now });
    if (this.seen.size > this.maxEntries) {
      const oldest = this.seen.keys().next();
      if (!oldest.done) this.seen.delete(oldest.value);
    }
  }
}
