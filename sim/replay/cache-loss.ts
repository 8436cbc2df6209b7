// A cacheLoss event, live: every key of the replay's key space on the first N of the scenario's
// Redis Cluster shards (equal slot ranges, as `redis-cli --cluster create` splits them) vanishes at
// once, as when those shards fail over empty: timelines, recent lists, follows tokens, bodies, the
// registry of pulled authors when its slot is there. The event log is not on the cache cluster and
// stays; so do the workers' metrics and the runtime policy (measurement and configuration, not cache). Readers of the lost timelines rebuild them from
// Postgres on their next read (cold reads), which the result counts.
import type { Redis } from 'ioredis';
import { onLostShard } from './memory-classes.js';

const KEPT = /^feed:(metrics|config):/;

export interface CacheLossFigures {
  keys: number;
  timelines: number;
  seconds: number;
}

/** `keyPrefix` must not be empty (that would be every key of the database); keys under `streamPrefix` (the event log) stay. */
export async function loseShards(redis: Redis, keyPrefix: string, streamPrefix: string, lost: number, shards: number): Promise<CacheLossFigures> {
  if (keyPrefix === '') throw new RangeError('a cache loss needs the key prefix of the replay: an empty one is the whole database');
  const t0 = performance.now();
  let keys = 0;
  let timelines = 0;
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 2000);
    cursor = next;
    const gone = batch.filter((k) => !k.startsWith(streamPrefix) && !KEPT.test(k.slice(keyPrefix.length)) && onLostShard(k, lost, shards));
    if (gone.length > 0) {
      keys += await redis.unlink(...gone);
      for (const k of gone) if (k.endsWith(':home')) timelines++;
    }
  } while (cursor !== '0');
  return { keys, timelines, seconds: (performance.now() - t0) / 1000 };
}

/**
 * An eventLogLoss (or the log's part of a redisFlush): every key under the event log's prefix (its
 * partition streams, with their consumer groups and what they held) deleted at once, the timelines
 * kept. The workers find their group gone and the outbox's unfinished rows are published again
 * (server/store/fanout-ledger.ts).
 */
export async function loseEventLog(redis: Redis, streamPrefix: string): Promise<{ keys: number; seconds: number }> {
  if (streamPrefix === '') throw new RangeError("an event log loss needs the replay's stream prefix: an empty one is the whole database");
  const t0 = performance.now();
  let keys = 0;
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${streamPrefix}*`, 'COUNT', 2000);
    cursor = next;
    if (batch.length > 0) keys += await redis.unlink(...batch);
  } while (cursor !== '0');
  return { keys, seconds: (performance.now() - t0) / 1000 };
}

/** Whether `group` is on every partition stream of the log that exists (a worker has made it again). */
export async function groupPresent(redis: Redis, streamKeys: readonly string[], group: string): Promise<boolean> {
  const p = redis.pipeline();
  for (const k of streamKeys) p.xinfo('GROUPS', k);
  const replies = (await p.exec()) ?? [];
  let seen = 0;
  for (const [err, groups] of replies) {
    if (err) continue; // no such stream: nothing posted there since
    if (!(groups as unknown[][]).some((g) => g[1] === group)) return false;
    seen++;
  }
  return seen > 0;
}
