// The fan-out worker: what happens to a post event between the event log and the timelines.
//
// PostCreated. The author's follower count is read for every event, and the policy (also read
// for every event, so a threshold changed at run time applies from the next event on) decides:
//  - pulled (over the threshold, or the pull policy): the post goes once into the author's recent
//    list, which home-feed reads merge;
//  - pushed: the followers are read from Postgres in pages (only those seen within the dormancy
//    window when the policy skips dormant followers), thinned by the reader-side cap when that is
//    the policy, and the post is written into their timelines in pipelined batches, several in
//    flight, while the next page is being read. Every write renews the timeline's lease; a
//    follower without a cached timeline gets nothing (the timeline is rebuilt whole on its next
//    read).
// Either way the post is also added to the author's recent list when that list is present: a
// present list must be complete (server/cache/post-list.ts), so that it is right whenever the
// author is (or becomes) pulled. Adding to a missing list writes nothing.
//
// Delivery is at-least-once and the handling idempotent: the cache scripts are ZADD NX, so a
// redelivered event writes nothing twice, and an event whose handling failed half-way (a crash, a
// Redis error) is simply handled again from the start.
//
// Threshold changes. An author that crosses the threshold upwards (push -> pull) needs nothing:
// the posts already pushed stay in the timelines, the new ones are in the recent list (and the
// author is marked pulled, below), and the read merge drops duplicates by id. An author that
// crosses it downwards (pull -> push) would lose the posts that were only in the recent list for
// readers who no longer merge it, so every pull marks the author in the registry of pulled authors
// (server/cache/pulled-authors.ts, for the lease), and the first push after a pull carries the
// author's recent posts (within the lease, at most a recent list's length, from Postgres) along
// with the new one, into every follower's timeline; the mark is cleared only once that backfill is
// complete, so a crash during it repeats it. A read path that merges the lists of the followees
// over its threshold *or* marked pulled therefore shows every post once, whichever threshold each
// side had at the time.
//
// PostDeleted: the post leaves the author's recent list and its cached body; timeline entries are
// filtered out at read time (hydration reports the post deleted) and age out under the cap.
//
// Measuring. An event's stages as the simulator charges them (core/worker-metrics.ts): the pickup
// (the log taking it to a worker starting on it), the statement (the author's follower count), the
// first follower page with the list add and the pulled-mark lookup sent beside it (a push), the
// writes, and a large post's writes again per timeline it wrote (where the per-follower tail is
// made). Besides the per-post lag, every pushed batch records its lag (post creation to its
// replies) once per timeline it wrote, and a pulled post its list write once per follower (readers
// see it once it is in the list, as the simulator counts it): the per-follower lag. Each batch also
// adds its writes to a per-second count in Redis (core/keys.ts TIMELINE_WRITES_KEY), so that writes
// per second can be read as they landed rather than from counters totalled at the end of an event.
// That count is sent beside the batch path, never awaited by it: a failure is reported
// (onCounterError) and costs the count, never the event.
import { ADAPTIVE_RECHECK_SECONDS, keepForReader, nextAdaptiveThreshold, postSalt, pullsAuthor, readerDraw, type FanoutPolicy } from '../../core/fanout-policy.js';
import type { FeedPosition } from '../../core/cursor.js';
import { DEFAULT_EVENT_CONCURRENCY, DEFAULT_FOLLOWER_PAGE, DEFAULT_PIPELINES, LARGE_POST_TIMELINES, LARGE_WRITES_PER_TIMELINES } from '../../core/fanout-worker.js';
import { TIMELINE_WRITES_KEY, TIMELINE_WRITES_RETENTION_MS } from '../../core/keys.js';
import type { PostId } from '../../core/post-id.js';
import type { AuthorPostsCache } from '../cache/author-posts.js';
import type { PostBodyCache } from '../cache/post-bodies.js';
import { TOMBSTONE, type CachedBody } from '../feed/hydration.js';
import { PulledAuthorRegistry } from '../cache/pulled-authors.js';
import type { BatchTiming, PushResult, TimelineCache } from '../cache/timelines.js';
import type { BatchHandler, DeliveredEvent, PostCreated, PostDeleted, PostEvent } from '../events/event-log.js';
import { backoffDelay, sleep, type BackoffOptions } from '../events/backoff.js';
import { isCacheUnavailable } from '../feed/faults.js';
import { DatabaseUnavailableError } from '../store/errors.js';
import { NotFoundError, runStatement, type FeedRepository } from '../store/repository.js';
import { NO_METRICS, type MetricsSink } from './metrics.js';

