// k6-style thresholds (scenario key slo.thresholds): the figures they may name, and the parser of
// one expression such as "p99.9 < 30s". Checking them against a result is sim/slo.ts's work.
//
//   slo:
//     thresholds:
//       fanoutLag: ["p50 < 500ms", "p99.9 < 30s"]
//       coldReadShare: ["< 1%"]
//
// An expression is `[statistic] operator value`: a statistic for the figures that are
// distributions (lag, read latency), none for the single figures; the operator is <, <=, > or >=;
// the value takes the unit of its figure (a duration, a size, a share, a count) and a duration or a
// size without its unit is refused.
import { InputError } from '../errors.js';
import { nearest } from '../../core/suggest.js';
import { DURATION_EXAMPLE, DURATION_LIST, parseCount, parseDuration, parseSize, SIZE_EXAMPLE, SIZE_LIST } from './units.js';

/** The statistics of a distribution figure, as written (p99.9 is summary's p999). */
export const THRESHOLD_STATISTICS = ['p50', 'p90', 'p99', 'p99.9', 'max', 'mean'] as const;
export type ThresholdStatistic = (typeof THRESHOLD_STATISTICS)[number];

export const THRESHOLD_OPERATORS = ['<', '<=', '>', '>='] as const;
export type ThresholdOperator = (typeof THRESHOLD_OPERATORS)[number];

/** What a value is written in: seconds, bytes, a share of 1, or a plain number. */
export type ThresholdValueKind = 'duration' | 'size' | 'share' | 'count';

export interface ThresholdFigure {
  /** A distribution takes a statistic (p99 < 5s); a single figure takes none (< 1%). */
  distribution: boolean;
  kind: ThresholdValueKind;
  /** What it is, and where it is in the result document. */
  description: string;
}

/** Every figure a threshold may name, in the order their checks are listed. */
export const THRESHOLD_FIGURES = {
  fanoutLag: { distribution: true, kind: 'duration', description: 'fan-out lag per follower (summary.fanout.followerLagSeconds)' },
  fanoutPostLag: { distribution: true, kind: 'duration', description: 'fan-out lag per post, to its last follower (summary.fanout.lagSeconds)' },
  read: { distribution: true, kind: 'duration', description: 'home-feed read latency (summary.reads.latencyMs)' },
  coldReadShare: { distribution: false, kind: 'share', description: 'share of reads that rebuilt a missing timeline (summary.reads.coldShare)' },
  backlogDrain: {
    distribution: false,
    kind: 'duration',
    description: "longest time the fan-out backlog stayed above one second of the fleet's work (summary.fanout.backlog.drainSeconds)",
  },
  peakWrites: { distribution: false, kind: 'count', description: 'timeline writes per second at the peak second (summary.fanout.writesPerSecond.peak)' },
  redisMemory: { distribution: false, kind: 'size', description: 'peak Redis memory (summary.redis.memoryBytes.peak)' },
  servers: { distribution: false, kind: 'count', description: "servers, as feedlab sweep counts them (rows[].servers.total)" },
} as const satisfies Record<string, ThresholdFigure>;

export type ThresholdFigureName = keyof typeof THRESHOLD_FIGURES;
export const THRESHOLD_FIGURE_NAMES = Object.keys(THRESHOLD_FIGURES) as ThresholdFigureName[];

/** One threshold of a scenario, resolved. */
export interface Threshold {
  figure: ThresholdFigureName;
  /** Null for a single figure. */
  statistic: ThresholdStatistic | null;
  op: ThresholdOperator;
  /** Seconds, bytes, a share (0.01 for 1%) or a plain number. */
  value: number;
  /** The value as written, e.g. "30s". */
  valueText: string;
  /** The expression as written (trimmed), e.g. "p99.9 < 30s". */
  expression: string;
}

