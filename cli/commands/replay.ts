// feedlab replay SCENARIO: the scenario's workload sent to the reference server on this machine's
// Redis and Postgres (or a running deployment), measured for real, written as the same result
// document a simulation writes (source: replay); one document per policy, a sweep for several.
import { availableParallelism } from 'node:os';
import { formatPolicy, notLiveRunnable, type FanoutPolicy } from '../../core/fanout-policy.js';
import { reportFiles } from '../../reports/files.js';
import { sweepTable } from '../../reports/sweep.js';
import { terminalReport } from '../../reports/terminal.js';
import { DEFAULT_REDIS_URL } from '../../server/cache/redis.js';
import { DEFAULT_STREAM_PREFIX } from '../../server/events/redis-streams.js';
import { DEFAULT_DATABASE_URL } from '../../server/store/pool.js';
import { replayMapping } from '../../sim/replay/mapping.js';
import { stringifyResult, type RunResult } from '../../sim/result.js';
import { policyFor } from '../../sim/run-scenario.js';
import { formatCount, formatDuration } from '../../sim/scenario/units.js';
import { judgeResult, verdictExit } from '../../sim/slo.js';
import { recommend, sweepRow, type SweepResult } from '../../sim/sweep.js';
import { numberFlag } from '../args.js';
import { EXIT_INTERRUPTED, EXIT_OK, EXIT_SLO_FAILED, InputError } from '../errors.js';
import { reconciliationLine } from '../../sim/replay/reconcile.js';
import { checkJunitFile, checkOutputDir, Progress, writeJunit, writeReport, writtenLine } from '../output.js';
import { junitXml } from '../../reports/junit.js';
import { asInputError, asInputErrorLater, readScenario } from '../prepare-scenario.js';
import type { REPLAY_OPTIONS } from '../spec/live.js';
import { exitOptions, type Values } from '../spec/options.js';
import { REPLAY } from '../replay/settings.js';
import { runReplay, type ReplayInput, type ReplayOutcome } from '../replay/session.js';
import { stopKeys } from '../replay/stop-keys.js';
import { dashboardWanted, loadDashboard } from '../dashboard/wanted.js';
import { FAULT_EVENT_KINDS, type Scenario } from '../../sim/scenario/types.js';

