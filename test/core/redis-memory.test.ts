import { describe, expect, it } from 'vitest';
import { jemallocSize, listUsageBytes, timelineInstanceBytes, timelineNaiveBytes, TIMELINE_KEY_LENGTH, zsetUsageBytes, ZSET_LISTPACK_MAX_ENTRIES } from '../../core/redis-memory.js';
import { timelineKey } from '../../core/keys.js';

// MEMORY USAGE on Redis 7.0.15 on this machine, key "mtest:z" (7 characters).
const MEASURED_ZSET: Array<[number, number]> = [
  [16, 440],
  [64, 1592],
  [128, 3128],
  [129, 17864],
  [200, 24560],
  [400, 49024],
  [800, 96896],
  [2000, 235616],
];
// MEMORY USAGE on Redis 7.0.15 (ANCHORS section 3): member = 19-digit id, score = 13-digit ms; the
// key's name is not given (432 B at 16 entries fits a name of at most 4 characters).
const ANCHOR_ZSET: Array<[number, number]> = [
  [16, 432],
  [128, 3120],
  [129, 18080],
  [800, 96904],
  [2000, 235992],
];
const ANCHOR_LIST: Array<[number, number]> = [
  [16, 320],
  [128, 1664],
];

describe('the Redis encoding model', () => {
  it('lands within 0.2% of every zset size measured here, listpack and skiplist', () => {
    for (const [n, bytes] of MEASURED_ZSET) expect(Math.abs(zsetUsageBytes(n, 7) - bytes) / bytes, `n=${n}`).toBeLessThan(0.002);
  });

  it('lands within 2% of the ANCHORS table', () => {
    for (const [n, bytes] of ANCHOR_ZSET) expect(Math.abs(zsetUsageBytes(n, 3) - bytes) / bytes, `n=${n}`).toBeLessThan(0.02);
  });

  it('counts a listpack as 20 B per entry in jemalloc size classes: 2,120 B for 100 entries under a real timeline key', () => {
    expect(timelineKey(123456789)).toHaveLength(TIMELINE_KEY_LENGTH);
    expect(zsetUsageBytes(100)).toBe(2120);
    expect([jemallocSize(100), jemallocSize(327), jemallocSize(1287), jemallocSize(2007), jemallocSize(2567)]).toEqual([112, 384, 1536, 2048, 3072]);
  });

  it('jumps at the listpack limit: entry 129 costs ~5x the per-entry bytes of entry 128', () => {
    expect(ZSET_LISTPACK_MAX_ENTRIES).toBe(128);
    expect(zsetUsageBytes(129) / 129 / (zsetUsageBytes(128) / 128)).toBeGreaterThan(4.5);
  });

  it('lands within 4% of the measured list sizes (celebrity recent-post lists)', () => {
    for (const [n, bytes] of ANCHOR_LIST) expect(Math.abs(listUsageBytes(n) - bytes) / bytes, `n=${n}`).toBeLessThan(0.04);
  });

  it('an 800-entry timeline costs ~128 B per entry instance-wide, ~5.3x the documents 24 B', () => {
    const perEntry = timelineInstanceBytes(800) / 800;
    expect(perEntry).toBeGreaterThan(125);
    expect(perEntry).toBeLessThan(132);
    expect(timelineInstanceBytes(800) / timelineNaiveBytes(800)).toBeCloseTo(perEntry / 24, 9);
    expect(timelineNaiveBytes(800)).toBe(19_200);
  });

  it('a missing key costs nothing', () => {
    expect(zsetUsageBytes(0)).toBe(0);
    expect(timelineInstanceBytes(0)).toBe(0);
    expect(listUsageBytes(0)).toBe(0);
  });
});
