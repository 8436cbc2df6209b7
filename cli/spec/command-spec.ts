// What the command line knows of a command before it loads the command's code: its name, arguments,
// options table, one-line summary, examples and notes for its help. cli/program.ts turns each into a
// commander command; `run` imports the code only when the command runs.
import type { OptionTable, Values } from './options.js';

export interface ArgumentDef {
  /** commander's syntax: `<scenario>` required, `[scenario]` optional, `<inputs...>` one or more. */
  readonly name: string;
  readonly help: string;
}

export interface CommandSpec<T extends OptionTable = OptionTable> {
  readonly name: string;
  /** The line in `feedlab --help`. */
  readonly summary: string;
  /** The paragraph at the top of the command's own help (default: the summary). */
  readonly description?: string;
  readonly args?: readonly ArgumentDef[];
  readonly options: T;
  /** Whole command lines, each with what it does: `['feedlab run scenarios/steady-state.yaml', 'simulate ...']`. */
  readonly examples: readonly (readonly [string, string])[];
  /** Printed after the options: exit codes, what the command needs, how it stops. */
  readonly notes?: string;
  /** The command's code: called with the options given on the line and the arguments. */
  readonly run?: () => Promise<(values: Values<T>, args: string[]) => Promise<number>>;
  readonly subcommands?: readonly CommandSpec[];
}

/** A spec whose `run` sees its own table's types (an array of specs holds them as CommandSpec). */
export function command<T extends OptionTable>(spec: CommandSpec<T>): CommandSpec {
  return spec as unknown as CommandSpec;
}
