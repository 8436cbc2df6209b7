// Is the Redis the cache tests use reachable? When it is not they skip with one loud line, except
// under CI=true, where they run and fail.
import type { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { connectRedis, redisUrlFromEnv, type Keyspace } from '../../../server/cache/redis.js';
import { CI, dropRedisState, redisDown } from '../services.js';

export { CI };
export const REDIS_URL = redisUrlFromEnv();

/** null when Redis answers, else why not; warns once for the calling test file. */
export async function redisUnreachable(file: string): Promise<string | null> {
  const why = await redisDown();
  if (why && !CI) console.warn(`\n!!! SKIPPED ${file}: ${why} (under CI=true this fails) !!!\n`);
  return why;
}

/** Inside a describe: a connection opened before its tests (handed to `opened`); after them the
 * key space is dropped and the connection closed. */
export function useRedis(keys: Keyspace, opened: (redis: Redis) => void): void {
  let redis: Redis | undefined;
  beforeAll(async () => {
    redis = await connectRedis({ url: REDIS_URL });
    opened(redis);
  });
  afterAll(() => dropRedisState(redis, keys));
}
