// A piecewise-constant rate multiplier over the simulated time: the diurnal curve sampled per minute,
// with event windows (breaking news) as extra breakpoints. Arrivals of a non-homogeneous Poisson
// process are drawn exactly for this profile by inverting its integral.
import { diurnalFactor, kappaForPeak, type DiurnalCurve } from './diurnal.js';

const STEP = 60;

export interface RateWindow {
  start: number;
  end: number;
  multiplier: number;
}

export class RateProfile {
  /** Segment i covers [starts[i], starts[i+1]) with multiplier factors[i]. */
  readonly starts: Float64Array;
  readonly factors: Float64Array;
  private segment = 0;

  constructor(duration: number, curve: DiurnalCurve | null, windows: RateWindow[] = []) {
    const cuts = new Set<number>();
    for (let t = 0; t < duration; t += STEP) cuts.add(t);
    for (const w of windows) {
      if (w.start < duration) cuts.add(Math.max(0, w.start));
      if (w.end < duration) cuts.add(w.end);
    }
    const starts = [...cuts].sort((a, b) => a - b);
    const kappa = curve ? kappaForPeak(curve.peakFactor) : 0;
    this.starts = Float64Array.from([...starts, duration]);
    this.factors = new Float64Array(starts.length);
    for (let i = 0; i < starts.length; i++) {
      const a = starts[i];
      const b = this.starts[i + 1];
      // the diurnal curve averaged over the segment (midpoint rule on the per-minute grid)
      let f = diurnalFactor(curve, (a + b) / 2, kappa);
      for (const w of windows) if (w.start <= a && b <= w.end) f *= w.multiplier;
      this.factors[i] = f;
    }
  }

  /** A profile over the same segments with its own arrival cursor (nextArrival keeps one per profile). */
  fork(): RateProfile {
    const copy = Object.create(RateProfile.prototype) as RateProfile;
    Object.assign(copy, { starts: this.starts, factors: this.factors, segment: 0 });
    return copy;
  }

  get duration(): number {
    return this.starts[this.starts.length - 1];
  }

  factorAt(t: number): number {
    let lo = 0;
    let hi = this.factors.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid] <= t) lo = mid;
      else hi = mid - 1;
    }
    return this.factors[lo];
  }

  /**
   * The next arrival after t of a Poisson process with base rate `rate` (per second) times this
   * profile, given an Exp(1) draw. Calls must come with non-decreasing t. Infinity past the end.
   */
  nextArrival(t: number, rate: number, exp1: number): number {
    if (rate <= 0) return Infinity;
    let i = this.segment;
    while (i < this.factors.length - 1 && this.starts[i + 1] <= t) i++;
    this.segment = i;
    let need = exp1;
    let now = t;
    for (; i < this.factors.length; i++) {
      const end = this.starts[i + 1];
      const r = rate * this.factors[i];
      const room = (end - now) * r;
      if (r > 0 && room >= need) return now + need / r;
      need -= room;
      now = end;
    }
    return Infinity;
  }

  /** The integral of the multiplier over [0, duration): expected arrivals per unit base rate. */
  integral(): number {
    let s = 0;
    for (let i = 0; i < this.factors.length; i++) s += this.factors[i] * (this.starts[i + 1] - this.starts[i]);
    return s;
  }
}
