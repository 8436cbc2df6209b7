// Redis memory at the end of a replay, by key class, measured with MEMORY USAGE (SAMPLES 0: every
// element counted) over every key of the replay's key space, or a uniform sample of a class when it
// is large, with the simulator's memory model (core/redis-memory.ts) beside each class it models.
//
// Classes: home timelines (by encoding: listpack up to 128 entries, skiplist beyond), pulled
// authors' recent lists (merged on read: the simulator's "celebrity lists"), other authors' own
// recent lists, post bodies, the event log (its streams), and the rest (follows tokens, rebuild
// markers, the registry of pulled authors, metrics).
import type { Redis } from 'ioredis';
import { keySlot, slotShard } from '../../core/keys.js';
import { authorListUsageBytes, KEYSPACE_BYTES_PER_KEY, NAIVE_BYTES_PER_ENTRY, zsetUsageBytes } from '../../core/redis-memory.js';

export type KeyClass = 'timelines' | 'pulledLists' | 'ownLists' | 'bodies' | 'eventLog' | 'other';

export interface ClassFigures {
  keys: number;
  /** Keys measured (all of them, or a uniform sample). */
  measured: number;
  /** MEMORY USAGE summed (extrapolated from the sample when sampled). */
  bytes: number;
  /** Entries (ZCARD / XLEN), summed likewise; 0 for strings. */
  entries: number;
  /** What the simulator's memory model gives for the same keys and entries (null: not modelled). */
  modelBytes: number | null;
  /** Timelines only: keys by encoding. */
  encodings?: Record<string, number>;
}

export interface MemoryByClass {
  classes: Record<KeyClass, ClassFigures>;
  /** The documents' 24 B per timeline entry, for the same entries. */
  naiveTimelineBytes: number;
  /** Bytes of timelines and lists by the scenario's Redis Cluster shard of their slot. */
  shardBytes: number[];
  /** Keys per class beyond which a uniform sample is measured. */
  sampleLimit: number;
  /** Redis's used_memory when measured, and what MEMORY USAGE does not count per key (the keyspace entry). */
  usedMemory: number;
  keyspaceBytesPerKey: number;
  /** The key space measured: its prefix is part of every key name MEMORY USAGE counts (absent from older documents). */
  keyPrefix?: string;
}

export interface ClassifyOptions {
  keyPrefix: string;
  streamPrefix: string;
  /** Is this author's list merged on read (over the threshold, or marked pulled)? */
  pulled: (author: number) => boolean;
  shards: number;
  /** At most this many keys of a class measured; beyond it, a uniform sample (default 20,000). */
  sampleLimit?: number;
}

const TIMELINE = /^feed:\{u:(\d+)\}:home$/;
const RECENT = /^feed:\{u:(\d+)\}:recent$/;
const BODY = /^post:\d+$/;

/** The class of a key of the replay's key space (its prefix already removed for the key prefix). */
export function classify(key: string, o: ClassifyOptions): { cls: KeyClass; author?: number } {
  if (key.startsWith(o.streamPrefix)) return { cls: 'eventLog' };
  if (!key.startsWith(o.keyPrefix)) return { cls: 'other' };
  const k = key.slice(o.keyPrefix.length);
  if (TIMELINE.test(k)) return { cls: 'timelines' };
  const recent = RECENT.exec(k);
  if (recent) {
    const author = Number(recent[1]);
    return { cls: o.pulled(author) ? 'pulledLists' : 'ownLists', author };
  }
  if (BODY.test(k)) return { cls: 'bodies' };
  return { cls: 'other' };
}

async function scanAll(redis: Redis, match: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 2000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

/** Every key under both prefixes, measured by class. */
export async function memoryByClass(redis: Redis, o: ClassifyOptions): Promise<MemoryByClass> {
  const limit = o.sampleLimit ?? 20_000;
  const names = new Set([...(await scanAll(redis, `${o.keyPrefix}*`)), ...(await scanAll(redis, `${o.streamPrefix}*`))]);
  const byClass = new Map<KeyClass, string[]>();
  for (const key of names) {
    const { cls } = classify(key, o);
    let list = byClass.get(cls);
    if (!list) byClass.set(cls, (list = []));
    list.push(key);
  }
  const classes = {} as Record<KeyClass, ClassFigures>;
  const shardBytes = new Array<number>(o.shards).fill(0);
  let naive = 0;
  for (const cls of ['timelines', 'pulledLists', 'ownLists', 'bodies', 'eventLog', 'other'] as KeyClass[]) {
    const all = (byClass.get(cls) ?? []).sort();
    // every k-th key of the sorted names: a uniform, repeatable sample
    const step = all.length > limit ? all.length / limit : 1;
    const sample = step === 1 ? all : Array.from({ length: limit }, (_, i) => all[Math.floor(i * step)]);
    const figures: ClassFigures = { keys: all.length, measured: sample.length, bytes: 0, entries: 0, modelBytes: cls === 'timelines' || cls === 'pulledLists' || cls === 'ownLists' ? 0 : null };
    if (cls === 'timelines') figures.encodings = {};
    for (let i = 0; i < sample.length; i += 1000) {
      const chunk = sample.slice(i, i + 1000);
      const p = redis.pipeline();
      for (const key of chunk) {
        p.call('MEMORY', 'USAGE', key, 'SAMPLES', '0');
        if (cls === 'timelines' || cls === 'pulledLists' || cls === 'ownLists') p.zcard(key);
        else if (cls === 'eventLog') p.call('XLEN', key);
        if (cls === 'timelines') p.object('ENCODING', key);
      }
      const replies = ((await p.exec()) ?? []) as [Error | null, unknown][];
      let r = 0;
      for (const key of chunk) {
        const usage = Number(replies[r++]?.[1] ?? 0);
        let n = 0;
        if (cls !== 'bodies' && cls !== 'other') {
          const reply = replies[r++];
          n = reply?.[0] ? 0 : Number(reply?.[1] ?? 0);
        }
        const weight = step;
        figures.bytes += usage * weight;
        figures.entries += n * weight;
        if (cls === 'timelines') {
          const enc = String(replies[r++]?.[1] ?? 'missing');
          figures.encodings![enc] = (figures.encodings![enc] ?? 0) + weight;
          figures.modelBytes! += zsetUsageBytes(n, key.length) * weight;
          naive += n * NAIVE_BYTES_PER_ENTRY * weight;
        } else if (cls === 'pulledLists' || cls === 'ownLists') {
          // an author's recent list is a sorted set like a timeline (core/redis-memory.ts)
          figures.modelBytes! += authorListUsageBytes(n, key.length) * weight;
        }
        if (cls === 'timelines' || cls === 'pulledLists' || cls === 'ownLists') {
          shardBytes[slotShard(keySlot(key), o.shards)] += usage * weight;
        }
      }
    }
    classes[cls] = figures;
  }
  const info = await redis.info('memory');
  const used = Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN);
  return { classes, naiveTimelineBytes: naive, shardBytes, sampleLimit: limit, usedMemory: used, keyspaceBytesPerKey: KEYSPACE_BYTES_PER_KEY, keyPrefix: o.keyPrefix };
}

/** Whether a key lives on the first `lost` of `shards` equal slot ranges (what a cacheLoss event takes). */
export function onLostShard(key: string, lost: number, shards: number): boolean {
  return slotShard(keySlot(key), shards) < lost;
}
