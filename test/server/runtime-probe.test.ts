// The runtime's waits (server/runtime-probe.ts): a blocked event loop is seen as late as it was
// blocked, a collection is seen as a pause.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { LOOP_PROBE_MS } from '../../core/runtime-metrics.js';
import { observeGcPauses, probeEventLoop } from '../../server/runtime-probe.js';
import { block, churn } from './runtime-load.js';


describe('the event-loop probe', () => {
  it('sees a 60 ms block as a timer about 50 ms late, and little on an idle loop', async () => {
    const delays: number[] = [];
    const stop = probeEventLoop((ms) => delays.push(ms));
    await sleep(5 * LOOP_PROBE_MS);
    const idle = delays.length;
    expect(idle).toBeGreaterThanOrEqual(2);
    block(60);
    await sleep(3 * LOOP_PROBE_MS);
    stop();
    const after = delays.length;
    await sleep(3 * LOOP_PROBE_MS);
    expect(delays.length).toBe(after); // stopped
    // the block began at most one period after the timer was set: it was due 50-60 ms before it ran
    expect(Math.max(...delays.slice(idle))).toBeGreaterThanOrEqual(60 - LOOP_PROBE_MS - 1);
    expect(Math.max(...delays.slice(idle))).toBeLessThan(60 + 100); // the block's own wait, not an accumulation
  });

  it('sees the collector pause the process', async () => {
    const pauses: { kind: string; ms: number }[] = [];
    const stop = observeGcPauses((kind, ms) => pauses.push({ kind, ms }));
    expect(churn()).toBeGreaterThan(0);
    await sleep(20); // the observer's entries arrive after the task that collected
    stop();
    expect(pauses.length).toBeGreaterThan(0);
    expect(pauses.some((p) => p.kind === 'minor')).toBe(true);
    expect(pauses.every((p) => p.ms >= 0 && p.ms < 1000)).toBe(true);
  });
});
