import { describe, expect, it } from 'vitest';
import { compareNewestFirst, decodeCursor, encodeCursor, isOlderThan, type FeedPosition } from '../../core/cursor.js';
import { mergeFeed, type FeedInput, type FeedPage, type FeedSlice } from '../../core/feed-merge.js';
import { makePostId, PostIdGenerator } from '../../core/post-id.js';

const SECRET = 'feed-merge-test-secret-0123456789';
const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

interface Post extends FeedPosition {
  author: number;
}

/** mulberry32: a tiny seeded generator, so every random feed here is reproducible. */
function rng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

const ids = (entries: readonly FeedPosition[]) => entries.map((e) => e.id);

/** The expected feed, the slow way: every distinct post kept, sorted. */
function oracle<T extends FeedPosition>(inputs: readonly (readonly T[])[], keep: (e: T) => boolean = () => true): T[] {
  const byId = new Map<string, T>();
  for (const list of inputs) for (const e of list) if (!byId.has(e.id)) byId.set(e.id, e);
  return [...byId.values()].filter(keep).sort(compareNewestFirst);
}

/** Pages through a feed as a client would, the cursor going through the codec each time. */
function pageAll<T extends FeedPosition>(timeline: readonly T[], lists: readonly (readonly T[])[], limit: number, keep?: (e: T) => boolean): T[][] {
  const pages: T[][] = [];
  let cursor: string | null = null;
  for (let guard = 0; guard < 10_000; guard++) {
    const page: FeedPage<T> = mergeFeed(timeline, lists, { limit, cursor: cursor === null ? null : decodeCursor(cursor, SECRET), keep });
    expect(page.needsMore).toBe(false);
    pages.push(page.entries);
    if (page.next === null) return pages;
    expect(page.entries).toHaveLength(limit);
    cursor = encodeCursor(page.next, SECRET);
  }
  throw new Error('paging did not end');
}

describe('the documents\' pagination exercise', () => {
  // 15 posts by a regular author (pushed into the timeline) and 15 by a celebrity (pulled from
  // their list), the i-th of each in the same millisecond.
  const times = Array.from({ length: 15 }, (_, i) => T0 - i * 60_000).reverse();
  const mint = (worker: number, author: number) => {
    let now = 0;
    const gen = new PostIdGenerator(worker, () => now);
    return times.map((t) => ((now = t), { createdAt: t, id: gen.next(), author })).reverse();
  };
  const regular = mint(1, 100);
  const celebrity = mint(2, 200);

  it('pages 10 at a time into 30 distinct posts in order, none repeated or skipped', () => {
    const pages = pageAll(regular, [celebrity], 10);
    expect(pages.map((p) => p.length)).toEqual([10, 10, 10]);
    const all = pages.flat();
    expect(new Set(ids(all)).size).toBe(30);
    expect(all).toEqual([...regular, ...celebrity].sort(compareNewestFirst));
    for (let i = 0; i < 30; i += 2) {
      expect(all[i].createdAt).toBe(all[i + 1].createdAt); // the pairs share a millisecond
      expect(all.slice(i, i + 2).map((p) => p.author)).toEqual([200, 100]); // worker 2's id is larger
    }
  });

  it('is not what a timestamp-only cursor gives: that one skips the rest of a millisecond', () => {
    // The naive cursor ("createdAt < last createdAt") loses the second post of a pair cut by a page end.
    const naive: Post[] = [];
    let before = Infinity;
    for (;;) {
      const page = mergeFeed(regular.filter((p) => p.createdAt < before), [celebrity.filter((p) => p.createdAt < before)], { limit: 3 });
      naive.push(...page.entries);
      if (page.next === null) break;
      before = page.next.createdAt;
    }
    expect(naive.length).toBeLessThan(30);
    expect(pageAll(regular, [celebrity], 3).flat()).toHaveLength(30);
  });
});

