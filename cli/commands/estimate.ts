// feedlab estimate [SCENARIO] [--preset NAME] [--set name=value ...] [--explain] [--json]:
// the design documents' back-of-envelope math, step by step, with their errata.
import { runEstimate, parseSet } from '../../sim/estimate/estimate.js';
import { estimateText } from '../../sim/estimate/explain.js';
import { scenarioInputs } from '../../sim/estimate/from-scenario.js';
import { formatFigure } from '../../sim/estimate/format.js';
import { INPUTS } from '../../sim/estimate/inputs.js';
import { PRESETS } from '../../sim/estimate/presets.js';
import { stringifyResult } from '../../sim/result.js';
import { loadScenario } from '../../sim/scenario/load.js';
import { parseCommandArgs } from '../args.js';
import { EXIT_OK, InputError } from '../errors.js';

export const summary = "the documents' back-of-envelope math, reproduced and explained step by step";

const USAGE = 'feedlab estimate [SCENARIO] [--preset NAME] [--set name=value ...] [--explain] [--json] [--list] [--inputs]';

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    'estimate',
    argv,
    {
      preset: { type: 'string' },
      set: { type: 'string', multiple: true },
      explain: { type: 'boolean' },
      json: { type: 'boolean' },
      list: { type: 'boolean' },
      inputs: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(`${USAGE}\n\n  --preset NAME   a design document's numbers (--list shows them)\n  --set n=v       change one input (--inputs lists them); sizes take MB/GB, times ms/s/d\n  --explain       each figure as formula, numbers, result\n  --json          the feedlab.estimate/1 document\n`);
    return EXIT_OK;
  }
  if (values.list) {
    const w = Math.max(...PRESETS.map((p) => p.name.length));
    for (const p of PRESETS) process.stdout.write(`${p.name.padEnd(w)}  ${p.summary}\n`);
    return EXIT_OK;
  }
  if (values.inputs) {
    const w = Math.max(...INPUTS.map((i) => i.name.length));
    for (const i of INPUTS) process.stdout.write(`${i.name.padEnd(w)}  ${formatFigure(i.default, i.unit).padEnd(10)}  ${i.description}\n`);
    return EXIT_OK;
  }
  if (positionals.length > 1) throw new InputError(`estimate: one scenario at most, got ${positionals.length} (usage: ${USAGE})`);
  const sets = (values.set ?? []).map(parseSet);
  const scenario = positionals[0] ? scenarioInputs(loadScenario(positionals[0])) : undefined;
  const result = runEstimate({ preset: values.preset, scenarioInputs: scenario, sets });
  process.stdout.write(values.json ? stringifyResult(result) + '\n' : estimateText(result, values.explain ?? false));
  return EXIT_OK;
}
