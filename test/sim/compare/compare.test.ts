// The comparison's arithmetic on hand-made documents: means, spreads, noise, ratio and verdict in
// closed form, the 15% boundary on both sides, the noise verdict, figures a side lacks, flags.
import { describe, expect, it } from 'vitest';
import { buildComparison, describeDocuments, spreadOf, verdictOf, type CompareDocument, type PolicyInput } from '../../../sim/compare/compare.js';
import { FIGURE_IDS } from '../../../sim/compare/figures.js';
import { stringifyResult } from '../../../sim/result.js';
import { handMade, type HandMade } from './documents.js';

const one = (doc: CompareDocument, id: string, policy = 'push') => {
  const f = doc.figures.find((x) => x.id === id && x.policy === policy);
  if (!f) throw new Error(`no figure ${id} for ${policy}`);
  return f;
};

/** lag p99 of each simulated seed against each measured run. */
function lagP99(simulated: number[], measured: number[], extra: { sim?: HandMade; meas?: HandMade } = {}): CompareDocument {
  const policy: PolicyInput = {
    policy: 'push',
    simulated: simulated.map((v, i) => handMade({ followerLagP99: v, seed: i + 1, ...extra.sim })),
    measured: measured.map((v) => handMade({ source: 'replay', followerLagP99: v, seed: 7, ...extra.meas })),
  };
  return buildComparison({ scenario: 'hand', policies: [policy] });
}

describe('ratio, spread, noise', () => {
  it('takes each side\'s mean, its spread (max - min) / mean, their sum as the noise, and simulated / measured', () => {
    const f = one(lagP99([0.9, 1.0, 1.1], [2.0, 3.0]), 'lag_p99');
    expect(f.simulated).toBeCloseTo(1.0, 12);
    expect(f.measured).toBeCloseTo(2.5, 12);
    expect(f.values).toEqual({ simulated: [0.9, 1.0, 1.1], measured: [2.0, 3.0] });
    expect(f.spread.simulated).toBeCloseTo(0.2, 12);
    expect(f.spread.measured).toBeCloseTo(0.4, 12);
    expect(f.noise).toBeCloseTo(0.6, 12);
    expect(f.ratio).toBeCloseTo(0.4, 12);
    expect(f.verdict).toBe('noise'); // 60% off, and the noise is 60%
  });

  it("adds a replay's millisecond step over its mean to the noise where it pushed posts, and nothing for a simulation's clock", () => {
    const pushed = (doc: ReturnType<typeof handMade>, n: number) => Object.assign(doc.summary, { posts: { total: n, perSecond: { mean: 1, peak: 1 }, pushed: n, pulled: 0, withoutAudience: 0 } }) && doc;
    // the simulation pushed posts too: its clock adds nothing
    const compare = (measuredPushed: number) =>
      one(
        buildComparison({
          scenario: 'hand',
          policies: [{ policy: 'push', simulated: [pushed(handMade({ followerLagP99: 0.0039 }), 10)], measured: [pushed(handMade({ source: 'replay', followerLagP99: 0.005, seed: 7 }), measuredPushed)] }],
        }),
        'lag_p99',
      );
    // 3.9 ms against 5 ms read in whole ms: 22% off, beyond the 20% that a 1 ms step is of 5 ms: outside
    const f = compare(10);
    expect(f.resolution).toBeCloseTo(0.2, 12);
    expect(f.noise).toBeCloseTo(0.2, 12);
    expect(f.verdict).toBe('outside');
    // at 4.2 ms, 16% off: inside the step
    const near = buildComparison({
      scenario: 'hand',
      policies: [{ policy: 'push', simulated: [handMade({ followerLagP99: 0.0042 })], measured: [pushed(handMade({ source: 'replay', followerLagP99: 0.005, seed: 7 }), 10)] }],
    });
    expect(one(near, 'lag_p99').verdict).toBe('noise');
    // a replay that pushed nothing read its lags from the probes, finer than a ms: no step
    const pulled = compare(0);
    expect(pulled.resolution).toBeUndefined();
    expect(pulled.noise).toBe(0);
    // a measured 0 on that clock against less than a step: no ratio, inside the noise; a step or more: outside
    const zero = (sim: number) =>
      one(buildComparison({ scenario: 'hand', policies: [{ policy: 'push', simulated: [pushed(handMade({ followerLagP99: sim }), 10)], measured: [pushed(handMade({ source: 'replay', followerLagP99: 0, seed: 7 }), 10)] }] }), 'lag_p99');
    expect(zero(0.00028)).toMatchObject({ ratio: null, verdict: 'noise' });
    expect(zero(0.00028).why).toBe('replay, seed 7: 0 on a clock of 1 ms steps, the simulated value under one');
    expect(zero(0.0011)).toMatchObject({ ratio: null, verdict: 'outside' });
  });

  it('a side of one document has no spread', () => {
    const f = one(lagP99([3], [2]), 'lag_p99');
    expect(f.spread).toEqual({ simulated: 0, measured: 0 });
    expect(f.noise).toBe(0);
    expect(f.ratio).toBe(1.5);
    expect(spreadOf([5])).toBe(0);
    expect(spreadOf([4, 4, 4])).toBe(0);
    expect(spreadOf([])).toBeNull();
  });
});

