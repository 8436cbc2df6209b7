// The power-law tail of a degree distribution, fitted as Clauset, Shalizi & Newman (2009) do for
// discrete data: for each candidate xmin the exact maximum-likelihood exponent (Hurwitz zeta
// normalisation), and the xmin whose fit is closest to the data in Kolmogorov-Smirnov distance.

export interface PowerLawFit {
  alpha: number;
  /** Standard error of alpha: (alpha - 1) / sqrt(nTail). */
  sigma: number;
  xmin: number;
  /** Values >= xmin. */
  nTail: number;
  /** KS distance between the tail and the fitted law. */
  ks: number;
}

// B_2j / (2j)! for the Euler-Maclaurin tail of the zeta sum.
const EM_COEFFICIENTS = [
  1 / 12,
  -1 / 720,
  1 / 30240,
  -1 / 1209600,
  1 / 47900160,
  -691 / 1307674368000,
  1 / 74724249600,
  -3617 / 10670622842880000,
];

/** Hurwitz zeta ζ(s, q) = Σ_{k>=0} (q + k)^-s for s > 1, q > 0 (~1e-15 relative; 0 where it underflows). */
export function hurwitzZeta(s: number, q: number): number {
  return Math.exp(logHurwitzZeta(s, q));
}

/**
 * ln ζ(s, q) by Euler-Maclaurin summation, with q^-s factored out so that large tails
 * (q^-s far below the smallest double) stay representable.
 */
export function logHurwitzZeta(s: number, q: number): number {
  if (!(s > 1) || !(q > 0)) throw new RangeError(`hurwitzZeta needs s > 1 and q > 0, got s=${s} q=${q}`);
  // Sum directly until the remaining terms are smooth enough for the asymptotic series.
  const n = Math.max(0, Math.ceil(12 + s - q));
  let sum = 0; // Σ ((q + k) / q)^-s, i.e. ζ(s, q) / q^-s
  for (let k = 0; k < n; k++) sum += Math.pow(1 + k / q, -s);
  const a = q + n;
  const aRel = Math.pow(a / q, -s); // a^-s / q^-s
  sum += (a * aRel) / (s - 1) + aRel / 2;
  let factor = (s * aRel) / a; // s (s+1) ... (s+2j-2) a^(-s-2j+1) / q^-s, for j = 1
  const a2 = a * a;
  for (let j = 0; j < EM_COEFFICIENTS.length; j++) {
    const term = EM_COEFFICIENTS[j] * factor;
    sum += term;
    if (Math.abs(term) < 1e-17 * sum) break;
    factor *= ((s + 2 * j + 1) * (s + 2 * j + 2)) / a2;
  }
  return Math.log(sum) - s * Math.log(q);
}

/**
 * Exact discrete MLE of alpha for values >= xmin: maximise -n ln ζ(α, xmin) - α Σ ln x.
 * The objective is convex in α, so a golden-section search over a bracket is exact enough.
 */
export function discreteAlphaMle(n: number, sumLog: number, xmin: number): number {
  const f = (a: number) => n * logHurwitzZeta(a, xmin) + a * sumLog;
  // Start from the continuous approximation and widen until the minimum is inside.
  const guess = 1 + n / (sumLog - n * Math.log(xmin - 0.5));
  const start = Number.isFinite(guess) && guess > 1 ? guess : 2;
  let lo = Math.max(1 + 1e-9, start - 0.25);
  let hi = start + 0.25;
  while (hi < 100 && f(hi) < f(hi - 0.01)) hi += hi - lo;
  while (lo > 1 + 1e-6 && f(lo) < f(lo + 0.01)) lo = Math.max(1 + 1e-9, 1 + (lo - 1) / 2);
  const g = (Math.sqrt(5) - 1) / 2;
  let x1 = hi - g * (hi - lo);
  let x2 = lo + g * (hi - lo);
  let f1 = f(x1);
  let f2 = f(x2);
  while (hi - lo > 1e-9) {
    if (f1 < f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - g * (hi - lo);
      f1 = f(x1);
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + g * (hi - lo);
      f2 = f(x2);
    }
  }
  return (lo + hi) / 2;
}

/**
 * Fit the tail of a distribution of positive integers given as a histogram (counts[v] = how many
 * values equal v; counts[0] is ignored). Every distinct value but the largest is tried as xmin.
 *
 * The KS distance compares P(X < x) of the data and of the fit at each distinct tail value, the
 * convention of the `powerlaw` package (Alstott, Bullmore & Plenz 2014), which is the one published
 * figures such as the SNAP data sets' are usually computed with. Returns null for fewer than two
 * distinct positive values.
 */
export function fitPowerLawTail(counts: ArrayLike<number>): PowerLawFit | null {
  const values: number[] = [];
  for (let v = 1; v < counts.length; v++) if (counts[v] > 0) values.push(v);
  const k = values.length;
  if (k < 2) return null;
  // Suffix sums: how many values are >= values[j], and the sum of their logs.
  const nAbove = new Float64Array(k + 1);
  const logAbove = new Float64Array(k + 1);
  for (let j = k - 1; j >= 0; j--) {
    const v = values[j];
    nAbove[j] = nAbove[j + 1] + counts[v];
    logAbove[j] = logAbove[j + 1] + counts[v] * Math.log(v);
  }
  let best: PowerLawFit | null = null;
  for (let j = 0; j < k - 1; j++) {
    const xmin = values[j];
    const n = nAbove[j];
    const alpha = discreteAlphaMle(n, logAbove[j], xmin);
    const ks = ksDistance(counts, values, j, n, alpha, best ? best.ks : Infinity);
    if (best === null || ks < best.ks) best = { alpha, sigma: (alpha - 1) / Math.sqrt(n), xmin, nTail: n, ks };
  }
  return best;
}

/** KS distance of the tail from values[from] on; gives up (returning `stopAt`) once it reaches `stopAt`. */
function ksDistance(counts: ArrayLike<number>, values: number[], from: number, n: number, alpha: number, stopAt: number): number {
  const xmin = values[from];
  const logZMin = logHurwitzZeta(alpha, xmin);
  let above = 1; // the fit's P(X >= v) = ζ(alpha, v) / ζ(alpha, xmin)
  let below = 0; // data values < v
  let d = 0;
  let prev = xmin;
  for (let j = from + 1; j < values.length; j++) {
    below += counts[prev];
    const v = values[j];
    // Step down term by term over short gaps; recompute over long ones.
    if (v - prev <= 32) for (let t = prev; t < v; t++) above -= Math.exp(-alpha * Math.log(t) - logZMin);
    else above = Math.exp(logHurwitzZeta(alpha, v) - logZMin);
    const gap = Math.abs(below / n - (1 - above));
    if (gap > d) {
      d = gap;
      if (d >= stopAt) return stopAt;
    }
    prev = v;
  }
  return d;
}
