// Post bodies for a feed page: one MGET of the cached bodies (one per slot on a Redis Cluster,
// concurrently: server/cache/slots.ts), one Postgres query for the misses, and the misses written
// back to the cache.
//
// The cache holds, at `post:ID`, either the post (`{"authorId","text","createdAt"}`) or a tombstone
// (`{"deleted":true}`) for a deleted one, each with the body TTL (24 h). Deleting a post writes its
// tombstone over whatever is cached; a write-back only ever creates a key (SET NX). So a reader that
// fetched a post from Postgres just before it was deleted cannot put the live body back over the
// tombstone: the stale write-back finds the key taken and does nothing, and a deleted post never
// comes back for the body TTL. The fan-out worker writes the tombstone again on PostDeleted (it
// never removes the key), so a delete made while the API's Redis write failed is covered too.
//
// A delete whose tombstone could not be written (Redis down) would show again once Redis is back,
// the live body still cached, until the worker's PostDeleted arrives (behind the outage's backlog:
// more than a minute, found by the fault probe). So this process keeps such ids (`deletedMeanwhile`),
// drops them from every page it hydrates, and writes their tombstones as soon as Redis answers.
import type { PostId } from '../../core/post-id.js';
import { pipelinePerNode } from '../cache/node-pipelines.js';
import type { PostBodyCache } from '../cache/post-bodies.js';
import type { RedisLike } from '../cache/redis-like.js';
import type { Counter } from '../http/metrics.js';
import type { PostView } from '../http/service.js';
import type { FeedRepository, StoredPost } from '../store/repository.js';

/** What a body key holds. */
export type CachedBody = { authorId: number; text: string; createdAt: number } | { deleted: true };

/** A deleted post's cached value: it keeps stale write-backs (SET NX) out for the body TTL. */
export const TOMBSTONE: CachedBody = { deleted: true };

/** A page entry's verdict: the post to show, or null to drop it (deleted, or no such post). */
export type Verdict = PostView | null;

/** A tombstone as cached. */
const TOMBSTONE_TEXT = JSON.stringify(TOMBSTONE);
/** A live post as remember() caches it (JSON.stringify of authorId, text, createdAt in that order):
 * numbers without leading zeros (nor -0), the text a non-empty JSON string with the escapes
 * JSON.stringify may write (a text with escapes is spliced only when they are exactly its, below),
 * so that the spliced bytes are the serializer's. Anything else is parsed. */
const CACHED_POST = /^\{"authorId":(0|[1-9]\d{0,15}),"text":("(?:[^"\\\u0000-\u001f]|\\(?:["\\bfnrt]|u00[01][0-9a-f]|ud[89a-f][0-9a-f]{2}))+"),"createdAt":(0|-?[1-9]\d{0,15})\}$/;

/**
 * The cached text as a verdict, or undefined when it is not one of ours (then it counts as a miss).
 * A post in remember()'s form is read without a parse (its text sliced out of the JSON string when it
 * holds no escape) and keeps the cached text, which the feed route splices into its answer
 * (server/http/app.ts) instead of serializing the post again.
 */
export function readCachedBody(id: PostId, cached: string): Verdict | undefined {
  if (cached === TOMBSTONE_TEXT) return null;
  const m = CACHED_POST.exec(cached);
  if (m === null) {
    let value: unknown;
    try {
      value = JSON.parse(cached);
    } catch {
      return undefined;
    }
    return decodeBody(id, value);
  }
  const authorId = Number(m[1]);
  const createdAt = Number(m[3]);
  if (!Number.isSafeInteger(authorId) || !Number.isSafeInteger(createdAt)) return undefined;
  const literal = m[2];
  if (!literal.includes('\\')) return { id, authorId, text: literal.slice(1, -1), createdAt, cachedJson: cached };
  // with escapes: spliced only when they are JSON.stringify's own (not \u000a for \n, nor an escaped pair)
  const text = JSON.parse(literal) as string;
  return JSON.stringify(text) === literal ? { id, authorId, text, createdAt, cachedJson: cached } : { id, authorId, text, createdAt };
}

/** The cached value, parsed, as a verdict, or undefined when it is not one of ours (then it counts as a miss). */
export function decodeBody(id: PostId, value: unknown): Verdict | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (v.deleted === true) return null;
  const { authorId, text, createdAt } = v;
  if (typeof authorId !== 'number' || !Number.isSafeInteger(authorId) || authorId < 0) return undefined;
  if (typeof text !== 'string' || text.length === 0) return undefined;
  if (typeof createdAt !== 'number' || !Number.isSafeInteger(createdAt)) return undefined;
  return { id, authorId, text, createdAt };
}

export function viewOf(post: StoredPost): PostView {
  return { id: post.id, authorId: post.authorId, text: post.body, createdAt: post.createdAt };
}

export interface HydratorOptions {
  repo: FeedRepository;
  bodies: PostBodyCache<unknown>;
  /** Counts cache hits and misses (label result=hit|miss). */
  lookups?: Counter;
  /** Errors of background write-backs (they never fail a read). */
  onError?: (err: unknown) => void;
}