describe('the verdict', () => {
  it('is within at exactly 15% on either side, outside just beyond it', () => {
    // 1.15 and 0.85 are not exact in binary: the boundary must hold for the values people write
    expect(one(lagP99([115], [100]), 'lag_p99').verdict).toBe('within');
    expect(one(lagP99([85], [100]), 'lag_p99').verdict).toBe('within');
    expect(one(lagP99([0.0115], [0.01]), 'lag_p99').verdict).toBe('within');
    expect(one(lagP99([0.0085], [0.01]), 'lag_p99').verdict).toBe('within');
    expect(one(lagP99([115.01], [100]), 'lag_p99').verdict).toBe('outside');
    expect(one(lagP99([84.99], [100]), 'lag_p99').verdict).toBe('outside');
    expect(verdictOf(1.15, 0)).toBe('within');
    expect(verdictOf(0.85, 0)).toBe('within');
    expect(verdictOf(1.1501, 0)).toBe('outside');
  });

  it('is "noise" outside 15% when the difference is within the two spreads added, outside beyond them', () => {
    // simulated 120 and 140 (mean 130, spread 20/130), measured 90 and 110 (mean 100, spread 0.2)
    const f = one(lagP99([120, 140], [90, 110]), 'lag_p99');
    expect(f.ratio).toBeCloseTo(1.3, 12);
    expect(f.noise).toBeCloseTo(20 / 130 + 0.2, 12);
    expect(f.verdict).toBe('noise');
    // the same means with tighter measured runs: noise 20/130 + 0.02 < 0.3
    expect(one(lagP99([120, 140], [99, 101]), 'lag_p99').verdict).toBe('outside');
    // the noise exactly equal to the difference counts as inside it
    expect(verdictOf(1.4, 0.4)).toBe('noise');
    expect(verdictOf(0.6, 0.4)).toBe('noise');
    expect(verdictOf(0.59, 0.4)).toBe('outside');
  });

  it('is n/a, naming the side and why, when a side has no value', () => {
    const nan = lagP99([1], [NaN]);
    const f = one(nan, 'lag_p99');
    expect(f).toMatchObject({ measured: null, ratio: null, noise: null, verdict: 'n/a', missing: { measured: 'not measured' } });
    expect(f.why).toBe('replay, seed 7: not measured');
    expect(f.values.measured).toEqual([null]);
    // a key class the simulator does not model: null on the simulated side, never 0
    const bodies = one(nan, 'memory_bodies_bytes');
    expect(bodies).toMatchObject({ simulated: null, measured: 20, verdict: 'n/a', missing: { simulated: 'not modelled' } });
    expect(bodies.why).toBe('simulate, seed 1: not modelled');
    // lag p99, the classes only a replay has (bodies, event log, other) and its every-key total;
    // a hand-made simulation without the usage figures has no own lists, so no feeds' total either;
    // the ten stage figures of a post event and the API's CPU, which neither hand-made document has
    expect(nan.counts['n/a']).toBe(18);
  });

  it('means over the documents that have the figure when only some do', () => {
    const f = one(lagP99([2, NaN, 4], [3]), 'lag_p99');
    expect(f.values.simulated).toEqual([2, null, 4]);
    expect(f.simulated).toBe(3);
    expect(f.spread.simulated).toBeCloseTo(2 / 3, 12);
    expect(f.verdict).toBe('within');
  });

  it('holds zero against zero as agreement, and anything against a measured zero as outside without a ratio', () => {
    const doc = buildComparison({ scenario: 'hand', policies: [{ policy: 'push', simulated: [handMade({ listBytes: 0 })], measured: [handMade({ source: 'replay', listBytes: 0 })] }] });
    expect(one(doc, 'memory_lists_bytes')).toMatchObject({ simulated: 0, measured: 0, ratio: 1, verdict: 'within' });
    const lists = buildComparison({ scenario: 'hand', policies: [{ policy: 'pull', simulated: [handMade({ listBytes: 500 })], measured: [handMade({ source: 'replay', listBytes: 0 })] }] });
    const f = one(lists, 'memory_lists_bytes', 'pull');
    expect(f).toMatchObject({ simulated: 500, measured: 0, ratio: null, verdict: 'outside' });
    expect(f.why).toMatch(/replay, seed 1: 0, so no ratio/);
  });
});