describe('mergeFeed', () => {
  // A timeline and three celebrity lists with heavy ties and ids of different lengths.
  const r = rng(7);
  const posts: Post[] = Array.from({ length: 120 }, (_, i) => ({ createdAt: T0 - r(25), id: String(1 + i * 37 + r(30) * 1000), author: r(9) }));
  const inputsOf = (n: number) => Array.from({ length: n }, (_, k) => posts.filter((_, i) => i % n === k).sort(compareNewestFirst));
  const [timeline, ...lists] = inputsOf(4);

  it('paging with limit 1, 3, 7 and 10 equals one large page', () => {
    const whole = mergeFeed(timeline, lists, { limit: 1_000 });
    expect(whole.next).toBeNull();
    expect(whole.entries).toEqual(oracle([timeline, ...lists]));
    expect(whole.entries).toHaveLength(new Set(ids(posts)).size);
    for (const limit of [1, 3, 7, 10]) expect(pageAll(timeline, lists, limit).flat(), `limit ${limit}`).toEqual(whole.entries);
  });

  it('shows a post in the timeline and in a celebrity list once, also across a page end', () => {
    const a = { createdAt: T0, id: makePostId(T0, 1, 0) };
    const b = { createdAt: T0, id: makePostId(T0, 1, 1) }; // the author crossed the threshold at b
    const c = { createdAt: T0 - 5, id: makePostId(T0 - 5, 1, 0) };
    const d = { createdAt: T0 - 9, id: makePostId(T0 - 9, 1, 0) };
    const tl = [b, a, d];
    const celeb = [b, c, c]; // c twice: a redelivered event
    expect(ids(mergeFeed(tl, [celeb], { limit: 10 }).entries)).toEqual(ids([b, a, c, d]));
    for (const limit of [1, 2, 3]) expect(ids(pageAll(tl, [celeb, [d]], limit).flat())).toEqual(ids([b, a, c, d]));
  });

  it('refills pages the filter shortens from the rest of the inputs', () => {
    const deleted = new Set(ids(posts.filter((_, i) => i % 5 === 0)));
    const unfollowed = new Set([3, 4]);
    let calls = 0;
    const keep = (p: Post) => (calls++, !deleted.has(p.id) && !unfollowed.has(p.author));
    const expected = oracle([timeline, ...lists], keep);
    expect(expected.length).toBeLessThan(posts.length * 0.7);
    calls = 0;
    const first = mergeFeed(timeline, lists, { limit: 10, keep });
    expect(first.entries).toEqual(expected.slice(0, 10)); // a full page despite the dropped posts
    expect(calls).toBeGreaterThan(10);
    const pages = pageAll(timeline, lists, 10, keep);
    expect(pages.flat()).toEqual(expected);
    expect(pages.slice(0, -1).every((p) => p.length === 10)).toBe(true);
  });

  it('ends with next = null, without an empty last page when exactly limit entries remain', () => {
    const twelve = posts.slice(0, 12).sort(compareNewestFirst);
    const first = mergeFeed(twelve, [], { limit: 6 });
    expect(first.next).toEqual({ createdAt: twelve[5].createdAt, id: twelve[5].id });
    const second = mergeFeed(twelve, [], { limit: 6, cursor: first.next });
    expect(second.entries).toEqual(twelve.slice(6));
    expect(second.next).toBeNull();
    const short = mergeFeed(twelve, [], { limit: 20 });
    expect(short.entries).toHaveLength(12);
    expect(short.next).toBeNull();
    expect(mergeFeed([], [[], []], { limit: 5 })).toEqual({ entries: [], next: null, needsMore: false });
  });

  it('returns bare positions as cursors and the caller\'s own entry objects', () => {
    const page = mergeFeed(timeline, lists, { limit: 2 });
    expect(page.next).toEqual({ createdAt: page.entries[1].createdAt, id: page.entries[1].id });
    expect(Object.keys(page.next!)).toEqual(['createdAt', 'id']);
    expect(posts).toContain(page.entries[0]);
  });

  it('steps past the cursor in inputs that start before it', () => {
    const all = oracle([timeline, ...lists]);
    for (const at of [0, 1, 2, 17, 63, all.length - 2, all.length - 1]) {
      const cursor = { createdAt: all[at].createdAt, id: all[at].id };
      expect(mergeFeed(timeline, lists, { limit: 1_000, cursor }).entries).toEqual(all.slice(at + 1));
    }
    // A cursor between posts (a post since deleted everywhere) works too.
    const gap = { createdAt: all[10].createdAt, id: String(BigInt(all[10].id) + 1n) };
    expect(mergeFeed(timeline, lists, { limit: 1_000, cursor: gap }).entries).toEqual(all.filter((e) => isOlderThan(e, gap)));
  });

  it('stops at the end of a slice that has more, rather than skip what was not fetched', () => {
    const p = (ms: number) => ({ createdAt: T0 - ms, id: makePostId(T0 - ms) });
    const fullTimeline = [p(0), p(10), p(20), p(30)];
    const celeb = [p(5), p(15), p(25)];
    // Only the first two timeline entries were fetched: p(15) must not be placed before p(20) is known.
    const slice: FeedSlice<FeedPosition> = { entries: fullTimeline.slice(0, 2), more: true };
    const page = mergeFeed(slice, [celeb], { limit: 5 });
    expect(page.entries).toEqual([p(0), p(5), p(10)]);
    expect(page.needsMore).toBe(true);
    expect(page.next).toEqual(p(10));
    const rest = mergeFeed({ entries: fullTimeline.filter((e) => isOlderThan(e, page.next!)), more: false }, [celeb], { limit: 2, cursor: page.next });
    expect(rest).toEqual({ entries: [p(15), p(20)], next: p(20), needsMore: false });
    // A slice with more and nothing past the cursor: resume from the cursor itself, fetching further.
    expect(mergeFeed({ entries: [p(0)], more: true }, [celeb], { limit: 5, cursor: p(0) })).toEqual({ entries: [], next: p(0), needsMore: true });
    expect(mergeFeed({ entries: [], more: true }, [celeb], { limit: 5 })).toEqual({ entries: [], next: null, needsMore: true });
    // A full page needs nothing more, even if it ended on the slice's last entry.
    expect(mergeFeed(slice, [celeb], { limit: 3 })).toEqual({ entries: [p(0), p(5), p(10)], next: p(10), needsMore: false });
  });

  it('touches only the heads it needs: 2,000 lists of 100, a page of 20', () => {
    const big = Array.from({ length: 2_000 }, (_, k) =>
      Array.from({ length: 100 }, (_, j) => ({ createdAt: T0 - j * 1_000 - (k % 997), id: makePostId(T0 - j * 1_000 - (k % 997), k % 1024, j % 4096), author: k })),
    );
    let calls = 0;
    const page = mergeFeed([], big, { limit: 20, keep: () => (calls++, true) });
    expect(page.entries).toHaveLength(20);
    expect(calls).toBe(20);
    expect(page.entries).toEqual(oracle(big).slice(0, 20));
  });

  it('refuses a bad limit and an input that is not newest first', () => {
    for (const limit of [0, -1, 1.5, NaN]) expect(() => mergeFeed(timeline, lists, { limit })).toThrow(/page limit .* must be a positive integer/);
    const unordered = [timeline[1], timeline[0], ...timeline.slice(2)];
    expect(() => mergeFeed(unordered, [], { limit: 5 })).toThrow(/feed input 0 is not newest first at index 1/);
    expect(() => mergeFeed([], [[], unordered], { limit: 5 })).toThrow(/feed input 2 is not newest first/);
  });
});

