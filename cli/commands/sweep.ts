// feedlab sweep SCENARIO: the same workload under several fan-out policies, and the cheapest that meets every SLO.
import { reportFiles } from '../../reports/files.js';
import { sweepTable } from '../../reports/sweep.js';
import { stringifyResult, type RunResult } from '../../sim/result.js';
import type { FanoutPolicy } from '../../core/fanout-policy.js';
import { runPoliciesInParallel } from '../../sim/parallel/run-policies.js';
import { policyFor, runPolicy, type PreparedScenario } from '../../sim/run-scenario.js';
import { threadsFlag } from '../args.js';
import { verdictExit } from '../../sim/slo.js';
import { recommend, stoppedSweep, sweepRow, type SweepResult } from '../../sim/sweep.js';
import type { LiveSession } from '../dashboard/session.js';
import { dashboardWanted, loadDashboard } from '../dashboard/wanted.js';
import { EXIT_INTERRUPTED, InputError } from '../errors.js';
import { checkJunitFile, checkOutputDir, Progress, writeJunit, writeReport, sayWritten } from '../output.js';
import { junitXml } from '../../reports/junit.js';
import { asInputError, asInputErrorLater, prepareWithProgress, readScenario } from '../prepare-scenario.js';
import { exitOptions, type Values } from '../spec/options.js';
import type { SWEEP_OPTIONS } from '../spec/simulate.js';

export async function run(values: Values<typeof SWEEP_OPTIONS>, positionals: string[]): Promise<number> {
  const sc = readScenario(positionals[0], values);
  if (values.out) checkOutputDir(values.out);
  checkJunitFile(values.junit);
  const specs = values.policies !== undefined ? values.policies.split(',').map((s) => s.trim()).filter(Boolean) : sc.sweep.policies;
  if (specs.length === 0) throw new InputError('sweep: --policies is empty');
  // every policy is checked before the first (long) simulation starts
  const policies = specs.map((spec) => asInputError(() => policyFor(sc, spec)));
  const threads = threadsFlag(values.threads);

  let runs: RunResult[];
  let live: LiveSession | null = null;
  let partial: SweepResult['partial'];
  if (dashboardWanted(values)) {
    const { LiveSession } = await loadDashboard();
    live = new LiveSession({ scenario: sc, policies, labels: specs, mode: 'sweep', threads });
    const outcome = await live.outcome();
    runs = outcome.runs.filter((r) => !r.partial);
    if (outcome.stopped) {
      partial = stoppedSweep(specs, outcome.byPolicy, outcome.stoppedIndex);
      if (runs.length === 0) {
        await live.close();
        process.stderr.write(`feedlab: ${outcome.forced ? 'quit' : 'stopped before the first policy finished'}; no report written\n`);
        return EXIT_INTERRUPTED;
      }
    }
  } else {
    const prepared = await prepareWithProgress(sc, !values.quiet, threads);
    runs =
      threads > 1 && policies.length > 1
        ? await inParallel(prepared, policies, specs, threads, !values.quiet)
        : policies.map((p, i) => {
            const progress = new Progress(`[${i + 1}/${policies.length}] ${specs[i]}`, !values.quiet);
            const r = asInputError(() => runPolicy(prepared, p, (f, d) => progress.update(f, d)));
            progress.done();
            return r;
          });
  }
  const rows = runs.map((r) => sweepRow(r, sc.infrastructure.writesPerSecondPerWorker));
  const result: SweepResult = { schema: 'feedlab.sweep/1', scenario: runs[0].scenario, ...(partial ? { partial } : {}), rows, recommended: recommend(rows), runs };
  const json = stringifyResult(result);
  const files = values.out ? reportFiles(result) : {};
  try {
    if (values.out) writeReport(values.out, files);
  } catch (err) {
    await live?.close(); // the error line goes below a cleared dashboard, and the process can exit
    throw err;
  }
  const text = values.json ? json + '\n' : sweepTable(result);
  if (live) await live.finish(text);
  else process.stdout.write(text);
  sayWritten(values, files);
  // a stopped sweep's finished policies' checks too
  if (values.junit) writeJunit(values.junit, junitXml(result));
  if (partial) {
    process.stderr.write(`feedlab: sweep stopped; ${runs.length} of ${specs.length} policies finished${values.out ? `, the partial report is in ${values.out}` : ''} (exit 130)\n`);
    return EXIT_INTERRUPTED;
  }
  // a policy passes when run would exit 0 on it; with --check (and thresholds counted) that is the recommendation
  const verdict = verdictExit(runs.map((r) => r.summary.slo), exitOptions(values));
  if (verdict.message) process.stderr.write(`feedlab: ${verdict.message}\n`);
  return verdict.exitCode;
}

/** The policies on worker threads, one progress line for all of them. */
async function inParallel(prepared: PreparedScenario, policies: FanoutPolicy[], specs: string[], threads: number, show: boolean): Promise<RunResult[]> {
  const used = Math.min(threads, policies.length);
  const progress = new Progress(`${policies.length} policies on ${used} threads`, show);
  const fractions = new Array<number>(policies.length).fill(0);
  const running = new Set<number>();
  const say = () => {
    const done = fractions.filter((f) => f >= 1).length;
    const now = [...running].map((i) => `${specs[i]} ${Math.floor(fractions[i] * 100)}%`).join(', ');
    progress.update(fractions.reduce((a, b) => a + b, 0) / policies.length, `${done}/${policies.length} done${now ? `; ${now}` : ''}`);
  };
  const runs = await asInputErrorLater(() =>
    runPoliciesInParallel(prepared, policies, threads, {
      onProgress: (i, f) => {
        running.add(i);
        fractions[i] = Math.min(f, 0.999);
        say();
      },
      onResult: (i) => {
        running.delete(i);
        fractions[i] = 1;
        say();
      },
    }),
  );
  progress.done(specs.join(', '));
  return runs;
}
