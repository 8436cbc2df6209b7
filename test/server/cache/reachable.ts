// Is the Redis the cache tests use reachable? When it is not they skip with one loud line, except
// under CI=true, where they run and fail.
import { closeRedis, connectRedis, redisUrlFromEnv } from '../../../server/cache/redis.js';

export const CI = process.env.CI === 'true';
export const REDIS_URL = redisUrlFromEnv();

/** null when Redis answers, else why not; warns once for the calling test file. */
export async function redisUnreachable(file: string): Promise<string | null> {
  try {
    await closeRedis(await connectRedis({ url: REDIS_URL, reconnect: false }));
    return null;
  } catch (err) {
    const why = (err as Error).message;
    if (!CI) console.warn(`\n!!! SKIPPED ${file}: ${why} (under CI=true this fails) !!!\n`);
    return why;
  }
}
