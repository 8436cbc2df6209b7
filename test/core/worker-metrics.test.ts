// The workers' published metrics documents: what a reader without the server's code accepts.
import { describe, expect, it } from 'vitest';
import { HISTOGRAMS, parseExportedMetrics, WORKER_METRICS_SCHEMA } from '../../core/worker-metrics.js';

describe('parseExportedMetrics', () => {
  const doc = { schema: WORKER_METRICS_SCHEMA, source: 'host-1', at: 1_700_000_000_000, counters: { eventsCreated: 3 }, histograms: {} };

  it('accepts a published document, and refuses torn, foreign and other-schema ones', () => {
    expect(parseExportedMetrics(JSON.stringify(doc))).toEqual(doc);
    expect(parseExportedMetrics(JSON.stringify(doc).slice(0, -3))).toBeNull();
    expect(parseExportedMetrics('null')).toBeNull();
    expect(parseExportedMetrics(JSON.stringify({ ...doc, schema: 'feedlab.worker-metrics/2' }))).toBeNull();
    expect(parseExportedMetrics(JSON.stringify({ ...doc, at: '1700000000000' }))).toBeNull();
    expect(parseExportedMetrics(JSON.stringify({ ...doc, counters: [] }))).toBeNull();
    const { histograms: _, ...noHistograms } = doc;
    expect(parseExportedMetrics(JSON.stringify(noHistograms))).toBeNull();
  });

  it('names the per-follower lag beside the per-post lag, for both paths', () => {
    expect(Object.keys(HISTOGRAMS)).toEqual(expect.arrayContaining(['fanoutLagPushMs', 'fanoutLagPullMs', 'fanoutFollowerLagPushMs', 'fanoutFollowerLagPullMs']));
  });
});
