// A cached post list: a Redis sorted set of post ids scored by creation ms, newest kept, capped,
// with a TTL lease. Home timelines (timelines.ts) and authors' recent-post lists
// (author-posts.ts) are both one, bound to their keys and caps.
//
// A list is either present, and then complete (everything the source of truth would put in it,
// up to the cap), or missing, and then rebuilt from Postgres on the next read. Writes therefore go
// only into a present list: adding into a missing one would create a partial list that looks
// present and hides the rebuild. An empty rebuilt list holds the sentinel member (score -1,
// never a post id), so it stays present and is not rebuilt on every read; reads ask for scores
// >= 0 and never see it.
//
// A rebuild reads Postgres first and writes later; a post fanned out in between would find the
// list missing and be dropped, although the Postgres snapshot may predate it. So the rebuild sets
// a marker (`<key>:rebuilding`, with a TTL) before it reads, pushes to a missing list with a
// marker go into `<key>:pending`, and the rebuild script merges them in. All three keys share the
// list's hash tag, so the scripts stay on one cluster slot.
import { compareNewestFirst, isOlderThan, type FeedPosition } from '../../core/cursor.js';
import type { FeedSlice } from '../../core/feed-merge.js';
import { isPostId, type PostId } from '../../core/post-id.js';
import { LuaScript, type ScriptArg } from './lua.js';
import { pipelinePerNode } from './node-pipelines.js';
import { derivedKey } from './redis.js';
import type { RedisLike } from './redis-like.js';

/** The member of an empty rebuilt list. Not a post id (isPostId refuses it), so it never collides. */
export const EMPTY_SENTINEL = 'empty';
/** Below every creation ms: reads (scores >= 0) never return the sentinel, trims remove it first. */
export const SENTINEL_SCORE = -1;
/** Default time a rebuild may take between setting its marker and writing the list. */
export const DEFAULT_REBUILD_WINDOW_MS = 60_000;
/** Entries fetched beyond the limit on a cursor read, to step past ties with the cursor's ms in one round trip. */
export const TIE_SLACK = 8;

/** The size and lease of a kind of list. */
export interface ListShape {
  /** Entries kept: every write trims to the newest `cap`. */
  cap: number;
  /** TTL set on every write and renewed on read. */
  leaseMs: number;
}

export function checkShape(shape: ListShape): ListShape {
  if (!Number.isInteger(shape.cap) || shape.cap < 1) throw new RangeError(`list cap ${shape.cap} must be a positive integer`);
  if (!Number.isInteger(shape.leaseMs) || shape.leaseMs < 1) throw new RangeError(`list lease ${shape.leaseMs} ms must be a positive integer`);
  return shape;
}

/** The marker and pending keys of a list (same hash slot). */
export function rebuildKeys(key: string): { marker: string; pending: string } {
  return { marker: derivedKey(key, 'rebuilding'), pending: derivedKey(key, 'pending') };
}

// Lua's unpack() is bounded by the C stack (LUAI_MAXCSTACK 8000): ZADD and ZREM take their
// arguments in chunks of this many.
const CHUNK = 1000;

/** The commands ADD calls once each for a present list that takes the entry (feedlab compare splits a script's Redis time by them). */
export const ADD_SCRIPT_COMMANDS = ['exists', 'zadd', 'zrem', 'zremrangebyrank', 'pexpire'] as const;

