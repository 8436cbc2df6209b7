import { describe, expect, it } from 'vitest';
import {
  comparePostIds,
  isPostId,
  makePostId,
  MAX_POST_ID,
  MAX_POST_ID_TIME_MS,
  MAX_SEQUENCE,
  MAX_WORKER_ID,
  POST_ID_EPOCH_MS,
  PostIdGenerator,
  postIdTime,
} from '../../core/post-id.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0); // 2026-11-30 12:00 UTC

function expectStrictlyIncreasing(ids: string[]): void {
  for (let i = 1; i < ids.length; i++) {
    if (comparePostIds(ids[i - 1], ids[i]) >= 0) throw new Error(`id ${i} (${ids[i]}) is not above id ${i - 1} (${ids[i - 1]})`);
  }
  expect(new Set(ids).size).toBe(ids.length);
}

describe('post id layout', () => {
  it('packs 41 bits of ms since the epoch, 10 bits of worker and 12 of sequence', () => {
    expect(makePostId(POST_ID_EPOCH_MS, 0, 0)).toBe('0');
    expect(makePostId(POST_ID_EPOCH_MS, 0, 1)).toBe('1');
    expect(makePostId(POST_ID_EPOCH_MS, 1, 0)).toBe('4096');
    expect(makePostId(POST_ID_EPOCH_MS + 1, 0, 0)).toBe('4194304');
    expect(makePostId(MAX_POST_ID_TIME_MS, MAX_WORKER_ID, MAX_SEQUENCE)).toBe(MAX_POST_ID);
    expect(BigInt(MAX_POST_ID)).toBe(2n ** 63n - 1n);
    const id = makePostId(T0, 517, 3001);
    expect(BigInt(id)).toBe((BigInt(T0 - POST_ID_EPOCH_MS) << 22n) | (517n << 12n) | 3001n);
    expect(postIdTime(id)).toBe(T0);
  });

  it('gives today\'s ids 19 digits, as the Redis memory model assumes', () => {
    expect(makePostId(T0)).toHaveLength(19);
    expect(makePostId(Date.UTC(2022, 6, 23))).toHaveLength(19);
    expect(makePostId(MAX_POST_ID_TIME_MS)).toHaveLength(19);
    expect(new Date(MAX_POST_ID_TIME_MS).getUTCFullYear()).toBe(2084);
  });

  it('refuses times, workers and sequences it cannot represent', () => {
    expect(() => makePostId(POST_ID_EPOCH_MS - 1)).toThrow(/outside 2015-01-01/);
    expect(() => makePostId(MAX_POST_ID_TIME_MS + 1)).toThrow(RangeError);
    expect(() => makePostId(T0, 1024)).toThrow(/worker id 1024 must be an integer in 0..1023/);
    expect(() => makePostId(T0, 0, 4096)).toThrow(/sequence 4096/);
    expect(() => new PostIdGenerator(-1)).toThrow(/worker id -1/);
    expect(() => new PostIdGenerator(1.5)).toThrow(RangeError);
    expect(() => postIdTime('12x')).toThrow(/not a post id/);
  });
});

describe('isPostId and comparePostIds', () => {
  it('accepts canonical decimals below 2^63 only', () => {
    for (const s of ['0', '1', '4096', '1234567890123456789', MAX_POST_ID]) expect(isPostId(s)).toBe(true);
    for (const s of ['', '01', '00', '-1', '+1', '1.0', '1e3', ' 1', '1 ', '0x10', '９', '9223372036854775808', '9999999999999999999', '12345678901234567890']) {
      expect(isPostId(s), s).toBe(false);
    }
    for (const v of [1, 1n, null, undefined, ['1'], { id: '1' }]) expect(isPostId(v)).toBe(false);
  });

  it('orders numerically, not as text', () => {
    expect(comparePostIds('9', '10')).toBeLessThan(0);
    expect(comparePostIds('10', '9')).toBeGreaterThan(0);
    expect(comparePostIds('123', '123')).toBe(0);
    expect(comparePostIds('999999999999999999', '1000000000000000000')).toBeLessThan(0);
    const ids = ['10', '9', '100', '1', '0', '99', MAX_POST_ID, '4194304'];
    expect([...ids].sort(comparePostIds)).toEqual(ids.map(BigInt).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map(String));
  });
});

