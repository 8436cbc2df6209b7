// The power-law generator: determinism, structure, celebrities, and the tail it promises.
import { readFileSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { saveGraph } from '../../sim/graph/file.js';
import { generateGraph, validateGenerateParams, type GenerateParams } from '../../sim/graph/generate.js';
import { followerTargets } from '../../sim/graph/popularity.js';
import { degreeHistogram } from '../../sim/graph/stats.js';
import { fitPowerLawTail } from '../../sim/graph/powerlaw.js';
import { expectWellFormed, followees, followers, scratch } from './helpers.js';

const base: GenerateParams = { users: 20000, avgFollows: 15, alpha: 2.3, maxFollows: 5000, followsSigma: 1, seed: 42, celebrities: [] };
const dir = scratch();

function bytes(p: GenerateParams, name: string): Buffer {
  const path = join(dir, name);
  saveGraph(generateGraph(p), path);
  return readFileSync(path);
}

describe('generateGraph', () => {
  it('is deterministic: the same parameters and seed give byte-identical files, another seed does not', () => {
    const p = { ...base, celebrities: [{ count: 2, followers: 0.1, name: 'star' }] };
    const a = bytes(p, 'a.fgraph');
    const b = bytes(p, 'b.fgraph');
    const c = bytes({ ...p, seed: 43 }, 'c.fgraph');
    expect(a.equals(b)).toBe(true);
    expect(a.equals(c)).toBe(false);
    expect(a.length).toBeGreaterThan(1000);
  });

  it("keeps generator version 1's edges below 16M slots: heavy accounts, a celebrity, rows that come up short", () => {
    // CRC-32 of the four arrays, taken with the generator of e3fc732 (before blocks existed)
    const digest = (g: ReturnType<typeof generateGraph>) =>
      [g.followerOffsets, g.followerIds, g.followeeOffsets, g.followeeIds].reduce((c, a) => crc32(Buffer.from(a.buffer, a.byteOffset, a.byteLength), c), 0);
    const heavy = generateGraph({ ...base, users: 50_000, avgFollows: 30, alpha: 2.05, seed: 11, celebrities: [{ count: 1, followers: 0.2, name: 'star' }] });
    expect([heavy.edges, digest(heavy).toString(16)]).toEqual([1_508_927, 'd2d2b2de']);
    const dense = generateGraph({ ...base, users: 1500, avgFollows: 1200, followsSigma: 0.01 });
    expect([dense.edges, digest(dense).toString(16)]).toEqual([1_799_382, 'ba6db717']);
  });

  it('makes no self-loops or duplicate edges, and both directions hold the same edges', () => {
    const g = generateGraph({ ...base, alpha: 2.05, celebrities: [{ count: 3, followers: 0.6 }] });
    expectWellFormed(g);
  });

  it('stays well formed when accounts follow most of a tiny graph', () => {
    const g = generateGraph({ ...base, users: 12, avgFollows: 9, followsSigma: 0.2, celebrities: [{ count: 1, followers: 11, name: 'all' }] });
    expectWellFormed(g);
    expect(followers(g, 11)).toBe(11);
    // Every account popular enough to choose its followers, every one following most others.
    const dense = generateGraph({ ...base, users: 1500, avgFollows: 1200, followsSigma: 0.01 });
    expectWellFormed(dense);
    expect(Math.abs(dense.edges / dense.users - 1200)).toBeLessThan(12);
  });

  it('averages close to avgFollows and never exceeds maxFollows', () => {
    const g = generateGraph({ ...base, users: 50000, avgFollows: 30 });
    expect(Math.abs(g.edges / g.users - 30) / 30).toBeLessThan(0.03);
    const capped = generateGraph({ ...base, avgFollows: 30, maxFollows: 60, followsSigma: 1.5 });
    let max = 0;
    for (let u = 0; u < capped.users; u++) max = Math.max(max, followees(capped, u));
    expect(max).toBe(60);
  });

  it('gives celebrities exactly their follower counts, names, and the last ids', () => {
    const users = 20000;
    const g = generateGraph({
      ...base,
      users,
      celebrities: [
        { count: 1, followers: 0.25, name: 'star' },
        { count: 3, followers: 1234, name: 'band' },
        { count: 2, followers: 500 },
        { count: 1, followers: 1 },
      ],
    });
    expectWellFormed(g);
    const expected = [
      ['star', 5000],
      ['band-1', 1234],
      ['band-2', 1234],
      ['band-3', 1234],
      ['celebrity-1', 500],
      ['celebrity-2', 500],
      ['celebrity-3', users - 1],
    ] as const;
    expected.forEach(([name, count], k) => {
      const id = users - expected.length + k;
      expect(g.names.get(id)).toBe(name);
      expect(followers(g, id)).toBe(count);
    });
    expect(g.names.size).toBe(expected.length);
    // Their followers are spread over the whole id range, not a block.
    const star = g.followerIds.subarray(g.followerOffsets[users - 7], g.followerOffsets[users - 6]);
    expect(star[0]).toBeLessThan(100);
    expect(star[star.length - 1]).toBeGreaterThan(users - 100);
  });

  it('refuses impossible parameters', () => {
    expect(() => validateGenerateParams({ ...base, alpha: 1 })).toThrow(/alpha must be greater than 1/);
    expect(() => validateGenerateParams({ ...base, users: 1 })).toThrow(/users/);
    expect(() => validateGenerateParams({ ...base, celebrities: [{ count: 1, followers: base.users }] })).toThrow(/at most users - 1/);
    expect(() => validateGenerateParams({ ...base, avgFollows: base.users })).toThrow(/avgFollows/);
  });

  it('gives the most followed accounts the saturating power law they were planned, not a pile-up at the cap', () => {
    const users = 100_000;
    const g = generateGraph({ ...base, users, avgFollows: 60, alpha: 2.1, seed: 5 });
    const counts = Array.from({ length: users }, (_, a) => followers(g, a)).sort((x, y) => y - x);
    let following = 0;
    for (let u = 0; u < users; u++) if (followees(g, u) > 0) following++;
    const planned = followerTargets(users, 2.1, g.edges, following - 1);
    expect(planned[0]).toBeGreaterThan(0.7 * users); // the head saturates...
    for (const rank of [0, 1, 2, 5, 10, 30, 100, 300, 1000]) {
      // ...and each rank still gets its planned count, within Poisson-sampling noise.
      expect(Math.abs(counts[rank] - planned[rank])).toBeLessThan(4 * Math.sqrt(planned[rank]) + 2);
    }
    for (let r = 1; r < 20; r++) expect(counts[r]).toBeLessThan(counts[r - 1]);
  });

  // The Clauset-Shalizi-Newman fit of the follower counts must give back the alpha asked for.
  for (const alpha of [2.1, 2.5, 3.0]) {
    for (const avgFollows of [8, 40]) {
      it(`has a follower tail with the requested exponent: alpha ${alpha}, ${avgFollows} follows, 100k users`, () => {
        const g = generateGraph({ ...base, users: 100_000, avgFollows, alpha, seed: 7 });
        const fit = fitPowerLawTail(degreeHistogram(g.followerOffsets))!;
        expect(Math.abs(fit.alpha - alpha)).toBeLessThan(0.1);
        expect(fit.nTail).toBeGreaterThan(1000);
      });
    }
  }
});
