// Child process of measure.test.ts: runs a long measurement the way the CLI does (inside
// withCleanupOnSignal) and says "writing" once the first keys are in Redis; the test then sends
// SIGINT and checks that the process exits 130 having removed every key it wrote.
// usage: node measure-sigint-child.mjs PREFIX TIMELINES ENTRIES   (REDIS_URL from the environment)
import { measureTimelineMemory, withCleanupOnSignal } from '../../dist/sim/estimate/measure.js';

const [prefix, timelines, entries] = process.argv.slice(2);
let told = false;
await withCleanupOnSignal((signal) =>
  measureTimelineMemory({
    prefix,
    timelines: Number(timelines),
    entries: Number(entries),
    signal,
    onProgress: (fraction) => {
      if (!told && fraction > 0 && fraction < 1) {
        told = true;
        process.stdout.write('writing\n');
      }
    },
  }),
);
process.stdout.write('finished\n');
