// Home timelines in Redis: the fan-out worker's writes and the read path's pages.
//
// A timeline is a post list (post-list.ts) at `feed:{u:ID}:home`: post ids scored by creation ms,
// the newest `cap` kept (800), with a lease (7 days) renewed on every write and read. Fan-out
// pushes one post into many followers' timelines through a Lua script (EVALSHA) writing
// TIMELINES_PER_ADD_CALL followers' timelines a call on a standalone Redis (one slot's on a
// cluster; core/redis-pipeline.ts, post-list-add.ts), pipelined
// `batchSize` followers per round trip; the script writes only into a timeline that
// exists (or into the pending set of a rebuild under way), so a missing timeline stays missing
// and is rebuilt whole from Postgres on its owner's next read. ZADD NX makes a redelivered event
// a no-op.
import { DEFAULT_FANOUT_BATCH } from '../../core/fanout-worker.js';
import type { FeedPosition } from '../../core/cursor.js';
import type { FeedSlice } from '../../core/feed-merge.js';
import { timelineKey } from '../../core/keys.js';
import type { PostId } from '../../core/post-id.js';
import { DEFAULT_LEASE_DAYS, DEFAULT_TIMELINE_CAP, SECONDS_PER_DAY } from '../../core/timeline-rules.js';
import { addArgs, addEntries, addToLists, type AddReply } from './post-list-add.js';
import {
  checkShape,
  listSize,
  readSlices,
  rebuildList,
  removeEntries,
  renewLease,
  type ListShape,
  type RebuildOptions,
  type RebuildResult,
} from './post-list.js';
import type { Keyspace } from './redis.js';
import type { RedisLike } from './redis-like.js';

/** Followers per pipeline (the scenario format's batchSize; Mastodon enqueues 1,000 at a time). */
export { DEFAULT_FANOUT_BATCH };
export const DEFAULT_TIMELINE_LEASE_MS = DEFAULT_LEASE_DAYS * SECONDS_PER_DAY * 1000;

export type UserId = number | string;

export interface TimelineCacheOptions {
  /** Entries per timeline (default 800). */
  cap?: number;
  /** TTL lease (default 7 days). */
  leaseMs?: number;
  /** Followers per pipelined round trip (default 1,000). */
  batchSize?: number;
}

export interface PushResult {
  /** Followers pushed to. */
  timelines: number;
  /** Timelines the post was added to. */
  written: number;
  /** Timelines that already held the post (a redelivery): nothing written. */
  duplicates: number;
  /** Missing timelines with a rebuild under way: the post waits in its pending set. */
  pending: number;
  /** Missing timelines: nothing written (the next read rebuilds them). */
  missing: number;
  /** Pipelined round trips. */
  batches: number;
}

export interface BatchTiming {
  /** 0-based batch number. */
  batch: number;
  /** Followers in the batch. */
  followers: number;
  /** Of them: timelines the batch added the post to, and pending sets of rebuilds it added it to. */
  written: number;
  pending: number;
  /** Wall time of the round trip, ms. */
  ms: number;
}

export interface PushOptions {
  /** Called after each batch (per-batch timing for metrics). */
  onBatch?: (timing: BatchTiming) => void;
}

export interface PageOptions {
  /** Entries strictly older than this position; null or absent for the newest. */
  cursor?: FeedPosition | null;
  /** Entries wanted, at least 1. */
  limit: number;
  /** Renew the lease in the same round trip (default true: reading renews the lease). */
  renew?: boolean;
}

export class TimelineCache {
  readonly shape: ListShape;
  readonly batchSize: number;

