// The names under which a feedlab process exposes its runtime's waits in /metrics
// (server/http/runtime-metrics.ts writes them, replay's sim/replay/server-metrics.ts reads them).

/** How late the event loop ran a timer due every LOOP_PROBE_MS, seconds (a histogram). */
export const METRIC_LOOP_DELAY = 'feedlab_eventloop_delay_seconds';
/** Garbage-collection pauses by kind, seconds (a histogram). */
export const METRIC_GC_PAUSE = 'feedlab_gc_pause_seconds';
/** How often the loop is probed: 100 wake-ups a second cost nothing measurable, and a 10 ms block is always seen. */
export const LOOP_PROBE_MS = 10;
