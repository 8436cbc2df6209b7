// The Redis key schema and where each key lives in a cluster.
// Keys of one user share a hash tag ({u:ID}) so a multi-key command on them stays on one slot.
import clusterKeySlot from 'cluster-key-slot';

export const CLUSTER_SLOTS = 16384;

export function timelineKey(userId: number | string): string {
  return `feed:{u:${userId}}:home`;
}

export function authorPostsKey(authorId: number | string): string {
  return `feed:{u:${authorId}}:recent`;
}

/** A token the API changes whenever the user follows or unfollows someone: API instances holding
 * the user's followee set reload it when the token moved (server/feed/followees.ts). */
export function followsTokenKey(userId: number | string): string {
  return `feed:{u:${userId}}:follows`;
}

/** The registry of authors the fan-out worker pulled within a lease, and its version (one hash
 * tag, so one slot: the scripts of server/cache/pulled-authors.ts touch both). */
export const PULLED_AUTHORS_KEY = 'feed:{pulled}:authors';
export const PULLED_VERSION_KEY = 'feed:{pulled}:version';

export function postBodyKey(postId: string): string {
  return `post:${postId}`;
}

/** The hash the fan-out workers publish their metrics into: worker (consumer base name) -> the
 * JSON of its core/worker-metrics.ts ExportedMetrics, renewed every few seconds. */
export const WORKER_METRICS_KEY = 'feed:metrics:fanout';

/** Timeline writes counted as they land: a hash of unix second (decimal) -> timelines written
 * (written + pending) by the pipelined batches whose replies arrived in that second, all workers.
 * HINCRBY per batch; its TTL renewed to TIMELINE_WRITES_RETENTION_MS with each. */
export const TIMELINE_WRITES_KEY = 'feed:metrics:timeline-writes';
/** How long the per-second timeline writes stay: the TTL, and fields older than it are trimmed. */
export const TIMELINE_WRITES_RETENTION_MS = 3_600_000;

/** The Redis Streams event log's stream of partition p, under the log's stream prefix (each
 * partition its own hash tag, so its stream and dead letters share a slot). */
export function eventStreamKey(streamPrefix: string, partition: number): string {
  return `${streamPrefix}:{p${partition}}:log`;
}

/** The field of a stream entry that holds the post event's JSON. */
export const EVENT_STREAM_FIELD = 'event';

/** The dead-letter stream of partition p. */
export function deadLetterStreamKey(streamPrefix: string, partition: number): string {
  return `${streamPrefix}:{p${partition}}:dead`;
}

/**
 * The cluster slot of a key, honouring the first non-empty {hash tag}: cluster-key-slot, the hash
 * ioredis routes by, so feedlab and its client never disagree. It hashes the key's UTF-8 bytes, as
 * Redis does; the hand-made CRC it replaced hashed UTF-16 code units (wrong past ASCII) and was
 * 3-4x faster (50 against 175-210 ns a key here, 2026-12-04), which only the cluster paths and
 * the population's shard map (1M users: about 0.15 s more) pay. It differs from the
 * specification on one shape no feedlab key has, an empty first tag (foo{}{bar}: it hashes "{bar",
 * Redis the whole key); test/core/keys.test.ts holds every key family to the specification.
 */
export function keySlot(key: string): number {
  return clusterKeySlot(key);
}

/** The shard owning a slot when slots are split into equal contiguous ranges, as redis-cli --cluster create does. */
export function slotShard(slot: number, shards: number): number {
  return Math.min(shards - 1, Math.floor((slot * shards) / CLUSTER_SLOTS));
}

/** The shard holding a user's timeline (and, by the shared hash tag, their recent-post list). */
export function userShard(userId: number, shards: number): number {
  return slotShard(keySlot(timelineKey(userId)), shards);
}