export const DAY_MS = 86_400_000;
/** How often an adaptive policy looks at the backlog (core's rule, which the simulator follows too). */
export const ADAPT_INTERVAL_MS = ADAPTIVE_RECHECK_SECONDS * 1_000;
/** Minutes of per-second write counts kept (TIMELINE_WRITES_RETENTION_MS). */
const RETENTION_MINUTES = Math.ceil(TIMELINE_WRITES_RETENTION_MS / 60_000);

export interface FanoutWorkerOptions {
  readonly repo: FeedRepository;
  readonly timelines: TimelineCache;
  readonly authorPosts: AuthorPostsCache;
  /** When given, a deleted post's cached body becomes its tombstone (see feed/hydration.ts). */
  readonly bodies?: Pick<PostBodyCache<CachedBody>, 'setMany'>;
  /** The starting policy (setPolicy changes it at run time). */
  readonly policy: FanoutPolicy;
  /** Followers not seen within this many days are skipped (when the policy skips dormant ones). */
  readonly dormantDays: number;
  /** Followers per Postgres page (default 10,000). */
  readonly pageSize?: number;
  /** Pipelined batches in flight per fan-out (default 2). Batches are TimelineCache.batchSize. */
  readonly pipelines?: number;
  /** Authors handled at once within one batch of events (default 8); one author's events in order. */
  readonly eventConcurrency?: number;
  readonly metrics?: MetricsSink;
  /** ms since the epoch (tests move it). */
  readonly clock?: () => number;
  /** The fan-out backlog in queued timeline writes, for the adaptive policy (undefined: unknown). */
  readonly backlog?: () => number | undefined;
  /** A batch failed because Postgres or Redis is unavailable and will be retried in place. */
  readonly onOutage?: (err: unknown) => void;
  /** Adding a batch's writes to the per-second count in Redis failed (the fan-out went on). */
  readonly onCounterError?: (err: unknown) => void;
}

/** Waiting between attempts at a batch while Postgres or Redis is unavailable. */
export const OUTAGE_RETRY: BackoffOptions = { initialMs: 100, maxMs: 5_000 };

/** Does this failure mean a service is unavailable (retry later), rather than a bad event or a bug? */
export function isOutage(err: unknown): boolean {
  return err instanceof DatabaseUnavailableError || isCacheUnavailable(err);
}

export type FanoutPath = 'push' | 'pull' | 'delete' | 'skip';

/** What handling one event did. */
export interface EventOutcome {
  readonly kind: PostEvent['kind'];
  readonly postId: PostId;
  readonly authorId: number;
  readonly path: FanoutPath;
  /** The author's follower count when decided (0 for deletes). */
  readonly followers: number;
  /** The threshold in effect. */
  readonly threshold: number;
  /** Followers read from Postgres (the non-dormant ones when skipping dormant). */
  readonly visited: number;
  /** Timelines the post was added to; already holding it; missing; pending a rebuild. */
  readonly written: number;
  readonly duplicates: number;
  readonly missing: number;
  readonly pending: number;
  readonly readerCapDropped: number;
  readonly batches: number;
  /** Extra posts carried along by a pull -> push transition. */
  readonly backfilled: number;
  /** Whether the post was new to the author's recent list (false also when the list is missing). */
  readonly listAdded: boolean;
  /** Post creation to the last write, ms (null when every write was a duplicate). */
  readonly lagMs: number | null;
}

interface Totals {
  written: number;
  duplicates: number;
  missing: number;
  pending: number;
  batches: number;
}

const zeroTotals = (): Totals => ({ written: 0, duplicates: 0, missing: 0, pending: 0, batches: 0 });

function addTotals(t: Totals, r: PushResult): void {
  t.written += r.written;
  t.duplicates += r.duplicates;
  t.missing += r.missing;
  t.pending += r.pending;
  t.batches += r.batches;
}


export class FanoutWorker {
  private policyNow: FanoutPolicy;
  private adaptiveThreshold: number;
  private lastAdapt = -Infinity;
  private readonly pageSize: number;
  private readonly pipelines: number;
  private readonly eventConcurrency: number;
  private readonly metrics: MetricsSink;
  private readonly clock: () => number;
  private registry?: PulledAuthorRegistry;
  private readonly dormantMs: number;
  /** Per-second write counts sent and not yet answered. */
  private readonly counting = new Set<Promise<void>>();
  /** The newest minute whose per-second fields this worker has trimmed. */
  private trimmedMinute = -Infinity;

