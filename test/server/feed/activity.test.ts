// UserActivity's background last-seen touches: batched into one statement at a time.
import { describe, expect, it } from 'vitest';
import type { TimelineCache } from '../../../server/cache/timelines.js';
import { TOUCH_BATCH, UserActivity } from '../../../server/feed/activity.js';
import type { FeedRepository, UserRecord } from '../../../server/store/repository.js';

const MINUTE = 60_000;

function fakeRepo() {
  const calls = { getUser: 0, touchUser: 0, batches: [] as Map<number, number>[], granularity: [] as number[] };
  let inFlight = 0;
  let maxInFlight = 0;
  const repo = {
    async getUser(id: number): Promise<UserRecord> {
      calls.getUser++;
      return { id, handle: `u${id}`, createdAt: 0, lastSeenAt: Date.now(), followerCount: 0, followeeCount: 0 };
    },
    async touchUser(): Promise<boolean> {
      calls.touchUser++;
      return true;
    },
    async touchUsers(touches: ReadonlyMap<number, number>, granularityMs: number): Promise<number> {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      calls.batches.push(new Map(touches));
      calls.granularity.push(granularityMs);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      return touches.size;
    },
  };
  return { repo: repo as unknown as FeedRepository, calls, maxInFlight: () => maxInFlight };
}

describe('UserActivity', () => {
  it('writes the once-a-minute touches of many readers together, one statement at a time', async () => {
    const { repo, calls, maxInFlight } = fakeRepo();
    let now = Date.now();
    const activity = new UserActivity({ repo, timelines: {} as TimelineCache, dormantMs: 30 * 86_400_000, clock: () => now, flushMs: 10 });
    const readers = Array.from({ length: TOUCH_BATCH + 10 }, (_, i) => i + 1);
    for (const id of readers) await activity.arrive(id); // first arrivals: checked and touched at once
    expect(calls.getUser).toBe(readers.length);
    expect(calls.touchUser).toBe(readers.length);

    now += MINUTE;
    for (const id of readers) await activity.arrive(id);
    for (const id of readers) await activity.arrive(id); // already queued: once
    expect(calls.touchUser).toBe(readers.length); // nothing written on the request path
    expect(activity.pendingTouches).toBe(readers.length);
    await activity.flush();
    expect(activity.pendingTouches).toBe(0);
    expect(calls.batches.map((b) => b.size)).toEqual([TOUCH_BATCH, 10]);
    expect(new Set(calls.batches.flatMap((b) => [...b.keys()]))).toEqual(new Set(readers));
    expect(calls.batches.every((b) => [...b.values()].every((at) => at === now))).toBe(true);
    expect(calls.granularity.every((g) => g === MINUTE)).toBe(true);
    expect(maxInFlight()).toBe(1);
  });

  it('flushes on its own after flushMs', async () => {
    const { repo, calls } = fakeRepo();
    let now = Date.now();
    const activity = new UserActivity({ repo, timelines: {} as TimelineCache, dormantMs: 30 * 86_400_000, clock: () => now, flushMs: 10 });
    await activity.arrive(7);
    now += MINUTE;
    await activity.arrive(7);
    for (let i = 0; i < 100 && calls.batches.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(calls.batches.map((b) => [...b])).toEqual([[[7, now]]]);
  });
});
