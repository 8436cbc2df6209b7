// The runtime's waits in /metrics (server/http/runtime-metrics.ts): a blocked loop and the GC's
// pauses land in the registry under the names replay reads.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { LOOP_PROBE_MS, METRIC_GC_PAUSE, METRIC_LOOP_DELAY } from '../../../core/runtime-metrics.js';
import { MetricsRegistry } from '../../../server/http/metrics.js';
import { watchRuntime } from '../../../server/http/runtime-metrics.js';
import { bucketsOf, parseMetrics, serverCounters } from '../../../sim/replay/server-metrics.js';
import { block, churn } from '../runtime-load.js';

describe("the runtime's /metrics series", () => {
  it('counts a blocked loop and the pauses where replay reads them', async () => {
    const registry = new MetricsRegistry();
    const stop = watchRuntime(registry);
    await sleep(3 * LOOP_PROBE_MS);
    block(40);
    expect(churn()).toBeGreaterThan(0);
    await sleep(3 * LOOP_PROBE_MS);
    stop();
    const text = (await registry.render());
    expect(text).toContain(`# TYPE ${METRIC_LOOP_DELAY} histogram`);
    expect(text).toMatch(new RegExp(`${METRIC_GC_PAUSE}_bucket\\{le="0.001",kind="minor"\\} \\d+`));
    const samples = parseMetrics(text);
    const loop = bucketsOf(samples, METRIC_LOOP_DELAY);
    const total = loop.at(-1)!.count;
    // one probe, at least, waited more than 20 ms: the block
    expect(loop.find((b) => b.le === 0.02)!.count).toBeLessThan(total);
    const counters = serverCounters(samples);
    expect(counters.loopDelay).toEqual(loop);
    expect(counters.gcPauses.at(-1)!.count).toBeGreaterThan(0);
    expect(counters.gcPauseSeconds).toBeGreaterThan(0);
  });
});
