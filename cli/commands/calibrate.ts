// feedlab calibrate: the live stack's costs, measured, into a calibration file the simulator takes
// (`calibration: FILE` in a scenario, or --calibration FILE on run, sweep, plan and replay).
import { basename, dirname, join } from 'node:path';
import { existsSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { calibrationTable } from '../../reports/calibration.js';
import { DEFAULT_REDIS_URL } from '../../server/cache/redis.js';
import { DEFAULT_STREAM_PREFIX } from '../../server/events/redis-streams.js';
import { DEFAULT_DATABASE_URL } from '../../server/store/pool.js';
import { calibrationDocument } from '../../sim/calibration/document.js';
import { calibrationYaml } from '../../sim/calibration/file.js';
import { stringifyResult } from '../../sim/result.js';
import { numberFlag } from '../args.js';
import type { CALIBRATE_OPTIONS } from '../spec/live.js';
import { flagsOf, type Values } from '../spec/options.js';
import { EXIT_INTERRUPTED, EXIT_OK, EXIT_SLO_FAILED, InputError } from '../errors.js';
import { checkOutputDir, Progress } from '../output.js';
import { CalibrationStopped } from '../calibrate/rounds.js';
import { calibrateSelfContained, type CalibrationRun } from '../calibrate/session.js';
import { CALIBRATE } from '../calibrate/settings.js';
import { calibrateTarget } from '../calibrate/target.js';

export async function run(values: Values<typeof CALIBRATE_OPTIONS>): Promise<number> {
  const samples = numberFlag('samples', values.samples, CALIBRATE.samples, { min: 2, max: 100, integer: true });
  const out = values.out ?? 'calibration.yaml';
  if (out.endsWith('/') || out === '' || (existsSync(out) && statSync(out).isDirectory())) throw new InputError(`--out ${out}: give a file name (e.g. calibration.yaml), not a directory`);
  checkOutputDir(dirname(out));
  const target = values.target !== undefined ? parseTarget(values.target) : null;
  if (!target && (values.schema || values['stream-prefix'] || values['key-prefix'] !== undefined)) {
    throw new InputError('calibrate: --schema, --stream-prefix and --key-prefix go with --target (self-contained, calibrate makes its own scratch space)');
  }

  const quiet = values.quiet === true;
  const log = (line: string) => {
    if (!quiet) process.stderr.write(`feedlab calibrate: ${line}\n`);
  };
  const bar = new Progress('calibrate', !quiet);
  const stop = new AbortController();
  let presses = 0;
  const onSignal = () => {
    if (++presses === 1) {
      log('Ctrl-C: stopping after the current round; the scratch space is removed, nothing is written (Ctrl-C again to quit at once)');
      stop.abort();
    } else process.exit(EXIT_INTERRUPTED);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const redisUrl = process.env.REDIS_URL ?? DEFAULT_REDIS_URL;
  const databaseUrl = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  let result: CalibrationRun;
  try {
    const hooks = { log, progress: (f: number, d: string) => bar.update(Math.min(0.999, f), d), signal: stop.signal };
    result = target
      ? await calibrateTarget({ redisUrl, databaseUrl, samples, target: target.toString(), schema: values.schema ?? 'public', streamPrefix: values['stream-prefix'] ?? DEFAULT_STREAM_PREFIX, keyPrefix: values['key-prefix'] ?? '' }, hooks)
      : await calibrateSelfContained({ redisUrl, databaseUrl, samples }, hooks);
  } catch (err) {
    if (err instanceof CalibrationStopped) {
      process.stderr.write('feedlab: calibrate stopped; nothing written (exit 130)\n');
      return EXIT_INTERRUPTED;
    }
    throw err;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  bar.done();
  const doc = calibrationDocument(result.provenance, result.measurements, result.refused);
  const command = ['feedlab calibrate', ...flagsOf(values)].join(' ');
  writeAtomically(out, calibrationYaml(doc, command));
  process.stdout.write(values.json ? stringifyResult(doc) + '\n' : calibrationTable(doc, out));
  // one line per reason (the API tier's keys against a target share one)
  const reasons = new Map<string, { keys: string[]; measured: boolean }>();
  for (const r of doc.calibration.refused) {
    const entry = reasons.get(r.why) ?? { keys: [], measured: !r.notMeasured };
    reasons.set(r.why, { ...entry, keys: [...entry.keys, r.key] });
  }
  for (const [why, { keys, measured }] of reasons) process.stderr.write(`feedlab: calibrate ${measured ? 'refused' : 'did not measure'} ${keys.join(', ')}: ${why}\n`);
  for (const f of doc.calibration.fellBack) {
    const kept = f.levelled ? `, and ${f.levelled.key} from the running worker's level on it` : '';
    process.stderr.write(`feedlab: calibrate took ${f.keys.join(', ')} from its own measurement${kept}: ${f.why}\n`);
  }
  if (doc.calibration.contention.contended) log(`CONTENDED: other processes took ${Math.round(doc.calibration.contention.otherShare * 100)}% of the machine while it measured; the file says so`);
  // a number that failed its check is exit 1; a figure that could not be measured here is only said
  return doc.calibration.refused.some((r) => !r.notMeasured) ? EXIT_SLO_FAILED : EXIT_OK;
}

/** The file lands whole or not at all: a temporary name beside it, then a rename. */
function writeAtomically(path: string, text: string): void {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    writeFileSync(tmp, text);
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new InputError(`--out ${path}: ${(err as Error).message}`);
  }
}

function parseTarget(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new InputError(`calibrate: --target "${raw}" is not a URL (e.g. http://127.0.0.1:8080)`);
  }
  if (url.protocol !== 'http:') throw new InputError(`calibrate: --target must be an http:// URL, got ${url.protocol}`);
  return url;
}
