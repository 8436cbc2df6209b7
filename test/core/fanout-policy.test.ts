import { describe, expect, it } from 'vitest';
import { formatPolicy, keepForReader, nextAdaptiveThreshold, parsePolicy, PolicySpecError, pullsAuthor, pushPair, type FanoutPolicy } from '../../core/fanout-policy.js';

const base: FanoutPolicy = { kind: 'threshold', threshold: 25_000, skipDormant: true, readerCap: 2000, backlogBound: 1e6, minThreshold: 1000 };

describe('policy specs', () => {
  it('parses every form and keeps the base settings it does not name', () => {
    expect(parsePolicy('push', base)).toMatchObject({ kind: 'push', skipDormant: true });
    expect(parsePolicy('pull', base).kind).toBe('pull');
    expect(parsePolicy('threshold:10000', base)).toMatchObject({ kind: 'threshold', threshold: 10_000 });
    expect(parsePolicy('threshold:25k', base).threshold).toBe(25_000);
    expect(parsePolicy('threshold:2.5e4', base).threshold).toBe(25_000);
    expect(parsePolicy('threshold', base).threshold).toBe(25_000);
    expect(parsePolicy('reader-cap:500', base)).toMatchObject({ kind: 'reader-cap', readerCap: 500 });
    expect(parsePolicy('adaptive:50000', base)).toMatchObject({ kind: 'adaptive', threshold: 50_000 });
    expect(parsePolicy('rate', base).kind).toBe('rate');
    expect(parsePolicy('threshold:25000:all-followers', base).skipDormant).toBe(false);
    expect(parsePolicy('push:skip-dormant', { ...base, skipDormant: false }).skipDormant).toBe(true);
  });

  it('formats back to a spec that parses to the same policy', () => {
    for (const spec of ['push', 'pull', 'threshold:10000', 'rate:all-followers', 'reader-cap:300', 'adaptive:40000:skip-dormant']) {
      const p = parsePolicy(spec, base);
      expect(parsePolicy(formatPolicy(p), base)).toEqual(p);
    }
  });

  it('refuses unknown kinds and bad arguments with the valid forms', () => {
    expect(() => parsePolicy('fanout', base)).toThrow(PolicySpecError);
    expect(() => parsePolicy('fanout', base)).toThrow(/valid forms: push, pull, threshold:T/);
    expect(() => parsePolicy('threshold:lots', base)).toThrow(/must be a number like 25000/);
    expect(() => parsePolicy('threshold:1:2', base)).toThrow('policy "threshold:1:2": threshold takes one value, and "2" is not skip-dormant or all-followers (valid forms: push, pull,');
    expect(() => parsePolicy('push:1000', base)).toThrow('policy "push:1000": push takes no value, and "1000" is not skip-dormant or all-followers (valid forms:');
    expect(() => parsePolicy('reader-cap:0', base)).toThrow(/at least 1/);
  });

  it('suggests what a misspelt policy meant', () => {
    const message = (spec: string) => {
      try {
        parsePolicy(spec, base);
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error(`${spec} parsed`);
    };
    expect(message('push:skipdormant')).toBe('policy "push:skipdormant": push takes no value, and "skipdormant" is not skip-dormant or all-followers; did you mean "push:skip-dormant"?');
    expect(message('threshold:25k:allfollowers')).toBe('policy "threshold:25k:allfollowers": threshold takes one value, and "allfollowers" is not skip-dormant or all-followers; did you mean "threshold:25k:all-followers"?');
    expect(message('treshold:25000')).toMatch(/^unknown policy "treshold:25000"; did you mean "threshold:25000"\? \(valid forms: /);
    // a negative threshold is said to be negative, not "not a number"
    expect(message('threshold:-5')).toBe('policy "threshold:-5": the threshold must not be negative, got -5');
  });
});

describe('decisions', () => {
  it('pulls authors strictly over the threshold, as the documents do', () => {
    expect(pullsAuthor(base, 25_000, 25_000)).toBe(false);
    expect(pullsAuthor(base, 25_001, 25_000)).toBe(true);
    expect(pullsAuthor({ ...base, kind: 'push' }, 1e9, 25_000)).toBe(false);
    expect(pullsAuthor({ ...base, kind: 'pull' }, 0, 25_000)).toBe(true);
  });

  it('Feeding Frenzy pushes a pair when producer rate x push cost <= consumer rate x pull cost', () => {
    expect(pushPair(1, 10, 2, 1)).toBe(true); // 2 <= 10
    expect(pushPair(10, 1, 2, 1)).toBe(false); // 20 > 1
    expect(pushPair(5, 10, 2, 1)).toBe(true); // 10 <= 10
  });

  it('a reader cap keeps cap/follows of deliveries for readers over the cap', () => {
    const p = { ...base, kind: 'reader-cap' as const, readerCap: 100 };
    expect(keepForReader(p, 100, 0.999)).toBe(true);
    expect(keepForReader(p, 400, 0.24)).toBe(true);
    expect(keepForReader(p, 400, 0.25)).toBe(false);
  });

  it('the adaptive threshold halves over the bound, never below its floor, and recovers below half the bound', () => {
    const p = { ...base, kind: 'adaptive' as const, threshold: 8000, backlogBound: 100, minThreshold: 1500 };
    expect(nextAdaptiveThreshold(p, 8000, 101)).toBe(4000);
    expect(nextAdaptiveThreshold(p, 2000, 101)).toBe(1500);
    expect(nextAdaptiveThreshold(p, 4000, 75)).toBe(4000);
    expect(nextAdaptiveThreshold(p, 4000, 49)).toBe(8000);
    expect(nextAdaptiveThreshold(p, 8000, 0)).toBe(8000);
  });
});
