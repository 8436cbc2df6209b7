import { describe, expect, it } from 'vitest';
import { listCpuSeconds, listReadSeconds } from '../../sim/model/list-reads.js';

describe('a list read by what it holds (sim/model/list-reads.ts)', () => {
  it('is the fixed part per list plus the part per entry returned', () => {
    const costs = { zrange: 8e-6, zrangePerEntry: 0.3e-6 } as Parameters<typeof listReadSeconds>[0];
    const api = { cpuPerList: 9e-6, cpuPerListEntry: 0.8e-6 } as Parameters<typeof listCpuSeconds>[0];
    // 7 lists: a full timeline (25 entries), an empty own list, five pulled lists of 2 posts
    expect(listReadSeconds(costs, 7, 35)).toBeCloseTo(7 * 8e-6 + 35 * 0.3e-6, 15);
    expect(listCpuSeconds(api, 7, 35)).toBeCloseTo(7 * 9e-6 + 35 * 0.8e-6, 15);
    expect(listReadSeconds(costs, 0, 0)).toBe(0);
  });
});
