// Waiting between retries: a bounded exponential delay, and a sleep that an AbortSignal ends early.

export interface BackoffOptions {
  /** First delay, ms. */
  readonly initialMs: number;
  /** Largest delay, ms. */
  readonly maxMs: number;
  /** Growth per consecutive failure (default 2). */
  readonly factor?: number;
}

/** The delay after `failures` consecutive failures (1 = the first): initial * factor^(failures-1),
 * capped at max. No jitter, so runs are reproducible; callers that need to spread retries out can
 * add their own. */
export function backoffDelay(failures: number, o: BackoffOptions): number {
  const factor = o.factor ?? 2;
  const n = Math.max(0, failures - 1);
  // Cap the exponent so a long outage cannot overflow to Infinity.
  const raw = o.initialMs * Math.pow(factor, Math.min(n, 64));
  return Math.min(o.maxMs, Number.isFinite(raw) ? raw : o.maxMs);
}

/** Resolves after ms, or at once when the signal aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