/** Deleted posts held while their tombstones wait for Redis; beyond this the oldest are left to the worker's PostDeleted. */
const MAX_DELETED_MEANWHILE = 100_000;
/** How often the held tombstones are tried while Redis is down, ms. */
export const TOMBSTONE_RETRY_MS = 250;

export class PostHydrator {
  readonly redis: RedisLike;
  /** Deleted posts whose tombstone is not written yet, in insertion order. */
  private readonly deletedMeanwhile = new Set<PostId>();
  private retry: NodeJS.Timeout | null = null;
  private writing = false;

  constructor(private readonly o: HydratorOptions) {
    this.redis = o.bodies.redis;
  }

  /**
   * A post deleted while its tombstone could not be written: dropped from every page hydrated here
   * from now on, and its tombstone written once Redis answers (tried every TOMBSTONE_RETRY_MS).
   */
  deletedWhileDown(id: PostId): void {
    this.deletedMeanwhile.add(id);
    if (this.deletedMeanwhile.size > MAX_DELETED_MEANWHILE) this.deletedMeanwhile.delete(this.deletedMeanwhile.values().next().value!);
    if (this.retry) return;
    this.retry = setInterval(() => void this.writeHeldTombstones(), TOMBSTONE_RETRY_MS);
    this.retry.unref();
  }

  /** Stops the retry timer (at shutdown: the held tombstones are then the worker's PostDeleted's to write). */
  close(): void {
    if (this.retry) clearInterval(this.retry);
    this.retry = null;
  }

  /** Deleted posts still waiting for their tombstones (for tests and status). */
  get heldTombstones(): number {
    return this.deletedMeanwhile.size;
  }

  /** Writes the held tombstones (one pipeline per node); those written are let go. Never rejects. */
  async writeHeldTombstones(): Promise<void> {
    if (this.writing || this.redis.status !== 'ready') return;
    this.writing = true;
    try {
      const ids = [...this.deletedMeanwhile];
      const replies = await pipelinePerNode(
        this.redis,
        ids.length,
        (i) => this.o.bodies.key(ids[i]),
        (p, i) => p.set(this.o.bodies.key(ids[i]), JSON.stringify(TOMBSTONE), 'PX', this.o.bodies.ttlMs),
      );
      replies.forEach(([err], i) => {
        if (err === null) this.deletedMeanwhile.delete(ids[i]);
      });
    } catch (err) {
      this.o.onError?.(err);
    } finally {
      this.writing = false;
      if (this.deletedMeanwhile.size === 0 && this.retry) {
        clearInterval(this.retry);
        this.retry = null;
      }
    }
  }

  /** Verdicts for these ids: cached bodies (one MGET), then Postgres for the misses (one query),
   * which are written back in the background. */
  async hydrate(ids: readonly PostId[]): Promise<Map<PostId, Verdict>> {
    const out = new Map<PostId, Verdict>();
    if (ids.length === 0) return out;
    const { hits, missing } = await this.o.bodies.getTexts(ids);
    for (const [id, cached] of hits) {
      const verdict = readCachedBody(id, cached);
      if (verdict === undefined) missing.push(id);
      else out.set(id, verdict);
    }
    this.o.lookups?.inc({ result: 'hit' }, out.size);
    // deleted here while Redis was down: the cache may still hold the live body
    if (this.deletedMeanwhile.size > 0) for (const [id] of out) if (this.deletedMeanwhile.has(id)) out.set(id, null);
    if (missing.length === 0) return out;
    this.o.lookups?.inc({ result: 'miss' }, missing.length);
    const rows = await this.o.repo.getPosts(missing);
    for (const id of missing) {
      const row = rows.get(id);
      out.set(id, row && !row.deleted ? viewOf(row) : null);
    }
    if (rows.size > 0) {
      this.remember([...rows.values()]).catch((err) => this.o.onError?.(err));
    }
    return out;
  }

  /** Cache these posts where nothing is cached yet (a deleted one as its tombstone). One round trip (one pipeline per node on a cluster). */
  async remember(posts: readonly StoredPost[]): Promise<void> {
    if (posts.length === 0) return;
    const replies = await pipelinePerNode(
      this.redis,
      posts.length,
      (i) => this.o.bodies.key(posts[i].id),
      (p, i) => {
        const post = posts[i];
        const value: CachedBody = post.deleted ? { deleted: true } : { authorId: post.authorId, text: post.body, createdAt: post.createdAt };
        p.set(this.o.bodies.key(post.id), JSON.stringify(value), 'PX', this.o.bodies.ttlMs, 'NX');
      },
    );
    const failed = replies.find(([err]) => err !== null);
    if (failed) throw failed[0];
  }

  /** A deleted post: its tombstone replaces whatever is cached. */
  async forget(id: PostId): Promise<void> {
    await this.redis.set(this.o.bodies.key(id), JSON.stringify(TOMBSTONE), 'PX', this.o.bodies.ttlMs);
  }
}
