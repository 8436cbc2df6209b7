import { describe, expect, it } from 'vitest';
import { listUsageBytes, timelineInstanceBytes, timelineNaiveBytes, zsetUsageBytes, ZSET_LISTPACK_MAX_ENTRIES } from '../../core/redis-memory.js';

// MEMORY USAGE on Redis 7.0.15 (ANCHORS section 3): member = 19-digit id, score = 13-digit ms.
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
  it('lands within 4% of every measured zset size, listpack and skiplist', () => {
    for (const [n, bytes] of ANCHOR_ZSET) expect(Math.abs(zsetUsageBytes(n) - bytes) / bytes, `n=${n}`).toBeLessThan(0.04);
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