  constructor(private readonly o: FanoutWorkerOptions) {
    this.policyNow = o.policy;
    this.adaptiveThreshold = o.policy.threshold;
    this.pageSize = positiveInt('pageSize', o.pageSize ?? DEFAULT_FOLLOWER_PAGE, 100_000);
    this.pipelines = positiveInt('pipelines', o.pipelines ?? DEFAULT_PIPELINES, 64);
    this.eventConcurrency = positiveInt('eventConcurrency', o.eventConcurrency ?? DEFAULT_EVENT_CONCURRENCY, 256);
    if (!(o.dormantDays > 0)) throw new RangeError(`dormancy window ${o.dormantDays} days must be above 0`);
    this.dormantMs = Math.round(o.dormantDays * DAY_MS);
    this.metrics = o.metrics ?? NO_METRICS;
    this.clock = o.clock ?? Date.now;
  }

  /** The policy the next event is decided by. */
  get policy(): FanoutPolicy {
    return this.policyNow;
  }

  /** Authors marked pulled (their recent lists merged by every reader who follows them). */
  get pulled(): PulledAuthorRegistry {
    return (this.registry ??= new PulledAuthorRegistry(this.o.authorPosts.redis, this.o.authorPosts.keys, this.clock));
  }

  /** The threshold in effect (an adaptive policy moves it between its floor and its threshold). */
  get threshold(): number {
    return this.policyNow.kind === 'adaptive' ? this.adaptiveThreshold : this.policyNow.threshold;
  }

  /** Change the policy at run time; it applies from the next event on (events in flight keep theirs). */
  setPolicy(policy: FanoutPolicy): void {
    this.policyNow = policy;
    this.adaptiveThreshold = policy.threshold;
    this.lastAdapt = -Infinity;
  }

  /**
   * The handler for EventLog.consume: resolving acknowledges the batch. The stop signal is not
   * passed on: the batch in hand is finished.
   *
   * A batch that fails because Postgres or Redis is unavailable is handled again here, after a
   * backoff, until the outage is over (or the consumer stops: it then stays pending and comes
   * back). Throwing it back to the log would count a delivery each time, and after maxAttempts
   * the log dead-letters the event: a post acknowledged before the outage would never reach its
   * followers' timelines. Any other failure is thrown (redelivered, dead-lettered if it persists).
   */
  handler(): BatchHandler {
    return async (batch, signal) => {
      for (let outages = 1; ; outages++) {
        try {
          await this.handleBatch(batch);
          return;
        } catch (err) {
          if (!isOutage(err) || signal?.aborted) throw err;
          try {
            this.o.onOutage?.(err);
          } catch {
            // reporting must not change the handling
          }
          await sleep(backoffDelay(outages, OUTAGE_RETRY), signal);
          if (signal?.aborted) throw err;
        }
      }
    };
  }

