// Timelines on a Redis Cluster: where the cluster is (REDIS_CLUSTER_NODES / --redis-cluster), the
// bounded connection to it, and the guard that keeps the event log off it.
//
// The seed list names a few nodes; the client asks any of them for the slot map and finds every
// other node itself. Connecting is bounded as connectRedis is (redis.ts): the whole handshake (seed
// connect, CLUSTER SLOTS, the cluster_state:ok ready check) within connectTimeoutMs, an
// unreachable or unusable cluster is one InfrastructureError line, and no offline queue: while the
// cluster is down a command fails at once, so the read path falls back instead of hanging. Once
// connected, a lost cluster is reconnected with the same capped backoff as a standalone Redis.
//
// The event log (Redis Streams) stays on a standalone Redis: a consumer reads every partition
// stream in one XREADGROUP, which a cluster refuses across slots. With a cluster for the caches,
// REDIS_URL names the event log's Redis (or FEED_BUS=kafka), and a REDIS_URL that is a cluster
// node is refused in one line (urlIsSeedNode at configuration, isClusterNode at start-up).
import { Cluster, type Redis } from 'ioredis';
import { redactUrl } from '../../core/service-url.js';
import { CacheConfigError, closeRedis, connectRedis, DEFAULT_COMMAND_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS, InfrastructureError, MAX_RECONNECT_DELAY_MS, type ConnectOptions } from './redis.js';
import { masters } from './redis-like.js';

export const CLUSTER_NODES_ENV = 'REDIS_CLUSTER_NODES';

export interface ClusterNodeAddress {
  host: string;
  port: number;
}

/** Where a cluster is: seed nodes and how to log in (one set of credentials for every node). */
export interface ClusterSpec {
  nodes: ClusterNodeAddress[];
  username?: string;
  password?: string;
  tls: boolean;
}

const HOST_PORT = /^(?:([A-Za-z0-9.-]+)|\[([0-9A-Fa-f:.]+)\]):(\d{1,5})$/;

/**
 * `host:port,host:port` (entries may also be redis:// or rediss:// URLs, which carry the
 * credentials). Throws CacheConfigError with a one-line reason (the caller names the setting).
 */
export function parseClusterNodes(text: string): ClusterSpec {
  const entries = text.split(',').map((e) => e.trim()).filter((e) => e.length > 0);
  if (entries.length === 0) throw new CacheConfigError('no nodes: expected host:port[,host:port...]');
  const spec: ClusterSpec = { nodes: [], tls: false };
  let scheme: string | null = null;
  for (const entry of entries) {
    let hostPort = entry;
    if (entry.includes('://')) {
      let u: URL;
      try {
        u = new URL(entry);
      } catch {
        throw new CacheConfigError(`"${redactUrl(entry).slice(0, 80)}" is not a URL or host:port`);
      }
      if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new CacheConfigError(`"${redactUrl(entry).slice(0, 80)}" must start with redis:// or rediss://`);
      if (scheme !== null && scheme !== u.protocol) throw new CacheConfigError('mixes redis:// and rediss:// nodes: one cluster, one transport');
      scheme = u.protocol;
      spec.tls = u.protocol === 'rediss:';
      const username = decodeURIComponent(u.username) || undefined;
      const password = decodeURIComponent(u.password) || undefined;
      if (password !== undefined || username !== undefined) {
        if ((spec.password !== undefined && spec.password !== password) || (spec.username !== undefined && spec.username !== username)) {
          throw new CacheConfigError('nodes carry different credentials: a cluster has one set');
        }
        spec.username = username;
        spec.password = password;
      }
      if (!u.port) throw new CacheConfigError(`"${redactUrl(entry).slice(0, 80)}" has no port`);
      hostPort = `${u.hostname}:${u.port}`;
    }
    const m = HOST_PORT.exec(hostPort);
    const port = m ? Number(m[3]) : NaN;
    if (!m || port < 1 || port > 65_535) throw new CacheConfigError(`"${redactUrl(entry).slice(0, 80)}" is not host:port`);
    spec.nodes.push({ host: m[1] ?? m[2], port });
  }
  return spec;
}