describe("whose a gap is: the simulations again with the replays' stages", () => {
  /** lag p99 (and read p99) simulated (calibrated), simulated again with the replay's stages, and measured; read p99 is 1 unless given. */
  function withStages(simulated: number[], fed: number[], measured: number[], read: { simulated?: number; fed?: number } = {}): CompareDocument {
    const policy: PolicyInput = {
      policy: 'push',
      simulated: simulated.map((v, i) => handMade({ followerLagP99: v, readP99Ms: read.simulated, seed: i + 1 })),
      measured: measured.map((v) => handMade({ source: 'replay', followerLagP99: v, seed: 7 })),
      replayStages: fed.map((v, i) => handMade({ followerLagP99: v, readP99Ms: read.fed, seed: i + 1 })),
    };
    return buildComparison({ scenario: 'hand', policies: [policy], replayStages: { label: 'simulate (the stages)', sources: ['push: postToLog 5 ms'] } });
  }

  it("is the costs' where the replay's stages bring a figure outside within 15% or inside the noise", () => {
    const within = one(withStages([2, 2], [1.1, 1.1], [1, 1]), 'lag_p99');
    expect(within).toMatchObject({ ratio: 2, verdict: 'outside', gap: 'costs' });
    expect(within.replayStages!.simulated).toBeCloseTo(1.1, 12);
    expect(within.replayStages!.ratio).toBeCloseTo(1.1, 12);
    expect(within.replayStages).toMatchObject({ noise: 0, verdict: 'within' });
    // 1.3 and 1.5 against 1: 40% off, inside the stages' own spread (0.2 / 1.4) and the runs' (0.4 / 1)
    const noise = one(withStages([2, 2], [1.3, 1.5], [0.8, 1.2]), 'lag_p99');
    expect(noise.replayStages!.noise).toBeCloseTo(0.2 / 1.4 + 0.4, 12);
    expect(noise).toMatchObject({ verdict: 'outside', gap: 'costs', replayStages: { verdict: 'noise' } });
  });

  it("is the model's where it stays outside with the replay's stages, and none where it was not outside", () => {
    const doc = withStages([2, 2], [1.6, 1.6], [1, 1]);
    expect(one(doc, 'lag_p99')).toMatchObject({ verdict: 'outside', gap: 'model', replayStages: { verdict: 'outside' } });
    // read p99 is 1 on every side: within, no gap, its stages' ratio still there
    expect(one(doc, 'read_p99')).toMatchObject({ verdict: 'within', replayStages: { ratio: 1, verdict: 'within' } });
    expect(one(doc, 'read_p99').gap).toBeUndefined();
    expect(doc.gaps).toEqual({ costs: 0, model: 1, open: 0 });
    expect(doc.counts.outside).toBe(1);
    expect(doc.sides.replayStages).toEqual({ label: 'simulate (the stages)', sources: ['push: postToLog 5 ms'] });
    // a figure the stages' simulations lack has no gap to say: outside, unattributed
    const none = one(withStages([2, 2], [NaN, NaN], [1, 1]), 'lag_p99');
    expect(none).toMatchObject({ verdict: 'outside', replayStages: { simulated: null, ratio: null, verdict: 'n/a' } });
    expect(none.gap).toBeUndefined();
  });

  it('is open where it stays outside but hangs on costs a replay does not measure (the API CPU behind a read)', () => {
    const doc = withStages([1, 1], [1, 1], [1, 1], { simulated: 2, fed: 1.6 });
    expect(one(doc, 'read_p99')).toMatchObject({ ratio: 2, verdict: 'outside', gap: 'open', replayStages: { ratio: 1.6, verdict: 'outside' } });
    expect(doc.gaps).toEqual({ costs: 0, model: 0, open: 1 });
    // the same read within 15% with the stages: the costs'
    expect(one(withStages([1, 1], [1, 1], [1, 1], { simulated: 2, fed: 1.1 }), 'read_p99').gap).toBe('costs');
  });

  it("is open for a lag that stays outside where the replay pulled posts (their delivery is api.postListed, not swapped), the model's where it pulled none", () => {
    const policy: PolicyInput = {
      policy: 'push',
      simulated: [handMade({ followerLagP99: 2 })],
      measured: [handMade({ source: 'replay', followerLagP99: 1 })],
      replayStages: [handMade({ followerLagP99: 1.6 })],
    };
    policy.measured[0].summary.posts = { total: 10, perSecond: { mean: 1, peak: 1 }, pushed: 8, pulled: 2, withoutAudience: 0 };
    expect(one(buildComparison({ scenario: 'hand', policies: [policy] }), 'lag_p99').gap).toBe('open');
    policy.measured[0].summary.posts.pulled = 0;
    expect(one(buildComparison({ scenario: 'hand', policies: [policy] }), 'lag_p99').gap).toBe('model');
  });

  it('leaves the document as it was without them', () => {
    const plain = lagP99([2, 2], [1, 1]);
    expect(plain.gaps).toBeUndefined();
    expect(plain.sides.replayStages).toBeUndefined();
    expect(one(plain, 'lag_p99').replayStages).toBeUndefined();
    expect(one(plain, 'lag_p99').gap).toBeUndefined();
  });
});

