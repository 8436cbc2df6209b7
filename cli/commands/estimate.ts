// feedlab estimate [SCENARIO] [--preset NAME] [--set name=value ...] [--explain] [--json]:
// the design documents' back-of-envelope math, step by step, with their errata.
import { runEstimate, parseSet } from '../../sim/estimate/estimate.js';
import { measureTimelineMemory, redisUrlFromEnv, withCleanupOnSignal, type MeasureResult } from '../../sim/estimate/measure.js';
import { estimateText } from '../../sim/estimate/explain.js';
import { scenarioInputs } from '../../sim/estimate/from-scenario.js';
import { formatFigure } from '../../sim/estimate/format.js';
import { INPUTS } from '../../sim/estimate/inputs.js';
import { PRESETS } from '../../sim/estimate/presets.js';
import { stringifyResult } from '../../sim/result.js';
import { loadScenario } from '../../sim/scenario/load.js';
import { numberFlag, parseCommandArgs } from '../args.js';
import { Progress } from '../output.js';
import { EXIT_OK, InputError } from '../errors.js';

export const summary = "the documents' back-of-envelope math, reproduced and explained step by step";

const USAGE = 'feedlab estimate [SCENARIO] [--preset NAME] [--set name=value ...] [--explain] [--json] [--list] [--inputs] [--measure [--timelines N]]';

/** Timelines written by --measure: enough for used_memory to rise well above its noise. */
const MEASURE_TIMELINES = 1000;

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
      measure: { type: 'boolean' },
      timelines: { type: 'string' },
      quiet: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(`${USAGE}\n\n  --preset NAME   a design document's numbers (--list shows them)\n  --set n=v       change one input (--inputs lists them); sizes take MB/GB, times ms/s/d\n  --explain       each figure as formula, numbers, result\n  --json          the feedlab.estimate/1 document\n  --measure       write timelines of the configured shape to Redis (REDIS_URL) under a scratch prefix,\n                  read MEMORY USAGE and INFO memory, print them beside the model, remove every key\n  --timelines N   how many timelines --measure writes (default ${MEASURE_TIMELINES})\n`);
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
  const result = runEstimate({ preset: values.preset, scenarioInputs: scenario, source: positionals[0], sets });
  let measurement: MeasureResult | undefined;
  if (values.measure) {
    const timelines = numberFlag('timelines', values.timelines, MEASURE_TIMELINES, { min: 1, integer: true });
    const entries = Math.round(result.inputs['timeline.cap']);
    const progress = new Progress(`measure ${timelines} x ${entries}-entry timelines`, !values.quiet);
    measurement = await withCleanupOnSignal((signal) =>
      measureTimelineMemory({ redisUrl: redisUrlFromEnv(), timelines, entries, signal, onProgress: (f) => progress.update(f) }),
    );
    progress.done();
  }
  if (values.json) process.stdout.write(stringifyResult(measurement ? { ...result, measurement } : result) + '\n');
  else process.stdout.write(estimateText(result, values.explain ?? false) + (measurement ? measurementText(measurement, result.inputs['timeline.entryBytes']) : ''));
  return EXIT_OK;
}

function measurementText(m: MeasureResult, entryBytes: number): string {
  const b = (x: number) => `${x.toFixed(1)} B`;
  const lines = [
    '',
    `Measured on ${m.redisUrl} (Redis ${m.redisVersion}): ${m.timelines} timelines of ${m.entries} entries, ${m.encoding}`,
    `  MEMORY USAGE per entry     measured ${b(m.measured.usageBytesPerEntry)}   model ${b(m.model.usageBytesPerEntry)}   ratio ${m.ratio.usage.toFixed(3)}`,
    `  used_memory per entry      measured ${b(m.measured.instanceBytesPerEntry)}   model ${b(m.model.instanceBytesPerEntry)}   ratio ${m.ratio.instance.toFixed(3)}`,
    `  the document's ${entryBytes} B/entry  measured is ${(m.measured.instanceBytesPerEntry / entryBytes).toFixed(2)}x that`,
    `  ${m.keysRemoved} of ${m.keysWritten} scratch keys removed`,
    ...m.notes.map((n) => `  note: ${n}`),
  ];
  return lines.join('\n') + '\n';
}
