// The Hurwitz zeta function and the Clauset-Shalizi-Newman tail fit on data with a known answer.
import { describe, expect, it } from 'vitest';
import { discreteAlphaMle, fitPowerLawTail, hurwitzZeta, logHurwitzZeta } from '../../sim/graph/powerlaw.js';
import { histogramPercentile } from '../../sim/graph/stats.js';
import { Rng } from '../../core/random.js';

describe('hurwitzZeta', () => {
  it('matches closed forms and reference values', () => {
    expect(hurwitzZeta(2, 1)).toBeCloseTo(Math.PI ** 2 / 6, 14);
    expect(hurwitzZeta(4, 1)).toBeCloseTo(Math.PI ** 4 / 90, 14);
    expect(hurwitzZeta(2, 0.5)).toBeCloseTo(Math.PI ** 2 / 2, 13);
    expect(hurwitzZeta(3, 1)).toBeCloseTo(1.2020569031595942, 14);
    // ζ(s, q) - ζ(s, q + 1) = q^-s
    expect(hurwitzZeta(2.7, 5) - hurwitzZeta(2.7, 6)).toBeCloseTo(5 ** -2.7, 15);
    // scipy.special.zeta(3.375, 254)
    expect(hurwitzZeta(3.375, 254) / 8.220277245028842e-7).toBeCloseTo(1, 13);
    // near the pole: ζ(s, 1) ~ 1/(s-1) + γ
    expect(hurwitzZeta(1.0001, 1) - 1 / 0.0001).toBeCloseTo(0.5772156649, 3);
  });

  it('stays finite in log space where the value underflows', () => {
    const v = logHurwitzZeta(400, 50000);
    expect(Number.isFinite(v)).toBe(true);
    // mpmath: log(zeta(400, 50000)) = -4323.07650953669020...
    expect(v).toBeCloseTo(-4323.0765095366902, 9);
  });
});

describe('fitPowerLawTail', () => {
  /** Discrete power-law draws above xmin (CSN 2009, appendix D), below it a geometric body. */
  function sample(alpha: number, xmin: number, nTail: number, nBody: number, seed: number): Float64Array {
    const rng = new Rng(seed);
    const values: number[] = [];
    for (let i = 0; i < nTail; i++) {
      // Invert the exact CDF by search: P(X >= x) = ζ(alpha, x) / ζ(alpha, xmin).
      const u = rng.floatOpen();
      let lo = xmin;
      let hi = xmin * 2;
      const ccdf = (x: number) => hurwitzZeta(alpha, x) / hurwitzZeta(alpha, xmin);
      while (ccdf(hi) >= u) hi *= 2;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (ccdf(mid) >= u) lo = mid;
        else hi = mid;
      }
      values.push(lo);
    }
    for (let i = 0; i < nBody; i++) values.push(1 + Math.min(xmin - 2, Math.floor(rng.exponential(0.5))));
    const max = Math.max(...values);
    const counts = new Float64Array(max + 1);
    for (const v of values) counts[v]++;
    return counts;
  }

  it('recovers alpha and xmin from a power-law tail above a different body', () => {
    const fit = fitPowerLawTail(sample(2.5, 20, 5000, 20000, 1))!;
    expect(Math.abs(fit.alpha - 2.5)).toBeLessThan(3 * fit.sigma);
    expect(fit.xmin).toBeGreaterThanOrEqual(15);
    expect(fit.xmin).toBeLessThanOrEqual(30);
    expect(fit.sigma).toBeCloseTo((fit.alpha - 1) / Math.sqrt(fit.nTail), 12);
  });

  it('is the exact MLE: the likelihood is flat at the estimate', () => {
    const n = 300;
    const sumLog = 300 * Math.log(40);
    const a = discreteAlphaMle(n, sumLog, 12);
    const ll = (x: number) => -n * logHurwitzZeta(x, 12) - x * sumLog;
    expect(ll(a)).toBeGreaterThan(ll(a + 1e-4));
    expect(ll(a)).toBeGreaterThan(ll(a - 1e-4));
  });

  it('gives no fit for fewer than two distinct values', () => {
    expect(fitPowerLawTail([0, 5])).toBeNull();
    expect(fitPowerLawTail([])).toBeNull();
  });
});

describe('histogramPercentile', () => {
  it('is nearest-rank', () => {
    // values 1, 2, 2, 3, 10
    const counts = new Float64Array(11);
    counts[1] = 1;
    counts[2] = 2;
    counts[3] = 1;
    counts[10] = 1;
    expect(histogramPercentile(counts, 5, 0.5)).toBe(2);
    expect(histogramPercentile(counts, 5, 0.8)).toBe(3);
    expect(histogramPercentile(counts, 5, 0.81)).toBe(10);
    expect(histogramPercentile(counts, 5, 0.2)).toBe(1);
  });
});
