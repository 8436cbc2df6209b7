// What a process's own runtime makes its work wait for: how late the event loop runs a callback that
// is due (work arriving while the loop is busy waits as long) and the garbage collector's pauses.
// No per-request timer sees these waits. The API exposes them in /metrics
// (server/http/runtime-metrics.ts), a fan-out worker in its published histograms.
import { PerformanceObserver, performance, constants } from 'node:perf_hooks';
import { LOOP_PROBE_MS } from '../core/runtime-metrics.js';

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** Calls onDelay(ms) with how late a timer due every LOOP_PROBE_MS ran; returns the stop. The timer is unref'd. */
export function probeEventLoop(onDelay: (ms: number) => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  let due = 0;
  const probe = () => {
    const now = performance.now();
    if (due > 0) onDelay(Math.max(0, now - due));
    due = now + LOOP_PROBE_MS;
    timer = setTimeout(probe, LOOP_PROBE_MS);
    timer.unref();
  };
  probe();
  return () => clearTimeout(timer);
}

/** Calls onPause(kind, ms) for every GC pause of this process; returns the stop. */
export function observeGcPauses(onPause: (kind: string, ms: number) => void): () => void {
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      onPause(GC_KINDS[(entry as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'other', entry.duration);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}
