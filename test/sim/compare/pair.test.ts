// Pairing two saved documents: results by themselves, sweeps by policy, and the warnings about
// documents of different policies or different worlds.
import { describe, expect, it } from 'vitest';
import { buildComparison } from '../../../sim/compare/compare.js';
import { documentSummary, pairDocuments, worldWarnings } from '../../../sim/compare/pair.js';
import type { RunResult } from '../../../sim/result.js';
import type { SweepResult } from '../../../sim/sweep.js';
import { handMade, savedReplay, simulatedEvents } from './documents.js';

const sweep = (runs: RunResult[]): SweepResult => ({ schema: 'feedlab.sweep/1', scenario: runs[0].scenario, rows: [], recommended: null, runs });

describe('pairDocuments', () => {
  it('holds two results against each other, naming each side by its source and file', () => {
    const p = pairDocuments({ name: 'sim.json', doc: handMade() }, { name: 'live.json', doc: handMade({ source: 'replay' }) });
    expect(p.policies).toHaveLength(1);
    expect(p.labels).toEqual({ simulated: 'simulate (sim.json)', measured: 'replay (live.json)' });
    expect(p.warnings).toEqual([]);
    const doc = buildComparison(p);
    expect(doc.policies[0].documents.measured[0].label).toBe('live.json');
    expect(doc.sides.measured.sources).toEqual(['live.json: replay, push, seed 1, 100 users, 1 min of wall time at x1']);
  });

  it('compares two results of different policies, with a warning', () => {
    const p = pairDocuments({ name: 'a.json', doc: handMade({ policy: 'push' }) }, { name: 'b.json', doc: handMade({ policy: 'pull' }) });
    expect(p.policies.map((x) => x.policy)).toEqual(['push vs pull']);
    expect(p.warnings).toEqual(['different policies: push (a.json) against pull (b.json), compared as one']);
  });

  it('pairs sweeps by policy and lists the policies only one side has, not compared', () => {
    const a = sweep(['push', 'pull', 'threshold:1000'].map((policy) => handMade({ policy })));
    const b = sweep(['threshold:1000', 'push', 'rate'].map((policy) => handMade({ policy, source: 'replay' })));
    const p = pairDocuments({ name: 'a.json', doc: a }, { name: 'b.json', doc: b });
    expect(p.policies.map((x) => [x.policy, x.simulated[0].policy, x.measured[0].policy])).toEqual([
      ['push', 'push', 'push'],
      ['threshold:1000', 'threshold:1000', 'threshold:1000'],
    ]);
    expect(p.unmatched).toEqual([
      { policy: 'pull', side: 'simulated' },
      { policy: 'rate', side: 'measured' },
    ]);
    expect(p.warnings).toEqual(['policies not compared (only in a.json: pull; only in b.json: rate)']);
    expect(documentSummary({ name: 'a.json', doc: a })).toBe('a.json: simulate, sweep of 3 policies, seed 1, 100 users, 1 min');
    // a sweep against one result: that result's policy is paired, the sweep's others are unmatched
    const single = pairDocuments({ name: 'a.json', doc: a }, { name: 'one.json', doc: handMade({ policy: 'pull', source: 'replay' }) });
    expect(single.policies.map((x) => x.policy)).toEqual(['pull']);
    expect(single.unmatched!.map((u) => u.policy)).toEqual(['push', 'threshold:1000']);
  });

  it('says where the worlds differ: a simulated scenario against its replay at x20', () => {
    const sim = simulatedEvents();
    const replay = savedReplay(0);
    expect(worldWarnings(sim, replay, { simulated: 'sim.json', measured: 'live.json' })).toEqual([
      "different time scales: x1 (sim.json) and x20 (live.json); rates (writes/s, the API's CPU in cores) count per wall second, so they differ by the time scale's ratio where the load is the same",
      'different durations: 10 min (sim.json) and 30 s (live.json)',
    ]);
    expect(worldWarnings(replay, savedReplay(1), { simulated: 'one', measured: 'two' })).toEqual([]);
    const other = structuredClone(replay);
    other.scenario.name = 'other';
    other.scenario.sampledUsers = 5000;
    expect(worldWarnings(other, replay, { simulated: 'x', measured: 'y' })).toEqual([
      'different scenarios: "other" (x) and "replay-events" (y)',
      'different worlds: 5k users, 24k follows (x) and 1.2k users, 24k follows (y)',
    ]);
  });
});
