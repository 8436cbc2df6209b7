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