describe('PostIdGenerator', () => {
  it('stays strictly increasing when the clock steps back 5 s, keeping its last millisecond', () => {
    let now = T0;
    const gen = new PostIdGenerator(7, () => now);
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      ids.push(gen.next());
      now += 1;
    }
    const lastBefore = ids[ids.length - 1];
    now -= 5_000; // NTP steps the clock back 5 seconds
    for (let i = 0; i < 6_000; i++) ids.push(gen.next()); // a burst while the clock is behind
    for (let i = 0; i < 5_200; i++) {
      now += 1; // the clock walks forward again, past where it was
      ids.push(gen.next());
    }
    expectStrictlyIncreasing(ids);
    // While the clock is behind, ids keep the last millisecond, then borrow the following one.
    const lastMs = postIdTime(lastBefore);
    expect(postIdTime(ids[100])).toBe(lastMs);
    expect(postIdTime(ids[100 + MAX_SEQUENCE - 1])).toBe(lastMs);
    expect(postIdTime(ids[100 + MAX_SEQUENCE])).toBe(lastMs + 1);
    expect(postIdTime(ids[100 + 6_000 - 1])).toBe(lastMs + 1);
    // Once the clock has passed the borrowed time, ids follow it again with sequence 0.
    const last = ids[ids.length - 1];
    expect(now).toBe(T0 + 300);
    expect(postIdTime(last)).toBe(now);
    expect(BigInt(last) & 0xfffn).toBe(0n);
    expect((BigInt(last) >> 12n) & 0x3ffn).toBe(7n);
  });

  it('borrows the next millisecond when 5,000 ids are asked for in one millisecond', () => {
    const gen = new PostIdGenerator(3, () => T0);
    const ids = Array.from({ length: 5_000 }, () => gen.next());
    expectStrictlyIncreasing(ids);
    expect(ids.slice(0, 4_096).every((id) => postIdTime(id) === T0)).toBe(true);
    expect(ids.slice(4_096).every((id) => postIdTime(id) === T0 + 1)).toBe(true);
    expect(BigInt(ids[4_095]) & 0xfffn).toBe(4095n);
    expect(BigInt(ids[4_096]) & 0xfffn).toBe(0n);
    // The clock catching up to the borrowed millisecond must not reissue it.
    let now = T0 + 1;
    const again = new PostIdGenerator(3, () => now);
    const a = Array.from({ length: 5_000 }, () => again.next());
    now = T0 + 2; // the borrowed millisecond: continue its sequence, do not restart at 0
    a.push(again.next());
    expect(postIdTime(a[5_000])).toBe(T0 + 2);
    expect(BigInt(a[5_000]) & 0xfffn).toBe(904n);
    now = T0 + 3;
    a.push(again.next());
    expect(BigInt(a[5_001]) & 0xfffn).toBe(0n);
    expectStrictlyIncreasing(a);
  });

  it('gives two workers disjoint ids in the same millisecond', () => {
    const a = new PostIdGenerator(1, () => T0);
    const b = new PostIdGenerator(2, () => T0);
    const ids = new Set<string>();
    for (let i = 0; i < 1_000; i++) {
      ids.add(a.next());
      ids.add(b.next());
    }
    expect(ids.size).toBe(2_000);
  });

  it('uses the wall clock by default and floors fractional clocks', () => {
    const before = Date.now();
    const id = new PostIdGenerator(0).next();
    expect(postIdTime(id)).toBeGreaterThanOrEqual(before);
    expect(postIdTime(id)).toBeLessThanOrEqual(Date.now());
    expect(postIdTime(new PostIdGenerator(0, () => T0 + 0.9).next())).toBe(T0);
    expect(() => new PostIdGenerator(0, () => POST_ID_EPOCH_MS - 1).next()).toThrow(RangeError);
    expect(() => new PostIdGenerator(0, () => NaN).next()).toThrow(RangeError);
  });
});