export async function run(values: Values<typeof REPLAY_OPTIONS>, positionals: string[]): Promise<number> {
  const sc = readScenario(positionals[0], values);
  if (values.out) checkOutputDir(values.out);
  checkJunitFile(values.junit);
  if (values.policy !== undefined && values.policies !== undefined) throw new InputError('replay: give --policy or --policies, not both');
  const specs =
    values.policies !== undefined
      ? values.policies.split(',').map((s) => s.trim()).filter(Boolean)
      : values.policy === undefined && sc.replay?.policies
        ? sc.replay.policies
        : [values.policy ?? null];
  if (specs.length === 0) throw new InputError('replay: --policies is empty');
  const policies: FanoutPolicy[] = specs.map((spec) => asInputError(() => policyFor(sc, spec ?? undefined)));
  for (const p of policies) {
    const why = notLiveRunnable(p);
    if (why) throw new InputError(`replay: ${why}`);
  }
  const target = values.target !== undefined ? parseTarget(values.target) : null;
  if (!target && (values['no-load'] || values.replace || values.schema || values['key-prefix'] || values['stream-prefix'])) {
    throw new InputError('replay: --no-load, --replace, --schema, --key-prefix and --stream-prefix go with --target (a self-contained replay makes its own scratch space)');
  }
  if (values['no-load'] && values.replace) throw new InputError('replay: --no-load and --replace contradict each other');
  const tokenSecret = target ? process.env.FEED_TOKEN_SECRET ?? '' : scratchSecret();
  if (target && tokenSecret.length < 32) throw new InputError('replay --target: FEED_TOKEN_SECRET must be the deployment\'s token secret (at least 32 bytes), to sign the users\' bearer tokens');

  const cores = availableParallelism();
  const mapping = asInputError(() =>
    replayMapping(
      sc,
      {
        users: values.users !== undefined ? numberFlag('users', values.users, 0, { min: 2, integer: true }) : undefined,
        timeScale: values['time-scale'] !== undefined ? positive('time-scale', values['time-scale']) : undefined,
        workers: values.workers !== undefined ? numberFlag('workers', values.workers, 1, { min: 1, max: 256, integer: true }) : undefined,
      },
      cores,
    ),
  );
  const wall = mapping.wallSeconds;
  if (wall < REPLAY.minWallSeconds || wall > REPLAY.maxWallSeconds) {
    const lo = mapping.simulatedSeconds / REPLAY.maxWallSeconds;
    const hi = mapping.simulatedSeconds / REPLAY.minWallSeconds;
    throw new InputError(
      `replay: at time scale ${mapping.timeScale} the ${formatDuration(mapping.simulatedSeconds)} scenario takes ${formatDuration(wall)} of wall time; a replay runs ${REPLAY.minWallSeconds} s to ${REPLAY.maxWallSeconds / 86_400} days: choose --time-scale from ${Number(lo.toPrecision(3))} to ${Number(hi.toPrecision(3))}`,
    );
  }
  if (values.max && policies.length > 1) throw new InputError('replay --max measures one stack: give one --policy (or none)');
  if (target) {
    const prefix = values['key-prefix'] ?? '';
    if (prefix === '' && values['no-load'] !== true) {
      throw new InputError("replay --target: loading the world empties the deployment's caches, which needs its --key-prefix (an empty prefix would be the whole Redis database); or pass --no-load");
    }
    if (prefix === '' && sc.events.some((e) => e.kind === 'cacheLoss')) {
      throw new InputError("replay --target: a cacheLoss event deletes keys by the deployment's --key-prefix, and an empty one would be the whole Redis database: give --key-prefix");
    }
    const fault = sc.events.find((e) => FAULT_EVENT_KINDS.has(e.kind));
    if (fault) {
      throw new InputError(`replay --target: the ${fault.kind} event is injected into the replay's own stack; a deployment's processes and event log are not ours to break (replay it self-contained)`);
    }
    if (prefix === '' && !mapping.warm) {
      throw new InputError("replay --target: a cold start (replay.warm: false) empties the deployment's caches by its --key-prefix, and an empty one would be the whole Redis database: give --key-prefix");
    }
    if (values['no-load'] && policies.length > 1) {
      throw new InputError('replay --target --no-load: a live sweep starts every policy from the same loaded world; drop --no-load (with --key-prefix), or replay one policy');
    }
  }
  const quiet = values.quiet === true;
  const progress = (label: string) => new Progress(label, !quiet);
  const log = (line: string) => {
    if (!quiet) process.stderr.write(`feedlab replay: ${line}\n`);
  };
  const input: ReplayInput = {
    mapping,
    policies,
    redisUrl: process.env.REDIS_URL ?? DEFAULT_REDIS_URL,
    databaseUrl: process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    target: target?.toString() ?? null,
    schema: values.schema ?? 'public',
    keyPrefix: values['key-prefix'] ?? '',
    streamPrefix: values['stream-prefix'] ?? DEFAULT_STREAM_PREFIX,
    load: values['no-load'] !== true,
    replace: values.replace === true,
    tokenSecret,
    maxOnly: values.max === true,
  };

  if (values.max || !dashboardWanted(values)) {
    const stop = new AbortController();
    const keys = stopKeys(stop, log);
    let outcome: ReplayOutcome;
    try {
      outcome = await asInputErrorLater(() => runReplay(input, { log, progress, signal: stop.signal }));
    } finally {
      keys.release();
    }
    if (values.max) return printMax(outcome, policies[0], values.json === true);
    const done = report(outcome.runs, policies, mapping.scenario, values, stop.signal.aborted || outcome.stoppedPolicy !== null);
    if (!done) return EXIT_INTERRUPTED;
    process.stdout.write(done.text);
    return finish(done, values, log);
  }

  // On a terminal: the replay runs in a worker thread behind the live view (its timers undisturbed by the drawing).
  const { LiveSession } = await loadDashboard();
  const live = new LiveSession({ scenario: mapping.scenario, policies, labels: policies.map(formatPolicy), mode: policies.length > 1 ? 'sweep' : 'run', replay: { input, timeScale: mapping.timeScale } });
  const outcome = await live.outcome();
  const done = outcome.forced ? null : report(outcome.runs, policies, mapping.scenario, values, outcome.stopped);
  if (!done) {
    await live.close();
    if (outcome.forced) process.stderr.write('feedlab: quit; the watchdog stops the stack and removes the scratch space\n');
    return EXIT_INTERRUPTED;
  }
  await live.finish(done.text);
  return finish(done, values, log);
}

interface Reported {
  text: string;
  doc: RunResult | SweepResult;
  exitCode: number;
  message: string | null;
  stopped: boolean;
  /** What --out wrote (none without it). */
  files: Record<string, string>;
}

