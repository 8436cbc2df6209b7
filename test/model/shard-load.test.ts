// Redis in the model (sim/model/shard-load.ts): each process a single server whose last second's
// load sets the wait a command meets; the fan-out's pipelined writes kept apart, met as the rest of
// the worker's chunk in progress and as often as not the next (uniform over two chunks' time).
import { describe, expect, it } from 'vitest';
import { mean, quantile } from 'simple-statistics';
import { Rng } from '../../core/random.js';
import { ShardLoad } from '../../sim/model/shard-load.js';

const draws = (load: ShardLoad, shard: number, n = 200_000, seed = 5) => {
  const rng = new Rng(seed);
  return Array.from({ length: n }, () => load.wait(shard, rng));
};

describe('Redis load and the wait a command meets', () => {
  it('charges nothing on an idle process', () => {
    const load = new ShardLoad(4, 4, 0.001);
    load.advance(1);
    expect(draws(load, 2, 1000).every((w) => w === 0)).toBe(true);
  });

  it('waits behind a pipeline with the chance of its busy share, spread evenly over two chunks', () => {
    // 1.5 ms chunks; 30% of the last second on pipelined writes, nothing else
    const load = new ShardLoad(1, 1, 0.0015);
    load.add(0, 0.3, 0, true);
    load.advance(1);
    expect(load.pipedRho[0]).toBeCloseTo(0.3, 12);
    const w = draws(load, 0);
    const waited = w.filter((x) => x > 0);
    expect(waited.length / w.length).toBeCloseTo(0.3, 2);
    expect(Math.max(...waited)).toBeLessThanOrEqual(0.003);
    // uniform over (0, 3 ms): mean 1.5 ms, p10 0.3 ms, p90 2.7 ms; over every command, mean 0.45 ms
    expect(mean(waited)).toBeCloseTo(0.0015, 4);
    expect(quantile(waited, 0.1)).toBeCloseTo(0.0003, 4);
    expect(quantile(waited, 0.9)).toBeCloseTo(0.0027, 4);
    expect(mean(w)).toBeCloseTo(0.3 * 0.0015, 4);
  });

  it('keeps the M/M/1 wait for single commands beside the pipeline: P = their share, mean S / (1 - rho)', () => {
    // 20% pipelined, 40% single commands of 100 us (4,000 of them): rho 0.6
    const load = new ShardLoad(1, 1, 0.001);
    load.add(0, 0.2, 0, true);
    load.add(0, 0.4, 4000);
    load.advance(1);
    expect(load.rho[0]).toBeCloseTo(0.6, 12);
    const w = draws(load, 0);
    const single = w.filter((x) => x > 0.002);
    // beyond 2 ms only the exponential (mean 100 us / 0.4 = 250 us): P(wait > 2 ms) = 0.4 e^-8
    expect(single.length / w.length).toBeLessThan(0.001);
    const waited = w.filter((x) => x > 0).length / w.length;
    expect(waited).toBeCloseTo(0.6, 2);
    // mean: 0.2 x 1 ms + 0.4 x 0.25 ms
    expect(mean(w)).toBeCloseTo(0.2 * 0.001 + 0.4 * 0.00025, 5);
  });

  it('puts the shards on their processes: one process feels every shard it holds', () => {
    const one = new ShardLoad(16, 1, 0.001);
    one.add(3, 0.5, 0, true);
    one.advance(1);
    expect(one.processOf(11)).toBe(0);
    expect(mean(draws(one, 11))).toBeCloseTo(0.5 * 0.001, 4);
    // a process each: shard 11 is idle
    const each = new ShardLoad(16, 16, 0.001);
    each.add(3, 0.5, 0, true);
    each.advance(1);
    expect(draws(each, 11, 1000).every((x) => x === 0)).toBe(true);
    // 16 shards on 4 processes: shard 3 and 7 share process 3
    const four = new ShardLoad(16, 4, 0.001);
    four.add(3, 0.5, 0, true);
    four.advance(1);
    expect(four.processOf(7)).toBe(3);
    expect(mean(draws(four, 7))).toBeCloseTo(0.5 * 0.001, 4);
    expect(draws(four, 6, 1000).every((x) => x === 0)).toBe(true);
    expect(() => new ShardLoad(4, 5)).toThrow(/5 Redis processes for 4 shards/);
    expect(() => new ShardLoad(4, 0)).toThrow(RangeError);
  });

  it('shares spread load by the shards a process holds', () => {
    // 10 shards on 3 processes hold 4, 3 and 3: 0.5 s of pipelined writes spread over them
    const load = new ShardLoad(10, 3, 0.001);
    load.addSpread(0, 0, 0.5);
    load.advance(1);
    expect([...load.pipedRho].map((x) => Number(x.toFixed(9)))).toEqual([0.2, 0.15, 0.15]);
  });

  it('piles what does not fit in a second into a backlog every later command waits behind', () => {
    const load = new ShardLoad(1, 1, 0);
    load.add(0, 1.5, 1000);
    load.advance(1);
    expect(load.backlog[0]).toBeCloseTo(0.5, 12);
    expect(Math.min(...draws(load, 0, 1000))).toBeGreaterThanOrEqual(0.5);
    expect(load.saturated[0]).toBe(1);
    // two idle seconds drain it
    load.advance(3);
    expect(load.backlog[0]).toBe(0);
  });
});
