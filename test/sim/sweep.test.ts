// The sweep's recommendation (sim/sweep.ts recommend): the fewest servers among the policies that
// pass, a tie to the simpler policy and said, a winner at the edge of the swept range said.
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../sim/result.js';
import { recommend, serversFor, stoppedSweep, type SweepRow } from '../../sim/sweep.js';

const row = (policy: string, total: number, sloPass = true): SweepRow => ({
  policy,
  lagP99Seconds: 1,
  peakWritesPerSecond: 1,
  peakMemoryBytes: 1,
  readP99Ms: 1,
  redisOpsPerRead: 1,
  redisCommandsPerSecond: 1,
  servers: { memoryHosts: total / 2, redisCores: total / 4, fanoutWorkers: total / 4, total },
  sloPass,
  failed: sloPass ? [] : ['fanoutLagP99'],
});

describe('recommend', () => {
  it('picks the fewest servers among the passing policies, and names the next', () => {
    const r = recommend([row('push:skip-dormant', 3, false), row('threshold:1000:skip-dormant', 5), row('threshold:25000:skip-dormant', 4), row('pull:skip-dormant', 6)]);
    expect(r!.policy).toBe('threshold:25000:skip-dormant');
    expect(r!.reason).toMatch(/^meets every SLO with the fewest servers \(4: /);
    expect(r!.reason).toContain('push:skip-dormant fails fanoutLagP99');
    expect(r!.reason).toContain('the next cheapest passing policy, threshold:1000:skip-dormant, needs 5');
    expect(recommend([row('push', 1, false)])).toBeNull();
  });

  it('gives a tie to the simpler policy and says it was a tie', () => {
    const r = recommend([row('adaptive:25000:skip-dormant', 3), row('threshold:25000:skip-dormant', 3), row('push:skip-dormant', 4)]);
    expect(r!.policy).toBe('threshold:25000:skip-dormant');
    expect(r!.reason).toContain('a tie with adaptive:25000:skip-dormant at the same count, and threshold:25000:skip-dormant is the simpler');
    expect(r!.reason).toContain('the next cheapest passing policy, push:skip-dormant, needs 4');
    // an older document's fractions tie as printed, to one decimal
    expect(recommend([row('adaptive:25000', 2.21), row('threshold:25000', 2.24)])!.policy).toBe('threshold:25000');
  });

  it('counts whole servers: a tenth of a host is a host', () => {
    const s = serversFor(
      {
        scenario: { durationSeconds: 100 },
        summary: {
          fanout: { deliveries: 1_000, listWrites: 0, writesPerSecond: { mean: 10, peak: 50 } },
          reads: { perSecond: { mean: 10, peak: 10 }, redisOpsPerRead: { mean: 3, p50: 3, p99: 3 } },
          redis: { memoryBytes: { peak: 6.4e9, end: 6.4e9 } },
        },
      } as unknown as Parameters<typeof serversFor>[0],
      5_000,
    );
    expect(s).toEqual({ memoryHosts: 1, redisCores: 1, fanoutWorkers: 1, total: 3, redisCommandsPerSecond: 40 });
  });

  it('says when the winner is the lowest or highest threshold swept', () => {
    const low = recommend([row('threshold:1000', 2), row('threshold:10000', 2.5), row('threshold:100000', 3)]);
    expect(low!.reason).toMatch(/; 1000 is the lowest threshold swept: sweep lower ones too, the cheapest may lie below it$/);
    const high = recommend([row('threshold:1000', 3), row('threshold:100000', 2)]);
    expect(high!.reason).toMatch(/; 100000 is the highest threshold swept: sweep higher ones too/);
    // inside the range, or the only one of its kind: nothing to say
    expect(recommend([row('threshold:1000', 3), row('threshold:10000', 2), row('threshold:100000', 3)])!.reason).not.toMatch(/swept:/);
    expect(recommend([row('threshold:10000', 2), row('push', 3)])!.reason).not.toMatch(/swept:/);
  });
});

describe('stoppedSweep', () => {
  // only `partial` is read: whole runs and partial ones stand in for the documents
  const whole = {} as RunResult;
  const at = (s: number) => ({ partial: { stoppedAtSeconds: s } }) as RunResult;
  const labels = ['a', 'b', 'c', 'd'];

  it('one after another: the finished ones, the one on screen stopped at its minute, the rest not run', () => {
    expect(stoppedSweep(labels, [whole, at(120)], 1)).toEqual({ stoppedPolicy: 'b', stoppedAtSeconds: 120, notRun: ['c', 'd'] });
  });

  it('in parallel, finished out of order: a later policy whole, the one on screen stopped, the one beside it not run', () => {
    // b finished first; a (on screen) stopped at minute 3; c was running on the other thread; d never started
    expect(stoppedSweep(labels, [at(180), whole, at(7_200)], 0)).toEqual({ stoppedPolicy: 'a', stoppedAtSeconds: 180, notRun: ['c', 'd'] });
  });

  it('a stop while the policy on screen had just finished: nothing stopped mid-run, the rest not run', () => {
    expect(stoppedSweep(labels, [whole, whole, at(60)], 1)).toEqual({ stoppedPolicy: null, stoppedAtSeconds: null, notRun: ['c', 'd'] });
    expect(stoppedSweep(labels, [], null)).toEqual({ stoppedPolicy: null, stoppedAtSeconds: null, notRun: labels });
  });
});
