// feedlab plan SCENARIO: the resources that meet the scenario's SLOs with headroom, each with its reason.
import { reportFiles } from '../../reports/files.js';
import { planJunitXml } from '../../reports/junit.js';
import { planText } from '../../reports/plan.js';
import { checkGrowthForGraph, checkPlanOptions, DEFAULT_GROWTH, DEFAULT_HEADROOM, DEFAULT_SAMPLES } from '../../sim/plan/inputs.js';
import { thresholdVerdict } from '../../sim/plan/check.js';
import { evaluateSamples, finishPlan, planSamples, planStageOf, runChecks, type PlanSamples, type PlanStage } from '../../sim/plan/plan.js';
import { evaluateSamplesInParallel } from '../../sim/parallel/run-samples.js';
import type { CheckProgress, SimulationCheck } from '../../sim/plan/check.js';
import { runChecksInParallel } from '../../sim/parallel/run-checks.js';
import { stringifyResult } from '../../sim/result.js';
import { verdictExit } from '../../sim/slo.js';
import { numberFlag, threadsFlag } from '../args.js';
import { EXIT_OK, EXIT_SLO_FAILED } from '../errors.js';
import { checkJunitFile, checkOutputDir, Progress, writeJunit, writeReport, sayWritten } from '../output.js';
import { asInputError, asInputErrorLater, graphWithProgress, readScenario } from '../prepare-scenario.js';
import { exitOptions, type Values } from '../spec/options.js';
import type { PLAN_OPTIONS } from '../spec/simulate.js';

/**
 * The fewest samples worth threads: plan-next-year's whole plan took 8.72 s on one thread and 8.57 s
 * on two at the default 200 samples (inside the runs' noise), 9.94 and 8.80 s at 1,000 (2026-12-05).
 */
const SAMPLES_AT_ONCE_FROM = 1000;

export async function run(values: Values<typeof PLAN_OPTIONS>, positionals: string[]): Promise<number> {
  const options = checkPlanOptions({
    growth: numberFlag('growth', values.growth, DEFAULT_GROWTH),
    headroom: numberFlag('headroom', values.headroom, DEFAULT_HEADROOM, { min: 0 }),
    samples: numberFlag('samples', values.samples, DEFAULT_SAMPLES, { min: 1, integer: true }),
  });
  const path = positionals[0];
  const sc = readScenario(path, values, { onIntervalNote: null });
  if (values.out) checkOutputDir(values.out);
  checkJunitFile(values.junit);
  if (sc.graph.kind === 'generate') checkGrowthForGraph(sc, options.growth, sc.graph.users);
  const threads = threadsFlag(values.threads);
  const show = !values.quiet;
  const progress: CheckProgress = {
    start(label) {
      const p = new Progress(label, show);
      return { update: (f, d) => p.update(f, d), done: (d) => p.done(d) };
    },
  };
  const graph = await graphWithProgress(sc, show, threads);
  const samples = asInputError(() => planSamples({ scenario: sc, graph, options, progress }));
  const figures =
    threads > 1 && samples.points.length >= SAMPLES_AT_ONCE_FROM ? await samplesAtOnce(samples, threads, show) : asInputError(() => evaluateSamples(samples.workload, samples.ctx, samples.points));
  const stage = asInputError(() => planStageOf(samples, figures));
  const checks = threads > 1 && stage.jobs.length > 1 ? await checksAtOnce(stage, threads, show) : asInputError(() => runChecks(stage));
  const doc = asInputError(() => finishPlan(stage, checks));
  const json = stringifyResult(doc);
  const files = values.out ? reportFiles(doc) : {};
  if (values.out) writeReport(values.out, files);
  if (values.junit) writeJunit(values.junit, planJunitXml(doc));
  process.stdout.write(values.json ? json + '\n' : planText(doc));
  sayWritten(values, files);
  // --check is about the plan itself (planCheck), so the thresholds alone are judged here
  const thresholds = verdictExit([thresholdVerdict(doc.check)], { check: false, thresholds: exitOptions(values).thresholds });
  if (thresholds.message) process.stderr.write(`feedlab: ${thresholds.message}\n`);
  return (values.check && !doc.satisfied) || thresholds.exitCode === 1 ? EXIT_SLO_FAILED : EXIT_OK;
}

/** The samples' closed forms on worker threads, a slice at a time, with a progress line. */
async function samplesAtOnce(samples: PlanSamples, threads: number, show: boolean): Promise<ReturnType<typeof evaluateSamples>> {
  const n = samples.points.length;
  const bar = new Progress(`${n} samples on ${Math.min(threads, n)} threads`, show);
  const figures = await asInputErrorLater(() => evaluateSamplesInParallel(samples, threads, (done, of) => bar.update(done / of, `${done} of ${of} slices`)));
  bar.done();
  return figures;
}

/**
 * The checks on worker threads: each simulation's end as its own line (as one after the other
 * prints them), and one line of progress for all that run.
 */
async function checksAtOnce(stage: PlanStage, threads: number, show: boolean): Promise<SimulationCheck[]> {
  const bar = new Progress(`${stage.jobs.length} checks on ${Math.min(threads, stage.jobs.length)} threads`, show);
  const running = stage.jobs.map(() => ({ label: '', fraction: 0, line: null as Progress | null }));
  const say = () => {
    const now = running.filter((r) => r.line !== null).map((r) => `${r.label} ${Math.floor(r.fraction * 100)}%`);
    bar.update(Math.min(0.99, running.reduce((a, r) => a + r.fraction, 0) / running.length), now.join('; '));
  };
  const checks = await asInputErrorLater(() =>
    runChecksInParallel(stage, threads, (job, m) => {
      const r = running[job];
      if (m.kind === 'start') Object.assign(r, { label: m.label, fraction: 0, line: new Progress(m.label, show) });
      else if (m.kind === 'update') r.fraction = m.fraction;
      else {
        r.line?.done(m.detail);
        r.line = null;
      }
      say();
    }),
  );
  bar.done();
  return checks;
}