describe('the document', () => {
  it('flags a contended or partial measurement first, and only the measured side\'s', () => {
    const contended = lagP99([1], [1, 1], { meas: { contended: true } });
    expect(contended.measurement).toEqual({ contended: true, partial: false });
    expect(contended.warnings[0]).toMatch(/^CONTENDED measurement \(run 1, run 2\): .*suspect/);
    const both = lagP99([1], [1], { meas: { partialAt: 10, contended: true } });
    expect(both.warnings.map((w) => w.split(' ')[0])).toEqual(['CONTENDED', 'PARTIAL']);
    const partial = lagP99([1], [1], { meas: { partialAt: 10 } });
    expect(partial.measurement).toEqual({ contended: false, partial: true });
    expect(partial.warnings[0]).toMatch(/^PARTIAL measurement/);
    const quiet = lagP99([1], [1], { sim: { partialAt: 10 } });
    expect(quiet.measurement).toEqual({ contended: false, partial: false });
    expect(quiet.warnings).toEqual(['partial simulation (seed 1): stopped early; its figures cover only the part that ran']);
    expect(quiet.policies[0].documents.simulated[0]).toMatchObject({ label: 'seed 1', partialAtSeconds: 10, contended: false });
  });

  it('has every required id for every policy, figure by figure, with estimates and notes where given', () => {
    const doc = buildComparison({
      scenario: 'hand',
      policies: [
        { policy: 'push', estimate: { lag_p99: 2 }, simulated: [handMade()], measured: [handMade({ source: 'replay' })], notes: { read_p99: 'the API tier is not modelled' } },
        { policy: 'pull', simulated: [handMade({ policy: 'pull' })], measured: [handMade({ source: 'replay', policy: 'pull' })] },
      ],
    });
    for (const id of ['lag_p50', 'lag_p99', 'lag_max', 'writes_per_second_mean', 'writes_per_second_peak', 'memory_bytes', 'read_p50', 'read_p99', 'commands_per_read']) expect(FIGURE_IDS).toContain(id);
    expect(doc.figures.map((f) => `${f.id}/${f.policy}`)).toEqual(FIGURE_IDS.flatMap((id) => [`${id}/push`, `${id}/pull`]));
    expect(one(doc, 'lag_p99').estimate).toBe(2);
    expect(one(doc, 'lag_p50').estimate).toBeNull(); // the policy has an estimate, not of this figure
    expect('estimate' in one(doc, 'lag_p99', 'pull')).toBe(false);
    expect(one(doc, 'read_p99').note).toBe('the API tier is not modelled');
    expect(one(doc, 'read_p50').note).toBeUndefined();
    expect(doc.sides.estimate).toBe(true);
    expect(Object.keys(one(doc, 'lag_p99'))).toEqual(expect.arrayContaining(['id', 'policy', 'estimate', 'simulated', 'measured', 'ratio', 'noise', 'verdict']));
  });

  it('is the same bytes for the same inputs', () => {
    const make = () => stringifyResult(lagP99([0.9, 1.1], [1, 1.2], { meas: { contended: true } }));
    expect(make()).toBe(make());
  });

  it('names each side by its documents when no file names are given', () => {
    const doc = lagP99([1, 1, 1], [1, 1]);
    expect(doc.sides.simulated).toEqual({ label: 'simulate, seeds 1-3', sources: ['simulate, seeds 1-3'] });
    expect(doc.sides.measured.label).toBe('replay, 2 runs (seed 7)');
    expect(describeDocuments([[handMade({ seed: 4 })], [handMade({ seed: 4 })]])).toBe('simulate, seed 4');
    expect(describeDocuments([[handMade({ seed: 1 }), handMade({ seed: 5 })]])).toBe('simulate, seeds 1, 5');
  });
});
