// The connection the caches take: a standalone Redis or a Redis Cluster client (ioredis `Redis` or
// `Cluster`). Both speak the same single-key commands, and a cluster client routes each by its
// key's slot, so most of server/cache never asks which it has. What differs is anything spanning
// several slots: a multi-key command (split it per slot: slots.ts), a pipeline (an ioredis cluster
// pipeline must stay on one node: node-pipelines.ts), and anything aimed at every server (SCRIPT
// LOAD, SCAN, PING: masters() below). Those helpers take the standalone path first, unchanged, so
// a single Redis pays one `instanceof` per call for the cluster support.
import { Cluster, Redis } from 'ioredis';

export type RedisLike = Redis | Cluster;

export function isCluster(redis: RedisLike): redis is Cluster {
  return redis instanceof Cluster;
}

/** The servers holding data: the connection itself, or one connection per cluster master. */
export function masters(redis: RedisLike): Redis[] {
  return isCluster(redis) ? redis.nodes('master') : [redis];
}

/** PING every server holding data (a cluster client's own PING reaches one random node). */
export async function pingAll(redis: RedisLike): Promise<boolean> {
  if (!isCluster(redis)) return (await redis.ping()) === 'PONG';
  const nodes = masters(redis);
  if (nodes.length === 0) return false;
  const replies = await Promise.all(nodes.map((n) => n.ping()));
  return replies.every((r) => r === 'PONG');
}
