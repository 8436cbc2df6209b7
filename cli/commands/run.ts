// feedlab run SCENARIO: simulate one scenario under one fan-out policy.
import { markdownReport } from '../../reports/markdown.js';
import { terminalReport } from '../../reports/terminal.js';
import { stringifyResult } from '../../sim/result.js';
import { policyFor, runPolicy } from '../../sim/run-scenario.js';
import { parseCommandArgs } from '../args.js';
import { EXIT_OK, EXIT_SLO_FAILED } from '../errors.js';
import { checkOutputDir, Progress, writeReport } from '../output.js';
import { asInputError, prepareWithProgress, readScenario, SCENARIO_OPTIONS } from '../prepare-scenario.js';

export const summary = 'simulate a scenario: fan-out lag, writes/s, Redis memory, read latency, SLOs';

const USAGE = 'feedlab run SCENARIO [--seed N] [--policy P] [--json] [--out DIR] [--check] [--quiet]';

const HELP = `${USAGE}

  --seed N      override the scenario's seed
  --policy P    push | pull | threshold:T | rate | reader-cap:N | adaptive:T, optionally :skip-dormant or :all-followers
  --json        print the result document (schema feedlab.result/1) on stdout
  --out DIR     write DIR/report.json and DIR/report.md
  --check       exit 1 when an SLO is not met
  --quiet       no progress on stderr
`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    'run',
    argv,
    { ...SCENARIO_OPTIONS, policy: { type: 'string' } },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(HELP);
    return EXIT_OK;
  }
  const sc = readScenario(positionals[0], 'run', values.seed);
  if (values.out) checkOutputDir(values.out);
  const policy = asInputError(() => policyFor(sc, values.policy));
  const prepared = prepareWithProgress(sc, !values.quiet);
  const progress = new Progress(`simulate ${sc.name}`, !values.quiet);
  const result = asInputError(() => runPolicy(prepared, policy, (f, d) => progress.update(f, d)));
  progress.done();

  const json = stringifyResult(result);
  if (values.out) writeReport(values.out, { 'report.json': json + '\n', 'report.md': markdownReport(result) });
  process.stdout.write(values.json ? json + '\n' : terminalReport(result));
  return values.check && !result.summary.slo.pass ? EXIT_SLO_FAILED : EXIT_OK;
}
