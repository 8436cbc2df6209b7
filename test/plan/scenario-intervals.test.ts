// [low, likely, high] in scenario files: where they are accepted, what they resolve to, and the
// one-line errors for bad ones.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { InputError } from '../../sim/errors.js';
import { intervalNote, loadScenario, parseScenario } from '../../sim/scenario/load.js';

const ROOT = join(import.meta.dirname, '../..');

function errorLine(text: string): string {
  try {
    parseScenario(text, 's.yaml');
  } catch (err) {
    if (err instanceof InputError) return err.line();
    throw err;
  }
  throw new Error('expected an InputError');
}

describe('intervals in a scenario', () => {
  test('resolve to the likely value in place, and are listed (in schema order) with where they were written', () => {
    const s = parseScenario(
      [
        'name: x',
        'population: [80e6, 100e6, 130e6]',
        'graph: { generate: { users: 1000, avgFollows: [50, 100, 150], maxFollows: 500 } }',
        'activity:',
        '  postsPerUserPerDay: { dist: lognormal, mean: [0.5, 1, 2], sigma: 1.5 }',
        '  sessionsPerUserPerDay: [4, 5, 8]',
        '  dormantShare: [0.4, 0.5, 0.7]',
        '  diurnal: { peakFactor: [2, 3, 4] }',
      ].join('\n'),
      's.yaml',
    );
    expect(s.population).toBe(100e6);
    expect(s.graph).toMatchObject({ kind: 'generate', avgFollows: 100 });
    expect(s.activity.postsPerUserPerDay).toEqual({ dist: 'lognormal', mean: 1, sigma: 1.5 });
    expect(s.activity.sessionsPerUserPerDay).toBe(5);
    expect(s.activity.dormantShare).toBe(0.5);
    expect(s.activity.diurnal?.peakFactor).toBe(3);
    expect(s.intervals?.map((i) => [i.key, i.low, i.likely, i.high])).toEqual([
      ['population', 80e6, 100e6, 130e6],
      ['avgFollows', 50, 100, 150],
      ['postsPerUserPerDay', 0.5, 1, 2],
      ['sessionsPerUserPerDay', 4, 5, 8],
      ['peakFactor', 2, 3, 4],
      ['dormantShare', 0.4, 0.5, 0.7],
    ]);
    expect(s.intervals![0]).toMatchObject({ path: 'population', where: 's.yaml:2:13' });
    expect(parseScenario('name: x\nactivity: { postsPerUserPerDay: [1, 2, 3] }', 's.yaml').activity.postsPerUserPerDay).toEqual({ dist: 'constant', mean: 2 });
  });

  test('a scenario without intervals has none, and a plan section only when written', () => {
    const s = parseScenario('name: x\n', 's.yaml');
    expect(s.intervals).toBeUndefined();
    expect(s.plan).toBeUndefined();
    const p = parseScenario('name: x\nplan: { replicas: 2, redisNodeMemory: 32GB }\n', 's.yaml').plan;
    expect(p).toEqual({ redisNodeMemory: 32e9, replicas: 2, fragmentation: 1.2, postBodyBytes: 600, postCacheTtl: 86400, staffingQ: 2.375 });
  });

  test('every shipped scenario and fixture still loads', () => {
    for (const dir of ['scenarios', 'test/fixtures/scenarios']) {
      for (const f of readdirSync(join(ROOT, dir)).filter((x) => x.endsWith('.yaml') && x !== 'typo.yaml')) {
        expect(() => loadScenario(join(ROOT, dir, f), { onIntervalNote: null }), f).not.toThrow();
      }
    }
  });

  test('bad intervals are one line naming the file, line, column and what is valid', () => {
    expect(errorLine('name: x\npopulation: [3e6, 2e6, 4e6]\n')).toBe('s.yaml:2:13: population: [3000000, 2000000, 4000000] is not in order: an interval needs low <= likely <= high');
    expect(errorLine('name: x\npopulation: [3e6, 4e6]\n')).toBe('s.yaml:2:13: population: an interval is [low, likely, high]: three numbers, got 2 items');
    expect(errorLine('name: x\nactivity: { sessionsPerUserPerDay: [1, 2, 3, 4] }\n')).toMatch(/^s\.yaml:2:36: activity\.sessionsPerUserPerDay: an interval is \[low, likely, high\]: three numbers, got 4 items$/);
    expect(errorLine('name: x\npopulation: [3e6, many, 5e6]\n')).toMatch(/^s\.yaml:2:19: population\[1\]: .*"many"/);
    expect(errorLine('name: x\nactivity: { dormantShare: [0.1, 0.5, 1.5] }\n')).toBe('s.yaml:2:38: activity.dormantShare[2]: 1.5 is out of range (valid: 0 to 1)');
    expect(errorLine('name: x\npopulation: [1e6, 2e6, [3e6]]\n')).toMatch(/^s\.yaml:2:\d+: population: an interval is \[low, likely, high\]: item 3 is a list, expected a whole number/);
    // keys that take no interval say what they take
    expect(errorLine('name: x\nseed: [1, 2, 3]\n')).toBe('s.yaml:2:7: seed: expected a whole number like 1000 or 2e8, got a list');
    // the ends must make a valid scenario too
    expect(errorLine('name: x\npopulation: [50000, 2e6, 3e6]\n')).toMatch(/^s\.yaml:2:13: population: low 50k is below graph\.generate\.users \(100k\)/);
    expect(errorLine('name: x\ngraph: { generate: { users: 1000, avgFollows: [10, 20, 6000] } }\n')).toMatch(/avgFollows: high 6000 is above graph\.generate\.maxFollows \(5000\)/);
  });

  test('run and sweep use the likely values, with one note line', () => {
    const path = join(ROOT, 'test/fixtures/scenarios/plan-small.yaml');
    const lines: string[] = [];
    const s = loadScenario(path, { onIntervalNote: (l) => lines.push(l) });
    expect(s.population).toBe(2e6);
    expect(lines).toEqual([intervalNote(s)]);
    expect(lines[0]).toBe(`feedlab: note: ${path} gives intervals; using their likely values (population 2000000, activity.postsPerUserPerDay.mean 3, activity.sessionsPerUserPerDay 5); feedlab plan samples them`);
  });
});
