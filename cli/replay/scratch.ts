// The scratch space of a self-contained replay (and of feedlab calibrate): a Postgres database, a
// Redis key prefix and an event-log stream prefix of its own on this machine's Redis and Postgres,
// named after the driver's pid and a random tag, and removed at the end (also on Ctrl-C, q, or a
// crash of the driver: see reaper.ts). A database of its own rather than a schema, so that
// Postgres's own statistics of it (pg_stat_database: transactions, rows) are the replay's and
// nobody else's.
import { randomBytes } from 'node:crypto';
import { closeRedis, connectRedis, dropKeyspace, keyspace } from '../../server/cache/redis.js';
import { createStore } from '../../server/store/pool.js';

export interface Scratch {
  redisUrl: string;
  /** Where the scratch database is created from and dropped from (DATABASE_URL). */
  adminDatabaseUrl: string;
  database: string;
  /** The scratch database's URL: what the server, workers and loader use. */
  databaseUrl: string;
  /** Inside the scratch database. */
  schema: string;
  keyPrefix: string;
  streamPrefix: string;
}

/**
 * Scratch names: database `replay_<pid>_<tag>`, keys `feedlab:replay:<pid>_<tag>:`, the event log
 * `feedlab:replay-events:<pid>_<tag>` (not under the key prefix: a cache loss takes keys by the key
 * prefix, and must leave the log). `kind` names the command that made them (replay, calibrate).
 */
export function scratchNames(redisUrl: string, databaseUrl: string, kind: 'replay' | 'calibrate' = 'replay'): Scratch {
  const tag = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const database = `${kind}_${tag}`;
  const url = new URL(databaseUrl);
  url.pathname = `/${database}`;
  return {
    redisUrl,
    adminDatabaseUrl: databaseUrl,
    database,
    databaseUrl: url.toString(),
    schema: 'public',
    keyPrefix: `feedlab:${kind}:${tag}:`,
    streamPrefix: `feedlab:${kind}-events:${tag}`,
  };
}

async function admin<T>(s: Scratch, work: (query: (sql: string) => Promise<unknown>) => Promise<T>): Promise<T> {
  const store = createStore({ databaseUrl: s.adminDatabaseUrl, max: 1, applicationName: 'feedlab-replay-scratch' });
  try {
    return await work((sql) => store.pool.query(sql));
  } finally {
    await store.pool.end().catch(() => {});
  }
}

/** Create the scratch database (its name is ours: letters, digits and _). */
export async function createScratchDatabase(s: Scratch): Promise<void> {
  await admin(s, (q) => q(`CREATE DATABASE ${s.database}`));
}

/** Everything the scratch space holds, removed: the database (its connections ended) and every key under both prefixes. */
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
  try {
    await admin(s, (q) => q(`DROP DATABASE IF EXISTS ${s.database} WITH (FORCE)`));
  } catch (err) {
    problems.push(`database ${s.database}: ${(err as Error).message}`);
  }
  if (problems.length > 0) throw new Error(`could not remove the replay's scratch space: ${problems.join('; ')}`);
  return { keys };
}
