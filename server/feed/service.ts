// The FeedService of the reference server: Postgres is the truth, Redis the cache, the outbox the
// road to fan-out.
//
// Writes resolve only after Postgres committed (nothing acknowledged is lost), then do their cache
// work best-effort: a post goes into its author's own recent list (so the author sees it at once)
// and into the body cache; a delete leaves a tombstone in the body cache and leaves the author's
// list; a follow backfills the followee's recent posts into the follower's timeline; an unfollow
// removes them. A Redis failure there never fails the request: the post is durable, its outbox row
// reaches the fan-out worker through the relay, and what the cache missed the read path fixes
// (tombstones and Postgres hydration drop deleted posts, the followee filter drops unfollowed
// authors, missing lists are rebuilt). `onCommitted` lets the composition root nudge the relay so
// the event leaves at once instead of at the relay's next poll.
//
// Errors: the repository's BadRequestError / NotFoundError / ForbiddenError (mapped by name to
// 400/404/403), DatabaseUnavailableError (503). Reads fall back to Postgres when Redis is down
// (ReadPath).
import type { FeedPosition } from '../../core/cursor.js';
import type { PostId } from '../../core/post-id.js';
import { AuthorPostsCache } from '../cache/author-posts.js';
import { PostBodyCache } from '../cache/post-bodies.js';
import type { Keyspace } from '../cache/redis.js';
import { pingAll, type RedisLike } from '../cache/redis-like.js';
import { RebuildCoordinator } from '../cache/single-flight.js';
import { TimelineCache } from '../cache/timelines.js';
import type { MetricsRegistry } from '../http/metrics.js';
import type { CreatedPost, FeedPage, FeedService, FollowChange, PageRequest, Readiness, UserId } from '../http/service.js';
import { runStatement, type DeletedPost, type FeedRepository, type PostIdSource } from '../store/repository.js';
import { cacheReady, isCacheUnavailable } from './faults.js';
import { viewOf } from './hydration.js';
import { ReadPath } from './read-path.js';
import { withTimeout } from '../timeout.js';

export const DEFAULT_READY_TIMEOUT_MS = 1_000;

export interface FeedServiceOptions {
  repo: FeedRepository;
  timelines: TimelineCache;
  authorPosts: AuthorPostsCache;
  bodies: PostBodyCache<unknown>;
  rebuilds: RebuildCoordinator;
  /** Mints post ids: a PostIdGenerator whose worker id is unique among the live API instances. */
  ids: PostIdSource;
  /** Authors with more followers than this are pulled (the worker's threshold). */
  threshold: number;
  /** The dormancy window, ms (the worker's). */
  dormantMs: number;
  followeeTtlMs?: number;
  /** How often the copy of the registry of pulled authors is checked (default 1 s). */
  pulledPollMs?: number;
  touchEveryMs?: number;
  /** Bound on each probe of ready() (default 1 s). */
  readyTimeoutMs?: number;
  metrics?: MetricsRegistry;
  clock?: () => number;
  /** Called after a post or a delete committed (nudge the outbox relay). */
  onCommitted?: () => void;
  /** Survivable trouble, one line. */
  onWarning?: (line: string) => void;
}


export class RedisFeedService implements FeedService {
  readonly reads: ReadPath;
  readonly redis: RedisLike;
  private readonly clock: () => number;
  private readonly readyTimeoutMs: number;

  constructor(private readonly o: FeedServiceOptions) {
    this.reads = new ReadPath(o);
    this.redis = o.timelines.redis;
    this.clock = o.clock ?? Date.now;
    this.readyTimeoutMs = o.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  }

  async createPost(userId: UserId, text: string, idempotencyKey?: string): Promise<CreatedPost> {
    // the post's id (and createdAt) is stamped at the start of the repository's call
    const began = performance.now();
    const created = await this.o.repo.createPost(userId, text, this.o.ids, idempotencyKey);
    // a repeat of a post deleted since: its first answer, and nothing cached again
    if (created.deleted) return { id: created.id, createdAt: created.createdAt, replayed: true };
    this.committed();
    // Visible to its author at once: into their own recent list (merged into their home feed) if
    // it exists; if not, their next read rebuilds it from Postgres, where the post already is. The
    // list is also a pulled author's, read by every follower: from then the post is delivered. A
    // replayed post is added again (the first answer may have been lost before its add) but not
    // timed: it was not created now.
    let listedAfterMs: number | undefined;
    await this.bestEffort('caching the new post', () =>
      Promise.all([
        this.o.authorPosts.add(userId, { id: created.id, createdAt: created.createdAt }).then((r) => {
          if (r.state !== 'missing' && !created.replayed) listedAfterMs = performance.now() - began;
        }),
        this.reads.hydrator.remember([{ id: created.id, authorId: userId, body: text, createdAt: created.createdAt, deleted: false }]),
      ]),
    );
    return { id: created.id, createdAt: created.createdAt, listedAfterMs, ...(created.replayed ? { replayed: true } : {}) };
  }

  async deletePost(userId: UserId, postId: PostId): Promise<DeletedPost> {
    const deleted = await this.o.repo.deletePost(postId, userId);
    this.committed();
    // Followers' timelines keep the entry until it ages out; reads drop it on the tombstone. A
    // tombstone Redis did not take is held and written once it answers (hydration.ts).
    const tombstoned = await this.bestEffort('uncaching the deleted post', () =>
      Promise.all([this.reads.hydrator.forget(postId), this.o.authorPosts.remove(userId, [postId])]),
    );
    if (!tombstoned) this.reads.hydrator.deletedWhileDown(postId);
    return deleted;
  }

