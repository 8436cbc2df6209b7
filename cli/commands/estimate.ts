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
import { numberFlag } from '../args.js';
import type { Values } from '../spec/options.js';
import { MEASURE_TIMELINES, type ESTIMATE_OPTIONS } from '../spec/simulate.js';
import { Progress } from '../output.js';
import { EXIT_OK } from '../errors.js';

export async function run(values: Values<typeof ESTIMATE_OPTIONS>, positionals: string[]): Promise<number> {
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