  /**
   * Handle a batch: one author's events in order, up to eventConcurrency authors at once; the
   * outcomes in the batch's order. Throws (after every author's work has settled) when any event
   * failed; the whole batch is then delivered again, which the idempotent writes make harmless.
   */
  async handleBatch(batch: readonly (DeliveredEvent | PostEvent)[]): Promise<EventOutcome[]> {
    const events = batch.map((item) => ('event' in item ? item.event : item));
    // when the log took each first delivery (a redelivery's wait is its failure's, not a pickup), and
    // whether its consumer was waiting for it then (the read that took it had begun)
    const loggedAt = batch.map((item) => ('event' in item && item.deliveries === 1 ? item.loggedAt : undefined));
    const wokeFor = batch.map((item) => 'event' in item && item.loggedAt !== undefined && item.readSince !== undefined && item.loggedAt >= item.readSince);
    const outcomes: EventOutcome[] = new Array(events.length);
    const errors: unknown[] = [];
    // The batch's deletes first, side by side: a post deleted while Redis was down waits behind no
    // fan-out (after an outage the batches are the backlog's), and one created and deleted in the
    // same batch is not fanned out at all. Deletes of other posts commute with the creates.
    const deleted = new Set<PostId>();
    const deletes: number[] = [];
    events.forEach((event, i) => {
      if (event.kind !== 'PostDeleted') return;
      deleted.add(event.postId);
      deletes.push(i);
    });
    await Promise.all(
      deletes.map(async (i) => {
        try {
          outcomes[i] = await this.handle(events[i]);
        } catch (err) {
          errors.push(err);
        }
      }),
    );
    if (errors.length > 0) {
      this.metrics.count('handlerFailures');
      throw errors[0];
    }
    // Then one author's creates (by their index in the batch) in order; authors side by side.
    const byAuthor = new Map<number, number[]>();
    events.forEach((event, i) => {
      if (event.kind === 'PostDeleted') return;
      if (deleted.has(event.postId)) {
        this.metrics.count('eventsCreated');
        outcomes[i] = { ...cancelled(event), threshold: this.threshold };
        return;
      }
      const list = byAuthor.get(event.authorId);
      if (list) list.push(i);
      else byAuthor.set(event.authorId, [i]);
    });
    const groups = [...byAuthor.values()];
    let next = 0;
    const lane = async () => {
      while (next < groups.length && errors.length === 0) {
        for (const i of groups[next++]) {
          const logged = loggedAt[i];
          if (logged !== undefined) {
            const pickup = this.clock() - logged;
            this.metrics.observe('eventPickupMs', pickup);
            if (wokeFor[i]) this.metrics.observe('eventPickupIdleMs', pickup);
          }
          try {
            outcomes[i] = await this.handle(events[i]);
          } catch (err) {
            errors.push(err);
            break;
          }
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.eventConcurrency, groups.length) }, lane));
    if (errors.length > 0) {
      this.metrics.count('handlerFailures');
      throw errors[0];
    }
    return outcomes;
  }

  /** Handle one event. */
  async handle(event: PostEvent): Promise<EventOutcome> {
    const began = performance.now();
    try {
      return event.kind === 'PostCreated' ? await this.created(event) : await this.deleted(event);
    } finally {
      this.metrics.observe('eventMs', performance.now() - began);
    }
  }

  private effectiveThreshold(policy: FanoutPolicy): number {
    if (policy.kind !== 'adaptive') return policy.threshold;
    const now = this.clock();
    if (this.o.backlog && now - this.lastAdapt >= ADAPT_INTERVAL_MS) {
      this.lastAdapt = now;
      const backlog = this.o.backlog();
      if (backlog !== undefined) this.adaptiveThreshold = nextAdaptiveThreshold(policy, this.adaptiveThreshold, backlog);
    }
    return this.adaptiveThreshold;
  }

  private async created(e: PostCreated): Promise<EventOutcome> {
    const began = performance.now();
    const { authorPosts, repo } = this.o;
    const policy = this.policyNow;
    const threshold = this.effectiveThreshold(policy);
    const post: FeedPosition = { id: e.postId, createdAt: e.createdAt };
    const base = { kind: e.kind, postId: e.postId, authorId: e.authorId, threshold };
    this.metrics.count('eventsCreated');

    let followers: number;
    try {
      followers = await repo.followerCount(e.authorId);
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      this.metrics.count('unknownAuthors');
      return { ...base, path: 'skip', followers: 0, visited: 0, ...zeroTotals(), readerCapDropped: 0, backfilled: 0, listAdded: false, lagMs: null };
    }
    const counted = performance.now();
    this.metrics.observe('eventStatementsMs', counted - began);

    if (pullsAuthor(policy, followers, threshold)) {
      const [added] = await Promise.all([authorPosts.add(e.authorId, post), this.pulled.mark(e.authorId, this.clock() + authorPosts.shape.leaseMs)]);
      const listAdded = added.added > 0;
      // A redelivery that found the post already there wrote nothing: no lag sample.
      const lagMs = listAdded || added.state === 'missing' ? this.clock() - e.createdAt : null;
      this.metrics.count('postsPulled');
      if (listAdded) this.metrics.count('listWrites');
      if (lagMs !== null) {
        this.metrics.observe('fanoutLagPullMs', lagMs);
        this.metrics.observe('fanoutFollowerLagPullMs', lagMs, followers);
      }
      return { ...base, path: 'pull', followers, visited: 0, ...zeroTotals(), readerCapDropped: 0, backfilled: 0, listAdded, lagMs };
    }

    // Push. The first page, the list write and the transition check go out together.
    const activeSince = policy.skipDormant ? Math.max(0, this.clock() - this.dormantMs) : undefined;
    const page = (after: number | null) => repo.followersPage(e.authorId, after, this.pageSize, activeSince);
    const firstPage = page(null);
    firstPage.catch(() => {});
    const [added, wasPulled] = await Promise.all([authorPosts.add(e.authorId, post), this.pulled.markOf(e.authorId)]);
    const listAdded = added.added > 0;
    if (listAdded) this.metrics.count('listWrites');

    let entries: FeedPosition[] = [post];
    if (wasPulled !== null) entries = await this.backfill(e.authorId, post);

    const totals = zeroTotals();
    let visited = 0;
    let dropped = 0;
    const salt = policy.kind === 'reader-cap' ? postSalt(e.postId) : 0;
    let pending: Promise<{ ids: number[]; next: number | null }> = firstPage;
    let writing = -1;
    for (;;) {
      const current = await pending;
      if (writing < 0) {
        writing = performance.now();
        this.metrics.observe('eventFirstPageMs', writing - counted);
      }
      const following = current.next !== null ? page(current.next) : null;
      following?.catch(() => {}); // awaited below, unless this page's writes fail first
      visited += current.ids.length;
      let ids = current.ids;
      if (policy.kind === 'reader-cap' && ids.length > 0) {
        ids = await this.readerCap(ids, policy, salt);
        dropped += current.ids.length - ids.length;
      }
      await this.pushIds(ids, entries, totals, e.createdAt);
      if (!following) break;
      pending = following;
    }
    if (wasPulled !== null) {
      // Backfill complete: from now on the pushed timelines hold the author's posts.
      await this.pulled.clear(e.authorId, wasPulled);
      this.metrics.count('pathTransitions');
    }
    const writesMs = performance.now() - writing;
    this.metrics.observe('eventWritesMs', writesMs);

    const wrote = totals.written + totals.pending;
    if (wrote >= LARGE_POST_TIMELINES) this.metrics.observe('largeWritesPerThousandMs', (writesMs * LARGE_WRITES_PER_TIMELINES) / wrote);
    const lagMs = wrote > 0 || totals.duplicates === 0 ? this.clock() - e.createdAt : null;
    const m = this.metrics;
    m.count('postsPushed');
    m.count('timelineWrites', totals.written + totals.pending);
    m.count('timelinesPending', totals.pending);
    m.count('timelineDuplicates', totals.duplicates);
    m.count('timelinesMissing', totals.missing);
    if (policy.skipDormant) m.count('dormantSkipped', Math.max(0, followers - visited));
    m.count('readerCapDropped', dropped);
    if (lagMs !== null) m.observe('fanoutLagPushMs', lagMs);
    return { ...base, path: 'push', followers, visited, ...totals, readerCapDropped: dropped, backfilled: entries.length - 1, listAdded, lagMs };
  }

  /** The author's posts of the lease window (at most a recent list's length) plus this one. */
  private async backfill(authorId: number, post: FeedPosition): Promise<FeedPosition[]> {
    const since = this.clock() - this.o.timelines.shape.leaseMs;
    const recent = await this.o.repo.userPostsPage(authorId, null, this.o.authorPosts.shape.cap);
    const entries: FeedPosition[] = [post];
    for (const p of recent) if (p.id !== post.id && p.createdAt >= since) entries.push({ id: p.id, createdAt: p.createdAt });
    return entries;
  }

  /** Keep a delivery to a reader following more than the cap with probability cap / follows. */
  private async readerCap(ids: number[], policy: FanoutPolicy, salt: number): Promise<number[]> {
    const r = await runStatement<{ id: string; n: string }>(
      this.o.repo.store,
      `SELECT id::text AS id, followee_count::text AS n FROM users WHERE id = ANY ($1::int8[]) AND followee_count > $2`,
      [ids, policy.readerCap],
    );
    if (r.rows.length === 0) return ids;
    const drop = new Set<number>();
    for (const row of r.rows) {
      const reader = Number(row.id);
      if (!keepForReader(policy, Number(row.n), readerDraw(salt, reader))) drop.add(reader);
    }
    return drop.size === 0 ? ids : ids.filter((id) => !drop.has(id));
  }

  /** Write the entries into these followers' timelines: batches of TimelineCache.batchSize, up to
   * `pipelines` round trips in flight. createdAt: the post's, for the per-follower lag. */
  private async pushIds(ids: readonly number[], entries: readonly FeedPosition[], totals: Totals, createdAt: number): Promise<void> {
    const { timelines } = this.o;
    const size = timelines.batchSize;
    const chunks = Math.ceil(ids.length / size);
    if (chunks === 0) return;
    const onBatch = (t: BatchTiming) => {
      this.metrics.observe('batchMs', t.ms);
      this.metrics.count('batches');
      const wrote = t.written + t.pending;
      if (wrote === 0) return;
      const now = this.clock();
      this.metrics.observe('fanoutFollowerLagPushMs', now - createdAt, wrote);
      this.countWrites(wrote, now);
    };
    let next = 0;
    let failed = false;
    const lane = async () => {
      while (next < chunks && !failed) {
        const c = next++;
        const slice = ids.slice(c * size, Math.min(ids.length, (c + 1) * size));
        try {
          const r = await timelines.pushEntries(slice, entries, { onBatch });
          addTotals(totals, r);
        } catch (err) {
          failed = true;
          throw err;
        }
      }
    };
    const lanes = Array.from({ length: Math.min(this.pipelines, chunks) }, lane);
    const settled = await Promise.allSettled(lanes);
    const rejected = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (rejected) throw rejected.reason;
  }

  /**
   * Add a batch's writes to the per-second count in Redis (field: the unix second of `atMs`), the
   * hash's TTL renewed and, once a minute, the fields older than its retention trimmed, in one
   * MULTI. Not awaited: the batch path goes on; a failure goes to onCounterError.
   */
  private countWrites(writes: number, atMs: number): void {
    const { redis, keys } = this.o.timelines;
    const key = keys.key(TIMELINE_WRITES_KEY);
    const second = Math.floor(atMs / 1000);
    const trimmedBefore = this.trimmedMinute;
    let sent: Promise<void>;
    try {
      const m = redis.multi().hincrby(key, String(second), writes).pexpire(key, TIMELINE_WRITES_RETENTION_MS);
      const stale = this.staleFields(second);
      if (stale.length > 0) m.hdel(key, ...stale);
      sent = m.exec().then((replies) => {
        if (!replies) throw new Error(`${key}: transaction discarded`);
        const failed = replies.find(([err]) => err);
        if (failed) throw failed[0];
      });
    } catch (err) {
      sent = Promise.reject(err);
    }
    const tracked: Promise<void> = sent
      .catch((err: unknown) => {
        // Those minutes untrimmed: the next count tries them again.
        this.trimmedMinute = Math.min(this.trimmedMinute, trimmedBefore);
        try {
          this.o.onCounterError?.(err);
        } catch {
          // reporting must not change the handling
        }
      })
      .finally(() => this.counting.delete(tracked));
    this.counting.add(tracked);
  }

  /**
   * The fields of the minutes that left the retention window since this worker last trimmed (at
   * most RETENTION_MINUTES of them, the first time), once per minute. A minute is trimmed by any
   * worker counting within the hour after it left; when none does, nothing was counted for an
   * hour and the whole hash has expired. So the hash stays about an hour long under steady load.
   */
  private staleFields(second: number): string[] {
    const newestStale = Math.floor(second / 60) - RETENTION_MINUTES - 1;
    const from = Math.max(this.trimmedMinute + 1, newestStale - RETENTION_MINUTES + 1);
    if (from > newestStale) return [];
    this.trimmedMinute = newestStale;
    const fields: string[] = [];
    for (let s = from * 60, end = (newestStale + 1) * 60; s < end; s++) fields.push(String(s));
    return fields;
  }

  /** Resolves once every per-second write count sent so far has been answered (or has failed). */
  async countsSettled(): Promise<void> {
    while (this.counting.size > 0) await Promise.all([...this.counting]);
  }

  private async deleted(e: PostDeleted): Promise<EventOutcome> {
    this.metrics.count('eventsDeleted');
    const [removed] = await Promise.all([this.o.authorPosts.remove(e.authorId, [e.postId]), this.o.bodies?.setMany([{ id: e.postId, body: TOMBSTONE }])]);
    if (removed) this.metrics.count('listRemovals', removed);
    return {
      kind: e.kind, postId: e.postId, authorId: e.authorId, threshold: this.threshold, path: 'delete', followers: 0, visited: 0,
      ...zeroTotals(), readerCapDropped: 0, backfilled: 0, listAdded: false, lagMs: null,
    };
  }
}

/** A create whose delete came in the same batch: nothing fanned out. */
function cancelled(e: PostEvent): Omit<EventOutcome, 'threshold'> {
  return { kind: e.kind, postId: e.postId, authorId: e.authorId, path: 'skip', followers: 0, visited: 0, ...zeroTotals(), readerCapDropped: 0, backfilled: 0, listAdded: false, lagMs: null };
}

function positiveInt(what: string, v: number, max: number): number {
  if (!Number.isSafeInteger(v) || v < 1 || v > max) throw new RangeError(`${what} ${v} must be a whole number from 1 to ${max}`);
  return v;
}
