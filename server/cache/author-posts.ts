// Authors' recent-post lists, the pull side of hybrid fan-out: a post by an author over the
// threshold goes once into `feed:{u:ID}:recent` instead of into every follower's timeline, and a
// home-feed read merges the lists of the celebrities the reader follows. Each list is a post list
// (post-list.ts): ids scored by creation ms, the newest `length` kept (100), with a lease renewed
// on write and read. A missing list is rebuilt from Postgres like a timeline.
import type { FeedPosition } from '../../core/cursor.js';
import type { FeedSlice } from '../../core/feed-merge.js';
import { authorPostsKey } from '../../core/keys.js';
import type { PostId } from '../../core/post-id.js';
import { DEFAULT_CELEBRITY_LIST_LENGTH } from '../../core/timeline-rules.js';
import { addEntries, type AddReply } from './post-list-add.js';
import {
  checkShape,
  listSize,
  readSlices,
  rebuildList,
  removeEntries,
  type ListShape,
  type RebuildOptions,
  type RebuildResult,
} from './post-list.js';
import type { Keyspace } from './redis.js';
import type { RedisLike } from './redis-like.js';
import { DEFAULT_TIMELINE_LEASE_MS, type UserId } from './timelines.js';

export interface AuthorPostsOptions {
  /** Posts kept per author (default 100). */
  length?: number;
  /** TTL lease (default 7 days, as timelines). */
  leaseMs?: number;
}

export interface SliceReadOptions {
  /** Posts strictly older than this position; null or absent for the newest. */
  cursor?: FeedPosition | null;
  /** Posts wanted per author, at least 1. */
  limit: number;
  /** Renew the leases in the same round trip (default true). */
  renew?: boolean;
}

export class AuthorPostsCache {
  readonly shape: ListShape;

  constructor(
    readonly redis: RedisLike,
    readonly keys: Keyspace,
    options: AuthorPostsOptions = {},
  ) {
    this.shape = checkShape({ cap: options.length ?? DEFAULT_CELEBRITY_LIST_LENGTH, leaseMs: options.leaseMs ?? DEFAULT_TIMELINE_LEASE_MS });
  }

  key(authorId: UserId): string {
    return this.keys.key(authorPostsKey(authorId));
  }

  /** Add a post to a present list (trim, renew the lease); a missing list stays missing. Idempotent. */
  add(authorId: UserId, post: FeedPosition): Promise<AddReply> {
    return addEntries(this.redis, this.key(authorId), this.shape, [post]);
  }

  /** Remove posts (deleted ones). Null when the list is missing. */
  remove(authorId: UserId, postIds: readonly PostId[]): Promise<number | null> {
    return removeEntries(this.redis, this.key(authorId), postIds);
  }

  /** One author's posts older than the cursor, newest first; null when the list is missing. */
  async readSlice(authorId: UserId, options: SliceReadOptions): Promise<FeedSlice<FeedPosition> | null> {
    const [slice] = await this.readSlices([authorId], options);
    return slice;
  }

  /** Several authors' slices in one round trip (the celebrities a reader follows), in the order given. */
  readSlices(authorIds: readonly UserId[], options: SliceReadOptions): Promise<(FeedSlice<FeedPosition> | null)[]> {
    const renewMs = options.renew === false ? undefined : this.shape.leaseMs;
    return readSlices(
      this.redis,
      authorIds.map((id) => ({ key: this.key(id), renewMs })),
      options,
    );
  }

  async exists(authorId: UserId): Promise<boolean> {
    return (await this.redis.exists(this.key(authorId))) === 1;
  }

  /** Rebuild from `load` (the author's recent posts in Postgres); see TimelineCache.rebuild. */
  rebuild(
    authorId: UserId,
    load: () => Promise<readonly FeedPosition[]> | readonly FeedPosition[],
    options: RebuildOptions = {},
  ): Promise<RebuildResult> {
    return rebuildList(this.redis, this.key(authorId), this.shape, load, options);
  }

  /** Posts held (the sentinel not counted), 0 when missing. */
  size(authorId: UserId): Promise<number> {
    return listSize(this.redis, this.key(authorId));
  }
}
