// The Redis key schema and where each key lives in a cluster.
// Keys of one user share a hash tag ({u:ID}) so a multi-key command on them stays on one slot.

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

// CRC16-CCITT (XMODEM), the Redis Cluster key hash.
const CRC16_TABLE = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let j = 0; j < 8; j++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff;
    t[i] = c;
  }
  return t;
})();

export function crc16(s: string): number {
  let crc = 0;
  for (let i = 0; i < s.length; i++) crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >> 8) ^ s.charCodeAt(i)) & 0xff];
  return crc;
}

/** The cluster slot of a key, honouring the first non-empty {hash tag}. */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) return crc16(key.slice(open + 1, close)) % CLUSTER_SLOTS;
  }
  return crc16(key) % CLUSTER_SLOTS;
}

/** The shard owning a slot when slots are split into equal contiguous ranges, as redis-cli --cluster create does. */
export function slotShard(slot: number, shards: number): number {
  return Math.min(shards - 1, Math.floor((slot * shards) / CLUSTER_SLOTS));
}

/** The shard holding a user's timeline (and, by the shared hash tag, their recent-post list). */
export function userShard(userId: number, shards: number): number {
  return slotShard(keySlot(timelineKey(userId)), shards);
}
