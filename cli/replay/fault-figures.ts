// What a fault cost the users, counted after the run from the driver's outcomes: the posts and the
// reads due during it by answer, the first acknowledgement after it, and the fan-out lag of the
// posts created from it to its recovery against the lag before any fault.
import { median } from 'simple-statistics';
import type { DriverResult, PostOutcome, ReadsDuring } from '../../sim/replay/driver.js';
import type { Reconciliation } from '../../sim/replay/reconcile.js';
import type { FaultLag, FaultReconciled, PostsDuring } from '../../sim/replay/result.js';

/** A fault's span in driver time (ms from its t0). */
export interface FaultSpan {
  fromMs: number;
  toMs: number;
}

/** A post in flight at the span's start, or due within it (the driver may have held it for a connection). */
function during(p: PostOutcome, span: FaultSpan): boolean {
  const inFlight = p.sentMs !== null && p.sentMs <= span.fromMs && (p.answeredMs === null || p.answeredMs >= span.fromMs);
  return inFlight || (p.intendedMs >= span.fromMs && p.intendedMs <= span.toMs);
}

/** The posts in flight at `fromMs` or due until `toMs`, by answer. */
export function postsDuring(driver: DriverResult, span: FaultSpan): PostsDuring {
  const out: PostsDuring = { due: 0, acknowledged: 0, failed: 0, status503: 0, status5xx: 0, networkErrors: 0, other: 0, maxWaitSeconds: 0 };
  for (const p of driver.posts) {
    if (!during(p, span)) continue;
    out.due++;
    if (p.status === 201 && p.answeredMs !== null) {
      out.acknowledged++;
      out.maxWaitSeconds = Math.max(out.maxWaitSeconds, (p.answeredMs - p.intendedMs) / 1000);
      continue;
    }
    out.failed++;
    if (p.outcome === 'network-error') out.networkErrors++;
    else if (p.status === 503) out.status503++;
    else if (p.status >= 500 && p.status < 600) out.status5xx++;
    else out.other++;
  }
  return out;
}

export function readsDuring(driver: DriverResult, span: FaultSpan): ReadsDuring {
  return driver.readTally.between(span.fromMs, span.toMs);
}

/** From `afterMs` to the first 201 answered after it, seconds (NaN: none). */
export function firstAckAfter(driver: DriverResult, afterMs: number): number {
  let first = Infinity;
  for (const p of driver.posts) if (p.status === 201 && p.answeredMs !== null && p.answeredMs > afterMs && p.answeredMs < first) first = p.answeredMs;
  return Number.isFinite(first) ? (first - afterMs) / 1000 : NaN;
}

/**
 * The probes' per-interval fan-out lag p99 (by creation, seconds from the window's start at
 * `intervalSeconds`): the worst over the intervals from `fromSeconds` to `toSeconds`, and the
 * median of those before `beforeSeconds` (the first fault).
 */
export function faultLag(lagP99ByBucket: readonly number[], intervalSeconds: number, fromSeconds: number, toSeconds: number, beforeSeconds: number): FaultLag {
  let worst = NaN;
  const last = Number.isFinite(toSeconds) ? Math.floor(toSeconds / intervalSeconds) : lagP99ByBucket.length - 1;
  for (let b = Math.max(0, Math.floor(fromSeconds / intervalSeconds)); b <= last && b < lagP99ByBucket.length; b++) {
    const v = lagP99ByBucket[b];
    if (Number.isFinite(v) && !(v <= worst)) worst = v;
  }
  const before = lagP99ByBucket.slice(0, Math.floor(beforeSeconds / intervalSeconds)).filter(Number.isFinite);
  return { worstP99Seconds: worst, beforeP99Seconds: before.length === 0 ? NaN : median(before) };
}

/** The reconciliation's lost, duplicated and undelivered posts among those of the span (see postsDuring). */
export function reconciledDuring(driver: DriverResult, rec: Pick<Reconciliation, 'byPost'>, span: FaultSpan): FaultReconciled {
  const count = (set: ReadonlySet<number>) => [...set].filter((i) => during(driver.posts[i], span)).length;
  return { lost: count(rec.byPost.lost), duplicated: count(rec.byPost.duplicated), missingDeliveries: count(rec.byPost.missing) };
}