/** A threshold's name in checks and messages: the figure and the expression, spaced one way ("fanoutLag p99.9 < 30s"). */
export function thresholdId(t: Pick<Threshold, 'figure' | 'statistic' | 'op' | 'valueText'>): string {
  return `${t.figure} ${t.statistic ? `${t.statistic} ` : ''}${t.op} ${t.valueText}`;
}

// the first comparison, longest spelling first; = == != =< => are caught to be refused by name
const OPERATOR = /<=|>=|==|!=|=<|=>|<|>|=/;
const PLAIN_NUMBER = /^[+-]?(?:\d(?:_?\d)*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const SHARE = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(%?)$/;
const EXAMPLE: Record<ThresholdValueKind, string> = {
  duration: 'p99 < 5s',
  size: '< 2TB',
  share: '< 1%',
  count: '< 2e5',
};

const quoted = (s: string) => JSON.stringify(s);

function exampleFor(figure: ThresholdFigureName): string {
  const f: ThresholdFigure = THRESHOLD_FIGURES[figure];
  const e = EXAMPLE[f.kind];
  return f.distribution ? e : e.replace(/^p99 /, '');
}

/** "p(99)" and "p99.90" as k6 and people write them: the statistic meant, when it is one of ours. */
function percentileMeant(stat: string): ThresholdStatistic | undefined {
  const m = /^p\(?\s*(\d+(?:\.\d+)?)\s*\)?$/i.exec(stat);
  if (!m) return undefined;
  // p999 is what the result document calls p99.9
  const canonical = m[1] === '999' ? 'p99.9' : `p${Number(m[1])}`;
  return (THRESHOLD_STATISTICS as readonly string[]).includes(canonical) ? (canonical as ThresholdStatistic) : undefined;
}

const K6_STATISTICS: Record<string, ThresholdStatistic> = { avg: 'mean', med: 'p50', median: 'p50', average: 'mean' };

function statistic(figure: ThresholdFigureName, stat: string, text: string): ThresholdStatistic | null {
  const f: ThresholdFigure = THRESHOLD_FIGURES[figure];
  const valid = THRESHOLD_STATISTICS.join(', ');
  if (!f.distribution) {
    if (stat !== '') throw new InputError(`${figure} is a single figure and takes no statistic, got "${stat}" in ${quoted(text)} (write e.g. ${quoted(exampleFor(figure))})`);
    return null;
  }
  if (stat === '') throw new InputError(`${figure} needs a statistic before the comparison: one of ${valid} (e.g. "p99 < 5s"), got ${quoted(text)}`);
  if ((THRESHOLD_STATISTICS as readonly string[]).includes(stat)) return stat as ThresholdStatistic;
  const percentile = /^p\(?\s*[\d.]+\s*\)?$/i.test(stat);
  const meant = percentile ? percentileMeant(stat) : (K6_STATISTICS[stat.toLowerCase()] ?? nearest(stat, THRESHOLD_STATISTICS));
  if (meant) throw new InputError(`unknown statistic "${stat}"; did you mean "${meant}"? (valid: ${valid})`);
  if (percentile) throw new InputError(`the percentile "${stat}" is not one the results keep (valid statistics: ${valid})`);
  throw new InputError(`unknown statistic "${stat}" (valid: ${valid})`);
}

/** The value in its figure's unit: a duration or a size must carry its unit. */
function value(figure: ThresholdFigureName, v: string): number {
  const kind: ThresholdValueKind = THRESHOLD_FIGURES[figure].kind;
  const plain = PLAIN_NUMBER.test(v);
  const wrap = (fn: () => number): number => {
    try {
      return fn();
    } catch (err) {
      if (err instanceof InputError) throw new InputError(`${figure} takes ${kindText(kind)}: ${err.message}`);
      throw err;
    }
  };
  switch (kind) {
    case 'duration':
      if (plain) throw new InputError(`${quoted(v)} needs a unit: ${figure} takes ${DURATION_EXAMPLE} (valid units: ${DURATION_LIST})`);
      return wrap(() => parseDuration(v));
    case 'size':
      if (plain) throw new InputError(`${quoted(v)} needs a unit: ${figure} takes ${SIZE_EXAMPLE} (valid units: ${SIZE_LIST})`);
      return wrap(() => parseSize(v));
    case 'share': {
      const m = SHARE.exec(v);
      if (!m) throw new InputError(`${figure} takes a share like 1% or 0.01, got ${quoted(v)} (valid units: %, or none for a share of 1)`);
      const n = Number(m[1]);
      const share = m[2] === '%' ? n / 100 : n;
      if (!Number.isFinite(share) || share < 0 || share > 1) {
        throw new InputError(`${quoted(v)} is not a share between 0 and 1 (0% and 100%)${m[2] === '' && n > 1 && n <= 100 ? `; did you mean "${v}%"?` : ''}`);
      }
      return share;
    }
    case 'count':
      if (!/^[+-]?[\d._]+(?:[eE][+-]?\d+)?$/.test(v)) throw new InputError(`${figure} takes ${kindText(kind)}, got ${quoted(v)}`);
      return wrap(() => parseCount(v));
  }
}

function kindText(kind: ThresholdValueKind): string {
  return kind === 'duration' ? DURATION_EXAMPLE : kind === 'size' ? SIZE_EXAMPLE : kind === 'share' ? 'a share like 1% or 0.01' : 'a plain number like 200000 or 2e5';
}

/**
 * One expression of `slo.thresholds.<figure>`, e.g. parseThreshold('fanoutLag', 'p99.9 < 30s').
 * Throws an InputError (without a location: the schema adds the list item's) naming what is valid.
 */
export function parseThreshold(figure: ThresholdFigureName, written: string): Threshold {
  const text = written.trim();
  const shape = `[statistic] operator value, e.g. ${quoted(exampleFor(figure))}`;
  if (text === '') throw new InputError(`an empty threshold (write ${shape})`);
  const m = OPERATOR.exec(text);
  if (!m) throw new InputError(`${quoted(text)} is not a threshold: no comparison (write ${shape}; operators ${THRESHOLD_OPERATORS.join(', ')})`);
  const op = m[0];
  const stat = text.slice(0, m.index).trim();
  const rest = text.slice(m.index + op.length).trim();
  if (!(THRESHOLD_OPERATORS as readonly string[]).includes(op)) {
    const meant = op === '=<' ? '<=' : op === '=>' ? '>=' : null;
    throw new InputError(`operator "${op}" in ${quoted(text)} is not supported${meant ? `; did you mean "${meant}"?` : ''} (valid: ${THRESHOLD_OPERATORS.join(', ')})`);
  }
  if (rest === '') throw new InputError(`${quoted(text)} has no value after "${op}" (write ${shape})`);
  // "5 s" is one value; "5s < 10s" or "<< 5s" is not
  if (OPERATOR.test(rest) || /\s/.test(rest.replace(/^([\d._eE+-]+)\s+([^\d\s]\S*)$/, '$1$2'))) {
    throw new InputError(`${quoted(text)} is not a threshold: one operator and one value only (write ${shape})`);
  }
  if (/\s/.test(stat)) throw new InputError(`${quoted(text)} is not a threshold: "${stat}" before the operator should be one statistic (write ${shape})`);
  const resolved = statistic(figure, stat, text);
  return { figure, statistic: resolved, op: op as ThresholdOperator, value: value(figure, rest), valueText: rest.replace(/\s+/g, ''), expression: text };
}

/** Whether `actual op target` holds. NaN (a figure not measured) never does. */
export function compare(actual: number, op: ThresholdOperator, target: number): boolean {
  switch (op) {
    case '<':
      return actual < target;
    case '<=':
      return actual <= target;
    case '>':
      return actual > target;
    case '>=':
      return actual >= target;
  }
}
