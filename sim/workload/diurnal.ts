// The daily activity curve: a von Mises bump around the peak hour, scaled so that its mean over a
// day is exactly 1 and its maximum is the peak factor. (A plain cosine cannot reach a peak factor
// above 2 without going negative.)

const DAY = 86_400;

/** Modified Bessel function I0, by its power series (converges fast for the kappa we need). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const q = (x * x) / 4;
  for (let k = 1; k < 200; k++) {
    term *= q / (k * k);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}

/** The concentration kappa whose normalised peak exp(kappa)/I0(kappa) equals the peak factor. */
export function kappaForPeak(peakFactor: number): number {
  if (peakFactor <= 1) return 0;
  let lo = 0;
  let hi = 1;
  while (Math.exp(hi) / besselI0(hi) < peakFactor) hi *= 2;
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2;
    if (Math.exp(mid) / besselI0(mid) < peakFactor) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

export interface DiurnalCurve {
  peakFactor: number;
  peakHourUtc: number;
  startHourUtc: number;
}

/** Rate multiplier at simulated time t (seconds since the start). Mean 1 over any whole day. */
export function diurnalFactor(curve: DiurnalCurve | null, t: number, kappa = curve ? kappaForPeak(curve.peakFactor) : 0): number {
  if (!curve || kappa === 0) return 1;
  const hour = curve.startHourUtc + t / 3600;
  const theta = (2 * Math.PI * (hour - curve.peakHourUtc)) / 24;
  return Math.exp(kappa * Math.cos(theta)) / besselI0(kappa);
}

export const SECONDS_PER_DAY = DAY;
