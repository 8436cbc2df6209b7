// A worker's statement after idle time (sim/model/idle-wake.ts): the calibrated curve about the
// reference gap, followed only over the paces calibrate measures, and the same ratio slowing the
// rest of the event, wired into the reference worker's consumers.
import { describe, expect, it } from 'vitest';
import { ConsumerFleet } from '../../sim/model/consumers.js';
import { curveAt, idleShift, statementAfterIdle, wakeFactor } from '../../sim/model/idle-wake.js';
import { buildPopulation } from '../../sim/model/population.js';
import { simulate } from '../../sim/model/simulation.js';
import { basePolicy } from '../../sim/policy.js';
import { scenarioFrom, starGraph } from './fixtures.js';

const costsWith = (line: string) => scenarioFrom(`infrastructure:\n  costs: { ${line} }\n`, 10).infrastructure.costs;

describe("a statement after the worker's idle time", () => {
  // measured at 50 ms; the median 0.8 ms after 12.5 ms, 1 ms after 50 ms, 1.6 ms after 200 ms
  const costs = costsWith('eventStatements: 1ms, eventStatementsByIdle: { 12.5ms: 0.8ms, 200ms: 1.6ms, 50ms: 1ms }, eventStatementsGap: 50ms');

  it('reads the idle times as durations, ascending', () => {
    expect(costs.eventStatementsByIdle).toEqual([
      { gap: 0.0125, statement: 0.0008 },
      { gap: 0.05, statement: 0.001 },
      { gap: 0.2, statement: 0.0016 },
    ]);
  });

  it('moves a statement by the curve between its idle time and the reference, linear in log2 of the idle time', () => {
    expect(idleShift(costs, 0.05)).toBeCloseTo(0, 12);
    expect(idleShift(costs, 0.2)).toBeCloseTo(0.0006, 12);
    expect(idleShift(costs, 0.0125)).toBeCloseTo(-0.0002, 12);
    // 100 ms is one of the two doublings from 50 to 200 ms: half of the 0.6 ms rise
    expect(idleShift(costs, 0.1)).toBeCloseTo(0.0003, 12);
    expect(idleShift(costs, 0.025)).toBeCloseTo(-0.0001, 12);
    expect(curveAt(costs.eventStatementsByIdle!, 0.1)).toBeCloseTo(0.0013, 12);
  });

  it('holds the curve at its ends: a busy worker, or one idle for minutes, is not extrapolated', () => {
    expect(idleShift(costs, 600)).toBeCloseTo(0.0006, 12);
    expect(idleShift(costs, Infinity)).toBeCloseTo(0.0006, 12);
    expect(idleShift(costs, 0.001)).toBeCloseTo(-0.0002, 12);
    expect(idleShift(costs, 0)).toBeCloseTo(-0.0002, 12);
    expect(idleShift(costs, -1)).toBeCloseTo(-0.0002, 12);
  });

  it('never takes a statement under a quarter of its draw, and without a curve changes nothing', () => {
    expect(statementAfterIdle(costs, 0.0002, 0)).toBeCloseTo(0.00005, 12);
    expect(statementAfterIdle(costs, 0.001, 0)).toBeCloseTo(0.0008, 12);
    const flat = costsWith('eventStatements: 1ms');
    expect(flat.eventStatementsByIdle).toBeNull();
    expect(statementAfterIdle(flat, 0.001, 0)).toBe(0.001);
    expect(statementAfterIdle(flat, 0.001, 1e6)).toBe(0.001);
  });

  it("slows the rest of the event by the curve's ratio to its reference point, 1 without a curve", () => {
    expect(wakeFactor(costs, 0.05)).toBeCloseTo(1, 12);
    expect(wakeFactor(costs, 0.2)).toBeCloseTo(1.6, 12);
    expect(wakeFactor(costs, 0.1)).toBeCloseTo(1.3, 12);
    expect(wakeFactor(costs, 0)).toBeCloseTo(0.8, 12);
    expect(wakeFactor(costs, Infinity)).toBeCloseTo(1.6, 12);
    expect(wakeFactor(costsWith('eventStatements: 1ms'), 10)).toBe(1);
  });

  it("a woken consumer's batches run their overhead, not their round trip, slower", () => {
    // a batch: a 0.2 ms round trip and 0.8 ms of its own; 1,000 writes a second
    const f = new ConsumerFleet(1, 1000, 0.001, 1000, 1, 1, 0, 60, 0.0002);
    expect(f.rtt).toBeCloseTo(0.001, 12);
    f.wake = 1.5;
    f.slowdown = 1.5;
    expect(f.rtt).toBeCloseTo(0.0002 + 0.0008 * 1.5, 12);
    // 10 writes: one batch, its time and its 10 writes, both slowed
    const { consumer, lane } = f.take(1);
    const start = f.write(consumer, 1, 10);
    expect(start).toBe(1);
    expect(f.batchDone(start, 0, 10)).toBeCloseTo(1 + 0.0002 + 0.0008 * 1.5 + (10 * 1.5) / 1000, 12);
    f.finish(consumer, lane, 2);
  });

  it('refuses an idle time that is not a duration, or one written twice, in one line at its key', () => {
    expect(() => costsWith('eventStatementsByIdle: { 50: 1ms }')).toThrow(/eventStatementsByIdle\["?50"?\]?.*"50" is not a valid key \(expected idle times \(14ms, 0\.2s\)\)/);
    expect(() => costsWith('eventStatementsByIdle: { 0ms: 1ms }')).toThrow(/"0ms" is not a valid idle time \(a duration above 0\)/);
    expect(() => costsWith('eventStatementsByIdle: { 50ms: 1ms, 0.05s: 2ms }')).toThrow(/"0\.05s" is the same idle time as "50ms"|"50ms" is the same idle time as "0\.05s"/);
    expect(() => costsWith('eventStatementsByIdle: { 50ms: 1 }')).toThrow(/unit/);
  });

  it("a consumer's idle time is from the end of everything it took to its next start; negative while it is busy", () => {
    const f = new ConsumerFleet(1, 5000, 0.001, 1000, 2, 8, 0, 60);
    const first = f.take(1);
    expect(f.idleBefore(first.consumer, first.start)).toBe(Infinity);
    f.finish(first.consumer, first.lane, 1.02);
    // a second event while the first is handled shares its batch: busy
    const second = f.take(1.01);
    f.finish(second.consumer, second.lane, 1.03);
    expect(f.idleBefore(second.consumer, second.start)).toBeLessThan(0);
    // the consumer reads again after its acknowledgement and read (two round trips): idle from 1.03
    const third = f.take(1.5);
    expect(f.idleBefore(third.consumer, third.start)).toBeCloseTo(0.47, 12);
  });
});