  async follow(userId: UserId, followeeId: UserId): Promise<FollowChange> {
    const result = await this.o.repo.follow(userId, followeeId);
    await this.bestEffort('the follows token', () => this.reads.followees.followsChanged(userId));
    // A pushed author's recent posts go into the follower's timeline (a pulled author's list is
    // merged on read). Done on every call, so a retried follow repairs a backfill that failed.
    if (result.followeeFollowerCount <= this.reads.threshold) {
      await this.bestEffort('the follow backfill', async () => {
        // No existence check: add() skips a missing timeline but feeds the pending set of a
        // rebuild under way, whose Postgres snapshot may predate this follow.
        const posts = await this.recentPostsOf(followeeId);
        if (posts.length > 0) await this.o.timelines.add(userId, posts);
      });
    }
    return { changed: result.changed };
  }

  async unfollow(userId: UserId, followeeId: UserId): Promise<FollowChange> {
    const result = await this.o.repo.unfollow(userId, followeeId);
    await this.bestEffort('the follows token', () => this.reads.followees.followsChanged(userId));
    // Whatever of theirs the timeline holds is among their newest `cap` posts. Entries pushed while
    // this runs are dropped on read by the followee filter.
    await this.bestEffort('the unfollow cleanup', async () => {
      if (!(await this.o.timelines.exists(userId))) return;
      const posts = await this.o.repo.userPostsPage(followeeId, null, this.o.timelines.shape.cap);
      if (posts.length > 0) await this.o.timelines.removeEntries(userId, posts.map((p) => p.id));
    });
    return { changed: result.changed };
  }

  homeFeed(userId: UserId, page: PageRequest): Promise<FeedPage> {
    return this.reads.homeFeed(userId, page);
  }

  /** One author's posts from Postgres, by cursor (every post, not only the cached recent ones). */
  async userPosts(authorId: UserId, page: PageRequest): Promise<FeedPage> {
    const rows = await this.o.repo.userPostsPage(authorId, page.cursor, page.limit + 1);
    const posts = rows.slice(0, page.limit).map(viewOf);
    const last = posts[posts.length - 1];
    return { posts, nextCursor: rows.length > page.limit && last ? { createdAt: last.createdAt, id: last.id } : null };
  }

  /** Redis PING (every master of a cluster) and Postgres SELECT 1, each bounded by readyTimeoutMs; never throws. */
  async ready(): Promise<Readiness> {
    const ms = this.readyTimeoutMs;
    const [redis, postgres] = await Promise.all([
      withTimeout(pingAll(this.redis), ms).then(
        (ok) => ok,
        () => false,
      ),
      withTimeout(runStatement(this.o.repo.store, 'SELECT 1', [], ms), ms).then(
        () => true,
        () => false,
      ),
    ]);
    return { redis, postgres };
  }

  /** The author's posts a follow backfills: within the lease window, at most a timeline's cap. */
  private async recentPostsOf(authorId: number): Promise<FeedPosition[]> {
    const since = this.clock() - this.o.timelines.shape.leaseMs;
    const rows = await this.o.repo.userPostsPage(authorId, null, this.o.timelines.shape.cap);
    return rows.filter((r) => r.createdAt >= since).map((r) => ({ id: r.id, createdAt: r.createdAt }));
  }

  private committed(): void {
    try {
      this.o.onCommitted?.();
    } catch {
      // a nudge must not fail a committed write
    }
  }

  /**
   * Cache work after a commit: skipped while Redis is down, and never failing the request, whose
   * write is already durable (a client retrying a failed POST would post twice). A failure is
   * reported; an outage as such, anything else as unexpected.
   */
  /** The cache work, if Redis is up; whether it was done. */
  private async bestEffort(what: string, work: () => Promise<unknown>): Promise<boolean> {
    if (!cacheReady(this.redis)) return false;
    try {
      await work();
      return true;
    } catch (err) {
      const text = err instanceof Error ? err.message : String(err);
      const outage = isCacheUnavailable(err, this.redis) || (err instanceof Error && err.name === 'DatabaseUnavailableError');
      this.o.onWarning?.(`${what} failed${outage ? '' : ' unexpectedly'} (${text}); the read path makes up for it`);
      return false;
    }
  }
}

export interface FeedServiceSettings {
  repo: FeedRepository;
  /** The server's cache connection (server/cache/redis.ts connectRedis, or cluster.ts
   * connectRedisCluster: no offline queue). */
  redis: RedisLike;
  keys: Keyspace;
  ids: PostIdSource;
  threshold: number;
  timelineCap: number;
  /** Posts kept per author's recent list. */
  listLength: number;
  leaseMs: number;
  dormantMs: number;
  /** Longest wait for another process's rebuild of a list before answering from Postgres (default 5 s). */
  rebuildWaitMs?: number;
  followeeTtlMs?: number;
  pulledPollMs?: number;
  touchEveryMs?: number;
  readyTimeoutMs?: number;
  metrics?: MetricsRegistry;
  clock?: () => number;
  onCommitted?: () => void;
  onWarning?: (line: string) => void;
}

/** The service over one Redis connection and key space, its caches shaped by the settings. */
export function createFeedService(s: FeedServiceSettings): RedisFeedService {
  return new RedisFeedService({
    ...s,
    timelines: new TimelineCache(s.redis, s.keys, { cap: s.timelineCap, leaseMs: s.leaseMs }),
    authorPosts: new AuthorPostsCache(s.redis, s.keys, { length: s.listLength, leaseMs: s.leaseMs }),
    bodies: new PostBodyCache(s.redis, s.keys),
    rebuilds: new RebuildCoordinator(s.redis, s.keys, { waitMs: s.rebuildWaitMs ?? 5_000 }),
  });
}
