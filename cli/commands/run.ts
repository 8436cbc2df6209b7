// feedlab run SCENARIO: simulate one scenario under one fan-out policy.
import { formatPolicy } from '../../core/fanout-policy.js';
import { reportFiles } from '../../reports/files.js';
import { terminalReport } from '../../reports/terminal.js';
import { stringifyResult, type RunResult } from '../../sim/result.js';
import { availableParallelism } from 'node:os';
import { policyFor, runPolicy } from '../../sim/run-scenario.js';
import { verdictExit } from '../../sim/slo.js';
import type { LiveSession } from '../dashboard/session.js';
import { dashboardWanted, loadDashboard } from '../dashboard/wanted.js';
import { EXIT_INTERRUPTED } from '../errors.js';
import { checkJunitFile, checkOutputDir, Progress, stoppedLine, writeJunit, writeReport, sayWritten } from '../output.js';
import { junitXml } from '../../reports/junit.js';
import { asInputError, prepareWithProgress, readScenario } from '../prepare-scenario.js';
import { exitOptions, type Values } from '../spec/options.js';
import type { RUN_OPTIONS } from '../spec/simulate.js';

export async function run(values: Values<typeof RUN_OPTIONS>, positionals: string[]): Promise<number> {
  const sc = readScenario(positionals[0], values);
  if (values.out) checkOutputDir(values.out);
  checkJunitFile(values.junit);
  const policy = asInputError(() => policyFor(sc, values.policy));

  let result: RunResult | undefined;
  let live: LiveSession | null = null;
  let forced = false;
  if (dashboardWanted(values)) {
    const { LiveSession } = await loadDashboard();
    live = new LiveSession({ scenario: sc, policies: [policy], labels: [formatPolicy(policy)], mode: 'run', graphThreads: availableParallelism() });
    const outcome = await live.outcome();
    result = outcome.runs[0];
    forced = outcome.forced;
  } else {
    // a large generated graph on the machine's cores: the same graph as on one
    const prepared = await prepareWithProgress(sc, !values.quiet, availableParallelism());
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
  // a stopped run's checks too, marked partial: a CI system sees what ran and that it stopped
  if (values.junit) writeJunit(values.junit, junitXml(result));
  if (result.partial) {
    process.stderr.write(stoppedLine(result.partial.stoppedAtSeconds, result.scenario.durationSeconds, values.out));
    return EXIT_INTERRUPTED;
  }
  const verdict = verdictExit([result.summary.slo], exitOptions(values));
  if (verdict.message) process.stderr.write(`feedlab: ${verdict.message}\n`);
  return verdict.exitCode;
}
