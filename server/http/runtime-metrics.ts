// The API's runtime waits in /metrics (server/runtime-probe.ts): a home-feed read's tail on one
// event loop is mostly these, and replay reads both so that compare can say where a read's p99 went.
import { LOOP_PROBE_MS, METRIC_GC_PAUSE, METRIC_LOOP_DELAY } from '../../core/runtime-metrics.js';
import { observeGcPauses, probeEventLoop } from '../runtime-probe.js';
import type { MetricsRegistry } from './metrics.js';

/** Waits and pauses, seconds: 1 ms (a timer's own granularity) .. 1 s. */
export const RUNTIME_PAUSE_BUCKETS_SECONDS: readonly number[] = Object.freeze([
  0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1,
]);

/** Start measuring into the registry; returns the stop. */
export function watchRuntime(metrics: MetricsRegistry): () => void {
  const delay = metrics.histogram(METRIC_LOOP_DELAY, `How late the event loop ran a timer due every ${LOOP_PROBE_MS} ms (a request arriving then waited as long)`, {
    buckets: RUNTIME_PAUSE_BUCKETS_SECONDS,
  });
  const gc = metrics.histogram(METRIC_GC_PAUSE, 'Garbage-collection pauses of this process, by kind', {
    buckets: RUNTIME_PAUSE_BUCKETS_SECONDS,
    labelNames: ['kind'],
  });
  const stopLoop = probeEventLoop((ms) => delay.observe(ms / 1000));
  const stopGc = observeGcPauses((kind, ms) => gc.observe(ms / 1000, { kind }));
  return () => {
    stopLoop();
    stopGc();
  };
}
