// A command's options as one table: each option's flag, value, short form and help line. From it
// cli/program.ts builds the commander command (parsing, the generated help, did-you-mean on a typo),
// and the command's values take their type. Tables that several commands share are defined here once.

export interface OptionDef {
  /** 'string' takes a value; 'boolean' is a switch. */
  readonly type: 'string' | 'boolean';
  /** The value's name in the help (N, FILE, DIR, KEY=VALUE). */
  readonly arg?: string;
  /** A one-letter form (-q). */
  readonly short?: string;
  /** Repeatable: every value, in order. */
  readonly multiple?: boolean;
  /** The command refuses to run without it. */
  readonly required?: boolean;
  readonly help: string;
}

export type OptionTable = Readonly<Record<string, OptionDef>>;

/** What a command receives: the options given on its line, by their long names (`values['no-dashboard']`). */
export type Values<T extends OptionTable> = {
  [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : T[K] extends { multiple: true } ? string[] : string;
};

/** The options of every command that reads a scenario (run, sweep, plan, replay). */
export const SCENARIO_OPTIONS = {
  seed: { type: 'string', arg: 'N', help: "override the scenario's seed (a whole number)" },
  calibration: {
    type: 'string',
    arg: 'FILE',
    help: "apply a calibration file (feedlab calibrate): its measured costs win over the scenario's infrastructure keys and its own `calibration:` include",
  },
  set: {
    type: 'string',
    arg: 'KEY=VALUE',
    multiple: true,
    help: "set a scenario key for this run, with the file's own key names and units (--set policy.threshold=10000); repeatable",
  },
  duration: { type: 'string', arg: 'D', short: 'd', help: 'the simulated time (--set duration=D)' },
  json: { type: 'boolean', help: 'print the result document on stdout' },
  out: { type: 'string', arg: 'DIR', short: 'o', help: 'write DIR/report.json, DIR/report.md and a self-contained DIR/report.html' },
  check: { type: 'boolean', help: 'exit 1 when an SLO (slo.fanoutLagP99, readP99, redisMemory) or a threshold is not met' },
  quiet: { type: 'boolean', short: 'q', help: 'no progress on stderr' },
} as const satisfies OptionTable;

/** The live dashboard's switch (run, sweep and replay draw one on a terminal). */
export const DASHBOARD_OPTIONS = {
  'no-dashboard': { type: 'boolean', help: 'plain progress and report even on a terminal' },
} as const satisfies OptionTable;

/** The commands that check slo.thresholds and exit by them (run, sweep, plan, replay). */
export const THRESHOLD_OPTIONS = {
  'no-thresholds': {
    type: 'boolean',
    help: 'a failed threshold (slo.thresholds) is still checked and printed, but does not exit 1 (with --check too: then only the SLOs set the exit code)',
  },
  junit: { type: 'string', arg: 'FILE', help: "write every SLO and threshold check as JUnit XML (a test case each, a failure for each not met) for a CI system's test report" },
} as const satisfies OptionTable;

/** What --check and --no-thresholds ask of the exit code (sim/slo.ts verdictExit). */
export function exitOptions(values: { check?: boolean; 'no-thresholds'?: boolean }): { check: boolean; thresholds: boolean } {
  return { check: values.check === true, thresholds: values['no-thresholds'] !== true };
}

/** The options given, written back as flags (`--samples 5 --quiet`), for a file that records the command that made it. */
export function flagsOf(values: Readonly<Record<string, string | boolean | string[] | undefined>>): string[] {
  return Object.entries(values).flatMap(([name, v]) =>
    v === true ? [`--${name}`] : typeof v === 'string' ? [`--${name}`, v] : Array.isArray(v) ? v.flatMap((x) => [`--${name}`, x]) : [],
  );
}