describe('mergeFeed on random feeds (seeded)', () => {
  interface Feed {
    inputs: Post[][];
    keep?: (p: Post) => boolean;
  }

  function randomFeed(seed: number): Feed {
    const r = rng(seed);
    const count = 1 + r(80);
    const ticks = 1 + r(6); // few distinct milliseconds: heavy ties
    const used = new Set<string>();
    const posts: Post[] = [];
    while (posts.length < count) {
      const id = String(r(2) ? r(1_000) : r(10_000_000)); // ids of 1 to 7 digits tie-break numerically
      if (used.has(id)) continue;
      used.add(id);
      posts.push({ createdAt: T0 - r(ticks) * 7, id, author: r(10) });
    }
    const inputs: Post[][] = Array.from({ length: 1 + r(6) }, () => []);
    for (const p of posts) {
      inputs[r(inputs.length)].push(p);
      if (r(5) === 0) inputs[r(inputs.length)].push(p); // in two inputs, or twice in one
    }
    for (const list of inputs) list.sort(compareNewestFirst);
    const dropped = new Set(posts.filter(() => r(4) === 0).map((p) => p.id));
    const unfollowed = r(10);
    return { inputs, keep: r(2) ? (p) => !dropped.has(p.id) && p.author !== unfollowed : undefined };
  }

  /** The server's refill loop over fetch windows: each input is fetched `window` entries at a time. */
  function readPage(feed: Feed, cursor: FeedPosition | null, limit: number, window: () => number): FeedPage<Post> {
    const entries: Post[] = [];
    let at = cursor;
    for (;;) {
      const fetch = (list: Post[]): FeedInput<Post> => {
        const older = at ? list.filter((e) => isOlderThan(e, at!)) : list;
        const w = window();
        return { entries: older.slice(0, w), more: older.length > w };
      };
      const [tl, ...rest] = feed.inputs.map(fetch);
      const page = mergeFeed(tl, rest, { limit: limit - entries.length, cursor: at, keep: feed.keep });
      entries.push(...page.entries);
      if (!page.needsMore) return { entries, next: page.next, needsMore: false };
      if (at !== null) expect(isOlderThan(page.next!, at)).toBe(true); // every refill moves on
      at = page.next;
    }
  }

  it('pages 200 random feeds exactly into their full merged order, whole or fetched in windows', () => {
    let pagesSeen = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const feed = randomFeed(seed);
      const expected = oracle(feed.inputs, feed.keep);
      const r = rng(seed * 7919);
      const [tl, ...lists] = feed.inputs;
      expect(mergeFeed(tl, lists, { limit: 10_000, keep: feed.keep }).entries, `seed ${seed}`).toEqual(expected);
      for (const windowed of [false, true]) {
        const got: Post[] = [];
        let cursor: string | null = null;
        for (let guard = 0; ; guard++) {
          if (guard > 1_000) throw new Error(`seed ${seed}: paging did not end`);
          const limit = 1 + r(12);
          const position = cursor === null ? null : decodeCursor(cursor, SECRET);
          const page = windowed
            ? readPage(feed, position, limit, () => 1 + r(4))
            : mergeFeed(tl, lists, { limit, cursor: position, keep: feed.keep });
          expect(page.needsMore).toBe(false);
          got.push(...page.entries);
          pagesSeen++;
          if (page.next === null) break;
          expect(page.entries, `seed ${seed}: only the last page is short`).toHaveLength(limit);
          cursor = encodeCursor(page.next, SECRET);
        }
        expect(ids(got), `seed ${seed}${windowed ? ', windowed' : ''}`).toEqual(ids(expected));
      }
    }
    expect(pagesSeen).toBeGreaterThan(1_000);
  });
});