describe("the reference worker's statement in a simulation", () => {
  /** One burst post by the star of 100 followers after a long idle, the statement 3 ms at a 100 ms gap. */
  function burst(byIdle: string) {
    const sc = scenarioFrom(`duration: 1m
activity:
  postsPerUserPerDay: 0
  sessionsPerUserPerDay: 0
  dormantShare: 0
  diurnal: none
events:
  - at: 10s
    celebrityBurst: { accounts: 1, window: 1ms }
infrastructure:
  fanoutWorkers: 1
  writesPerSecondPerWorker: 5000
  api: none
  costs: { rtt: 0s, expand: 0s, expandPerFollower: 0s, eventStatements: 3ms, eventStatementsByIdle: ${byIdle}, eventStatementsGap: 100ms, pickup: 0s }
  postToLog: 0s
  worker: { splitPosts: false }
policy: { kind: push, skipDormant: false }
`, 101);
    return simulate({ scenario: sc, population: buildPopulation(starGraph(100), sc), policy: basePolicy(sc) });
  }

  it("charges a worker idle since the start the curve's last point: 3 ms + (2.5 - 1.5) ms, and its writes 2.5 / 1.5 as long", () => {
    const m = burst('{ 25ms: 1.2ms, 100ms: 1.5ms, 400ms: 2.5ms }');
    expect(m.fanout.stages.statements.mean).toBeCloseTo(0.004, 9);
    expect(m.fanout.postLag.max).toBeCloseTo(0.004 + (100 / 5000) * (2.5 / 1.5), 9);
    const flat = burst('none');
    expect(flat.fanout.stages.statements.mean).toBeCloseTo(0.003, 9);
    expect(flat.fanout.postLag.max).toBeCloseTo(0.003 + 100 / 5000, 9);
  });
});
