import { describe, expect, it } from 'vitest';
import { EventQueue } from '../../sim/engine/event-queue.js';
import { WorkerPool } from '../../sim/model/worker-pool.js';
import { Rng } from '../../core/random.js';

describe('event queue', () => {
  it('pops in time order, equal times in insertion order, through growth', () => {
    const q = new EventQueue(2);
    const rng = new Rng(9);
    const times: number[] = [];
    for (let i = 0; i < 5000; i++) {
      const t = Math.floor(rng.float() * 100);
      times.push(t);
      q.push(t, i % 7, i, t * 2);
    }
    let lastT = -1;
    let lastA = -1;
    let n = 0;
    while (q.pop()) {
      expect(q.now).toBeGreaterThanOrEqual(lastT);
      if (q.now === lastT) expect(q.a).toBeGreaterThan(lastA);
      expect(q.b).toBe(q.now * 2);
      expect(q.kind).toBe(q.a % 7);
      lastT = q.now;
      lastA = q.a;
      n++;
    }
    expect(n).toBe(5000);
    expect(q.size).toBe(0);
  });

  it('refuses a time that is not a number', () => {
    const q = new EventQueue();
    expect(() => q.push(NaN, 0)).toThrow(RangeError);
    expect(() => q.push(-1, 0)).toThrow(RangeError);
  });
});

describe('worker pool', () => {
  it('serves FIFO on the first free worker', () => {
    const pool = new WorkerPool(2, 1000, 0, 1000, 100);
    expect(pool.submit(0, 1000)).toBe(1); // worker A 0..1
    expect(pool.submit(0, 1000)).toBe(1); // worker B 0..1
    expect(pool.submit(0.5, 500)).toBe(1.5); // waits for the first free
    expect(pool.submit(3, 100)).toBeCloseTo(3.1, 12); // idle pool: no wait
    expect(pool.backlogWrites(3)).toBeCloseTo(100, 9);
  });

  it('charges one round trip per pipelined batch', () => {
    const pool = new WorkerPool(1, 1000, 0.001, 100, 10);
    expect(pool.serviceTime(250)).toBeCloseTo(0.003 + 0.25, 12);
    expect(pool.serviceTime(1)).toBeCloseTo(0.001 + 0.001, 12);
  });

  it('shares fluid work over every worker and counts the throughput per second', () => {
    const pool = new WorkerPool(4, 100, 0, 100, 10);
    pool.addFluid(1, 800); // 200 writes each = 2 s per worker, from t=0
    expect(pool.drainTime()).toBeCloseTo(2, 12);
    expect(pool.submit(1, 100)).toBeCloseTo(3, 12);
    expect(pool.writesBySecond[0]).toBeCloseTo(400, 9);
    expect(pool.writesBySecond[1]).toBeCloseTo(400, 9);
    expect(pool.writesBySecond[2]).toBeCloseTo(100, 9);
  });
});
