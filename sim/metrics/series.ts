// Helpers over time series. Spreading a long series into Math.max overflows the stack (a 200-day
// run has 288k minutes), so they loop.

/** The largest value, or 0 for an empty series (every series we keep is non-negative). */
export function maxOf(xs: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < xs.length; i++) if (xs[i] > m) m = xs[i];
  return m;
}
