// A worker's stages after idle time (sim/model/idle-wake.ts): each stage's calibrated curve about
// the reference gap, followed only over the paces calibrate measures, moving that stage by a shift,
// wired into the reference worker's consumers.
import { describe, expect, it } from 'vitest';
import { ConsumerFleet } from '../../sim/model/consumers.js';
import { curveAt, firstPageAfterIdle, idleShift, statementAfterIdle, writesWake } from '../../sim/model/idle-wake.js';
import { scenarioFrom, starBurst } from './fixtures.js';

const costsWith = (line: string) => scenarioFrom(`infrastructure:\n  costs: { ${line} }\n`, 10).infrastructure.costs;

describe("a statement after the worker's idle time", () => {
  // measured at 50 ms; the median 0.8 ms after 12.5 ms, 1 ms after 50 ms, 1.6 ms after 200 ms
  const costs = costsWith('eventStatements: 1ms, eventStatementsByIdle: { 12.5ms: 0.8ms, 200ms: 1.6ms, 50ms: 1ms }, eventStatementsGap: 50ms');

  it('reads the idle times as durations, ascending', () => {
    expect(costs.eventStatementsByIdle).toEqual([
      { gap: 0.0125, value: 0.0008 },
      { gap: 0.05, value: 0.001 },
      { gap: 0.2, value: 0.0016 },
    ]);
  });

  it('moves a statement by the curve between its idle time and the reference, linear in log2 of the idle time', () => {
    expect(idleShift(costs.eventStatementsByIdle, costs, 0.05)).toBeCloseTo(0, 12);
    expect(idleShift(costs.eventStatementsByIdle, costs, 0.2)).toBeCloseTo(0.0006, 12);
    expect(idleShift(costs.eventStatementsByIdle, costs, 0.0125)).toBeCloseTo(-0.0002, 12);
    // 100 ms is one of the two doublings from 50 to 200 ms: half of the 0.6 ms rise
    expect(idleShift(costs.eventStatementsByIdle, costs, 0.1)).toBeCloseTo(0.0003, 12);
    expect(idleShift(costs.eventStatementsByIdle, costs, 0.025)).toBeCloseTo(-0.0001, 12);
    expect(curveAt(costs.eventStatementsByIdle!, 0.1)).toBeCloseTo(0.0013, 12);
  });

  it('holds the curve at its ends: a busy worker, or one idle for minutes, is not extrapolated', () => {
    expect(idleShift(costs.eventStatementsByIdle, costs, 600)).toBeCloseTo(0.0006, 12);
    expect(idleShift(costs.eventStatementsByIdle, costs, Infinity)).toBeCloseTo(0.0006, 12);
    expect(idleShift(costs.eventStatementsByIdle, costs, 0.001)).toBeCloseTo(-0.0002, 12);
    expect(idleShift(costs.eventStatementsByIdle, costs, 0)).toBeCloseTo(-0.0002, 12);
    expect(idleShift(costs.eventStatementsByIdle, costs, -1)).toBeCloseTo(-0.0002, 12);
  });

  it('never takes a statement under a quarter of its draw, and without a curve changes nothing', () => {
    expect(statementAfterIdle(costs, 0.0002, 0)).toBeCloseTo(0.00005, 12);
    expect(statementAfterIdle(costs, 0.001, 0)).toBeCloseTo(0.0008, 12);
    const flat = costsWith('eventStatements: 1ms');
    expect(flat.eventStatementsByIdle).toBeNull();
    expect(statementAfterIdle(flat, 0.001, 0)).toBe(0.001);
    expect(statementAfterIdle(flat, 0.001, 1e6)).toBe(0.001);
  });

  it("moves the first page and the writes by their own curves' shifts, not the statement's ratio; without a curve not at all", () => {
    // the statement rises 0.6 ms from 50 to 200 ms idle, the first page 0.4 ms, the writes 0.1 ms
    const staged = costsWith(
      'eventStatementsByIdle: { 12.5ms: 0.8ms, 200ms: 1.6ms, 50ms: 1ms }, eventFirstPageByIdle: { 50ms: 0.8ms, 200ms: 1.2ms }, eventWritesByIdle: { 50ms: 1ms, 200ms: 1.1ms }, eventStatementsGap: 50ms',
    );
    // a 3 ms page of a large post takes the same 0.4 ms as a small one's
    expect(firstPageAfterIdle(staged, 0.003, 0.2)).toBeCloseTo(0.0034, 12);
    expect(firstPageAfterIdle(staged, 0.003, 0.1)).toBeCloseTo(0.0032, 12);
    expect(firstPageAfterIdle(staged, 0.003, 0.05)).toBeCloseTo(0.003, 12);
    expect(writesWake(staged, 0.2)).toBeCloseTo(0.0001, 12);
    expect(writesWake(staged, 0.05)).toBeCloseTo(0, 12);
    expect(writesWake(staged, Infinity)).toBeCloseTo(0.0001, 12);
    // the statement's curve moves neither
    expect(firstPageAfterIdle(costs, 0.003, 0.2)).toBe(0.003);
    expect(writesWake(costs, 0.2)).toBe(0);
  });

  it('never takes a first page under a quarter of its draw, nor a small post\'s writes under a quarter of theirs', () => {
    const steep = costsWith('eventFirstPageByIdle: { 1ms: 0.1ms, 50ms: 2ms }, eventWritesByIdle: { 1ms: 0.1ms, 50ms: 2ms }, eventStatementsGap: 50ms');
    expect(firstPageAfterIdle(steep, 0.001, 0)).toBeCloseTo(0.00025, 12);
    expect(firstPageAfterIdle(steep, 0.004, 0)).toBeCloseTo(0.0021, 12);
    expect(writesWake(steep, 0)).toBeCloseTo(-0.0015, 12);
  });

  it("a woken consumer's post takes its writes' move once, before its first batch; a busy one's never under a round trip", () => {
    // a batch: a 0.2 ms round trip and 0.8 ms of its own; 1,000 writes a second; batches of 10, one in flight
    const f = new ConsumerFleet(1, 1000, 0.001, 10, 1, 1, 60, 0.0002);
    expect(f.rtt).toBeCloseTo(0.001, 12);
    f.wakeSeconds = 0.0005;
    // 25 writes: three batches, each a 1 ms batch and its writes, the first 0.5 ms later
    const { consumer, lane } = f.take(1, 0);
    const start = f.write(consumer, 1, 25);
    expect(start).toBe(1);
    expect(f.batchDone(start, 0, 25)).toBeCloseTo(1 + 0.0005 + 0.001 + 0.01, 12);
    expect(f.batchDone(start, 2, 25)).toBeCloseTo(1 + 0.0005 + 0.003 + 0.025, 12);
    f.finish(consumer, lane, 2);
    f.wakeSeconds = -0.1;
    expect(f.batchDone(3, 0, 1)).toBeCloseTo(3.0002, 12);
  });

  it('refuses an idle time that is not a duration, or one written twice, in one line at its key', () => {
    expect(() => costsWith('eventStatementsByIdle: { 50: 1ms }')).toThrow(/eventStatementsByIdle\["?50"?\]?.*"50" is not a valid key \(expected idle times \(14ms, 0\.2s\)\)/);
    expect(() => costsWith('eventStatementsByIdle: { 0ms: 1ms }')).toThrow(/"0ms" is not a valid idle time \(a duration above 0\)/);
    expect(() => costsWith('eventStatementsByIdle: { 50ms: 1ms, 0.05s: 2ms }')).toThrow(/"0\.05s" is the same idle time as "50ms"|"50ms" is the same idle time as "0\.05s"/);
    expect(() => costsWith('eventStatementsByIdle: { 50ms: 1 }')).toThrow(/unit/);
    // the first page's and the writes' curves are read by the same rules, each error at its own key
    expect(() => costsWith('eventFirstPageByIdle: { 0ms: 1ms }')).toThrow(/eventFirstPageByIdle.*"0ms" is not a valid idle time \(a duration above 0\)/);
    expect(() => costsWith('eventWritesByIdle: { 50: 1ms }')).toThrow(/eventWritesByIdle\["?50"?\]?.*"50" is not a valid key/);
  });

  it("a consumer's idle time is from the end of everything it took to its next start; negative while it is busy", () => {
    const f = new ConsumerFleet(1, 5000, 0.001, 1000, 2, 8, 60);
    const first = f.take(1, 0);
    expect(f.idleBefore(first.consumer, first.start)).toBe(Infinity);
    f.finish(first.consumer, first.lane, 1.02);
    // a second event while the first is handled shares its batch: busy
    const second = f.take(1.01, 0);
    f.finish(second.consumer, second.lane, 1.03);
    expect(f.idleBefore(second.consumer, second.start)).toBeLessThan(0);
    // the consumer reads again after its acknowledgement and read (two round trips): idle from 1.03
    const third = f.take(1.5, 0);
    expect(f.idleBefore(third.consumer, third.start)).toBeCloseTo(0.47, 12);
  });
});

