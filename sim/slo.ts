// Service-level objectives and k6-style thresholds, checked against a result's summary.
//
// The three objectives (slo.fanoutLagP99, readP99, redisMemory) and every threshold of
// slo.thresholds are checks of one verdict, `summary.slo`. They differ in what they do to the exit
// code (DESIGN.md: 1 when a threshold, an SLO, failed): a failed threshold exits 1 by default, as
// k6 does (`--no-thresholds` opts out); an objective only under `--check`, which counts both.
//
// Everything here reads the figures of a result document, so `feedlab replay` (which writes the
// same feedlab.result/1 summary) checks its measurements with the same code: judgeResult.
import type { RunResult } from './result.js';
import type { Scenario, Slo } from './scenario/types.js';
import { compare, thresholdId, type Threshold, type ThresholdFigureName, type ThresholdOperator, type ThresholdStatistic } from './scenario/thresholds.js';
import { serversFor } from './sweep.js';

/** What a check's target and actual are in: seconds, milliseconds, bytes, a share of 1, writes per second, servers. */
export type SloUnit = 's' | 'ms' | 'bytes' | 'share' | 'writes/s' | 'servers';

export interface SloCheck {
  /** An objective's key (fanoutLagP99, readP99, redisMemory), or a threshold's figure and expression ("fanoutLag p99.9 < 30s"). */
  id: string;
  description: string;
  target: number;
  /** The figure of the result; NaN (null in JSON) when the document does not have it. */
  actual: number;
  unit: SloUnit;
  pass: boolean;
  /** Present on thresholds only: the comparison as written (an objective passes at actual <= target). */
  threshold?: { figure: ThresholdFigureName; statistic: ThresholdStatistic | null; op: ThresholdOperator; expression: string };
}

export interface SloVerdict {
  /** Every check passed: the objectives and the thresholds. */
  pass: boolean;
  checks: SloCheck[];
}

export function checkSlo(slo: Slo, observed: { lagP99Seconds: number; readP99Ms: number; peakMemoryBytes: number }): SloVerdict {
  const checks: SloCheck[] = [
    {
      id: 'fanoutLagP99',
      description: 'fan-out lag p99, per follower',
      target: slo.fanoutLagP99,
      actual: observed.lagP99Seconds,
      unit: 's',
      pass: observed.lagP99Seconds <= slo.fanoutLagP99,
    },
    {
      id: 'readP99',
      description: 'home-feed read p99',
      target: slo.readP99 * 1000,
      actual: observed.readP99Ms,
      unit: 'ms',
      pass: observed.readP99Ms <= slo.readP99 * 1000,
    },
  ];
  if (Number.isFinite(slo.redisMemory)) {
    checks.push({
      id: 'redisMemory',
      description: 'peak Redis memory for timelines and lists',
      target: slo.redisMemory,
      actual: observed.peakMemoryBytes,
      unit: 'bytes',
      pass: observed.peakMemoryBytes <= slo.redisMemory,
    });
  }
  return { pass: checks.every((c) => c.pass), checks };
}

/** What the checks read: a result document's summary (its verdict aside) and how long the run was. */
export interface Measured {
  scenario: Pick<RunResult['scenario'], 'durationSeconds'>;
  summary: Omit<RunResult['summary'], 'slo'>;
}

/** The scenario keys the checks need: the objectives and thresholds, and a worker's rate (for servers). */
export type JudgedScenario = Pick<Scenario, 'slo'> & { infrastructure: Pick<Scenario['infrastructure'], 'writesPerSecondPerWorker'> };

const STAT_KEY: Record<ThresholdStatistic, 'p50' | 'p90' | 'p99' | 'p999' | 'max' | 'mean'> = {
  p50: 'p50',
  p90: 'p90',
  p99: 'p99',
  'p99.9': 'p999',
  max: 'max',
  mean: 'mean',
};

interface FigureReading {
  unit: SloUnit;
  /** Target in the check's unit from the threshold's value (seconds, bytes, share, count). */
  scale: number;
  describe: (stat: ThresholdStatistic | null) => string;
  read: (m: Measured, stat: ThresholdStatistic | null, sc: JudgedScenario) => number | undefined;
}

const FIGURE_READINGS: Record<ThresholdFigureName, FigureReading> = {
  fanoutLag: { unit: 's', scale: 1, describe: (s) => `fan-out lag ${s}, per follower`, read: (m, s) => m.summary.fanout.followerLagSeconds?.[STAT_KEY[s!]] },
  fanoutPostLag: { unit: 's', scale: 1, describe: (s) => `fan-out lag ${s}, per post`, read: (m, s) => m.summary.fanout.lagSeconds?.[STAT_KEY[s!]] },
  read: { unit: 'ms', scale: 1000, describe: (s) => `home-feed read ${s}`, read: (m, s) => m.summary.reads.latencyMs?.[STAT_KEY[s!]] },
  coldReadShare: { unit: 'share', scale: 1, describe: () => 'cold-read share', read: (m) => m.summary.reads.coldShare },
  backlogDrain: { unit: 's', scale: 1, describe: () => 'fan-out backlog drain time', read: (m) => m.summary.fanout.backlog?.drainSeconds },
  peakWrites: { unit: 'writes/s', scale: 1, describe: () => 'peak timeline writes per second', read: (m) => m.summary.fanout.writesPerSecond?.peak },
  redisMemory: { unit: 'bytes', scale: 1, describe: () => 'peak Redis memory', read: (m) => m.summary.redis.memoryBytes?.peak },
  servers: {
    unit: 'servers',
    scale: 1,
    describe: () => 'servers (Redis memory hosts + Redis cores + fan-out workers)',
    read: (m, _s, sc) => serversFor(m, sc.infrastructure.writesPerSecondPerWorker).total,
  },
};

