import { authorPostsKey, timelineKey } from './keys.js';

// How many bytes Redis really spends on a timeline, from measurements on Redis 7.0.15 with
// jemalloc (ANCHORS section 3, re-measured on this project's machine): member = 19-digit post id,
// score = 13-digit millisecond timestamp. The design documents assume 24 bytes per entry; a
// skiplist-encoded timeline costs about five times that.

/** Redis converts a zset from listpack to skiplist past this many entries (zset-max-listpack-entries). */
export const ZSET_LISTPACK_MAX_ENTRIES = 128;

/** The documents' estimate: 8-byte id + 8-byte timestamp + 8 bytes of overhead. */
export const NAIVE_BYTES_PER_ENTRY = 24;

// listpack: the 19-digit id and the 13-digit score are both stored as 64-bit integers, 10 bytes
// each with their headers, so the listpack is 7 + 20 n bytes in jemalloc's next size class; MEMORY
// USAGE adds the object and dict entry (40 B) and the key's sds. Exact at 16, 64, 100 and 128 entries.
const LISTPACK_HEADER = 7;
const LISTPACK_PER_ENTRY = 20;
const OBJECT_BYTES = 40;

/** The timeline key of a 9-digit user id, `feed:{u:123456789}:home`: what MEMORY USAGE counts by default. */
export const TIMELINE_KEY_LENGTH = timelineKey(123456789).length;
/** An author's recent list of a 9-digit user id, `feed:{u:123456789}:recent`. */
export const AUTHOR_LIST_KEY_LENGTH = authorPostsKey(123456789).length;
/** The skiplist points below were measured with a 7-character key, whose sds takes 16 B. */
const MEASURED_KEY_SDS = 16;

/** jemalloc's size class for a request: 16-byte steps to 128, then four classes per doubling. */
export function jemallocSize(bytes: number): number {
  if (bytes <= 8) return 8;
  if (bytes <= 128) return Math.ceil(bytes / 16) * 16;
  const group = 2 ** Math.floor(Math.log2(bytes - 1));
  const step = group / 4;
  return Math.ceil(bytes / step) * step;
}

/** A key name's sds: 3 bytes of header, the name, a NUL. */
function keySdsBytes(keyLength: number): number {
  return jemallocSize(keyLength + 4);
}

// skiplist: MEMORY USAGE less the dict's buckets (8 B each, a power of two >= n), measured at these
// sizes once the dict had finished rehashing; linear in between, and past 2,000 at the last slope
// (~109 B per entry: sds member, dict entry and skiplist node in jemalloc size classes).
const SKIPLIST_POINTS: ReadonlyArray<readonly [number, number]> = [
  [129, 15_816],
  [200, 22_512],
  [400, 44_928],
  [800, 88_704],
  [2000, 219_232],
];
const DICT_BUCKET_BYTES = 8;

// A list (celebrity recent-post lists) as a quicklist of listpacks: 136 + 12 n up to 512 entries.
const LIST_BASE = 136;
const LIST_PER_ENTRY = 12;
const LIST_LARGE_BASE = 328;
const LIST_LARGE_PER_ENTRY = 10.35;

// What INFO used_memory grows by beyond MEMORY USAGE: a keyspace bucket and an expires entry per
// key (56 B, measured at 2,000 keys), and ~6.4% allocator fragmentation on skiplist nodes
// (2,000 x 300 and 2,000 x 800 measured: 128.7 B/entry instance-wide against 121.1 by MEMORY USAGE).
export const KEYSPACE_BYTES_PER_KEY = 56;
const SKIPLIST_INSTANCE_FACTOR = 1.064;

function nextPowerOfTwo(n: number): number {
  let p = 4;
  while (p < n) p *= 2;
  return p;
}

/** MEMORY USAGE of a timeline zset with n entries (0 => the key does not exist). */
export function zsetUsageBytes(n: number, keyLength = TIMELINE_KEY_LENGTH): number {
  if (n <= 0) return 0;
  const key = keySdsBytes(keyLength);
  if (n <= ZSET_LISTPACK_MAX_ENTRIES) return OBJECT_BYTES + key + jemallocSize(LISTPACK_HEADER + LISTPACK_PER_ENTRY * n);
  return skiplistEntriesBytes(n) - MEASURED_KEY_SDS + key + DICT_BUCKET_BYTES * nextPowerOfTwo(n);
}

function skiplistEntriesBytes(n: number): number {
  const pts = SKIPLIST_POINTS;
  let i = 1;
  while (i < pts.length - 1 && pts[i][0] < n) i++;
  const [n0, b0] = pts[i - 1];
  const [n1, b1] = pts[i];
  return b0 + ((b1 - b0) * (n - n0)) / (n1 - n0);
}

/** What a timeline of n entries adds to INFO used_memory, keyspace overhead included. */
export function timelineInstanceBytes(n: number): number {
  return zsetInstanceBytes(n, TIMELINE_KEY_LENGTH);
}

function zsetInstanceBytes(n: number, keyLength: number): number {
  if (n <= 0) return 0;
  const usage = zsetUsageBytes(n, keyLength);
  const factor = n > ZSET_LISTPACK_MAX_ENTRIES ? SKIPLIST_INSTANCE_FACTOR : 1;
  return usage * factor + KEYSPACE_BYTES_PER_KEY;
}

/**
 * An author's recent list (pulled authors' lists, every reader's own list) as the server keeps it:
 * a sorted set of post ids scored by time, like a timeline. MEMORY USAGE, and what it adds to INFO
 * used_memory.
 */
export function authorListUsageBytes(n: number, keyLength = AUTHOR_LIST_KEY_LENGTH): number {
  return zsetUsageBytes(n, keyLength);
}

export function authorListInstanceBytes(n: number): number {
  return zsetInstanceBytes(n, AUTHOR_LIST_KEY_LENGTH);
}

/** The documents' figure for the same timeline. */
export function timelineNaiveBytes(n: number): number {
  return n <= 0 ? 0 : NAIVE_BYTES_PER_ENTRY * n;
}

/** MEMORY USAGE of a Redis list of n post ids (the documents' alternative to a sorted set). */
export function listUsageBytes(n: number): number {
  if (n <= 0) return 0;
  if (n <= 512) return LIST_BASE + LIST_PER_ENTRY * n;
  return LIST_LARGE_BASE + LIST_LARGE_PER_ENTRY * n;
}

export function listInstanceBytes(n: number): number {
  return n <= 0 ? 0 : listUsageBytes(n) + KEYSPACE_BYTES_PER_KEY;
}

/**
 * Bytes per timeline length 0..cap, for hot loops that must not recompute the model per write.
 * table[n] = timelineInstanceBytes(n).
 */
export function timelineBytesTable(cap: number): Float64Array {
  const t = new Float64Array(cap + 1);
  for (let n = 1; n <= cap; n++) t[n] = timelineInstanceBytes(n);
  return t;
}
