// feedlab sweep SCENARIO: the same workload under several fan-out policies, and the cheapest that meets every SLO.
import { sweepMarkdown, sweepTable } from '../../reports/sweep.js';
import { stringifyResult } from '../../sim/result.js';
import { policyFor, runPolicy } from '../../sim/run-scenario.js';
import { recommend, sweepRow, type SweepResult } from '../../sim/sweep.js';
import { parseCommandArgs } from '../args.js';
import { EXIT_OK, EXIT_SLO_FAILED, InputError } from '../errors.js';
import { checkOutputDir, Progress, writeReport } from '../output.js';
import { asInputError, prepareWithProgress, readScenario, SCENARIO_OPTIONS } from '../prepare-scenario.js';

export const summary = 'simulate several fan-out policies and recommend the cheapest that meets every SLO';

const USAGE = 'feedlab sweep SCENARIO [--policies push,pull,threshold:10000,...] [--seed N] [--json] [--out DIR] [--check] [--quiet]';

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    'sweep',
    argv,
    { ...SCENARIO_OPTIONS, policies: { type: 'string' } },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(`${USAGE}\n\nWithout --policies, the scenario's sweep.policies list is used.\n--check exits 1 when no policy meets every SLO.\n`);
    return EXIT_OK;
  }
  const sc = readScenario(positionals[0], 'sweep', values.seed);
  if (values.out) checkOutputDir(values.out);
  const specs = values.policies !== undefined ? values.policies.split(',').map((s) => s.trim()).filter(Boolean) : sc.sweep.policies;
  if (specs.length === 0) throw new InputError('sweep: --policies is empty');
  // every policy is checked before the first (long) simulation starts
  const policies = specs.map((spec) => asInputError(() => policyFor(sc, spec)));
  const prepared = prepareWithProgress(sc, !values.quiet);
  const runs = policies.map((p, i) => {
    const progress = new Progress(`[${i + 1}/${policies.length}] ${specs[i]}`, !values.quiet);
    const r = asInputError(() => runPolicy(prepared, p, (f, d) => progress.update(f, d)));
    progress.done();
    return r;
  });
  const rows = runs.map((r) => sweepRow(r, sc.infrastructure.writesPerSecondPerWorker));
  const result: SweepResult = { schema: 'feedlab.sweep/1', scenario: runs[0].scenario, rows, recommended: recommend(rows), runs };
  const json = stringifyResult(result);
  if (values.out) writeReport(values.out, { 'report.json': json + '\n', 'report.md': sweepMarkdown(result) });
  process.stdout.write(values.json ? json + '\n' : sweepTable(result));
  return values.check && !result.recommended ? EXIT_SLO_FAILED : EXIT_OK;
}