/** One check per threshold, in the scenario's order (that of THRESHOLD_FIGURES). */
export function checkThresholds(thresholds: readonly Threshold[], m: Measured, sc: JudgedScenario): SloCheck[] {
  return thresholds.map((t) => {
    const f = FIGURE_READINGS[t.figure];
    const read = f.read(m, t.statistic, sc);
    const actual = typeof read === 'number' ? read : NaN;
    const target = t.value * f.scale;
    return {
      id: thresholdId(t),
      description: f.describe(t.statistic),
      target,
      actual,
      unit: f.unit,
      pass: compare(actual, t.op, target),
      threshold: { figure: t.figure, statistic: t.statistic, op: t.op, expression: t.expression },
    };
  });
}

/** The verdict of a result: the three objectives, then every threshold. Documents without thresholds get exactly the objectives. */
export function sloVerdict(sc: JudgedScenario, m: Measured): SloVerdict {
  const s = m.summary;
  // the lag objective is what followers wait: per delivery, so a celebrity's post weighs by its audience
  const objectives = checkSlo(sc.slo, { lagP99Seconds: s.fanout.followerLagSeconds.p99, readP99Ms: s.reads.latencyMs.p99, peakMemoryBytes: s.redis.memoryBytes.peak });
  if (!sc.slo.thresholds || sc.slo.thresholds.length === 0) return objectives;
  const checks = [...objectives.checks, ...checkThresholds(sc.slo.thresholds, m, sc)];
  return { pass: checks.every((c) => c.pass), checks };
}

/** How a command turns verdicts into its exit code. */
export interface ExitOptions {
  /** `--check`: a failed objective exits 1 too. */
  check?: boolean;
  /** False under `--no-thresholds`: thresholds are checked and printed but leave the exit code alone. */
  thresholds?: boolean;
}

/** The checks of a verdict that set the exit code under these options and failed. */
export function countedFailures(v: SloVerdict, options: ExitOptions): SloCheck[] {
  return v.checks.filter((c) => !c.pass && (c.threshold ? options.thresholds !== false : options.check === true));
}

/**
 * 1 when every verdict has a failure that counts (a run has one verdict; a sweep one per policy, so
 * it exits 1 when no policy passes what counts), else 0. A command stopped early (130) or given
 * bad input (2) decides that before asking.
 */
export function exitCodeFor(verdicts: readonly SloVerdict[], options: ExitOptions): 0 | 1 {
  return verdicts.length > 0 && verdicts.every((v) => countedFailures(v, options).length > 0) ? 1 : 0;
}

/** The failures that count, as one line: "SLO not met: readP99; thresholds not met: read max < 1s". */
export function failureLine(failed: readonly SloCheck[]): string {
  const objectives = failed.filter((c) => !c.threshold).map((c) => c.id);
  const thresholds = failed.filter((c) => c.threshold).map((c) => c.id);
  const parts: string[] = [];
  if (objectives.length > 0) parts.push(`SLO not met: ${objectives.join(', ')}`);
  if (thresholds.length > 0) parts.push(`${thresholds.length === 1 ? 'threshold' : 'thresholds'} not met: ${thresholds.join(', ')}`);
  return parts.join('; ');
}

export interface ExitVerdict {
  exitCode: 0 | 1;
  /** One line for stderr when the exit code is 1 (e.g. "thresholds not met: read max < 1s (exit 1; ...)"), else null. */
  message: string | null;
}

/**
 * The exit code of one verdict (run, replay) or of a sweep's (one per policy: 1 when no policy
 * passes what counts), and the line that says why.
 */
export function verdictExit(verdicts: readonly SloVerdict[], options: ExitOptions): ExitVerdict {
  const exitCode = exitCodeFor(verdicts, options);
  if (exitCode === 0) return { exitCode, message: null };
  const failed = verdicts.flatMap((v) => countedFailures(v, options));
  const optOut = failed.some((c) => c.threshold) ? '; --no-thresholds leaves thresholds out of the exit code' : '';
  if (verdicts.length === 1) return { exitCode, message: `${failureLine(failed)} (exit 1${optOut})` };
  const what = options.check ? (options.thresholds !== false ? 'SLO and threshold' : 'SLO') : 'threshold';
  return { exitCode, message: `no policy meets every ${what} (exit 1${optOut})` };
}

export interface Judgement extends ExitVerdict {
  /** The verdict for summary.slo. */
  slo: SloVerdict;
}

/**
 * The verdict of a result document and the exit code it gives: what `feedlab replay` calls on its
 * measured document, `doc.summary.slo = judgeResult(doc, scenario, { check, thresholds: !noThresholds }).slo`,
 * and the same rules `feedlab run` exits by. The verdict is worked out afresh from the document's
 * figures (a summary.slo already there is not trusted), exactly as buildResult does for a simulation.
 */
export function judgeResult(doc: Measured, sc: JudgedScenario, options: ExitOptions = {}): Judgement {
  const slo = sloVerdict(sc, doc);
  return { slo, ...verdictExit([slo], options) };
}