describe("the reference worker's stages in a simulation", () => {
  /** One burst post by the star of 100 followers after a long idle, the statement 3 ms and the first page 2 ms at a 100 ms gap. */
  const burst = (curves: string) => starBurst(`rtt: 0s, expand: 2ms, expandPerFollower: 0s, eventStatements: 3ms, ${curves}, eventStatementsGap: 100ms, pickup: 0s`);

  it("charges a worker idle since the start each curve's last point: 3 + (2.5 - 1.5) ms, 2 + (1.2 - 0.8) ms, and 100 writes + (1.3 - 1.0) ms", () => {
    const m = burst('eventStatementsByIdle: { 25ms: 1.2ms, 100ms: 1.5ms, 400ms: 2.5ms }, eventFirstPageByIdle: { 100ms: 0.8ms, 400ms: 1.2ms }, eventWritesByIdle: { 100ms: 1ms, 400ms: 1.3ms }');
    expect(m.fanout.stages.statements.mean).toBeCloseTo(0.004, 9);
    expect(m.fanout.stages.firstPage.mean).toBeCloseTo(0.0024, 9);
    expect(m.fanout.stages.writes.mean).toBeCloseTo(0.0003 + 100 / 5000, 9);
    expect(m.fanout.postLag.max).toBeCloseTo(0.004 + 0.0024 + 0.0003 + 100 / 5000, 9);
    const flat = burst('eventStatementsByIdle: none');
    expect(flat.fanout.stages.statements.mean).toBeCloseTo(0.003, 9);
    expect(flat.fanout.postLag.max).toBeCloseTo(0.003 + 0.002 + 100 / 5000, 9);
  });

  it("draws an idle worker's pickup per event from costs.pickup: its quantiles come back, the same for the same seed", () => {
    // 1,000 posts by a star of 3 followers over 10 minutes: each event finds the worker idle (it is done in under 4 ms)
    const costs = (pickup: string) => `rtt: 0s, expand: 0.5ms, expandPerFollower: 0s, eventStatements: 0.5ms, pickup: ${pickup}`;
    const run = (pickup: string, seed = 42) => starBurst(costs(pickup), { followers: 3, posts: 1000, window: '10m', duration: '11m', seed }).fanout.stages.pickup;
    const table = '{ min: 0ms, p50: 1ms, p90: 2ms, p99: 5ms, max: 9ms }';
    const drawn = run(table);
    expect(drawn.count).toBe(1000);
    expect(drawn.p50).toBeGreaterThan(0.0009);
    expect(drawn.p50).toBeLessThan(0.0011);
    expect(drawn.p99).toBeGreaterThan(0.004);
    expect(drawn.p99).toBeLessThan(0.0065);
    // the table's mean: 0.5 x 0.5 + 0.4 x 1.5 + 0.09 x 3.5 + 0.01 x 7 ms = 1.235 ms
    expect(drawn.mean).toBeGreaterThan(0.00112);
    expect(drawn.mean).toBeLessThan(0.00135);
    expect(run(table)).toEqual(drawn);
    expect(run(table, 43)).not.toEqual(drawn);
    // one duration: every event that finds the worker idle waits exactly that (the few that come
    // while it handles the one before wait behind its batch)
    const constant = run('0.7ms');
    expect(constant.p50).toBeCloseTo(0.0007, 5);
    expect(constant.p90).toBeCloseTo(0.0007, 5);
  });

  it('refuses a pickup table that is not one, in one line at its key', () => {
    expect(() => costsWith('pickup: { p50: 1ms, p150: 2ms }')).toThrow(/^infrastructure\.costs\.pickup\.p150: "p150" is not a valid key \(expected quantiles/);
    expect(() => costsWith('pickup: { p50: 2ms, p99: 1ms }')).toThrow(/^infrastructure\.costs\.pickup\.p99: p99 is below p50 \(quantiles must not decrease\)$/);
    expect(() => costsWith('pickup: { p50: 1 }')).toThrow(/^infrastructure\.costs\.pickup\.p50: 1 has no unit/);
    expect(() => costsWith('pickup: -1ms')).toThrow(/^infrastructure\.costs\.pickup: "-1ms" is negative/);
  });
});
