// A schedule seen on the wall clock of a replay: `feedlab replay` sends the arrival made at
// simulated time t at t / timeScale, so a simulation of the same run (feedlab compare) reads the
// same schedule through this view, every instant divided and every rate multiplied by timeScale.
// The draws are the schedule's own: the same posts, authors, sessions and pages, in the same order.
import type { FiredEvent } from '../model/metrics.js';
import type { ArrivalSchedule } from './schedule.js';

/** What the simulator reads of a schedule (ArrivalSchedule, or this view of one). */
export interface Arrivals {
  readonly postProfile: { factorAt(t: number): number };
  readonly readProfile: { factorAt(t: number): number };
  /** Organic posts and sessions per second at a factor of 1. */
  readonly postEventRate: number;
  readonly sessionEventRate: number;
  readonly cacheLosses: readonly { at: number; shards: number }[];
  readonly workerCrashes: readonly { at: number; workers: number | null; down: number }[];
  readonly fired: readonly FiredEvent[];
  posts(): { at: number; author: number; organic: boolean; next(): boolean };
  sessions(): { at: number; user: number; pages: number; next(): boolean };
}

export function timeScaled(inner: ArrivalSchedule, timeScale: number): Arrivals {
  if (!(timeScale > 0)) throw new RangeError(`time scale ${timeScale} must be above 0`);
  const k = timeScale;
  return {
    postProfile: { factorAt: (t) => inner.postProfile.factorAt(t * k) },
    readProfile: { factorAt: (t) => inner.readProfile.factorAt(t * k) },
    postEventRate: inner.postEventRate * k,
    sessionEventRate: inner.sessionEventRate * k,
    cacheLosses: inner.cacheLosses.map((c) => ({ at: c.at / k, shards: c.shards })),
    workerCrashes: inner.workerCrashes.map((c) => ({ at: c.at / k, workers: c.workers, down: c.down / k })),
    fired: inner.fired.map((e) => ({ ...e, at: e.at / k })),
    posts() {
      const s = inner.posts();
      const view = {
        at: 0,
        author: 0,
        organic: true,
        next(): boolean {
          if (!s.next()) return false;
          view.at = s.at / k;
          view.author = s.author;
          view.organic = s.organic;
          return true;
        },
      };
      return view;
    },
    sessions() {
      const s = inner.sessions();
      const view = {
        at: 0,
        user: 0,
        pages: 0,
        next(): boolean {
          if (!s.next()) return false;
          view.at = s.at / k;
          view.user = s.user;
          view.pages = s.pages;
          return true;
        },
      };
      return view;
    },
  };
}
