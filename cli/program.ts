// The feedlab command line as one commander program, built from the commands' specs (cli/spec):
// parsing, the generated help with examples, `feedlab help CMD`, did-you-mean for an unknown command
// or option, surplus arguments refused. Errors of usage are one line on stderr naming the command,
// exit 2. A command's code is imported only when it runs: loading every command's modules took
// 1.2 s here (2026-12-03, run's 406 ms), which `feedlab token` or `--help` should not pay.
import { Command, CommanderError, Help, Option } from 'commander';
import { FEEDLAB_VERSION } from '../sim/result.js';
import { EXIT_BAD_INPUT } from './errors.js';
import type { CommandSpec } from './spec/command-spec.js';
import { COMMANDS } from './spec/commands.js';

/** commander's error text as one line: `error: unknown option '--polcy'\n(Did you mean --policy?)` -> `unknown option '--polcy' (did you mean --policy?)`. */
export function errorLine(text: string): string {
  return text
    .replace(/^error:\s*/i, '')
    .replace(/\s*\n\s*\(Did you mean/g, ' (did you mean')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
}

/** The help's width: the terminal's, or 100 columns when not a terminal (pipes, tests) so it reads the same everywhere. */
const HELP_WIDTH = 100;

function help(): Partial<Help> {
  return { helpWidth: process.stdout.isTTY ? Math.min(process.stdout.columns || HELP_WIDTH, 120) : HELP_WIDTH, sortOptions: false };
}

/** Command lines with what each does: in two columns when they fit, else each line above its note. */
function examples(list: CommandSpec['examples']): string {
  if (list.length === 0) return '';
  const width = Math.max(...list.map(([line]) => line.length));
  const fits = width + 4 <= HELP_WIDTH - 30;
  return 'Examples:\n' + list.map(([line, what]) => (fits ? `  $ ${line.padEnd(width)}  ${what}` : `  $ ${line}\n      ${what}`)).join('\n');
}

/** The program's own examples, below the list of commands. */
const PROGRAM_EXAMPLES: CommandSpec['examples'] = [
  ['feedlab run scenarios/celebrity-burst.yaml', 'simulate a scenario'],
  ['feedlab sweep scenarios/threshold-sweep.yaml', 'recommend a fan-out policy'],
  ['feedlab compare scenarios/celebrity-burst.yaml', 'estimate, simulation and replay side by side'],
];

/** What the program does with a parsed command line: run the command, or (tests) record it. */
type OnCommand = (spec: CommandSpec, values: Record<string, unknown>, args: string[]) => Promise<void>;

function addCommand(parent: Command, spec: CommandSpec, path: string, onCommand: OnCommand): void {
  const name = path ? `${path} ${spec.name}` : spec.name;
  const cmd = parent.command(spec.name).summary(spec.summary).description(spec.description ?? spec.summary);
  cmd.configureHelp(help());
  cmd.configureOutput({ outputError: (text, write) => write(`feedlab: ${name}: ${errorLine(text)} (feedlab ${name} --help for its usage)\n`) });
  for (const a of spec.args ?? []) cmd.argument(a.name, a.help);
  const options = Object.entries(spec.options).map(([long, d]) => {
    const o = new Option(`${d.short ? `-${d.short}, ` : ''}--${long}${d.type === 'string' ? ` <${d.arg ?? 'VALUE'}>` : ''}`, d.help);
    if (d.multiple) o.argParser((v: string, previous: string[] | undefined) => [...(previous ?? []), v]);
    if (d.required) o.makeOptionMandatory();
    cmd.addOption(o);
    return [long, o] as const;
  });
  const after = [spec.notes?.trimEnd(), examples(spec.examples)].filter((s) => s).join('\n\n');
  if (after) cmd.addHelpText('after', `\n${after}`);
  for (const sub of spec.subcommands ?? []) addCommand(cmd, sub, name, onCommand);
  if (!spec.run) return;
  cmd.action(async (...params: unknown[]) => {
    const self = params[params.length - 1] as Command;
    // by the option's long name, as given on the line (a `--no-x` switch given is `'no-x': true`)
    const values: Record<string, unknown> = {};
    for (const [long, o] of options) {
      const key = o.attributeName();
      if (self.getOptionValueSource(key) === 'cli') values[long] = o.negate ? true : self.getOptionValue(key);
    }
    await onCommand(spec, values, [...self.args]);
  });
}

export function buildProgram(onCommand: OnCommand): Command {
  const program = new Command('feedlab')
    .description('load simulation and capacity planning for social feeds')
    .usage('<command> [options]')
    .version(`feedlab ${FEEDLAB_VERSION}`, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'print this help')
    .helpCommand('help [command]', "print a command's help")
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureHelp(help())
    .configureOutput({ outputError: (text, write) => write(`feedlab: ${errorLine(text)} (feedlab --help lists the commands)\n`) });
  for (const spec of COMMANDS) addCommand(program, spec, '', onCommand);
  program.addHelpText('after', `\nEvery command takes --help (or feedlab help COMMAND); --debug prints an error's stack trace.\n\n${examples(PROGRAM_EXAMPLES)}`);
  return program;
}

/**
 * Run the command line `argv` (without node and the script): the command's exit code, 0 after
 * help or the version, 2 after an error of usage (already printed). A command's own errors are thrown.
 */
export async function runCli(argv: string[]): Promise<number> {
  let code = 0;
  const program = buildProgram(async (spec, values, args) => {
    const run = await spec.run!();
    code = await run(values as never, args);
  });
  if (argv.length === 0) {
    process.stdout.write(program.helpInformation());
    return EXIT_BAD_INPUT;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : EXIT_BAD_INPUT;
    throw err;
  }
  return code;
}

/** The command line parsed as `feedlab ARGV` would be, without running it (the compose file's flags, in tests). */
export async function parseCommandLine(argv: string[]): Promise<{ command: string; values: Record<string, unknown>; args: string[] }> {
  let parsed: { command: string; values: Record<string, unknown>; args: string[] } | undefined;
  const program = buildProgram(async (spec, values, args) => {
    parsed = { command: spec.name, values, args };
  });
  program.configureOutput({ writeErr: () => {}, outputError: () => {} });
  await program.parseAsync(argv, { from: 'user' });
  if (!parsed) throw new Error(`not a command line: ${argv.join(' ')}`);
  return parsed;
}