  constructor(
    readonly redis: RedisLike,
    readonly keys: Keyspace,
    options: TimelineCacheOptions = {},
  ) {
    this.shape = checkShape({ cap: options.cap ?? DEFAULT_TIMELINE_CAP, leaseMs: options.leaseMs ?? DEFAULT_TIMELINE_LEASE_MS });
    this.batchSize = options.batchSize ?? DEFAULT_FANOUT_BATCH;
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1) throw new RangeError(`fan-out batch size ${this.batchSize} must be a positive integer`);
  }

  /** The Redis key of a user's timeline. */
  key(userId: UserId): string {
    return this.keys.key(timelineKey(userId));
  }

  /**
   * Push one post into the timelines of `followerIds` (dormant followers already left out), in
   * pipelined batches. Throws on the first failed write, after its batch; the event is then
   * redelivered and, the script being idempotent, re-pushed whole without writing anything twice.
   */
  push(followerIds: ArrayLike<UserId>, post: FeedPosition, options: PushOptions = {}): Promise<PushResult> {
    return this.pushEntries(followerIds, [post], options);
  }

  /** Push several posts at once (an author returning from pull to push carries its recent ones). */
  async pushEntries(followerIds: ArrayLike<UserId>, entries: readonly FeedPosition[], options: PushOptions = {}): Promise<PushResult> {
    const args = addArgs(this.shape, entries); // validates the posts; shared by every follower
    const what = entries.length === 1 ? `push of post ${entries[0].id}` : `backfill of ${entries.length} posts`;
    const result: PushResult = { timelines: followerIds.length, written: 0, duplicates: 0, pending: 0, missing: 0, batches: 0 };
    for (let start = 0; start < followerIds.length; start += this.batchSize) {
      const end = Math.min(start + this.batchSize, followerIds.length);
      const keys: string[] = [];
      for (let i = start; i < end; i++) keys.push(this.key(followerIds[i]));
      const began = performance.now();
      const replies = await addToLists(this.redis, keys, args);
      const failed = replies.filter((r) => r[0] !== null);
      if (failed.length > 0) {
        throw new Error(`${what}: ${failed.length} of ${keys.length} timeline writes failed (${failed[0][0]?.message})`, {
          cause: failed[0][0],
        });
      }
      const before = { written: result.written, pending: result.pending };
      for (const [, reply] of replies) {
        const { state, added } = reply!;
        if (state === 'missing') result.missing++;
        else if (added === 0) result.duplicates++;
        else if (state === 'pending') result.pending++;
        else result.written++;
      }
      options.onBatch?.({
        batch: result.batches,
        followers: end - start,
        written: result.written - before.written,
        pending: result.pending - before.pending,
        ms: performance.now() - began,
      });
      result.batches++;
    }
    return result;
  }

  /** Add posts to one present timeline (a follow's backfill), trimmed to the cap; a missing one stays missing. */
  add(userId: UserId, entries: readonly FeedPosition[]): Promise<AddReply> {
    return addEntries(this.redis, this.key(userId), this.shape, entries);
  }

  /** A page of the timeline: entries older than the cursor, newest first. Null when the timeline is missing. */
  async readPage(userId: UserId, options: PageOptions): Promise<FeedSlice<FeedPosition> | null> {
    const renewMs = options.renew === false ? undefined : this.shape.leaseMs;
    const [slice] = await readSlices(this.redis, [{ key: this.key(userId), renewMs }], options);
    return slice;
  }

  async exists(userId: UserId): Promise<boolean> {
    return (await this.redis.exists(this.key(userId))) === 1;
  }

  /** Renew the lease; false when the timeline is missing. */
  renewLease(userId: UserId): Promise<boolean> {
    return renewLease(this.redis, this.key(userId), this.shape.leaseMs);
  }

  /**
   * Rebuild a timeline from `load` (recent posts of the followed non-celebrity authors): the write
   * is one atomic script (replace the set, merge the posts pushed during the load, trim, lease;
   * the empty sentinel when there is nothing). Wrap in RebuildCoordinator.ensure for single-flight.
   */
  rebuild(
    userId: UserId,
    load: () => Promise<readonly FeedPosition[]> | readonly FeedPosition[],
    options: RebuildOptions = {},
  ): Promise<RebuildResult> {
    return rebuildList(this.redis, this.key(userId), this.shape, load, options);
  }

  /** Remove posts from a timeline (an unfollowed author's, a deleted post). Null when the timeline is missing. */
  removeEntries(userId: UserId, postIds: readonly PostId[]): Promise<number | null> {
    return removeEntries(this.redis, this.key(userId), postIds);
  }

  /** Entries held (the sentinel not counted), 0 when missing. */
  size(userId: UserId): Promise<number> {
    return listSize(this.redis, this.key(userId));
  }

  /** Drop a timeline (a dormant user's); the next read rebuilds it. */
  async drop(userId: UserId): Promise<boolean> {
    return (await this.redis.unlink(this.key(userId))) === 1;
  }
}
