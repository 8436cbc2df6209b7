// Adding entries to post lists (post-list.ts): the add script's calls, many lists a call on a
// standalone Redis (a fan-out batch), one slot's lists a call on a cluster, and their replies list
// by list.
import type { FeedPosition } from '../../core/cursor.js';
import { timelinesPerAddCall } from '../../core/redis-pipeline.js';
import type { ScriptArg, ScriptCall } from './lua.js';
import { ADD_SCRIPT, EMPTY_SENTINEL, rebuildKeys, scoreArgs, type ListShape } from './post-list.js';
import { isCluster, type RedisLike } from './redis-like.js';
import { groupBySlot } from './slots.js';

export type AddState = 'written' | 'pending' | 'missing';

export interface AddReply {
  /** written: into the list; pending: into the pending set of a rebuild under way; missing: nowhere. */
  state: AddState;
  /** Entries new to the list (or pending set); 0 for a redelivery. */
  added: number;
}

const STATES: readonly AddState[] = ['missing', 'written', 'pending'];

/** The add script's arguments before the entries' score, id pairs: cap, lease, sentinel. */
const ADD_ARGS_BEFORE_ENTRIES = 3;

/** The add script's arguments after the keys, for many lists at once (ScriptCall.args). */
export function addArgs(shape: ListShape, entries: readonly FeedPosition[]): ScriptArg[] {
  return [shape.cap, shape.leaseMs, EMPTY_SENTINEL, ...scoreArgs(entries)];
}

/** The keys one list adds to an add call: the list, its rebuild marker, its pending set. */
function addKeys(key: string): string[] {
  const { marker, pending } = rebuildKeys(key);
  return [key, marker, pending];
}

/**
 * The add calls writing `args` (from addArgs) into the lists at `keys`: timelinesPerAddCall lists a
 * call (core/redis-pipeline.ts: 50 for one entry, fewer for several), each call's lists of one hash
 * slot (a cluster refuses a script's keys over several), in the order given. `lists[c]` holds the
 * indices into `keys` call c writes.
 */
export function addCalls(redis: RedisLike, keys: readonly string[], args: readonly ScriptArg[]): { calls: ScriptCall[]; lists: number[][] } {
  const perCall = timelinesPerAddCall((args.length - ADD_ARGS_BEFORE_ENTRIES) / 2);
  const groups = isCluster(redis) ? [...groupBySlot(keys).values()] : [keys.map((_, i) => i)];
  const calls: ScriptCall[] = [];
  const lists: number[][] = [];
  for (const group of groups) {
    for (let at = 0; at < group.length; at += perCall) {
      const part = group.slice(at, at + perCall);
      calls.push({ keys: part.flatMap((i) => addKeys(keys[i])), args });
      lists.push(part);
    }
  }
  return { calls, lists };
}

/** One list's add: its state and the entries new to it, or the error of the call that wrote it. */
export type ListAddReply = [Error | null, AddReply | null];

/**
 * Add the same entries to many present lists (a fan-out batch): one pipeline of add calls (one per
 * node on a cluster). The replies in the order of `keys`; a failed call fails each of its lists
 * (Redis keeps what a script wrote before its error: the lists before the failing one may hold the
 * entries, which the event's redelivery then finds as duplicates).
 */
export async function addToLists(redis: RedisLike, keys: readonly string[], args: readonly ScriptArg[]): Promise<ListAddReply[]> {
  const { calls, lists } = addCalls(redis, keys, args);
  const replies = await ADD_SCRIPT.runMany(redis, calls);
  const out = new Array<ListAddReply>(keys.length);
  replies.forEach(([err, reply], c) => {
    const flat = reply as number[] | null;
    lists[c].forEach((i, j) => (out[i] = err === null && flat ? [null, addReply(flat, j)] : [err ?? new Error('the add script answered nothing'), null]));
  });
  return out;
}

/** List j's reply within an add call's flat {state, added, ...}. */
function addReply(flat: readonly number[], j: number): AddReply {
  return { state: STATES[flat[2 * j]], added: flat[2 * j + 1] };
}

/** Add entries to a present list (trim, renew the lease); nothing is written into a missing one. */
export async function addEntries(redis: RedisLike, key: string, shape: ListShape, entries: readonly FeedPosition[]): Promise<AddReply> {
  if (entries.length === 0) return { state: (await redis.exists(key)) ? 'written' : 'missing', added: 0 };
  const reply = await ADD_SCRIPT.run(redis, addKeys(key), addArgs(shape, entries));
  return addReply(reply as number[], 0);
}
