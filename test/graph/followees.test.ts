// How a large graph's draws are split into blocks (sim/graph/followees.ts): blocks at equal shares of
// the slots, and every quota split among them so that the shares add up to it exactly, each the
// floor or ceiling of the block's share of the slots.
import { describe, expect, it } from 'vitest';
import { keyedUniform, Rng } from '../../core/random.js';
import { blockQuotas, BLOCKS_FROM_SLOTS, DRAW_BLOCKS, planFollowees } from '../../sim/graph/followees.js';

function plan(users: number, slotsEach: number, ranks: number) {
  const rng = new Rng(5);
  const quotas = Uint32Array.from({ length: ranks }, (_, r) => Math.floor(2000 / (r + 1)) + rng.int(3));
  const targets = Float64Array.from(quotas);
  const idOfRank = Uint32Array.from({ length: ranks }, (_, r) => r);
  const slots = Uint32Array.from({ length: users }, (_, u) => slotsEach + (u % 7));
  return planFollowees({ quotas, targets, idOfRank, slots }, 9);
}

describe('planFollowees', () => {
  it('draws a graph under BLOCKS_FROM_SLOTS slots as one block, with every quota whole', () => {
    const one = plan(1000, 20, 500);
    expect(one.blockStarts).toEqual(Uint32Array.of(0, 1000));
    const q = blockQuotas(one, 0);
    for (let r = 0; r < 500; r++) expect(q(r)).toBe(one.quotas[r]);
  });

  it('splits a larger one into DRAW_BLOCKS blocks at equal shares of the slots, and each quota exactly among them', () => {
    const users = 1_100_000;
    const big = plan(users, Math.ceil(BLOCKS_FROM_SLOTS / users), 20_000);
    const total = big.offsets[users];
    expect(total).toBeGreaterThanOrEqual(BLOCKS_FROM_SLOTS);
    expect(big.blockStarts.length).toBe(DRAW_BLOCKS + 1);
    expect(big.blockStarts[0]).toBe(0);
    expect(big.blockStarts[DRAW_BLOCKS]).toBe(users);
    const share = Array.from({ length: DRAW_BLOCKS }, (_, b) => (big.offsets[big.blockStarts[b + 1]] - big.offsets[big.blockStarts[b]]) / total);
    for (const s of share) expect(Math.abs(s - 1 / DRAW_BLOCKS)).toBeLessThan(1e-4);
    const quota = share.map((_, b) => blockQuotas(big, b));
    let shares = 0;
    for (let r = 0; r < 20_000; r++) {
      let sum = 0;
      quota.forEach((q, b) => {
        const n = q(r);
        expect(Math.abs(n - big.quotas[r] * share[b])).toBeLessThan(1);
        sum += n;
      });
      expect(sum).toBe(big.quotas[r]);
      shares += quota[0](r);
    }
    // a quota smaller than the blocks lands in different blocks for different ranks
    expect(shares).toBeGreaterThan(0);
    expect(shares).toBeLessThan(big.quotas.reduce((s, q) => s + q, 0));

    // a quota so large that q + its rank's phase rounds up to q + 1: still exact
    const q = 0xffffffff;
    let rank = 0;
    while (rank < 50_000_000 && Math.floor(q + keyedUniform(big.splitSalt, rank)) === q) rank++;
    expect(Math.floor(q + keyedUniform(big.splitSalt, rank))).toBe(q + 1);
    const huge = { ...big, quotas: new Uint32Array(rank + 1).fill(q) };
    expect(share.reduce((sum, _, b) => sum + blockQuotas(huge, b)(rank), 0)).toBe(q);
  });
});