// KEYS: list, marker, pending, for each of one or more lists (one hash slot). ARGV: cap, leaseMs,
// sentinel, then score, id pairs, the same for every list. Returns {state, added} for each list in
// turn: state 1 written into the list, 2 into the pending set (a rebuild is under way), 0 nothing
// (the list is missing). ZADD NX never changes an existing member, and when nothing was added
// nothing else is touched, so a redelivered event writes nothing. Many lists a call spare Redis
// and the client most of a call's own cost (core/redis-pipeline.ts TIMELINES_PER_ADD_CALL).
const ADD = new LuaScript(
  'post-list-add',
  `
local out = {}
local lease = tonumber(ARGV[2])
local trim = -(tonumber(ARGV[1]) + 1)
for k = 1, #KEYS, 3 do
  local target = KEYS[k]
  local state = 1
  local ttl = lease
  if redis.call('EXISTS', target) == 0 then
    ttl = redis.call('PTTL', KEYS[k + 1])
    if ttl > 0 then
      target = KEYS[k + 2]
      state = 2
    else
      state = 0
    end
  end
  local added = 0
  if state ~= 0 then
    for i = 4, #ARGV, ${CHUNK} do
      local j = math.min(i + ${CHUNK} - 1, #ARGV)
      added = added + redis.call('ZADD', target, 'NX', unpack(ARGV, i, j))
    end
    if added > 0 then
      if state == 1 then redis.call('ZREM', target, ARGV[3]) end
      redis.call('ZREMRANGEBYRANK', target, 0, trim)
      redis.call('PEXPIRE', target, ttl)
    end
  end
  out[#out + 1] = state
  out[#out + 1] = added
end
return out
`,
);

// KEYS: list, marker, pending. ARGV: cap, leaseMs, sentinel, replace (1/0), then score, id pairs.
// Returns {written (1/0), entries}. Without replace a present list is kept (another rebuild won).
const REBUILD = new LuaScript(
  'post-list-rebuild',
  `
if ARGV[4] ~= '1' and redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('DEL', KEYS[2], KEYS[3])
  return {0, redis.call('ZCOUNT', KEYS[1], 0, '+inf')}
end
redis.call('DEL', KEYS[1])
for i = 5, #ARGV, ${CHUNK} do
  local j = math.min(i + ${CHUNK} - 1, #ARGV)
  redis.call('ZADD', KEYS[1], unpack(ARGV, i, j))
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('ZUNIONSTORE', KEYS[1], 2, KEYS[1], KEYS[3], 'AGGREGATE', 'MIN')
end
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[1]) + 1))
local n = redis.call('ZCARD', KEYS[1])
if n == 0 then redis.call('ZADD', KEYS[1], ${SENTINEL_SCORE}, ARGV[3]) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1, n}
`,
);

// KEYS: list, pending. ARGV: sentinel, then ids. Returns the number removed from the list, -1 when
// it is missing. A list emptied by the removal keeps its lease and holds the sentinel, so it stays
// present (Redis would delete an empty sorted set, and the next read would rebuild it).
const REMOVE = new LuaScript(
  'post-list-remove',
  `
for i = 2, #ARGV, ${CHUNK} do
  redis.call('ZREM', KEYS[2], unpack(ARGV, i, math.min(i + ${CHUNK} - 1, #ARGV)))
end
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local ttl = redis.call('PTTL', KEYS[1])
local removed = 0
for i = 2, #ARGV, ${CHUNK} do
  removed = removed + redis.call('ZREM', KEYS[1], unpack(ARGV, i, math.min(i + ${CHUNK} - 1, #ARGV)))
end
if removed > 0 and redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('ZADD', KEYS[1], ${SENTINEL_SCORE}, ARGV[1])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
end
return removed
`,
);

/** The add script, called through post-list-add.ts. */
export const ADD_SCRIPT = ADD;

export const SCRIPTS: readonly LuaScript[] = [ADD, REBUILD, REMOVE];

/** Load the scripts on a connection (every master of a cluster) ahead of the first request (optional: they load on first use). */
export async function loadScripts(redis: RedisLike): Promise<void> {
  for (const script of SCRIPTS) await script.load(redis);
}

function checkEntry(e: FeedPosition): void {
  if (!isPostId(e.id)) throw new RangeError(`"${String(e.id).slice(0, 40)}" is not a post id`);
  if (!Number.isSafeInteger(e.createdAt) || e.createdAt < 0) throw new RangeError(`post ${e.id}: createdAt ${e.createdAt} is not a non-negative integer ms`);
}

