// Are the Redis and Postgres the server tests use reachable? When not, a test file skips with one
// loud line, except under CI=true, where it runs and fails.
import { closeRedis, connectRedis, redisUrlFromEnv } from '../../server/cache/redis.js';
import { probeDatabase } from '../../server/store/pool.js';

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
