// --set key=value and --duration (sim/scenario/overrides.ts): a key set on the command line meets
// the checks a key written in the file meets, and an error names the flag.
import { describe, expect, it } from 'vitest';
import { InputError } from '../../sim/errors.js';
import { parseScenario } from '../../sim/scenario/load.js';
import { parseOverride } from '../../sim/scenario/overrides.js';

const FILE = `name: x
duration: 2h
activity: { postsPerUserPerDay: 2 }
policy: { kind: threshold, threshold: 25000 }
`;

const withSet = (...args: string[]) => parseScenario(FILE, 's.yaml', { overrides: args.map(parseOverride) });

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return (err as InputError).line();
  }
  throw new Error('accepted');
};

describe('--set', () => {
  it('writes over the file, with its units, and the later of two on one key wins', () => {
    const sc = withSet('policy.threshold=1e4', 'duration=30m', 'infrastructure.fanoutWorkers=16', 'duration=45m');
    expect(sc.policy.threshold).toBe(10_000);
    expect(sc.duration).toBe(2_700);
    expect(sc.infrastructure.fanoutWorkers).toBe(16);
    // a key below one the file writes as a plain value
    expect(withSet('activity.postsPerUserPerDay.dist=lognormal', 'activity.postsPerUserPerDay.mean=3', 'activity.postsPerUserPerDay.sigma=1').activity.postsPerUserPerDay).toMatchObject({ dist: 'lognormal' });
    // lists and maps in YAML's flow form
    expect(withSet('sweep.policies=[push, threshold:1000]').sweep.policies).toEqual(['push', 'threshold:1000']);
  });

  it('refuses an unknown key with the nearest, before reading the file', () => {
    expect(refusal(() => parseOverride('policy.treshold=5'))).toBe('--set policy.treshold=5: policy has no key "treshold"; did you mean "policy.threshold"?');
    expect(refusal(() => parseOverride('durration=1h'))).toBe('--set durration=1h: the scenario has no key "durration"; did you mean "duration"?');
    expect(refusal(() => parseOverride('duration.x=1'))).toBe('--set duration.x=1: duration holds a value, not keys: set duration=... whole');
    expect(refusal(() => parseOverride('policy'))).toMatch(/^--set policy: expected key=value/);
    expect(refusal(() => parseOverride('policy.threshold='))).toBe('--set policy.threshold=: needs a value after "="');
  });

  it("says a value's error against the flag, with the file's own message", () => {
    expect(refusal(() => withSet('duration=100'))).toBe('--set duration=100: duration: 100 has no unit (expected a duration like 500ms, 5s, 2h; valid units: us, ms, s, m, min, h, d)');
    expect(refusal(() => withSet('policy.threshold=-5'))).toBe('--set policy.threshold=-5: policy.threshold: -5 is negative (expected a count, >= 0)');
    expect(refusal(() => withSet('sweep.policies=[push, treshold:5]'))).toMatch(/^--set sweep\.policies=\[push, treshold:5\]: sweep\.policies\[1\]: unknown policy "treshold:5"; did you mean "threshold:5"\?/);
    // an error of the file itself still names the file
    expect(refusal(() => parseScenario('name: x\nduration: 5\n', 's.yaml', { overrides: [parseOverride('policy.threshold=5')] }))).toMatch(/^s\.yaml:2:11: duration: 5 has no unit/);
  });
});
