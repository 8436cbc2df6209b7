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
import { numberFlag, parseCommandArgs } from '../args.js';
import { EXIT_INTERRUPTED, EXIT_OK, EXIT_SLO_FAILED, InputError } from '../errors.js';
import { checkOutputDir, Progress } from '../output.js';
import { CalibrationStopped } from '../calibrate/rounds.js';
import { calibrateSelfContained, type CalibrationRun } from '../calibrate/session.js';
import { CALIBRATE } from '../calibrate/settings.js';
import { calibrateTarget } from '../calibrate/target.js';

export const summary = "measure the live stack's costs into a calibration file the simulator uses";

const USAGE = 'feedlab calibrate [--out FILE] [--samples N] [--json] [--quiet] [--target URL [--schema S] [--stream-prefix P] [--key-prefix K]]';

const HELP = `${USAGE}

Measures the costs the simulator charges, on this machine's Redis and Postgres (REDIS_URL,
DATABASE_URL), each after a warm-up and as several samples with their spread: the Redis round trip;
a pipelined batch of timeline writes against its size (a straight-line fit) and Redis's time per
write; a page read and an MGET per key; a follower page from Postgres against its rows; the worker's
statements per post event; a timeline rebuild; the API server's CPU per feed page (base, per merged
list, per hydrated post) and per post, the network hop and the spread of a read's service time; the
hop from a post to its event in the event log, and a running worker's own stages of those events
(its pickup and its statements). Self-contained by default: a scratch database, key prefix and
event log, the calibration world loaded with COPY, \`feedlab serve\` and for the hop one \`feedlab
worker\` started, all removed at the end (also on Ctrl-C or a crash). About two minutes.

  --out FILE          the calibration file (default calibration.yaml), written to a temporary name and renamed
  --samples N         samples of every figure after its warm-up (default ${CALIBRATE.samples})
  --json              print the document (feedlab.calibration/1) on stdout instead of the table
  --quiet             no progress on stderr
  --target URL        measure against a running deployment (its REDIS_URL and DATABASE_URL; read only but for
                      lists of its own under a scratch key prefix, removed after): Redis and Postgres costs on its
                      rows, the post-to-log hop from its event log (--stream-prefix); the API tier is refused
  --schema S          with --target: its Postgres schema (default public)
  --stream-prefix P   with --target: its event log's prefix (default ${DEFAULT_STREAM_PREFIX})
  --key-prefix K      with --target: its cache key prefix (default none), where its workers publish their stages

Apply the file with \`calibration: FILE\` in a scenario (keys the scenario writes win) or --calibration FILE
on run, sweep, plan and replay (wins over both). A number that is not sound (a fit with a slope <= 0 or
r² under 0.9, a cost <= 0) is refused in one line and left out of the file: exit 1 (a figure that
cannot be measured here, such as a target's API tier, is said in one line and left out: exit 0).
Exit 2 on bad usage, 3 when Redis or Postgres is unreachable, 130 when stopped (nothing written).
`;

const OPTIONS = {
  out: { type: 'string' },
  samples: { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean' },
  target: { type: 'string' },
  schema: { type: 'string' },
  'stream-prefix': { type: 'string' },
  'key-prefix': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('calibrate', argv, OPTIONS, USAGE);
  if (values.help) {
    process.stdout.write(HELP);
    return EXIT_OK;
  }
  if (positionals.length > 0) throw new InputError(`calibrate: takes no scenario (got "${positionals[0]}"); usage: ${USAGE}`);
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
  const command = ['feedlab calibrate', ...argv].join(' ');
  writeAtomically(out, calibrationYaml(doc, command));
  process.stdout.write(values.json ? stringifyResult(doc) + '\n' : calibrationTable(doc, out));
  // one line per reason (the API tier's keys against a target share one)
  const reasons = new Map<string, { keys: string[]; measured: boolean }>();
  for (const r of doc.calibration.refused) {
    const entry = reasons.get(r.why) ?? { keys: [], measured: !r.notMeasured };
    reasons.set(r.why, { ...entry, keys: [...entry.keys, r.key] });
  }
  for (const [why, { keys, measured }] of reasons) process.stderr.write(`feedlab: calibrate ${measured ? 'refused' : 'did not measure'} ${keys.join(', ')}: ${why}\n`);
  for (const f of doc.calibration.fellBack) process.stderr.write(`feedlab: calibrate took ${f.keys.join(', ')} from its own measurement: ${f.why}\n`);
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
