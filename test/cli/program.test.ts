// cli/program.ts: the command line commander parses from the commands' specs. Values by the
// options' long names, negative numbers taken as values, every error of usage one line naming the
// command with a suggestion where there is one, help for every command with its examples.
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { parseCommandLine } from '../../cli/program.js';
import { COMMANDS } from '../../cli/spec/commands.js';
import { feedlab, inProcess, ROOT } from './cli-helpers.js';

const cli = inProcess;

afterEach(() => vi.restoreAllMocks());

describe('parsing', () => {
  test('gives the values by long name, repeated options in order, short forms and --no- switches as given', async () => {
    const line = await parseCommandLine(['run', 's.yaml', '-p', 'push', '--set', 'a=1', '--set', 'b=2', '-q', '-o', 'out', '-d', '1h', '--no-dashboard', '--no-thresholds']);
    expect(line).toEqual({
      command: 'run',
      args: ['s.yaml'],
      values: { policy: 'push', set: ['a=1', 'b=2'], quiet: true, out: 'out', duration: '1h', 'no-dashboard': true, 'no-thresholds': true },
    });
    // an option not given is absent, not false
    expect((await parseCommandLine(['run', 's.yaml'])).values).toEqual({});
  });

  test('takes a negative number after an option that takes a value as its value', async () => {
    expect((await parseCommandLine(['plan', 's.yaml', '--growth', '-1', '--seed', '-2.5e3'])).values).toEqual({ growth: '-1', seed: '-2.5e3' });
    expect((await parseCommandLine(['plan', '--growth=-1', 's.yaml'])).values).toEqual({ growth: '-1' });
    // after --, everything is an argument
    expect((await parseCommandLine(['compare', '--', '--growth', '-1'])).args).toEqual(['--growth', '-1']);
  });

  test('reaches a subcommand', async () => {
    const line = await parseCommandLine(['graph', 'stats', 'g.fgraph', '--top', '5']);
    expect(line).toEqual({ command: 'stats', args: ['g.fgraph'], values: { top: '5' } });
  });
});

describe('errors of usage: one line on stderr, exit 2', () => {
  const cases: [string[], RegExp][] = [
    [['run', 's.yaml', '--polcy', 'push'], /^feedlab: run: unknown option '--polcy' \(did you mean --policy\?\) \(feedlab run --help for its usage\)\n$/],
    [['run', 's.yaml', '--frobnicate'], /^feedlab: run: unknown option '--frobnicate' \(feedlab run --help/],
    [['run', 'a.yaml', 'a.yaml'], /^feedlab: run: too many arguments for 'run'\. Expected 1 argument but got 2\./],
    [['run'], /^feedlab: run: missing required argument 'scenario'/],
    [['run', 's.yaml', '--seed'], /^feedlab: run: option '--seed <N>' argument missing/],
    [['sweep', 's.yaml', '--json', '-1'], /^feedlab: sweep: too many arguments/],
    [['rn', 's.yaml'], /^feedlab: unknown command 'rn' \(did you mean run\?\) \(feedlab --help lists the commands\)\n$/],
    [['graph', 'generte'], /^feedlab: graph: unknown command 'generte' \(did you mean generate\?\)/],
    [['graph', 'generate', '--users', '10'], /^feedlab: graph generate: required option '--avg-follows <K>' not specified/],
    [['calibrate', 'scenarios/celebrity-burst.yaml'], /^feedlab: calibrate: too many arguments for 'calibrate'\. Expected 0 arguments but got 1\./],
    [['serve', '--with-workr'], /^feedlab: serve: unknown option '--with-workr' \(did you mean --with-worker\?\)/],
  ];
  test.each(cases)('%j', async (argv, message) => {
    const r = await cli(argv);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(message);
    expect(r.err.trimEnd().split('\n')).toHaveLength(1);
  });

  test('a negative value the option refuses is one line, exit 2, through the whole CLI', () => {
    const r = feedlab(['run', join(ROOT, 'test/fixtures/scenarios/plan-push.yaml'), '--seed', '-1', '--quiet']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^feedlab: --seed must be a whole number/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('help', () => {
  test('lists every command with its summary; no command at all prints it and exits 2', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    for (const c of COMMANDS) expect(r.out).toContain(`  ${c.name}`);
    expect(r.out).toContain(COMMANDS.find((c) => c.name === 'replay')!.summary.slice(0, 40));
    expect(r.out).toMatch(/Examples:\n {2}\$ feedlab run scenarios\/celebrity-burst\.yaml/);
    const bare = await cli([]);
    expect(bare.code).toBe(2);
    expect(bare.out).toContain('Usage: feedlab <command> [options]');
  });

  test('feedlab help CMD and CMD --help print the same help, with its options and examples', async () => {
    const a = await cli(['help', 'run']);
    const b = await cli(['run', '--help']);
    expect(a.code).toBe(0);
    expect(b.code).toBe(0);
    expect(a.out).toBe(b.out);
    expect(a.out).toMatch(/^Usage: feedlab run \[options\] <scenario>/);
    expect(a.out).toContain('-p, --policy <P>');
    expect(a.out).toContain('--set <KEY=VALUE>');
    expect(a.out).toMatch(/Examples:\n {2}\$ feedlab run /);
  });

  test('every command and subcommand has a summary, one or two examples, and a help line for every option', async () => {
    const all = COMMANDS.flatMap((c) => [c, ...(c.subcommands ?? [])]);
    for (const c of all) {
      expect(c.summary.length, c.name).toBeGreaterThan(10);
      expect(c.examples.length, c.name).toBeGreaterThanOrEqual(1);
      expect(c.examples.length, c.name).toBeLessThanOrEqual(2);
      for (const [name, o] of Object.entries(c.options)) expect(o.help.length, `${c.name} --${name}`).toBeGreaterThan(3);
    }
    const stats = await cli(['graph', 'stats', '--help']);
    expect(stats.out).toMatch(/^Usage: feedlab graph stats \[options\] <file>/);
  });

  test('--version', async () => {
    const r = await cli(['--version']);
    expect([r.code, r.out]).toEqual([0, 'feedlab 0.1.0\n']);
  });
});
