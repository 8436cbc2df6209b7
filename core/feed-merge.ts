// The home-feed read: a k-way merge of the reader's timeline (pushed posts) with the recent posts
// of the celebrities they follow (pulled posts), one page at a time. The server's read path and the
// simulator both call this, so the model pages exactly as the server does.
//
// A binary heap holds one head per input: a page costs O(K + (limit + skipped) log K), where
// skipped counts duplicates and filtered entries, plus a galloping search per input to step past
// the cursor. No input is copied, concatenated or sorted.
import { compareNewestFirst, isOlderThan, type FeedPosition } from './cursor.js';

/** A feed entry: its position, and whatever else the caller carries along (author, body key). */
export type FeedEntry = FeedPosition;

/**
 * Part of a longer newest-first list: `more` says older entries exist that were not fetched. The
 * merge never passes the end of such a slice, since the missing entries might belong before
 * entries of other inputs.
 */
export interface FeedSlice<T> {
  entries: readonly T[];
  more: boolean;
}

/** A whole newest-first list, or a slice of one. Ties in createdAt are ordered by id, largest first. */
export type FeedInput<T> = readonly T[] | FeedSlice<T>;

export interface MergeOptions<T> {
  /** Entries wanted on the page, at least 1. */
  limit: number;
  /** Only entries strictly older than this; null or absent for the first page. */
  cursor?: FeedPosition | null;
  /** Drops entries during the merge (deleted posts, unfollowed authors); the page is refilled from the inputs. */
  keep?: (entry: T) => boolean;
}

export interface FeedPage<T> {
  /** Newest first, each post id once. */
  entries: T[];
  /**
   * The cursor for the next page: the last entry's position, or null when the inputs hold
   * nothing more. With needsMore, the position to resume filling this page from (null: the start).
   */
  next: FeedPosition | null;
  /**
   * The page is short because a slice with `more` ran out: fetch the entries of the inputs older
   * than `next` and merge again for the remaining limit - entries.length. `next` moves past every
   * entry the slice held beyond the cursor; if it held none, `next` is the cursor itself and the
   * fetch must reach further.
   */
  needsMore: boolean;
}

/** The first index of a newest-first list whose entry is strictly older than the cursor. */
function firstOlder(list: readonly FeedPosition[], cursor: FeedPosition): number {
  const n = list.length;
  if (n === 0 || isOlderThan(list[0], cursor)) return 0;
  // Gallop: cheap when the caller already fetched from the cursor on (the usual case).
  let lo = 0; // list[lo] is not older
  let step = 1;
  while (lo + step < n && !isOlderThan(list[lo + step], cursor)) {
    lo += step;
    step *= 2;
  }
  let hi = Math.min(lo + step, n); // list[hi] is older, or hi === n
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (isOlderThan(list[mid], cursor)) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** A bare position (no caller fields), for encodeCursor. */
function positionOf(p: FeedPosition | null): FeedPosition | null {
  return p ? { createdAt: p.createdAt, id: p.id } : null;
}

/** The next page of a home feed. Input 0 is the timeline, input i + 1 is lists[i]. */
export function mergeFeed<T extends FeedEntry>(timeline: FeedInput<T>, lists: readonly FeedInput<T>[], options: MergeOptions<T>): FeedPage<T> {
  const { limit, keep } = options;
  const cursor = options.cursor ?? null;
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`page limit ${limit} must be a positive integer`);

  const inputs: (readonly T[])[] = [];
  const more: boolean[] = [];
  for (const input of [timeline, ...lists]) {
    const whole = Array.isArray(input);
    inputs.push(whole ? (input as readonly T[]) : (input as FeedSlice<T>).entries);
    more.push(!whole && (input as FeedSlice<T>).more);
  }

  const k = inputs.length;
  const at = new Int32Array(k); // the head of each input
  const heap = new Int32Array(k); // input numbers, newest head on top
  let size = 0;
  // A slice with `more` ran out: nothing older than its last entry can be placed.
  let stalled = false;
  for (let i = 0; i < k; i++) {
    at[i] = cursor ? firstOlder(inputs[i], cursor) : 0;
    if (at[i] < inputs[i].length) heap[size++] = i;
    else if (more[i]) stalled = true;
  }

  // Ties between heads break on the input number, so equal inputs always merge the same way.
  const before = (a: number, b: number): boolean => {
    const c = compareNewestFirst(inputs[a][at[a]], inputs[b][at[b]]);
    return c < 0 || (c === 0 && a < b);
  };
  const siftDown = (from: number): void => {
    const top = heap[from];
    let p = from;
    for (;;) {
      let child = 2 * p + 1;
      if (child >= size) break;
      if (child + 1 < size && before(heap[child + 1], heap[child])) child++;
      if (!before(heap[child], top)) break;
      heap[p] = heap[child];
      p = child;
    }
    heap[p] = top;
  };
  for (let p = (size >> 1) - 1; p >= 0; p--) siftDown(p);

  const entries: T[] = [];
  // Ids already placed or dropped: a post can sit in the timeline and in a celebrity list (its
  // author crossed the threshold), or twice in one list (an at-least-once redelivery).
  const seen = new Set<string>();
  // Every entry not older than this has been placed, dropped or skipped as a duplicate.
  let done: FeedPosition | null = cursor;
  while (!stalled && size > 0 && entries.length < limit) {
    const i = heap[0];
    const list = inputs[i];
    const entry = list[at[i]++];
    done = entry;
    if (at[i] < list.length) {
      // An unordered input would make the cursor skip posts: fail loudly instead.
      if (compareNewestFirst(entry, list[at[i]]) > 0) throw new RangeError(`feed input ${i} is not newest first at index ${at[i]}`);
      siftDown(0);
    } else {
      heap[0] = heap[--size];
      if (size > 0) siftDown(0);
      if (more[i]) stalled = true;
    }
    if (seen.has(entry.id)) continue;
    seen.add(entry.id);
    if (keep && !keep(entry)) continue;
    entries.push(entry);
  }

  if (entries.length === limit) {
    // The loop stopped on the last entry placed, so `done` is its position.
    const drained = size === 0 && !stalled;
    return { entries, next: drained ? null : positionOf(done), needsMore: false };
  }
  // Resume after the dropped entries too, so a refill always moves on.
  if (stalled) return { entries, next: positionOf(done), needsMore: true };
  return { entries, next: null, needsMore: false };
}
