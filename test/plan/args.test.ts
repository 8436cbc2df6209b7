// cli/args.ts: a negative number after an option that takes a value is that option's value (so it
// meets the option's own check), and every parseArgs error is one line, for every command.
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseCommandArgs } from '../../cli/args.js';
import { feedlab, ROOT } from '../cli/cli-helpers.js';

const OPTIONS = { growth: { type: 'string' }, seed: { type: 'string' }, n: { type: 'string', short: 'n' }, json: { type: 'boolean' } } as const;
const parse = (argv: string[]) => parseCommandArgs('plan', argv, OPTIONS, 'feedlab plan SCENARIO');

describe('parseCommandArgs', () => {
  test('takes a negative number after an option that takes a value as its value', () => {
    expect(parse(['s.yaml', '--growth', '-1', '--seed', '-2.5e3', '-n', '-.5']).values).toEqual({ growth: '-1', seed: '-2.5e3', n: '-.5' });
    expect(parse(['--growth=-1', 's.yaml']).values).toEqual({ growth: '-1' });
    // after --, everything is a positional
    expect(parse(['--', '--growth', '-1']).positionals).toEqual(['--growth', '-1']);
  });

  test('still refuses what is not a negative number, in one line', () => {
    for (const argv of [['--growth', '-x'], ['--json', '-1'], ['--frobnicate']]) {
      let message = '';
      try {
        parse(argv);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, argv.join(' ')).toMatch(/^plan: .* \(usage: feedlab plan SCENARIO\)$/);
      expect(message, argv.join(' ')).not.toContain('\n');
    }
  });
});

describe('a negative flag value on the command line', () => {
  test('is one line, exit 2, for run too', () => {
    const r = feedlab(['run', join(ROOT, 'test/fixtures/scenarios/plan-push.yaml'), '--seed', '-1', '--quiet']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
