// Post bodies cached as JSON strings at `post:ID`, each with a TTL. A feed page is hydrated with
// one MGET; the ids it misses (expired, evicted, never cached) go to Postgres, and the caller
// writes what it found back with setMany. On a Redis Cluster the keys spread over the slots (no
// hash tag, on purpose: bodies are most of the memory), so the MGET is split into one per slot,
// issued concurrently (slots.ts), and writes go as one pipeline per node (node-pipelines.ts).
import { postBodyKey } from '../../core/keys.js';
import type { PostId } from '../../core/post-id.js';
import { pipelinePerNode } from './node-pipelines.js';
import type { Keyspace } from './redis.js';
import type { RedisLike } from './redis-like.js';
import { mgetBySlot, unlinkBySlot } from './slots.js';

/** A body stays cached this long after it was written (a feed's posts are read within hours). */
export const DEFAULT_POST_BODY_TTL_MS = 24 * 3600 * 1000;

export interface Hydration<T> {
  /** Cached bodies by id, in the order the ids were asked for. */
  hits: Map<PostId, T>;
  /** Ids not cached (or cached unreadably), in the order asked, each once. */
  missing: PostId[];
}

export interface PostBodyCacheOptions {
  /** TTL of each body written (default 24 h). */
  ttlMs?: number;
}

export class PostBodyCache<T = unknown> {
  readonly ttlMs: number;

  constructor(
    readonly redis: RedisLike,
    readonly keys: Keyspace,
    options: PostBodyCacheOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? DEFAULT_POST_BODY_TTL_MS;
    if (!Number.isInteger(this.ttlMs) || this.ttlMs < 1) throw new RangeError(`post body TTL ${this.ttlMs} ms must be a positive integer`);
  }

  key(postId: PostId): string {
    return this.keys.key(postBodyKey(postId));
  }

  /** The cached bodies of `ids` as cached (JSON text, unparsed) in one MGET (one per slot on a cluster), and the ids not cached. */
  async getTexts(ids: readonly PostId[]): Promise<Hydration<string>> {
    const unique = [...new Set(ids)];
    const hits = new Map<PostId, string>();
    const missing: PostId[] = [];
    if (unique.length === 0) return { hits, missing };
    const values = await mgetBySlot(this.redis, unique.map((id) => this.key(id)));
    for (let i = 0; i < unique.length; i++) {
      const text = values[i];
      if (text === null) missing.push(unique[i]);
      else hits.set(unique[i], text);
    }
    return { hits, missing };
  }

  /** The cached bodies of `ids`, parsed, and the ids to fetch from Postgres (a value that is not JSON counts as missing). */
  async getMany(ids: readonly PostId[]): Promise<Hydration<T>> {
    const { hits: texts, missing } = await this.getTexts(ids);
    const hits = new Map<PostId, T>();
    for (const [id, text] of texts) {
      try {
        hits.set(id, JSON.parse(text) as T);
      } catch {
        // Not ours or truncated: treat as a miss, so the fallback overwrites it.
        missing.push(id);
      }
    }
    return { hits, missing };
  }

  /** Cache bodies (after a Postgres fallback, or a new post), each with the TTL, in one round trip. */
  async setMany(bodies: ReadonlyArray<{ id: PostId; body: T }>, ttlMs = this.ttlMs): Promise<void> {
    if (bodies.length === 0) return;
    const replies = await pipelinePerNode(
      this.redis,
      bodies.length,
      (i) => this.key(bodies[i].id),
      (p, i) => p.set(this.key(bodies[i].id), JSON.stringify(bodies[i].body), 'PX', ttlMs),
    );
    const failed = replies.find((r) => r[0] !== null);
    if (failed) throw failed[0];
  }

  /** Forget bodies (a deleted post). Returns how many were cached. */
  async delete(ids: readonly PostId[]): Promise<number> {
    if (ids.length === 0) return 0;
    return unlinkBySlot(this.redis, ids.map((id) => this.key(id)));
  }
}
