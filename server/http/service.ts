// What the HTTP routes need from the rest of the server: the FeedService interface, and the domain
// errors it throws. The routes own the wire (JSON, cursors, auth, status codes); the service owns
// the feed (Postgres, Redis, fan-out). Nothing here imports the store or the cache, so the routes
// are tested against an in-memory fake and the real service can change beneath them.
//
// Errors a service throws, and what the client gets (server/http/errors.ts is the one mapping):
//   BadRequestError   400   a self-follow, a body the store refuses
//   ForbiddenError    403   someone else's post
//   NotFoundError     404   an unknown user or post
//   DatabaseUnavailableError (server/store/errors.ts), InfrastructureError (server/cache/redis.ts),
//   EventLogUnavailableError (server/events/errors.ts)   503 with Retry-After
//   anything else     500, logged, with a generic message
// Errors of the same names from elsewhere (the store's repository defines BadRequestError,
// NotFoundError and ForbiddenError of its own) are recognised by name, so a service may let them
// through unchanged.
import type { FeedPosition } from '../../core/cursor.js';
import type { PostId } from '../../core/post-id.js';

/** A user id: a non-negative safe integer (bigint in Postgres). */
export type UserId = number;

/** A post as the API returns it. */
export interface PostView {
  id: PostId;
  authorId: UserId;
  text: string;
  /** Unix ms; with the id, the post's FeedPosition. */
  createdAt: number;
  /** The post's body exactly as the cache held it (`{"authorId":…,"text":…,"createdAt":…}`, read by
   * server/feed/hydration.ts readCachedBody): the feed route splices it into its answer after the id. */
  cachedJson?: string;
}

export interface PageRequest {
  /** 1..100, checked by the route. */
  limit: number;
  /** Return only posts strictly older than this position (core/cursor.ts isOlderThan); null for the first page. */
  cursor: FeedPosition | null;
}

export interface FeedPage {
  /** Newest first, at most `limit`. */
  posts: PostView[];
  /** The position to continue after (normally the last post's), or null when there is nothing more. */
  nextCursor: FeedPosition | null;
}

export interface CreatedPost {
  id: PostId;
  /** Unix ms. */
  createdAt: number;
  /**
   * ms from the post's creation to its author's recent list holding it (absent: the list is not
   * cached, or the add failed). A pulled author's post is delivered to every follower from then;
   * the route sends it as `Server-Timing: listed;dur=…` (the replay driver reads it for its probes).
   */
  listedAfterMs?: number;
  /** An earlier request with the same Idempotency-Key made this post: nothing was written now. */
  replayed?: boolean;
}

export interface FollowChange {
  /** True when this call made (follow) or removed (unfollow) the edge; false when it was already so. */
  changed: boolean;
}

export interface Readiness {
  redis: boolean;
  postgres: boolean;
}

/**
 * The feed operations behind the routes. The caller has already authenticated `userId` (the
 * token's subject) and validated the shapes (text 1..280 code points, ids, limit); the service
 * enforces what needs the data: a post's author, a user's existence.
 */
export interface FeedService {
  /**
   * Durable before it resolves. NotFoundError when the user does not exist. With an idempotency key
   * a repeat resolves with the first post (`replayed`), IdempotencyKeyReuseError with another text;
   * without one, OutcomeUnknownError when Postgres was lost after the post's statement went out.
   */
  createPost(userId: UserId, text: string, idempotencyKey?: string): Promise<CreatedPost>;
  /** ForbiddenError when the post is someone else's, NotFoundError when there is no such post. */
  deletePost(userId: UserId, postId: PostId): Promise<unknown>;
  /** Idempotent. NotFoundError for an unknown followee, BadRequestError for oneself. */
  follow(userId: UserId, followeeId: UserId): Promise<FollowChange>;
  /** Idempotent. NotFoundError for an unknown followee. */
  unfollow(userId: UserId, followeeId: UserId): Promise<FollowChange>;
  /** The user's home feed (their timeline merged with the celebrities they follow). */
  homeFeed(userId: UserId, page: PageRequest): Promise<FeedPage>;
  /** One author's posts. NotFoundError when the author does not exist. */
  userPosts(authorId: UserId, page: PageRequest): Promise<FeedPage>;
  /** Whether the stores answer; should not throw (a throw counts as both down). */
  ready(): Promise<Readiness>;
}

export { BadRequestError, ForbiddenError, IdempotencyKeyReuseError, NotFoundError, OutcomeUnknownError } from '../domain-errors.js';
