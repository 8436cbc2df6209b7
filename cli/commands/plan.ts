// feedlab plan SCENARIO: the resources that meet the scenario's SLOs with headroom, each with its reason.
import { reportFiles } from '../../reports/files.js';
import { planText } from '../../reports/plan.js';
import { checkGrowthForGraph, checkPlanOptions, DEFAULT_GROWTH, DEFAULT_HEADROOM, DEFAULT_SAMPLES } from '../../sim/plan/inputs.js';
import { buildPlan } from '../../sim/plan/plan.js';
import { stringifyResult } from '../../sim/result.js';
import { scenarioGraph } from '../../sim/run-scenario.js';
import { loadScenario } from '../../sim/scenario/load.js';
import { numberFlag, parseCommandArgs } from '../args.js';
import { EXIT_OK, EXIT_SLO_FAILED, InputError } from '../errors.js';
import { checkOutputDir, Progress, writeReport, sayWritten } from '../output.js';
import { asInputError, CALIBRATION_HELP, OVERRIDE_HELP, overridesOf, SCENARIO_OPTIONS, seedFlag } from '../prepare-scenario.js';

export const summary = 'a capacity plan: workers, Redis memory and shards, partitions, API instances, Postgres, with reasons';

const USAGE = 'feedlab plan SCENARIO [--growth 1.5] [--headroom 0.3] [--samples N] [--seed N] [--calibration FILE] [--set KEY=VALUE ...] [--duration D] [--json] [--out DIR] [--check] [--quiet]';

const HELP = `${USAGE}

  --growth G    multiply the users (so posts/s, reads/s, timelines) by G; default ${DEFAULT_GROWTH} (today's load)
  --headroom H  keep this share of every resource spare at the peak; default ${DEFAULT_HEADROOM}
  --samples N   draws of the scenario's [low, likely, high] intervals; default ${DEFAULT_SAMPLES}
  --seed N      override the scenario's seed (it seeds the draws and the simulation check)
${CALIBRATION_HELP}
${OVERRIDE_HELP}
  --json        print the plan document (schema feedlab.plan/1) on stdout
  --out DIR     write DIR/report.json, DIR/report.md and a self-contained DIR/report.html
  --check       exit 1 when no plan meets every objective within the limits
  --quiet       no progress on stderr

The plan sizes for the scenario's slo.fanoutLagP99, readP99 and redisMemory. Thresholds
(slo.thresholds) are out of the plan's scope for now: they size nothing and never set its exit
code (there is no --no-thresholds here); only the simulation check's sloPass in the JSON counts them.
`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    'plan',
    argv,
    { ...SCENARIO_OPTIONS, growth: { type: 'string' }, headroom: { type: 'string' }, samples: { type: 'string' } },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(HELP);
    return EXIT_OK;
  }
  const options = checkPlanOptions({
    growth: numberFlag('growth', values.growth, DEFAULT_GROWTH),
    headroom: numberFlag('headroom', values.headroom, DEFAULT_HEADROOM, { min: 0 }),
    samples: numberFlag('samples', values.samples, DEFAULT_SAMPLES, { min: 1, integer: true }),
  });
  const path = positionals[0];
  if (!path) throw new InputError('plan: a scenario file is required (try scenarios/plan-next-year.yaml)');
  if (positionals.length > 1) throw new InputError(`plan: one scenario at a time, got ${positionals.length} (usage: ${USAGE})`);
  const sc = loadScenario(path, { onIntervalNote: null, calibration: values.calibration, overrides: overridesOf(values) });
  if (values.seed !== undefined) sc.seed = seedFlag(values.seed);
  if (values.out) checkOutputDir(values.out);
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
  process.stdout.write(values.json ? json + '\n' : planText(doc));
  sayWritten(values, files);
  return values.check && !doc.satisfied ? EXIT_SLO_FAILED : EXIT_OK;
}
