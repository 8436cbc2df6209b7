// Service addresses: read from the environment with a local default, and printed with any
// password hidden. Shared by the simulator's --measure and every server adapter.

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
export const DEFAULT_DATABASE_URL = 'postgres://root@127.0.0.1:5432/postgres';
/** The Redis Streams event log's key prefix. */
export const DEFAULT_STREAM_PREFIX = 'feedlab:events';

/** The variable's value (trimmed), else the default. */
export function serviceUrl(env: Record<string, string | undefined>, name: string, fallback: string): string {
  const v = env[name]?.trim();
  return v ? v : fallback;
}

/** REDIS_URL, else the local default. */
export function redisUrlFromEnv(env: Record<string, string | undefined> = process.env): string {
  return serviceUrl(env, 'REDIS_URL', DEFAULT_REDIS_URL);
}

/** The URL with any password (in the userinfo or a query parameter) replaced by ***, safe to print. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    for (const key of [...u.searchParams.keys()]) if (/pass/i.test(key)) u.searchParams.set(key, '***');
    return u.toString();
  } catch {
    return url.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@');
  }
}