/** ZADD arguments (score, member pairs) of some entries. */
export function scoreArgs(entries: readonly FeedPosition[]): ScriptArg[] {
  const args: ScriptArg[] = [];
  for (const e of entries) {
    checkEntry(e);
    args.push(e.createdAt, e.id);
  }
  return args;
}

export interface RebuildOptions {
  /** Replace a list that is present (default false: a present list means another rebuild won; keep it). */
  replace?: boolean;
  /** How long pushes are collected for this rebuild (default DEFAULT_REBUILD_WINDOW_MS). */
  windowMs?: number;
}

export interface RebuildResult {
  /** False when the list was present by the time of writing and `replace` was not set. */
  written: boolean;
  /** Entries the list holds afterwards (the sentinel not counted). */
  entries: number;
}

/**
 * Rebuild a list from its source of truth: mark the rebuild, run `load` (the Postgres query), then
 * atomically write the newest `cap` entries of its result, plus whatever was pushed meanwhile, with
 * the lease, or the sentinel when there is nothing. If `load` fails the marker is left to expire,
 * so a retry still finds the pushes made meanwhile.
 */
export async function rebuildList(
  redis: RedisLike,
  key: string,
  shape: ListShape,
  load: () => Promise<readonly FeedPosition[]> | readonly FeedPosition[],
  options: RebuildOptions = {},
): Promise<RebuildResult> {
  const { marker, pending } = rebuildKeys(key);
  const windowMs = options.windowMs ?? DEFAULT_REBUILD_WINDOW_MS;
  await redis.set(marker, '1', 'PX', windowMs);
  const loaded = await load();
  // Only the newest `cap` can survive the trim: send no more than that.
  const newest = [...loaded].sort(compareNewestFirst).slice(0, shape.cap);
  const args = [shape.cap, shape.leaseMs, EMPTY_SENTINEL, options.replace ? 1 : 0, ...scoreArgs(newest)];
  const [written, entries] = (await REBUILD.run(redis, [key, marker, pending], args)) as [number, number];
  return { written: written === 1, entries };
}

/** Remove some posts from a list (and from a rebuild's pending set). Null when the list is missing. */
export async function removeEntries(redis: RedisLike, key: string, ids: readonly PostId[]): Promise<number | null> {
  if (ids.length === 0) return (await redis.exists(key)) ? 0 : null;
  const removed = Number(await REMOVE.run(redis, [key, rebuildKeys(key).pending], [EMPTY_SENTINEL, ...ids]));
  return removed < 0 ? null : removed;
}

/** Renew a list's lease; false when it is missing. */
export async function renewLease(redis: RedisLike, key: string, leaseMs: number): Promise<boolean> {
  return (await redis.pexpire(key, leaseMs)) === 1;
}

/** Entries in a list, the sentinel not counted; 0 when missing. */
export async function listSize(redis: RedisLike, key: string): Promise<number> {
  return redis.zcount(key, 0, '+inf');
}

export interface SliceRequest {
  key: string;
  /** Renew the lease to this many ms in the same round trip; absent: only check that the list is present. */
  renewMs?: number;
}

export interface SliceOptions {
  /** Entries strictly older than this position; null or absent for the newest. */
  cursor?: FeedPosition | null;
  /** Entries wanted, at least 1. */
  limit: number;
}

/** Pairs of a WITHSCORES reply as positions, the sentinel dropped. */
function positions(raw: readonly string[]): FeedPosition[] {
  const out: FeedPosition[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i] === EMPTY_SENTINEL) continue;
    out.push({ id: raw[i], createdAt: Number(raw[i + 1]) });
  }
  return out;
}

/**
 * The newest `limit` entries of each list strictly older than the cursor, newest first, as slices
 * for core/feed-merge: `more` is set when the fetch hit its limit, so older entries may exist.
 * Null for a missing list (rebuild it). One pipelined round trip for all lists (on a cluster one
 * pipeline per node, concurrently); a list whose page starts with more than TIE_SLACK entries of the
 * cursor's millisecond at or above the cursor takes further fetches.
 *
 * Ordering: ZREVRANGEBYSCORE returns the entries of one score in reverse string order of their
 * members, which is the feed's (larger id first) because all ids of one millisecond have the same
 * number of digits (19 for every id minted after 2022-07-22, core/post-id.ts).
 */
