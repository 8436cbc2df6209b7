// The server's Redis connection and key space.
//
// Connecting is bounded: the handshake gets connectTimeoutMs, every command commandTimeoutMs, and
// an unreachable Redis is one InfrastructureError line naming the URL with its password redacted,
// never an endless retry loop. Once connected, a long-running process (reconnect: true, the
// default) reconnects with a capped backoff; while it is disconnected commands fail at once
// (no offline queue), so the read path can fall back or answer 503 instead of hanging.
//
// Every key the server reads or writes goes through Keyspace.key(): the one place a prefix is
// applied, so a test or a replay run isolates itself under its own prefix and can remove exactly
// what it wrote (dropKeyspace).
//
// Redis Cluster (cluster.ts connects to one). A multi-key command (or a Lua script or MULTI
// touching several keys) must have all its keys in one hash slot. The key schema (core/keys.ts)
// puts a hash tag in every per-user key, `feed:{u:ID}:home` and `feed:{u:ID}:recent`: Redis hashes
// only the text between the first `{` and the next `}`, so a user's timeline, their recent-post
// list and the keys derived from them here by suffix (`...:pending`, `...:rebuilding`, `...:lock`,
// `...:pulled`) share one slot. That is what lets the push and rebuild scripts touch a timeline
// together with its rebuild marker and pending set atomically. A prefix must therefore never
// contain `{` or `}` (Keyspace refuses them): a brace in the prefix would become the hash tag and
// put every key on one slot. Post bodies (`post:ID`) carry no tag on purpose, so they spread over
// the cluster. What spans slots goes through the helpers that split it: MGET and UNLINK per slot
// (slots.ts), pipelines per node (node-pipelines.ts), SCRIPT LOAD and SCAN on every master
// (redis-like.ts masters()); a standalone Redis takes the one command or pipeline it always did.
import { Redis } from 'ioredis';
import { redisUrlFromEnv, redactUrl as redactRedisUrl } from '../../core/service-url.js';
import { keySlot } from '../../core/keys.js';
import { isCluster, masters, type RedisLike } from './redis-like.js';

export { DEFAULT_REDIS_URL } from '../../core/service-url.js';
export const DEFAULT_CONNECT_TIMEOUT_MS = 2_000;
export const DEFAULT_COMMAND_TIMEOUT_MS = 5_000;
/** Longest pause between reconnect attempts after a connection was lost. */
export const MAX_RECONNECT_DELAY_MS = 2_000;

/** Redis is unreachable, or stopped answering: the CLI exits 3, the API answers 503. One line. */
export class InfrastructureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InfrastructureError';
  }
}

/** A configuration mistake (a malformed REDIS_URL, an unusable key prefix): exit 2. One line. */
export class CacheConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CacheConfigError';
  }
}

export { redisUrlFromEnv, redactUrl as redactRedisUrl } from '../../core/service-url.js';

export interface ConnectOptions {
  /** Default: REDIS_URL, else redis://127.0.0.1:6379. */
  url?: string;
  /** Bound on the whole handshake (TCP, TLS, AUTH, ready check). */
  connectTimeoutMs?: number;
  /** Bound on every command's reply. */
  commandTimeoutMs?: number;
  /** Reconnect after a lost connection (servers, workers). False: a lost connection stays lost (CLI tools). Default true. */
  reconnect?: boolean;
  /** CLIENT SETNAME, to find the connection in CLIENT LIST. */
  connectionName?: string;
  /** Errors after the connection was established (each reconnect failure). Default: ignored, since commands fail on their own. */
  onError?: (err: Error) => void;
}

function errorText(err: unknown): string {
  const e = err as { code?: string; message?: string } | undefined;
  const text = e?.code && e.message && !e.message.includes(e.code) ? `${e.code}: ${e.message}` : (e?.message ?? String(err));
  return /protocol error/i.test(text) ? `something answered that does not speak the Redis protocol: ${text}` : text;
}

