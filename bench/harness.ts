// What the live benchmarks (server.ts, replay.ts, replay-end-to-end.ts) share: cleanups that run
// once on success, failure and interruption alike, the signals that trigger them, and number formats.

/** Cleanups run once, last registered first, on success, failure and interruption alike. */
export class Cleanup {
  private readonly steps: Array<{ what: string; run: () => Promise<unknown> | unknown }> = [];
  private running: Promise<void> | null = null;

  add(what: string, run: () => Promise<unknown> | unknown): void {
    this.steps.push({ what, run });
  }

  runAll(): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.splice(0).reverse()) {
        try {
          await step.run();
        } catch (err) {
          console.log(`  !!! cleanup "${step.what}" failed: ${(err as Error).message}`);
        }
      }
    })();
    return this.running;
  }
}

/** Ctrl-C / SIGTERM run `onStop` (the cleanup) and exit 130; returns the off switch. */
export function onSignals(onStop: () => Promise<void>): () => void {
  const h = (signal: NodeJS.Signals) => {
    console.log(`\n${signal}: cleaning up`);
    void onStop().then(() => process.exit(130));
  };
  process.once('SIGINT', h);
  process.once('SIGTERM', h);
  return () => {
    process.off('SIGINT', h);
    process.off('SIGTERM', h);
  };
}

/** Whole numbers with thousands separators; n/a for a figure not measured. */
export const fmt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
/** Two decimals and a unit; n/a for a figure not measured. */
export const f2 = (n: number | null | undefined, unit = '') => (typeof n === 'number' && Number.isFinite(n) ? `${n.toFixed(2)}${unit}` : 'n/a');
export const verdict = (ok: boolean) => (ok ? 'meets the target' : 'MISSES the target');
