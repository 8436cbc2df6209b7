// The reference worker's consumers (sim/model/consumers.ts) against the worker's own rules: an idle
// consumer takes an event at once, a busy one only after its whole batch and its acknowledgement,
// every event that waited goes into that one batch, its events overlap their statements on lanes
// but share one event loop for their writes.
import { describe, expect, it } from 'vitest';
import { ConsumerFleet } from '../../sim/model/consumers.js';

const RTT = 0.001;
const PICKUP = 0.0005;
/** consumers writing 5,000/s in batches of 1,000, 2 in flight, `lanes` events at once. */
const fleet = (consumers: number, lanes = 8) => new ConsumerFleet(consumers, 5000, RTT, 1000, 2, lanes, 60);

/** Take an event at t, its statements lasting `statements`, then `writes` writes; returns [start, done]. */
function handle(f: ConsumerFleet, t: number, statements: number, writes: number): [number, number] {
  const { consumer, lane, start } = f.take(t, PICKUP);
  const ready = start + statements;
  const writesStart = f.write(consumer, ready, writes);
  const batches = Math.ceil(writes / 1000);
  const done = f.batchDone(writesStart, batches - 1, writes);
  f.finish(consumer, lane, done);
  return [start, done];
}

describe('the reference worker\'s consumers', () => {
  it('an idle consumer takes an event at once: pickup later, its writes a round trip per two batches plus writes / rate', () => {
    const [start, done] = handle(fleet(1), 1, 0.002, 3000);
    expect(start).toBeCloseTo(1 + PICKUP, 12);
    // 3 batches, 2 in flight: 2 round trips, and 3,000 / 5,000 s of writes
    expect(done).toBeCloseTo(1 + PICKUP + 0.002 + 2 * RTT + 0.6, 12);
  });

  it('a busy consumer reads again only after its batch is handled and acknowledged (two round trips)', () => {
    const f = fleet(1);
    const [, firstDone] = handle(f, 1, 0.002, 1000);
    const [start] = handle(f, 1.05, 0.002, 10);
    expect(start).toBeCloseTo(firstDone + 2 * RTT, 12);
  });

  it("a batch's own overhead (costs.batch) is paid per group of batches, not by the acknowledgement and the read", () => {
    // batches cost a round trip plus 3 ms of overhead; the XACK and the read a bare round trip
    const f = new ConsumerFleet(1, 5000, RTT + 0.003, 1000, 2, 8, 60, RTT);
    const [start, firstDone] = handle(f, 1, 0.002, 1000);
    expect(firstDone).toBeCloseTo(start + 0.002 + RTT + 0.003 + 0.2, 12);
    const [next] = handle(f, 1.05, 0.002, 10);
    expect(next).toBeCloseTo(firstDone + 2 * RTT, 12);
  });

  it('a second consumer idle takes the small post at once, behind no large one', () => {
    const f = fleet(2);
    handle(f, 1, 0.002, 1000);
    const [start] = handle(f, 1.05, 0.002, 10);
    expect(start).toBeCloseTo(1.05 + PICKUP, 12);
  });

  it('the events that waited go into one batch: they start together and their writes follow one another', () => {
    const f = fleet(1);
    const [, firstDone] = handle(f, 1, 0, 1000);
    const a = handle(f, 1.01, 0.002, 500);
    const b = handle(f, 1.02, 0.002, 500);
    const batch = firstDone + 2 * RTT;
    expect(a[0]).toBeCloseTo(batch, 12);
    expect(b[0]).toBeCloseTo(batch, 12);
    // both statements overlap; b's writes start when a's are written
    expect(a[1]).toBeCloseTo(batch + 0.002 + RTT + 0.1, 12);
    expect(b[1]).toBeCloseTo(a[1] + RTT + 0.1, 12);
    // an event after that batch started waits for the whole of it
    const [c] = handle(f, batch + 0.001, 0.002, 1);
    expect(c).toBeCloseTo(b[1] + 2 * RTT, 12);
  });

  it('with one lane the events of a batch are handled one after another', () => {
    const f = fleet(1, 1);
    const [, firstDone] = handle(f, 1, 0, 1000);
    const a = handle(f, 1.01, 0.002, 500);
    const b = handle(f, 1.02, 0.002, 500);
    expect(a[0]).toBeCloseTo(firstDone + 2 * RTT, 12);
    expect(b[0]).toBeCloseTo(a[1], 12);
  });

  it('counts writes in the seconds they are written and drains when the last event is done', () => {
    const f = fleet(1);
    const [, done] = handle(f, 0.9, 0, 1000);
    // 1,000 writes over [0.9005 + rtt... , done]: most of them in second 1
    const total = f.writesBySecond[0] + f.writesBySecond[1];
    expect(total).toBeCloseTo(1000, 6);
    expect(f.writesBySecond[1]).toBeGreaterThan(f.writesBySecond[0]);
    expect(f.drainTime()).toBeCloseTo(done, 12);
    expect(f.backlogWrites(1)).toBeCloseTo((done - 1) * 5000, 6);
  });

  it('refuses a fleet without consumers or lanes', () => {
    expect(() => new ConsumerFleet(0, 5000, RTT, 1000, 2, 8, 60)).toThrow(/at least one consumer/);
    expect(() => new ConsumerFleet(1, 5000, RTT, 1000, 2, 0, 60)).toThrow(/at least one lane/);
  });

  it('a killed consumer takes nothing until it is back; the others go on; every one killed: the event waits for the restart', () => {
    const f = fleet(2);
    expect(f.hold(1, 5)).toBe(1);
    // consumer 0 is down until 5 s: consumer 1 takes an event at 2 s at once
    const [start] = handle(f, 2, 0.002, 10);
    expect(start).toBeCloseTo(2 + PICKUP, 12);
    const all = fleet(2);
    expect(all.hold(Infinity, 5)).toBe(2);
    // both down: the first back (at 5 s) reads after its acknowledgement and read, two round trips
    const [late, done] = handle(all, 2, 0.002, 1000);
    expect(late).toBeCloseTo(5 + 2 * RTT, 12);
    expect(done).toBeCloseTo(late + 0.002 + RTT + 0.2, 12);
  });
});