export async function readSlices(redis: RedisLike, requests: readonly SliceRequest[], options: SliceOptions): Promise<(FeedSlice<FeedPosition> | null)[]> {
  return (await readSlicesAnd(redis, requests, options, [])).slices;
}

/** readSlices, with GETs of some other keys in the same round trip (their values in `values`). */
export async function readSlicesAnd(
  redis: RedisLike,
  requests: readonly SliceRequest[],
  options: SliceOptions,
  gets: readonly string[],
): Promise<{ slices: (FeedSlice<FeedPosition> | null)[]; values: (string | null)[] }> {
  const { limit } = options;
  const cursor = options.cursor ?? null;
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`page limit ${limit} must be a positive integer`);
  const n = requests.length;
  if (n + gets.length === 0) return { slices: [], values: [] };
  // Scores up to the cursor's ms inclusive (ties are filtered by id below); >= 0 leaves out the sentinel.
  const max = cursor ? cursor.createdAt : '+inf';
  const first = limit + (cursor ? TIE_SLACK : 0);
  // The lists of one read (a timeline, celebrities' lists) live on different slots: one pipeline,
  // or one per node on a cluster.
  const replies = await pipelinePerNode(
    redis,
    n + gets.length,
    (i) => (i < n ? requests[i].key : gets[i - n]),
    (p, i) => {
      if (i >= n) {
        p.get(gets[i - n]);
        return;
      }
      const r = requests[i];
      if (r.renewMs !== undefined) p.pexpire(r.key, r.renewMs);
      else p.exists(r.key);
      p.zrevrangebyscore(r.key, max, 0, 'WITHSCORES', 'LIMIT', 0, first);
    },
    (i) => (i < n ? 2 : 1),
  );
  const slices: (FeedSlice<FeedPosition> | null)[] = [];
  for (let i = 0; i < n; i++) {
    const [existsErr, present] = replies[2 * i];
    const [rangeErr, raw] = replies[2 * i + 1];
    if (existsErr) throw existsErr;
    if (rangeErr) throw rangeErr;
    if (present !== 1) {
      slices.push(null);
      continue;
    }
    slices.push(await collect(redis, requests[i].key, raw as string[], first, cursor, limit, max));
  }
  const values = gets.map((_, j) => {
    const [err, value] = replies[2 * n + j];
    if (err) throw err;
    return value as string | null;
  });
  return { slices, values };
}

/** Filter one list's first fetch by the cursor, and fetch on while ties used up the slack. */
async function collect(
  redis: RedisLike,
  key: string,
  firstRaw: string[],
  firstCount: number,
  cursor: FeedPosition | null,
  limit: number,
  max: number | string,
): Promise<FeedSlice<FeedPosition>> {
  const entries: FeedPosition[] = [];
  // A later fetch by offset may overlap an earlier one if entries were added meanwhile.
  const seen = cursor ? new Set<string>() : null;
  let raw = firstRaw;
  let count = firstCount;
  let offset = 0;
  for (;;) {
    const fetched = raw.length / 2;
    const batch = positions(raw);
    for (let j = 0; j < batch.length; j++) {
      const e = batch[j];
      if (cursor && !isOlderThan(e, cursor)) continue;
      if (seen) {
        if (seen.has(e.id)) continue;
        seen.add(e.id);
      }
      entries.push(e);
      if (entries.length === limit) {
        // Entries left in this fetch, or a full fetch: older entries may exist.
        return { entries, more: j < batch.length - 1 || fetched === count };
      }
    }
    if (fetched < count) return { entries, more: false };
    offset += fetched;
    count = limit - entries.length + TIE_SLACK;
    raw = await redis.zrevrangebyscore(key, max, 0, 'WITHSCORES', 'LIMIT', offset, count);
  }
}
