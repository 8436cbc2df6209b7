// The queueing closed forms the plan sizes with, against hand computations.
import { expect, test } from 'vitest';
import { littlesLaw, maxUtilisation, mm1WaitQuantile, squareRootStaffing } from '../../sim/plan/staffing.js';

test("Little's law and square-root staffing (ANCHORS 5) match a hand computation", () => {
  // 10,000 pages/s x 2 ms of CPU = 20 cores busy; 20 + 2.375 x sqrt(20) = 30.62 -> 31
  const a = littlesLaw(10_000, 0.002);
  expect(a).toBeCloseTo(20, 12);
  expect(squareRootStaffing(a, 2.375)).toBe(31);
  // Q = 1: 20 + 4.47 = 24.47 -> 25; an exact square stays exact: 100 + 1 x 10 = 110
  expect(squareRootStaffing(20, 1)).toBe(25);
  expect(squareRootStaffing(100, 1)).toBe(110);
  expect(squareRootStaffing(0, 2.375)).toBe(0);
  // a = 0.3: 0.3 + 2.375 x 0.548 = 1.60 -> 2
  expect(squareRootStaffing(0.3, 2.375)).toBe(2);
});

test('M/M/1 wait quantile: P(W > t) = rho exp(-(1 - rho) t / S)', () => {
  // rho 0.5, S 1 ms: t99 = S / (1 - rho) x ln(rho / 0.01) = 2 ms x ln 50
  expect(mm1WaitQuantile(0.5, 0.001, 0.99)).toBeCloseTo(0.002 * Math.log(50), 12);
  // fewer than 1% of requests wait at all: the p99 wait is 0
  expect(mm1WaitQuantile(0.005, 0.001, 0.99)).toBe(0);
  expect(mm1WaitQuantile(1, 0.001, 0.99)).toBe(Infinity);
  // the slowest of several shards waits longer than one
  expect(mm1WaitQuantile(0.5, 0.001, 0.99, 3)).toBeGreaterThan(mm1WaitQuantile(0.5, 0.001, 0.99));
});

test('maxUtilisation finds where a latency curve crosses its limit', () => {
  const latency = (rho: number) => 0.001 / (1 - rho);
  // 1 ms / (1 - rho) <= 4 ms <=> rho <= 0.75
  expect(maxUtilisation(latency, 0.004)).toBeCloseTo(0.75, 9);
  expect(maxUtilisation(latency, 1)).toBe(0.98);
  expect(maxUtilisation(latency, 0.0005)).toBe(0);
});
