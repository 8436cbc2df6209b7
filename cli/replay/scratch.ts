// The scratch space of a self-contained replay: a Postgres schema, a Redis key prefix and an event-log
// stream prefix of its own on this machine's Redis and Postgres, named after the driver's pid and a
// random tag, and removed at the end (also on Ctrl-C, q, or a crash of the driver: see reaper.ts).
import { randomBytes } from 'node:crypto';
import { closeRedis, connectRedis, dropKeyspace, keyspace } from '../../server/cache/redis.js';
import { createStore } from '../../server/store/pool.js';

export interface Scratch {
  redisUrl: string;
  databaseUrl: string;
  schema: string;
  keyPrefix: string;
  streamPrefix: string;
}

/** Scratch names: `replay_<pid>_<tag>`, keys `feedlab:replay:<pid>_<tag>:`, the event log `feedlab:replay-events:<pid>_<tag>`
 * (not under the key prefix: a cache loss takes keys by the key prefix, and must leave the log). */
export function scratchNames(redisUrl: string, databaseUrl: string): Scratch {
  const tag = `${process.pid}_${randomBytes(3).toString('hex')}`;
  return {
    redisUrl,
    databaseUrl,
    schema: `replay_${tag}`,
    keyPrefix: `feedlab:replay:${tag}:`,
    streamPrefix: `feedlab:replay-events:${tag}`,
  };
}

/** Everything the scratch space holds, removed: the schema (cascade) and every key under both prefixes. */
export async function dropScratch(s: Scratch): Promise<{ keys: number }> {
  let keys = 0;
  const problems: string[] = [];
  try {
    const redis = await connectRedis({ url: s.redisUrl, reconnect: false, connectionName: 'feedlab-replay-cleanup' });
    try {
      keys += await dropKeyspace(redis, keyspace(s.keyPrefix));
      keys += await dropKeyspace(redis, keyspace(s.streamPrefix));
    } finally {
      await closeRedis(redis);
    }
  } catch (err) {
    problems.push(`Redis keys ${s.keyPrefix}*: ${(err as Error).message}`);
  }
  const store = createStore({ databaseUrl: s.databaseUrl, schema: s.schema, max: 1, applicationName: 'feedlab-replay-cleanup' });
  try {
    await store.pool.query(`DROP SCHEMA IF EXISTS ${s.schema} CASCADE`);
  } catch (err) {
    problems.push(`schema ${s.schema}: ${(err as Error).message}`);
  } finally {
    await store.pool.end().catch(() => {});
  }
  if (problems.length > 0) throw new Error(`could not remove the replay's scratch space: ${problems.join('; ')}`);
  return { keys };
}
