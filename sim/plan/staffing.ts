// Queueing closed forms the plan sizes with (ANCHORS section 5).

/** Little's law: requests in service = arrival rate x time in the system. */
export function littlesLaw(ratePerSecond: number, seconds: number): number {
  return ratePerSecond * seconds;
}

/**
 * Square-root staffing: servers = ceil(a + Q sqrt(a)) for an offered load of a = lambda W
 * servers' worth of work; Q = 2.375 keeps about 1% of requests waiting, Q = 1 about 30%.
 */
export function squareRootStaffing(offeredLoad: number, q: number): number {
  if (offeredLoad <= 0) return 0;
  return Math.ceil(offeredLoad + q * Math.sqrt(offeredLoad) - 1e-9);
}

/**
 * The p-th percentile (0..1) of the longest of k independent M/M/1 waits at utilisation rho with
 * mean service time S: P(W > t) = rho exp(-(1 - rho) t / S) per server, so the longest of k exceeds
 * t with probability ~ 1 - (1 - rho e^..)^k. 0 when fewer than 1 - p of the requests wait at all.
 */
export function mm1WaitQuantile(rho: number, serviceSeconds: number, p: number, k = 1): number {
  if (rho <= 0 || serviceSeconds <= 0) return 0;
  if (rho >= 1) return Infinity;
  const tail = 1 - Math.pow(p, 1 / k); // per-server tail so that all k stay under t with probability p
  if (rho <= tail) return 0;
  return (serviceSeconds / (1 - rho)) * Math.log(rho / tail);
}

/** The highest utilisation at which `latency(rho)` stays within `limit`, by bisection; 0 if none. */
export function maxUtilisation(latency: (rho: number) => number, limit: number, cap = 0.98): number {
  if (latency(0) > limit) return 0;
  if (latency(cap) <= limit) return cap;
  let lo = 0;
  let hi = cap;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (latency(mid) <= limit) lo = mid;
    else hi = mid;
  }
  return lo;
}
