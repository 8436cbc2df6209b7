// Starting while a service is down. A running server or worker rides out a Redis, Postgres or
// event-log outage; one started during the same outage should not refuse to run (a fleet restarted
// together with its database would not come back). The start-up is tried again with a bounded
// backoff until it gets through, one line each time it is put off; `failFast` keeps the old answer
// for scripts (the outage's error, exit 3), and so does anything that is not an outage (a bad
// setting, a schema to migrate).
import { backoffDelay, sleep, type BackoffOptions } from './events/backoff.js';
import { unavailableWhat } from './http/errors.js';

/** Between start-up attempts: 0.5 s, doubling to 10 s. */
export const START_RETRY: BackoffOptions = { initialMs: 500, maxMs: 10_000 };

/** A service that does not answer (or refuses us): worth waiting for. The same errors the API answers 503. */
export function isOutage(err: unknown): boolean {
  return unavailableWhat(err) !== undefined;
}

export interface StartOptions {
  signal: AbortSignal;
  /** Give up at the first outage (rethrow it) instead of waiting. */
  failFast: boolean;
  /** One line each time the start is put off, and the outage that put it off. */
  say: (line: string, outage: Error) => void;
  retry?: BackoffOptions;
}

/**
 * Runs `start` (which calls `started()` once it is up: a failure after that is not a start-up's and
 * is rethrown) until it resolves; an outage before `started()` is waited out and the start tried
 * again. Resolves with its value, or null when the signal stopped it while it waited.
 */
export async function startWhenReachable<T>(start: (started: () => void) => Promise<T>, o: StartOptions): Promise<T | null> {
  const retry = o.retry ?? START_RETRY;
  for (let attempt = 1; ; attempt++) {
    let up = false;
    try {
      return await start(() => (up = true));
    } catch (err) {
      if (up || o.failFast || !isOutage(err) || o.signal.aborted) throw err;
      const ms = backoffDelay(attempt, retry);
      o.say(`not started: ${(err as Error).message}; trying again in ${(ms / 1000).toFixed(1)} s (attempt ${attempt}; --fail-fast exits instead)`, err as Error);
      await sleep(ms, o.signal);
      if (o.signal.aborted) return null;
    }
  }
}
