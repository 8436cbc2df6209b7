import seedrandom from 'seedrandom';
import { mean, variance } from 'simple-statistics';
import { describe, expect, it } from 'vitest';
import { keepForReader, parsePolicy, postSalt, readerDraw } from '../../core/fanout-policy.js';
import { keyedUniform, Rng, useUniformSource } from '../../core/random.js';

const draws = (r: Rng, n: number, f: (r: Rng) => number) => Array.from({ length: n }, () => f(r));

describe('seeded streams (Rng)', () => {
  it("draws seedrandom's alea under the seed", () => {
    const a = seedrandom.alea('42');
    const r = new Rng(42);
    for (let i = 0; i < 5; i++) expect(r.float()).toBe(a.double());
    expect(r.uint32()).toBe(a.int32() >>> 0);
  });

  it('gives the same stream for the same seed and label, another for another', () => {
    expect(draws(Rng.derive(7, 'posts'), 20, (r) => r.uint32())).toEqual(draws(Rng.derive(7, 'posts'), 20, (r) => r.uint32()));
    expect(draws(Rng.derive(7, 'posts'), 20, (r) => r.uint32())).not.toEqual(draws(Rng.derive(7, 'reads'), 20, (r) => r.uint32()));
    expect(draws(Rng.derive(7, 'posts'), 20, (r) => r.uint32())).not.toEqual(draws(Rng.derive(8, 'posts'), 20, (r) => r.uint32()));
  });

  it('keeps seeds apart beyond 2^53 (a 20-digit seed is not rounded onto its neighbour)', () => {
    expect(new Rng('12345678901234567890').float()).not.toBe(new Rng('12345678901234567891').float());
  });

  it('draws each distribution with the moments of its closed form (100,000 draws, 5 standard errors)', () => {
    const n = 100_000;
    const u = draws(new Rng(1), n, (r) => r.float());
    expect(Math.min(...u)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...u)).toBeLessThan(1);
    expect(Math.abs(mean(u) - 0.5)).toBeLessThan(5 * Math.sqrt(1 / 12 / n));
    const e = draws(new Rng(2), n, (r) => r.exponential(4));
    expect(Math.abs(mean(e) - 0.25)).toBeLessThan(5 * (0.25 / Math.sqrt(n)));
    const z = draws(new Rng(3), n, (r) => r.normal());
    expect(Math.abs(mean(z))).toBeLessThan(5 / Math.sqrt(n));
    expect(Math.abs(variance(z) - 1)).toBeLessThan(5 * Math.sqrt(2 / n));
    const p = draws(new Rng(4), n, (r) => r.poisson(3.5));
    expect(Math.abs(mean(p) - 3.5)).toBeLessThan(5 * Math.sqrt(3.5 / n));
    expect(Math.abs(variance(p) - 3.5)).toBeLessThan(0.1);
    const big = draws(new Rng(5), 20_000, (r) => r.poisson(900));
    expect(Math.abs(mean(big) - 900)).toBeLessThan(5 * Math.sqrt(900 / 20_000));
    const k = draws(new Rng(6), n, (r) => r.int(10));
    for (let v = 0; v < 10; v++) expect(Math.abs(k.filter((x) => x === v).length / n - 0.1)).toBeLessThan(5 * Math.sqrt(0.09 / n));
    expect(draws(new Rng(7), 1000, (r) => r.floatOpen()).every((x) => x > 0 && x <= 1)).toBe(true);
  });

  it('takes another source for the benchmark that holds alea against it, and gives alea back', () => {
    // a counter: the k-th draw of any stream is k / 8
    const before = useUniformSource(() => {
      let k = 0;
      return { int32: () => k++, double: () => k++ / 8 };
    });
    try {
      expect(draws(new Rng(42), 3, (r) => r.float())).toEqual([0, 0.125, 0.25]);
      expect(draws(new Rng(42), 2, (r) => r.uint32())).toEqual([0, 1]);
    } finally {
      useUniformSource(before);
    }
    expect(new Rng(42).float()).toBe(seedrandom.alea('42').double());
  });
});

describe('keyed draws', () => {
  it('are a function of (salt, id) alone, uniform in [0, 1)', () => {
    expect(keyedUniform(17, 123_456)).toBe(keyedUniform(17, 123_456));
    expect(keyedUniform(17, 123_456)).not.toBe(keyedUniform(18, 123_456));
    const u = Array.from({ length: 100_000 }, (_, i) => keyedUniform(99, i));
    expect(u.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(Math.abs(mean(u) - 0.5)).toBeLessThan(5 * Math.sqrt(1 / 12 / 100_000));
  });

  it("are the reader cap's draw: a follower of 4x the cap keeps a quarter of a post's deliveries, the same ones on redelivery", () => {
    const salt = postSalt('1234567890123456789');
    expect(readerDraw(salt, 42)).toBe(keyedUniform(salt, 42));
    const policy = parsePolicy('reader-cap:500', { kind: 'push', threshold: 25_000, skipDormant: false, readerCap: 2000, backlogBound: 1e6, minThreshold: 1000 });
    const kept = Array.from({ length: 40_000 }, (_, reader) => keepForReader(policy, 2000, readerDraw(salt, reader)));
    expect(Math.abs(kept.filter(Boolean).length / 40_000 - 0.25)).toBeLessThan(5 * Math.sqrt(0.1875 / 40_000));
    expect(Array.from({ length: 40_000 }, (_, reader) => keepForReader(policy, 2000, readerDraw(salt, reader)))).toEqual(kept);
  });
});
