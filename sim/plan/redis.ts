// Redis in closed form: the work each shard does per second at the peak (timeline writes, list
// writes, the reads' ZRANGEs and MGETs, rebuilds) and the read latency that work makes (each shard
// a single server, M/M/1, as in the simulator), the memory each shard holds (timelines spread by
// hash slot, named accounts' lists each on one shard) and the shards both need.
import { userShard } from '../../core/keys.js';
import { fullListReadSeconds } from '../model/list-reads.js';
import type { Costs } from '../scenario/types.js';
import type { Load, Memory } from './load.js';
import { maxUtilisation, mm1WaitQuantile } from './staffing.js';

export interface RedisWork {
  /** Seconds of Redis work per second spread over every shard, and on the hottest list's shard alone. */
  spread: number;
  hot: number;
  /** Mean service time of one command. */
  service: number;
  /** Shards one page read touches in its first round trip (timeline + lists). */
  touched: number;
  /** The part of a page's latency that is not queueing: two round trips and the commands. */
  fixed: number;
}

export function redisWork(load: Load, costs: Costs, pageSize: number): RedisWork {
  // every list read charged a full slice: the shards sized for the heaviest pages
  const listRead = fullListReadSeconds(costs, pageSize);
  const listReads = load.pagesPeak * load.listsPerPage;
  const spreadListReads = Math.max(0, listReads - load.hotListReadsPeak);
  const rebuildWrites = load.rebuildsPerSecond * load.entriesPerRebuild;
  const work =
    (load.writesPeak + load.listWritesPeak + rebuildWrites) * costs.zadd +
    load.pagesPeak * (listRead + costs.mgetPerKey * pageSize) +
    spreadListReads * listRead;
  const ops = load.writesPeak + load.listWritesPeak + rebuildWrites + load.pagesPeak * 2 + spreadListReads;
  return {
    spread: work,
    hot: load.hotListReadsPeak * listRead,
    service: ops > 0 ? work / ops : listRead,
    touched: 1 + load.listsPerPage,
    fixed: 2 * costs.rtt + listRead * (1 + load.listsPerPage) + costs.mgetPerKey * pageSize,
  };
}

/** Read p99 at a utilisation of the busiest shard a read touches. */
export function readP99At(rho: number, w: RedisWork): number {
  // the first round trip waits for the slowest of the shards it touches, the second for one
  return w.fixed + mm1WaitQuantile(rho, w.service, 0.99, Math.max(1, Math.round(w.touched)) + 1);
}

/** The busiest shard's utilisation with `shards` shards. */
export function shardUtilisation(w: RedisWork, shards: number): number {
  return w.spread / shards + w.hot;
}

/** Read p99 with `shards` shards. */
export function readP99(w: RedisWork, shards: number): number {
  return readP99At(shardUtilisation(w, shards), w);
}

/**
 * Shards for reads: the busiest shard must stay under the utilisation at which the read p99
 * meets its objective, and under 1 - headroom. Infinity when the hottest list alone is too much.
 */
export function shardsForReads(w: RedisWork, readSlo: number, headroom: number): { shards: number; rhoLimit: number; sloRho: number } {
  const sloRho = maxUtilisation((rho) => readP99At(rho, w), readSlo);
  const rhoLimit = Math.min(sloRho, 1 - headroom);
  const room = rhoLimit - w.hot;
  if (room <= 0) return { shards: Infinity, rhoLimit, sloRho };
  return { shards: Math.max(1, Math.ceil(w.spread / room - 1e-9)), rhoLimit, sloRho };
}

/** Largest shard over the mean shard: named lists on their own shard, and 3 sigma of hash-slot luck. */
export function shardImbalance(mem: Memory, shards: number): number {
  const total = mem.timelineBytes + mem.listBytes + mem.postCacheBytes;
  if (total <= 0 || shards <= 1) return 1;
  const named = new Float64Array(shards);
  let namedTotal = 0;
  for (const l of mem.namedLists) {
    named[userShard(l.id, shards)] += l.bytes;
    namedTotal += l.bytes;
  }
  const spread = (total - namedTotal) / shards;
  let max = 0;
  for (let i = 0; i < shards; i++) max = Math.max(max, spread + named[i]);
  const keysPerShard = mem.timelines / shards;
  const luck = keysPerShard > 0 ? 3 * Math.sqrt(mem.keySizeSpread / keysPerShard) : 0;
  return (max / (total / shards)) * (1 + luck);
}

/**
 * Shards for memory: each holds its share times the imbalance, times the fragmentation
 * allowance, within (1 - headroom) of a node. Iterated because the imbalance depends on the count.
 */
export function shardsForMemory(mem: Memory, nodeMemory: number, fragmentation: number, headroom: number, startShards: number): { shards: number; imbalance: number } {
  const used = mem.timelineBytes + mem.listBytes + mem.postCacheBytes;
  const perShard = (nodeMemory * (1 - headroom)) / fragmentation;
  let shards = Math.max(1, startShards);
  let imbalance = shardImbalance(mem, shards);
  for (let i = 0; i < 8; i++) {
    const next = Math.max(1, Math.ceil((used * imbalance) / perShard - 1e-9));
    const nextImbalance = shardImbalance(mem, next);
    if (next === shards && nextImbalance === imbalance) break;
    shards = next;
    imbalance = nextImbalance;
  }
  // never leave a shard over its limit after the last step
  while ((used / shards) * shardImbalance(mem, shards) > perShard && shards < 1e6) shards++;
  return { shards, imbalance: shardImbalance(mem, shards) };
}
