// Stopping a run through the model's shouldStop hook: the result covers what was simulated, says
// so, and still makes valid reports; without the hooks nothing changes.
import { describe, expect, it } from 'vitest';
import { markdownReport } from '../../reports/markdown.js';
import { sweepMarkdown, sweepTable } from '../../reports/sweep.js';
import { terminalReport } from '../../reports/terminal.js';
import { policyFor, runPolicy } from '../../sim/run-scenario.js';
import { parseScenario } from '../../sim/scenario/load.js';
import { prepare, scenarioGraph } from '../../sim/run-scenario.js';
import { stringifyResult } from '../../sim/result.js';
import { recommend, sweepRow, type SweepResult } from '../../sim/sweep.js';
import { recordRun, TINY, tinyPrepared } from './fixture.js';

describe('a run stopped with shouldStop', () => {
  it('stops at the minute asked, marks the result partial, and keeps only what was simulated', () => {
    const { result, snapshots } = recordRun('push', 7);
    expect(snapshots).toHaveLength(7);
    expect(snapshots[6].atSeconds).toBe(420);
    expect(result.partial).toEqual({ stoppedAtSeconds: 420 });
    expect(result.scenario.durationSeconds).toBe(1200);
    for (const k of ['postsPerSecond', 'writesPerSecond', 'backlogWrites', 'lagP99Seconds', 'readP99Ms', 'memoryBytes'] as const) {
      expect(result.series[k]).toHaveLength(7);
    }
    expect(result.series.startSeconds).toEqual([0, 60, 120, 180, 240, 300, 360]);
    expect(result.events.map((e) => e.kind)).toEqual(['celebrityBurst']);
    // the snapshots' per-minute figures are the result's series
    expect(result.series.memoryBytes).toEqual(snapshots.map((s) => s.memoryBytes));
    expect(result.series.lagP99Seconds).toEqual(snapshots.map((s) => s.lagP99Seconds));
    expect(result.series.writesPerSecond.map((x) => Math.round(x))).toEqual(snapshots.map((s) => Math.round(s.writesPerSecond)));
    // the SLO is checked on the same figures the dashboard showed when it stopped
    const last = snapshots[6].soFar;
    expect(result.summary.fanout.followerLagSeconds.p99).toBe(last.followerLagP99Seconds);
    expect(result.summary.redis.memoryBytes.peak).toBe(last.peakMemoryBytes);
    // rates are over the simulated 7 minutes
    expect(result.summary.reads.perSecond.mean).toBeCloseTo(result.summary.reads.total / 420, 6);
  });

  it('stops at the simulated second it is handed, and a run stopped late and run again to an earlier minute is that run exactly', () => {
    const prepared = tinyPrepared();
    const policy = policyFor(prepared.scenario, 'push');
    const seen: number[] = [];
    const at = runPolicy(prepared, policy, undefined, { shouldStop: (t) => (seen.push(t), t >= 300) });
    expect(seen).toEqual([60, 120, 180, 240, 300]);
    expect(at.partial).toEqual({ stoppedAtSeconds: 300 });
    // what the dashboard does when the simulation is ahead of the screen (sim-worker.ts)
    const late = runPolicy(prepared, policy, undefined, { shouldStop: (t) => t >= 660 });
    expect(late.partial).toEqual({ stoppedAtSeconds: 660 });
    const again = runPolicy(prepared, policy, undefined, { shouldStop: (t) => t >= 300 });
    expect(JSON.parse(stringifyResult(again))).toEqual(JSON.parse(stringifyResult(at)));
  });

  it('gives the figures of a run that was only ever that long', () => {
    const stopped = recordRun('push', 7).result;
    const sc = parseScenario(TINY.replace('duration: 20m', 'duration: 7m'), 'tiny7.yaml');
    const short = runPolicy(prepare(sc, scenarioGraph(sc)), policyFor(sc, 'push'));
    expect(stopped.summary.posts.total).toBe(short.summary.posts.total);
    expect(stopped.summary.fanout.deliveries).toBe(short.summary.fanout.deliveries);
    expect(stopped.summary.fanout.followerLagSeconds).toEqual(short.summary.fanout.followerLagSeconds);
    expect(stopped.summary.reads.total).toBe(short.summary.reads.total);
    expect(stopped.summary.redis.memoryBytes.peak).toBe(short.summary.redis.memoryBytes.peak);
    expect(stopped.summary.slo).toEqual(short.summary.slo);
  });

  it('still makes a valid result document and reports that say partial', () => {
    const { result } = recordRun('push', 7);
    const doc = JSON.parse(stringifyResult(result));
    expect(doc.schema).toBe('feedlab.result/1');
    expect(doc.partial).toEqual({ stoppedAtSeconds: 420 });
    const text = terminalReport(result);
    expect(text).toMatch(/^tiny: policy push:skip-dormant, .*, 7 min of 20 min simulated\n/);
    expect(text).toContain('partial: stopped at 7 min of 20 min; every figure covers the first 7 min only');
    expect(text).toMatch(/SLO \(first 7 min only\): NOT MET/);
    const md = markdownReport(result);
    expect(md).toContain('**partial: stopped at 7 min of 20 min; every figure covers the first 7 min only**');
    expect(md).toContain('| fan-out lag p99 |');
  });

  it('a whole run has no partial field and the same document as without hooks', () => {
    const hooked = recordRun('push').result;
    expect(hooked.partial).toBeUndefined();
    const plain = runPolicy(tinyPrepared(), policyFor(tinyPrepared().scenario, 'push'));
    expect(stringifyResult(hooked)).toBe(stringifyResult(plain));
    expect(stringifyResult(plain)).not.toContain('"partial"');
  });

  it('a stopped sweep reports the policies finished and names the rest', () => {
    const done = recordRun('pull').result;
    const stopped = recordRun('push', 3).result;
    const rows = [sweepRow(done, 2000)];
    const s: SweepResult = {
      schema: 'feedlab.sweep/1',
      scenario: done.scenario,
      partial: { stoppedPolicy: 'push', stoppedAtSeconds: stopped.partial!.stoppedAtSeconds, notRun: ['threshold:1000'] },
      rows,
      recommended: recommend(rows),
      runs: [done],
    };
    const table = sweepTable(s);
    expect(table).toContain('partial: stopped after 1 finished policy; push stopped at 3 min of 20 min (not compared); not run: threshold:1000');
    expect(table).toMatch(/recommended \(among the 1 finished\): pull:skip-dormant/);
    expect(table.split('\n').filter((l) => l.includes('skip-dormant '))).toHaveLength(1);
    expect(sweepMarkdown(s)).toContain('**partial: stopped after 1 finished policy;');
    expect(JSON.parse(stringifyResult(s)).partial.notRun).toEqual(['threshold:1000']);
  });
});
