// Multi-key commands over keys of many slots. A Redis Cluster refuses a multi-key command whose
// keys hash to different slots (CROSSSLOT), and post bodies (`post:ID`, no hash tag, on purpose)
// and the follows tokens of many readers (one hash tag each) spread over the cluster. On a
// cluster, MGET and UNLINK are therefore split into one command per slot, issued concurrently (the
// client routes each to its slot's master, and those to one node share its connection), and the
// replies are put back in the order asked. A standalone Redis keeps one command for the lot.
import { keySlot } from '../../core/keys.js';
import { holdWritesIfBusy } from './busy-writes.js';
import { isCluster, type RedisLike } from './redis-like.js';

/** Keys per MGET at most: a feed page never comes near; a bulk read of many keys can. */
export const MGET_CHUNK = 1_000;

/** Indices of `keys` grouped by cluster slot (core/keys keySlot, which honours hash tags). */
export function groupBySlot(keys: readonly string[]): Map<number, number[]> {
  const groups = new Map<number, number[]>();
  for (let i = 0; i < keys.length; i++) {
    const slot = keySlot(keys[i]);
    const group = groups.get(slot);
    if (group) group.push(i);
    else groups.set(slot, [i]);
  }
  return groups;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** MGET in the order asked: one command on a standalone Redis (chunks of MGET_CHUNK in one pipeline
 * beyond that), one per slot and chunk on a cluster, concurrently. */
export async function mgetBySlot(redis: RedisLike, keys: readonly string[]): Promise<(string | null)[]> {
  if (keys.length === 0) return [];
  if (!isCluster(redis)) {
    holdWritesIfBusy(redis);
    if (keys.length <= MGET_CHUNK) return redis.mget(keys as string[]);
    const p = redis.pipeline();
    for (const part of chunks(keys, MGET_CHUNK)) p.mget(part);
    const out: (string | null)[] = [];
    for (const [err, values] of (await p.exec()) ?? []) {
      if (err) throw err;
      out.push(...(values as (string | null)[]));
    }
    return out;
  }
  const out = new Array<string | null>(keys.length);
  const parts = [...groupBySlot(keys).values()].flatMap((indices) => chunks(indices, MGET_CHUNK));
  await Promise.all(
    parts.map(async (part) => {
      const values = await redis.mget(part.map((i) => keys[i]));
      for (let j = 0; j < part.length; j++) out[part[j]] = values[j];
    }),
  );
  return out;
}

/** UNLINK, returning how many keys existed: one command on a standalone Redis, one per slot on a cluster. */
export async function unlinkBySlot(redis: RedisLike, keys: readonly string[]): Promise<number> {
  if (keys.length === 0) return 0;
  if (!isCluster(redis)) return redis.unlink(...keys);
  const counts = await Promise.all([...groupBySlot(keys).values()].map((indices) => redis.unlink(...indices.map((i) => keys[i]))));
  return counts.reduce((a, b) => a + b, 0);
}
