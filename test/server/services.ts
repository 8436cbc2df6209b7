// Are the Redis and Postgres the server tests use reachable? When not, a test file skips with one
// loud line, except under CI=true, where it runs and fails.
import { closeRedis, connectRedis, dropKeyspace, redisUrlFromEnv, type Keyspace } from '../../server/cache/redis.js';
import type { RedisLike } from '../../server/cache/redis-like.js';
import { probeDatabase, type Store } from '../../server/store/pool.js';

export const CI = process.env.CI === 'true';

/** null when Redis answers, else why not. */
export async function redisDown(): Promise<string | null> {
  try {
    await closeRedis(await connectRedis({ url: redisUrlFromEnv(), reconnect: false }));
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Whether to skip a file that needs Redis and Postgres; warns once, naming `what`. */
export async function skipWithoutServices(what: string): Promise<boolean> {
  const down = [await redisDown(), await probeDatabase(process.env.DATABASE_URL, 2000)].filter((d) => d);
  const skip = down.length > 0 && !CI;
  if (skip) console.warn(`\n!!! SKIPPED ${what}: ${down.join('; ')} (under CI=true this fails) !!!\n`);
  return skip;
}

/** What a test file left in Redis under its keyspaces, removed, and the connection closed (if it was opened). */
export async function dropRedisState(redis: RedisLike | undefined, ...keyspaces: Keyspace[]): Promise<void> {
  if (!redis) return;
  for (const keys of keyspaces) await dropKeyspace(redis, keys);
  await closeRedis(redis);
}

/** A test file's Postgres schema dropped and its pool ended (if it was made). */
export async function dropPostgresState(store: Store | undefined, schema: string): Promise<void> {
  if (!store) return;
  await store.pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await store.pool.end();
}
