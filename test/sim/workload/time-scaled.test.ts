// The replay's wall clock over a schedule: the same arrivals, every instant divided by the time
// scale and every rate multiplied by it.
import { describe, expect, it } from 'vitest';
import { buildPopulation } from '../../../sim/model/population.js';
import { ArrivalSchedule } from '../../../sim/workload/schedule.js';
import { timeScaled } from '../../../sim/workload/time-scaled.js';
import { bipartiteGraph, scenarioFrom } from '../../model/fixtures.js';

describe('timeScaled', () => {
  const sc = scenarioFrom(`seed: 5
duration: 2h
activity: { postsPerUserPerDay: 40, sessionsPerUserPerDay: 30, pagesPerSession: { "1": 0.5, "2-4": 0.5 }, dormantShare: 0.2, diurnal: { peakFactor: 3, peakHourUtc: 20 } }
events:
  - at: 30m
    cacheLoss: { shards: 1 }
`, 220);
  const pop = buildPopulation(bipartiteGraph(200, 20), sc);
  const inner = new ArrivalSchedule(sc, pop);
  const wall = timeScaled(new ArrivalSchedule(sc, pop), 30);

  it('sends the same posts and sessions, at t / 30', () => {
    const a = inner.posts();
    const b = wall.posts();
    let n = 0;
    while (a.next()) {
      expect(b.next()).toBe(true);
      expect(b.at).toBeCloseTo(a.at / 30, 12);
      expect(b.author).toBe(a.author);
      n++;
    }
    expect(b.next()).toBe(false);
    expect(n).toBeGreaterThan(100);
    const s = inner.sessions();
    const w = wall.sessions();
    for (let i = 0; i < 200 && s.next(); i++) {
      expect(w.next()).toBe(true);
      expect([w.at * 30, w.user, w.pages]).toEqual([expect.closeTo(s.at, 9), s.user, s.pages]);
    }
  });

  it('runs rates 30 times faster and moves events and the rate curves with the clock', () => {
    expect(wall.postEventRate).toBeCloseTo(inner.postEventRate * 30, 12);
    expect(wall.sessionEventRate).toBeCloseTo(inner.sessionEventRate * 30, 12);
    expect(wall.cacheLosses).toEqual([{ at: 60, shards: 1 }]);
    expect(wall.fired.map((e) => e.at)).toEqual([60]);
    for (const t of [0, 100, 200]) expect(wall.readProfile.factorAt(t)).toBe(inner.readProfile.factorAt(t * 30));
  });

  it('refuses a time scale that is not above 0', () => {
    expect(() => timeScaled(inner, 0)).toThrow(/above 0/);
  });
});
