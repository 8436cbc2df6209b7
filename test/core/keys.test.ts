import { describe, expect, it } from 'vitest';
import { crc16, keySlot, slotShard, timelineKey, authorPostsKey, userShard } from '../../core/keys.js';

describe('Redis Cluster key slots', () => {
  it('CRC16 matches the Redis Cluster specification test vector', () => {
    expect(crc16('123456789')).toBe(0x31c3);
  });
  it('hash tags put one user\'s keys in one slot', () => {
    expect(keySlot(timelineKey(42))).toBe(keySlot(authorPostsKey(42)));
    expect(keySlot('{user1000}.following')).toBe(keySlot('{user1000}.followers'));
    expect(keySlot('foo{}{bar}')).toBe(crc16('foo{}{bar}') % 16384);
  });
  it('slots split into equal contiguous shard ranges, and users spread evenly', () => {
    expect(slotShard(0, 16)).toBe(0);
    expect(slotShard(16383, 16)).toBe(15);
    expect(slotShard(1024, 16)).toBe(1);
    const counts = new Array(16).fill(0);
    for (let u = 0; u < 160_000; u++) counts[userShard(u, 16)]++;
    for (const c of counts) expect(Math.abs(c - 10_000)).toBeLessThan(600);
  });
});