/** The document of the replayed policies (a sweep for several), its text, its files and exit code; null when nothing finished. */
function report(all: RunResult[], policies: FanoutPolicy[], scenario: Scenario, values: { json?: boolean; out?: string; check?: boolean; 'no-thresholds'?: boolean; junit?: string }, stopped: boolean): Reported | null {
  const options = exitOptions(values);
  let doc: RunResult | SweepResult;
  let verdict: { exitCode: number; message: string | null };
  if (policies.length === 1) {
    if (all.length === 0) {
      process.stderr.write('feedlab: replay stopped before the measured window; no report written\n');
      return null;
    }
    doc = all[0];
    verdict = judgeResult(all[0], scenario, options);
  } else {
    // a stopped policy of a sweep is named, not compared
    const runs = all.filter((r) => !r.partial);
    if (runs.length === 0) {
      process.stderr.write('feedlab: replay stopped before the first policy finished; no report written\n');
      return null;
    }
    const rows = runs.map((r) => sweepRow(r, scenario.infrastructure.writesPerSecondPerWorker));
    // the policy whose window was cut is named stopped; one stopped before its window began, and
    // those after it, were not run
    const stoppedRun = all.find((r) => r.partial);
    const stoppedPolicy = stoppedRun ? stoppedRun.policy : null;
    const notRun = policies.slice(runs.length + (stoppedPolicy ? 1 : 0)).map(formatPolicy);
    const partial = stoppedPolicy || notRun.length > 0 ? { stoppedPolicy, stoppedAtSeconds: stoppedRun?.partial?.stoppedAtSeconds ?? null, notRun } : undefined;
    doc = { schema: 'feedlab.sweep/1', scenario: runs[0].scenario, ...(partial ? { partial } : {}), rows, recommended: recommend(rows), runs };
    verdict = verdictExit(runs.map((r) => r.summary.slo), options);
  }
  // a loss the reconciliation found fails the replay, --check or not
  const losses = (policies.length === 1 ? all.slice(0, 1) : all.filter((r) => !r.partial)).filter((r) => r.replay?.reconciliation && !r.replay.reconciliation.ok);
  if (losses.length > 0) {
    const lines = losses.map((r) => `${r.policy}: ${reconciliationLine(r.replay!.reconciliation!)}`);
    verdict = { exitCode: EXIT_SLO_FAILED, message: `reconciliation found a loss: ${lines.join(' | ')}${verdict.message ? `; ${verdict.message}` : ''}` };
  }
  const files = values.out ? reportFiles(doc) : {};
  if (values.out) writeReport(values.out, files);
  if (values.junit) writeJunit(values.junit, junitXml(doc));
  const text = values.json ? stringifyResult(doc) + '\n' : doc.schema === 'feedlab.sweep/1' ? sweepTable(doc) : terminalReport(doc);
  return { text, doc, ...verdict, stopped, files };
}

function finish(done: Reported, values: { out?: string }, log: (line: string) => void): number {
  if (values.out) log(writtenLine(values.out, done.files));
  if (done.stopped) {
    process.stderr.write(`feedlab: replay stopped; the report${values.out ? ` in ${values.out}` : ' above'} is partial (exit 130)\n`);
    return EXIT_INTERRUPTED;
  }
  if (done.message) process.stderr.write(`feedlab: ${done.message}\n`);
  return done.exitCode;
}

function printMax(outcome: ReplayOutcome, policy: FanoutPolicy, json: boolean): number {
  const sat = outcome.saturation;
  if (!sat) throw new InputError('replay --max: the scenario has no active readers to read with');
  if (json) {
    process.stdout.write(stringifyResult({ schema: 'feedlab.replay-max/1', policy: formatPolicy(policy), users: outcome.world.users, ...sat }) + '\n');
    return EXIT_OK;
  }
  const line = (s: NonNullable<typeof sat.autocannon>) =>
    `${s.tool.padEnd(10)} ${fmtRate(s.rate).padStart(10)}  p50 ${s.p50Ms.toFixed(2)} ms  p99 ${s.p99Ms.toFixed(2)} ms  ${s.connections} connections, ${s.seconds.toFixed(0)} s, ${s.completed} answered, ${s.errors + s.non2xx} errors; client CPU ${Math.round(s.clientCpuMicrosPerRequest)} us a request`;
  process.stdout.write(`closed-loop maximum of GET /v1/feed (first pages of ${Math.min(REPLAY.saturation.readers, outcome.world.activeReaders)} readers, warm caches):\n  ${line(sat.own)}\n`);
  if (sat.autocannon) {
    const ratio = sat.autocannon.rate / sat.own.rate;
    process.stdout.write(`  ${line(sat.autocannon)}\n  autocannon / feedlab: ${ratio.toFixed(2)}\n`);
  }
  return EXIT_OK;
}

function fmtRate(perSecond: number): string {
  return `${formatCount(perSecond)}/s`;
}

/** A positive number flag, refused in one line otherwise. */
function positive(name: string, raw: string): number {
  const v = Number(raw);
  if (!Number.isFinite(v) || v <= 0) throw new InputError(`--${name} must be a positive number, got "${raw}"`);
  return v;
}

function parseTarget(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new InputError(`replay: --target "${raw}" is not a URL (e.g. http://127.0.0.1:8080)`);
  }
  if (url.protocol !== 'http:') throw new InputError(`replay: --target must be an http:// URL (the driver speaks plain HTTP/1.1), got ${url.protocol}`);
  return url;
}

/** A token secret for the scratch stack only: random, never printed. */
function scratchSecret(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64');
}