/** The seed nodes for the start-up lines: addresses only, never the password. */
export function formatClusterSpec(spec: ClusterSpec): string {
  const nodes = spec.nodes.map((n) => (n.host.includes(':') ? `[${n.host}]:${n.port}` : `${n.host}:${n.port}`)).join(',');
  const extras = [spec.tls ? 'tls' : '', spec.password !== undefined ? 'password set' : ''].filter((e) => e);
  return `cluster ${nodes}${extras.length > 0 ? ` (${extras.join(', ')})` : ''}`;
}

/** Is this URL's host:port one of the seed nodes? (The event log must not be on the cluster.) */
export function urlIsSeedNode(url: string, spec: ClusterSpec): boolean {
  try {
    const u = new URL(url);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    const port = Number(u.port || 6379);
    return spec.nodes.some((n) => n.host === host && n.port === port);
  } catch {
    return false;
  }
}

export interface ClusterConnectOptions extends Omit<ConnectOptions, 'url'> {
  spec: ClusterSpec;
}

function errorText(err: unknown): string {
  const e = err as { message?: string; lastNodeError?: { message?: string } } | undefined;
  const text = e?.lastNodeError?.message ? `${e.message} ${e.lastNodeError.message}` : (e?.message ?? String(err));
  if (/cluster support disabled/i.test(text)) return `not a cluster node (cluster support disabled): a standalone Redis goes in REDIS_URL`;
  return text.replace(/\s+/g, ' ');
}

/** Connect to a Redis Cluster, or throw InfrastructureError in one line (unreachable, not a cluster, cluster not ok). */
export async function connectRedisCluster(options: ClusterConnectOptions): Promise<Cluster> {
  const { spec } = options;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const reconnect = options.reconnect ?? true;
  let established = false;
  const client = new Cluster(spec.nodes, {
    lazyConnect: true,
    // A command fails rather than waiting for the cluster: the caller decides (fallback, 503).
    enableOfflineQueue: false,
    // cluster_state:ok before "ready": a cluster with uncovered slots is not usable.
    enableReadyCheck: true,
    slotsRefreshTimeout: connectTimeoutMs,
    // The first connection is not retried (it fails as one line); a lost one is, with a capped backoff.
    clusterRetryStrategy: (attempt: number) => (established && reconnect ? Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS) : null),
    redisOptions: {
      connectTimeout: connectTimeoutMs,
      commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      connectionName: options.connectionName,
      maxRetriesPerRequest: 0,
      username: spec.username,
      password: spec.password,
      tls: spec.tls ? {} : undefined,
      reconnectOnError: () => false,
    },
  });
  let firstError: unknown;
  client.on('error', (err: Error) => {
    if (!established) firstError ??= err;
    else options.onError?.(err);
  });
  let timer: NodeJS.Timeout | undefined;
  const handshake = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no usable cluster within ${connectTimeoutMs} ms`)), connectTimeoutMs);
  });
  try {
    await Promise.race([client.connect(), handshake]);
    if (masters(client).length === 0) throw new Error('the slot map names no master');
  } catch (err) {
    client.disconnect();
    throw new InfrastructureError(`Redis Cluster at ${formatClusterSpec(spec).slice(8)} is unusable (${errorText(firstError ?? err)}); start it or set ${CLUSTER_NODES_ENV}`);
  } finally {
    clearTimeout(timer);
  }
  established = true;
  return client;
}

/** Does this connection reach a cluster node (cluster_enabled:1)? False when the server will not
 * say (INFO renamed away, as some hosted Redis do): only a certain answer refuses a setup. */
export async function isClusterNode(redis: Redis): Promise<boolean> {
  let info: string;
  try {
    info = await redis.info('cluster');
  } catch (err) {
    if ((err as Error).name === 'ReplyError') return false;
    throw err;
  }
  return /^cluster_enabled:1\s*$/m.test(info);
}

/** Whether the Redis at `url` is a cluster node: one short-lived connection (InfrastructureError when unreachable). */
export async function urlIsClusterNode(url: string, connectTimeoutMs?: number): Promise<boolean> {
  const probe = await connectRedis({ url, reconnect: false, connectTimeoutMs, connectionName: 'feedlab-probe' });
  try {
    return await isClusterNode(probe);
  } finally {
    await closeRedis(probe);
  }
}
