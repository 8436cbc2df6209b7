// feedlab plan SCENARIO: the resources that meet the scenario's SLOs with headroom, each with its reason.
import { reportFiles } from '../../reports/files.js';
import { planJunitXml } from '../../reports/junit.js';
import { planText } from '../../reports/plan.js';
import { checkGrowthForGraph, checkPlanOptions, DEFAULT_GROWTH, DEFAULT_HEADROOM, DEFAULT_SAMPLES } from '../../sim/plan/inputs.js';
import { thresholdVerdict } from '../../sim/plan/check.js';
import { buildPlan } from '../../sim/plan/plan.js';
import { stringifyResult } from '../../sim/result.js';
import { verdictExit } from '../../sim/slo.js';
import { scenarioGraph } from '../../sim/run-scenario.js';
import { numberFlag } from '../args.js';
import { EXIT_OK, EXIT_SLO_FAILED } from '../errors.js';
import { checkJunitFile, checkOutputDir, Progress, writeJunit, writeReport, sayWritten } from '../output.js';
import { asInputError, readScenario } from '../prepare-scenario.js';
import { exitOptions, type Values } from '../spec/options.js';
import type { PLAN_OPTIONS } from '../spec/simulate.js';

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
  const show = !values.quiet;
  const doc = asInputError(() => {
    const progress = new Progress('graph', show && sc.graph.kind === 'generate');
    const graph = scenarioGraph(sc, (f, d) => progress.update(f, d));
    progress.done(`${graph.users} users, ${graph.edges} follows`);
    return buildPlan({
      scenario: sc,
      graph,
      options,
      progress: {
        start(label) {
          const p = new Progress(label, show);
          return { update: (f, d) => p.update(f, d), done: (d) => p.done(d) };
        },
      },
    });
  });
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
