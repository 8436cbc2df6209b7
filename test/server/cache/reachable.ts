// Is the Redis the cache tests use reachable? When it is not they skip with one loud line, except
// under CI=true, where they run and fail.
import { redisUrlFromEnv } from '../../../server/cache/redis.js';
import { CI, redisDown } from '../services.js';

export { CI };
export const REDIS_URL = redisUrlFromEnv();

/** null when Redis answers, else why not; warns once for the calling test file. */
export async function redisUnreachable(file: string): Promise<string | null> {
  const why = await redisDown();
  if (why && !CI) console.warn(`\n!!! SKIPPED ${file}: ${why} (under CI=true this fails) !!!\n`);
  return why;
}
