// feedlab run SCENARIO: simulate one scenario under one fan-out policy.
import { formatPolicy } from '../../core/fanout-policy.js';
import { reportFiles } from '../../reports/files.js';
import { terminalReport } from '../../reports/terminal.js';
import { stringifyResult, type RunResult } from '../../sim/result.js';
import { policyFor, runPolicy } from '../../sim/run-scenario.js';
import { verdictExit } from '../../sim/slo.js';
import { parseCommandArgs } from '../args.js';
import type { LiveSession } from '../dashboard/session.js';
import { dashboardWanted, loadDashboard } from '../dashboard/wanted.js';
import { EXIT_INTERRUPTED, EXIT_OK } from '../errors.js';
import { checkJunitFile, checkOutputDir, Progress, stoppedLine, writeJunit, writeReport, sayWritten } from '../output.js';
import { junitXml } from '../../reports/junit.js';
import { asInputError, CALIBRATION_HELP, exitOptions, OVERRIDE_HELP, overridesOf, prepareWithProgress, readScenario, SCENARIO_OPTIONS, THRESHOLD_HELP, THRESHOLD_OPTIONS } from '../prepare-scenario.js';

export const summary = 'simulate a scenario: fan-out lag, writes/s, Redis memory, read latency, SLOs';

const USAGE = 'feedlab run SCENARIO [--seed N] [--policy P] [--calibration FILE] [--set KEY=VALUE ...] [--duration D] [--json] [--out DIR] [--check] [--no-thresholds] [--junit FILE] [--quiet] [--no-dashboard]';

const HELP = `${USAGE}

  --seed N         override the scenario's seed
  --policy P       push | pull | threshold:T | rate | reader-cap:N | adaptive:T, optionally :skip-dormant or :all-followers
${CALIBRATION_HELP}
${OVERRIDE_HELP}
  --json           print the result document (schema feedlab.result/1) on stdout
  --out DIR        write DIR/report.json, DIR/report.md and a self-contained DIR/report.html
${THRESHOLD_HELP}
  --quiet          no progress on stderr
  --no-dashboard   plain progress and report even on a terminal

Exit 1 when a threshold of slo.thresholds fails (unless --no-thresholds), or with --check when an
SLO or a threshold fails; the reason goes to stderr.

On a terminal (and not under CI, --json or --quiet) the run is shown on a live dashboard; q or
Ctrl-C stops it at the current simulated minute, writes the partial report and exits 130.
`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    'run',
    argv,
    { ...SCENARIO_OPTIONS, ...THRESHOLD_OPTIONS, policy: { type: 'string' } },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(HELP);
    return EXIT_OK;
  }
  const sc = readScenario(positionals, 'run', values.seed, values.calibration, overridesOf(values));
  if (values.out) checkOutputDir(values.out);
  checkJunitFile(values.junit);
  const policy = asInputError(() => policyFor(sc, values.policy));

  let result: RunResult | undefined;
  let live: LiveSession | null = null;
  let forced = false;
  if (dashboardWanted(values)) {
    const { LiveSession } = await loadDashboard();
    live = new LiveSession({ scenario: sc, policies: [policy], labels: [formatPolicy(policy)], mode: 'run' });
    const outcome = await live.outcome();
    result = outcome.runs[0];
    forced = outcome.forced;
  } else {
    const prepared = prepareWithProgress(sc, !values.quiet);
    const progress = new Progress(`simulate ${sc.name}`, !values.quiet);
    result = asInputError(() => runPolicy(prepared, policy, (f, d) => progress.update(f, d)));
    progress.done();
  }
  if (!result) {
    await live?.close();
    process.stderr.write(`feedlab: ${forced ? 'quit' : 'stopped before the first simulated minute'}; no report written\n`);
    return EXIT_INTERRUPTED;
  }

  const json = stringifyResult(result);
  const files = values.out ? reportFiles(result) : {};
  try {
    if (values.out) writeReport(values.out, files);
  } catch (err) {
    await live?.close(); // the error line goes below a cleared dashboard, and the process can exit
    throw err;
  }
  const text = values.json ? json + '\n' : terminalReport(result);
  if (live) await live.finish(text);
  else process.stdout.write(text);
  sayWritten(values, files);
  if (result.partial) {
    process.stderr.write(stoppedLine(result.partial.stoppedAtSeconds, result.scenario.durationSeconds, values.out));
    return EXIT_INTERRUPTED;
  }
  if (values.junit) writeJunit(values.junit, junitXml(result));
  const verdict = verdictExit([result.summary.slo], exitOptions(values));
  if (verdict.message) process.stderr.write(`feedlab: ${verdict.message}\n`);
  return verdict.exitCode;
}