/** Connect, or throw InfrastructureError (unreachable) / CacheConfigError (malformed URL) in one line. */
export async function connectRedis(options: ConnectOptions = {}): Promise<Redis> {
  const url = options.url ?? redisUrlFromEnv();
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CacheConfigError(`REDIS_URL "${redactRedisUrl(url)}" is not a URL (expected redis://[:password@]host:port[/db] or rediss://...)`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new CacheConfigError(`REDIS_URL "${redactRedisUrl(url)}" must start with redis:// or rediss://`);
  }
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const reconnect = options.reconnect ?? true;
  let established = false;
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: connectTimeoutMs,
    commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    connectionName: options.connectionName,
    // A command fails rather than waiting through reconnects: the caller decides (fallback, 503).
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    // The first connection is not retried (it fails as one line); a lost one is, with a capped backoff.
    retryStrategy: (attempt: number) => (established && reconnect ? Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS) : null),
    reconnectOnError: () => false,
  });
  let firstError: unknown; // the cause; later errors are its consequences ("Connection is closed")
  client.on('error', (err: Error) => {
    if (!established) firstError ??= err;
    else options.onError?.(err);
  });
  // connectTimeout covers the TCP connect only; a peer that accepts and never answers would hang
  // the ready check, so the whole handshake gets the same bound.
  let timer: NodeJS.Timeout | undefined;
  const handshake = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${connectTimeoutMs} ms`)), connectTimeoutMs);
  });
  try {
    await Promise.race([client.connect(), handshake]);
  } catch (err) {
    client.disconnect();
    throw new InfrastructureError(`Redis at ${redactRedisUrl(url)} is unreachable (${errorText(firstError ?? err)}); start it or set REDIS_URL`);
  } finally {
    clearTimeout(timer);
  }
  established = true;
  return client;
}

/** Close gracefully (pending replies arrive), or drop the connection if it is already broken. */
export async function closeRedis(client: RedisLike): Promise<void> {
  try {
    await client.quit();
  } catch {
    client.disconnect();
  }
}

/** Letters, digits and `:_-.`: no braces (they would become the cluster hash tag), no spaces, no glob characters. */
const PREFIX = /^[A-Za-z0-9:_.-]{0,100}$/;

/** Where the server's keys live: `key(name)` is the one function that maps a schema key to a Redis key. */
export interface Keyspace {
  readonly prefix: string;
  key(name: string): string;
}

/** A key space under `prefix` ('' in production). Refuses a prefix that would move keys between cluster slots. */
export function keyspace(prefix = ''): Keyspace {
  if (!PREFIX.test(prefix)) {
    throw new CacheConfigError(`key prefix "${prefix.slice(0, 120)}" is not valid (up to 100 letters, digits and : _ - .; braces would change the cluster hash slot)`);
  }
  return { prefix, key: (name: string) => prefix + name };
}

/** A suffixed key of the same hash slot as `key` (the suffix follows the hash tag). */
export function derivedKey(key: string, suffix: string): string {
  return `${key}:${suffix}`;
}

/**
 * Remove every key under the key space's prefix (tests, replay runs): SCAN every master (a
 * cluster's keys are spread over them). Refuses the empty prefix, which would mean the whole
 * database. Returns how many keys were removed.
 */
export async function dropKeyspace(client: RedisLike, space: Keyspace): Promise<number> {
  if (space.prefix === '') throw new CacheConfigError('refusing to drop the unprefixed key space (that is the whole database)');
  const clustered = isCluster(client);
  let removed = 0;
  for (const node of masters(client)) {
    let cursor = '0';
    do {
      // The prefix has no glob characters (keyspace() refuses them), so it matches literally.
      const [next, keys] = await node.scan(cursor, 'MATCH', `${space.prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) removed += clustered ? await unlinkOnNode(node, keys) : await node.unlink(...keys);
    } while (cursor !== '0');
  }
  return removed;
}

/** UNLINK keys a cluster node listed: one command per slot (a node refuses CROSSSLOT even among its own slots), pipelined. */
async function unlinkOnNode(node: Redis, keys: readonly string[]): Promise<number> {
  const bySlot = new Map<number, string[]>();
  for (const key of keys) {
    const slot = keySlot(key);
    const group = bySlot.get(slot);
    if (group) group.push(key);
    else bySlot.set(slot, [key]);
  }
  const p = node.pipeline();
  for (const group of bySlot.values()) p.unlink(...group);
  let removed = 0;
  for (const [err, n] of (await p.exec()) ?? []) {
    if (err) throw err;
    removed += Number(n);
  }
  return removed;
}
