// The scenario schema: every key users may write, in one declarative tree. docs/scenario-reference.md
// is written from it (reference.ts); validate.ts walks it over the parsed YAML and load.ts adds the
// few checks that span several keys.
import { isAbsolute, join } from 'node:path';
import { parseDuration } from './units.js';
import type { Distribution, IdlePoint, IntervalKey, PagesPerSession, PlanSettings, ReplaySettings, ScenarioEvent } from './types.js';
import { InputError } from '../errors.js';
import { checkPolicySpec, PolicySpecError } from '../../core/fanout-policy.js';
import { DEFAULT_FANOUT_BATCH, DEFAULT_EVENT_CONCURRENCY, DEFAULT_FOLLOWER_PAGE, DEFAULT_PIPELINES } from '../../core/fanout-worker.js';
import { buildQuantiles, constantDistribution, QUANTILE_KEY } from './quantiles.js';
import {
  DEFAULT_BACKLOG_BOUND,
  DEFAULT_CELEBRITY_LIST_LENGTH,
  DEFAULT_CELEBRITY_THRESHOLD,
  DEFAULT_DORMANT_DAYS,
  DEFAULT_LEASE_DAYS,
  DEFAULT_MIN_THRESHOLD,
  DEFAULT_READER_CAP,
  DEFAULT_TIMELINE_CAP,
} from '../../core/timeline-rules.js';
import { parseThreshold, thresholdId, THRESHOLD_FIGURE_NAMES, THRESHOLD_FIGURES, type Threshold, type ThresholdFigureName } from './thresholds.js';

/** Handed to `build` hooks so they can refuse a value at the right place. */
/** The longest run the simulator keeps minute by minute (see duration below). */
export const MAX_DURATION_SECONDS = 366 * 86_400;

/** A policy in a list (sweep.policies, replay.policies), checked where it is written: a typo there had no file:line, and run never read it. */
const POLICY_ITEM = {
  type: 'string',
  description: 'a policy, e.g. threshold:25000',
  build: (spec: string, at: At) => {
    try {
      checkPolicySpec(spec);
    } catch (err) {
      if (err instanceof PolicySpecError) at.fail(err.message);
      throw err;
    }
    return spec;
  },
} as const;

export interface At {
  /** Throws an InputError at this key (or at `sub`, a key or index below it). */
  fail(message: string, sub?: string | number): never;
  /** Directory of the scenario file: relative paths inside it are resolved against this. */
  readonly baseDir: string;
}

interface Common {
  description: string;
  required?: boolean;
  /**
   * What an absent key means, written as a user would write it (`'0.3ms'`, `{ generate: {} }`);
   * it is validated like user input. Absent objects without a default get their fields' defaults.
   */
  default?: unknown;
  /** Accepts `none` (or an empty value) and resolves it to null before `build`. */
  none?: boolean;
  /** The key only applies when a sibling has one of these values (sigma only for lognormal). */
  onlyWhen?: { key: string; values: readonly string[] };
  /** Turns the validated value into its resolved shape (e.g. a map of ranges into buckets). */
  build?: (value: any, at: At) => unknown;
}

/** Bounds: min/max inclusive, above/below exclusive. */
export interface Range {
  min?: number;
  max?: number;
  above?: number;
  below?: number;
  integer?: boolean;
}

export type NumericType = 'number' | 'count' | 'duration' | 'size' | 'days';

export type Spec =
  | (Common & { type: 'string'; oneOf?: readonly string[]; allowEmpty?: boolean })
  | (Common & { type: 'boolean' })
  /** `interval`: the value may also be written as [low, likely, high] (feedlab plan samples it; run uses likely). */
  | (Common & Range & { type: NumericType; interval?: IntervalKey })
  /** `keysAre` names what the keys are in messages about an unknown one ("unknown figure; did you mean ..."). */
  | (Common & { type: 'object'; fields: Readonly<Record<string, Spec>>; exactlyOne?: readonly string[]; keysAre?: string })
  | (Common & { type: 'list'; items: Spec; minItems?: number; length?: number })
  /** A map whose keys follow a pattern (pagesPerSession's "2-5"); validates to [key, value] pairs. */
  | (Common & { type: 'dict'; keyPattern: RegExp; keyDescription: string; values: Spec })
  /** A plain value or a map, told apart by the YAML node (postsPerUserPerDay: 2 or { dist: ... }). */
  | (Common & { type: 'either'; scalar: Spec; map: Spec });

export type ObjectSpec = Extract<Spec, { type: 'object' }>;

const duration = (description: string, dflt: string | undefined, range: Range = { min: 0 }): Spec => ({
  type: 'duration',
  description,
  ...(dflt === undefined ? { required: true } : { default: dflt }),
  ...range,
});
const whole = (description: string, dflt: number | undefined, range: Range = { min: 1 }): Spec => ({
  type: 'count',
  integer: true,
  description,
  ...(dflt === undefined ? { required: true } : { default: dflt }),
  ...range,
});

/** "1" or "2-5": page counts of a session. */
function pageBuckets(entries: [string, number][], at: At): PagesPerSession {
  const buckets = entries.map(([key, p]) => {
    const [min, max = min] = key.split('-').map(Number);
    if (min < 1 || max < min) at.fail(`"${key}" is not a valid page range (write "N" or "A-B" with 1 <= A <= B)`, key);
    return { key, min, max, p };
  });
  buckets.sort((a, b) => a.min - b.min);
  for (let i = 1; i < buckets.length; i++) {
    const [prev, cur] = [buckets[i - 1], buckets[i]];
    if (cur.min <= prev.max) at.fail(`"${cur.key}" overlaps "${prev.key}" (page ranges must not overlap)`, cur.key);
  }
  const sum = buckets.reduce((s, b) => s + b.p, 0);
  // 1e-6 lets people write thirds (0.333333) without the sampler seeing a real gap.
  if (Math.abs(sum - 1) > 1e-6) {
    at.fail(`probabilities sum to ${Number(sum.toPrecision(6))}, they must sum to 1 (within 1e-6)`);
  }
  return { buckets: buckets.map(({ min, max, p }) => ({ min, max, p })) };
}

/** An idle time as a key: a positive duration with its unit. */
const IDLE_TIME_KEY = /^\d+(\.\d+)?(us|ms|s)$/;

/** { idle time: median } as points ascending in idle time, each idle time once; none: null. */
function idleCurve(entries: [string, number][] | null, at: At): IdlePoint[] | null {
  if (entries === null) return null;
  const points = entries.map(([key, value]) => {
    const gap = parseDuration(key);
    if (!(gap > 0)) at.fail(`"${key}" is not a valid idle time (a duration above 0)`, key);
    return { key, gap, value };
  });
  points.sort((a, b) => a.gap - b.gap);
  for (let i = 1; i < points.length; i++) if (points[i].gap === points[i - 1].gap) at.fail(`"${points[i].key}" is the same idle time as "${points[i - 1].key}"`, points[i].key);
  return points.map(({ gap, value }) => ({ gap, value }));
}

/** A stage of the reference worker's event by its idle time before it (sim/model/idle-wake.ts). */
const idleCurveSpec = (description: string, value: string): Spec => ({
  type: 'dict',
  description,
  default: 'none',
  none: true,
  keyPattern: IDLE_TIME_KEY,
  keyDescription: 'idle times (14ms, 0.2s)',
  values: { type: 'duration', description: value, min: 0 },
  build: idleCurve,
});

const window = (dflt: string) => duration('how long the event lasts', dflt, { above: 0 });

/** A service out of the stack's reach for a window, through the replay's own proxy (cli/replay/fault-proxy.ts). */
const outage = (service: string): Spec => ({
  type: 'object',
  description: `${service} out of reach of the API and the workers for a window, through a proxy of the replay's own (replay; the simulator does not model it)`,
  fields: {
    window: window('15s'),
    mode: {
      type: 'string',
      oneOf: ['reset', 'hang'],
      description: 'reset: every connection reset and new ones refused (a crash); hang: connections stay open and nothing flows (a partition)',
      default: 'reset',
    },
  },
});

const EVENT_KINDS = ['celebrityBurst', 'breakingNews', 'coldStartStorm', 'cacheLoss', 'workerCrash', 'apiCrash', 'eventLogLoss', 'redisFlush', 'redisOutage', 'postgresOutage'] as const;

const event: Spec = {
  type: 'object',
  description: 'something that happens at a simulated time',
  exactlyOne: EVENT_KINDS,
  fields: {
    at: duration('when the event fires, from the start of the run (before the scenario duration)', undefined),
    celebrityBurst: {
      type: 'object',
      description: 'the graph celebrities (largest first) each post within the window',
      fields: {
        accounts: whole('how many celebrity accounts post', 10),
        window: window('60s'),
        postsPerAccount: whole('posts each account makes in the window', 1),
      },
    },
    breakingNews: {
      type: 'object',
      description: 'the whole post rate is multiplied for the window',
      fields: {
        multiplier: { type: 'number', description: 'post rate multiplier', required: true, above: 0 },
        window: window('5m'),
      },
    },
    coldStartStorm: {
      type: 'object',
      description: 'a share of the dormant users return within the window (timeline rebuilds)',
      fields: {
        share: { type: 'number', description: 'share of dormant users returning', required: true, min: 0, max: 1 },
        window: window('10m'),
      },
    },
    cacheLoss: {
      type: 'object',
      description: 'the timelines on this many Redis shards vanish',
      fields: { shards: whole('Redis shards lost (at most infrastructure.redisShards)', 1) },
    },
    workerCrash: {
      type: 'object',
      description: 'fan-out workers are killed (SIGKILL, mid-batch) and started again after a while (replay; the simulator does not model it)',
      fields: {
        workers: { type: 'count', integer: true, description: 'how many workers are killed (default: every one)', min: 1 },
        down: duration('how long they stay down before they are started again', '30s', { above: 0 }),
      },
    },
    apiCrash: {
      type: 'object',
      description: 'the API process (with its outbox relay) is killed (SIGKILL) and started again on its port after a while (replay; the simulator does not model it)',
      fields: { down: duration('how long it stays down before it is started again', '30s', { above: 0 }) },
    },
    eventLogLoss: {
      type: 'object',
      description: "the event log's keys vanish, the timelines stay (a failover to a replica without them; replay; the simulator does not model it)",
      fields: {},
    },
    redisFlush: {
      type: 'object',
      description: 'every cache key and the event log vanish at once (a Redis restarted empty; the simulator models the cache part as a loss of every shard)',
      fields: {},
    },
    redisOutage: outage('Redis'),
    postgresOutage: outage('Postgres'),
  },
  build: (v: Record<string, unknown> & { at: number }): ScenarioEvent => {
    const kind = EVENT_KINDS.find((k) => k in v)!;
    return { at: v.at, kind, ...(v[kind] as object) } as ScenarioEvent;
  },
};

/** What `feedlab plan` assumes when the scenario has no plan section (or leaves a key out). */
export const PLAN_DEFAULTS: Readonly<PlanSettings> = {
  redisNodeMemory: 64e9,
  replicas: 1,
  fragmentation: 1.2,
  postBodyBytes: 600,
  postCacheTtl: 86400,
  staffingQ: 2.375,
};

/** `slo.thresholds.<figure>`: a list of expressions such as "p99 < 5s", each parsed where it is written. */
function thresholdList(figure: ThresholdFigureName): Spec {
  return {
    type: 'list',
    description: `thresholds on the ${THRESHOLD_FIGURES[figure].description}`,
    items: {
      type: 'string',
      description: 'a threshold such as "p99 < 5s"',
      build: (text: string, at: At): Threshold => {
        try {
          return parseThreshold(figure, text);
        } catch (err) {
          if (err instanceof InputError) at.fail(err.message);
          throw err;
        }
      },
    },
    build: (list: Threshold[], at: At) => {
      list.forEach((t, i) => {
        const first = list.findIndex((o) => thresholdId(o) === thresholdId(t));
        if (first < i) at.fail(`"${t.expression}" repeats item ${first + 1} (${thresholdId(t)})`, i);
      });
      return list;
    },
  };
}

const thresholds: Spec = {
  type: 'object',
  description: 'k6-style thresholds on figures of the result, e.g. fanoutLag: ["p99.9 < 30s"]; a failed one exits 1; none (the default) for none',
  keysAre: 'figure',
  none: true,
  default: 'none',
  fields: Object.fromEntries(THRESHOLD_FIGURE_NAMES.map((f) => [f, thresholdList(f)])),
  // one list in the figures' order; absent when there are none, so such scenarios resolve as before
  build: (v: Partial<Record<ThresholdFigureName, Threshold[]>> | null): Threshold[] | undefined => {
    const all = THRESHOLD_FIGURE_NAMES.flatMap((f) => v?.[f] ?? []);
    return all.length > 0 ? all : undefined;
  },
};

/**
 * A distribution as quantiles ({ min: 1ms, p50: 6ms, p99: 35ms, max: 100ms }) or one plain value
 * for a constant; durations unless `unit: 'number'` (a plain ratio).
 */
function latencyDistribution(description: string, dflt: unknown, o: { unit?: 'duration' | 'number' } = {}): Spec {
  const type = o.unit ?? 'duration';
  return {
    type: 'either',
    description,
    default: dflt,
    scalar: { type, description: 'every draw the same', min: 0, build: (v: number) => constantDistribution(v) },
    map: {
      type: 'dict',
      description: 'quantiles',
      keyPattern: QUANTILE_KEY,
      keyDescription: 'quantiles (min, p50, p99.9, max)',
      values: { type, description: 'the value at that quantile', min: 0 },
      build: buildQuantiles,
    },
  };
}

const hourOfDay = (description: string, dflt: number): Spec => ({ type: 'number', description, default: dflt, min: 0, below: 24 });

export const scenarioSchema: ObjectSpec = {
  type: 'object',
  description: 'a feedlab scenario',
  fields: {
    name: { type: 'string', description: "the scenario's name, e.g. name: celebrity-burst", required: true },
    description: { type: 'string', description: 'one line for reports', default: '', allowEmpty: true },
    seed: whole('every random draw follows from it', 42, { min: 0, max: Number.MAX_SAFE_INTEGER }),
    // The run keeps two per-minute histograms (5.6 KB a simulated minute): a year is 3 GB of them.
    // 10000d failed after minutes of preparation with "Invalid typed array length" (exit 70).
    duration: duration('simulated time', '1d', { above: 0, max: MAX_DURATION_SECONDS }),
    population: {
      type: 'count',
      integer: true,
      description: "users the results stand for; none means the graph's own users",
      min: 1,
      none: true,
      default: 'none',
      interval: 'population',
    },
    graph: {
      type: 'object',
      description: 'the follower graph: exactly one of generate / file',
      exactlyOne: ['generate', 'file'],
      default: { generate: {} },
      fields: {
        generate: {
          type: 'object',
          description: 'a generated power-law follower graph',
          fields: {
            // Account ids are 32-bit (Uint32Array rows in the graph).
            users: whole('accounts in the sampled graph; population / users is the scale factor', 100000, { min: 2, max: 2 ** 32 - 1 }),
            avgFollows: { type: 'count', description: 'mean accounts each user follows', default: 200, above: 0, interval: 'avgFollows' },
            alpha: { type: 'number', description: 'tail exponent of follower counts', default: 2.1, min: 1.5, max: 4 },
            maxFollows: whole('most accounts one user follows', 5000),
            followsSigma: { type: 'number', description: 'lognormal sigma of followee counts', default: 1.0, min: 0, max: 10 },
            celebrities: {
              type: 'list',
              description: 'accounts added on top of the power law',
              default: [],
              items: {
                type: 'object',
                description: 'a group of celebrity accounts',
                fields: {
                  count: whole('how many such accounts', undefined),
                  followers: {
                    type: 'count',
                    description: 'followers each: <= 1 a share of the population, > 1 an absolute count',
                    required: true,
                    above: 0,
                  },
                  name: { type: 'string', description: 'name prefix: accounts are name-1, name-2, ...' },
                },
              },
            },
          },
        },
        file: {
          type: 'string',
          description: "a saved or imported graph, relative to the scenario file's directory",
          build: (p: string, at: At) => (isAbsolute(p) ? p : join(at.baseDir, p)),
        },
      },
      build: (v: { generate?: object; file?: string }) =>
        v.file !== undefined ? { kind: 'file', path: v.file } : { kind: 'generate', ...v.generate },
    },
    activity: {
      type: 'object',
      description: 'what users do',
      fields: {
        postsPerUserPerDay: {
          type: 'either',
          description: 'posts per user per day: a plain number (the same for all) or a distribution',
          default: 2,
          scalar: {
            type: 'number',
            description: 'the same rate for every user',
            min: 0,
            interval: 'postsPerUserPerDay',
            build: (mean: number): Distribution => ({ dist: 'constant', mean }),
          },
          map: {
            type: 'object',
            description: 'per-user rates drawn from a distribution',
            fields: {
              dist: {
                type: 'string',
                description: 'the distribution of per-user rates',
                oneOf: ['constant', 'lognormal', 'exponential', 'pareto'],
                default: 'constant',
              },
              mean: { type: 'number', description: 'mean posts per user per day', required: true, above: 0, interval: 'postsPerUserPerDay' },
              sigma: {
                type: 'number',
                description: 'lognormal shape',
                default: 1,
                above: 0,
                onlyWhen: { key: 'dist', values: ['lognormal'] },
              },
              alpha: {
                type: 'number',
                description: 'pareto tail exponent (> 1 for a finite mean)',
                required: true,
                above: 1,
                onlyWhen: { key: 'dist', values: ['pareto'] },
              },
            },
          },
        },
        sessionsPerUserPerDay: { type: 'count', description: 'feed sessions per active user per day', default: 5, interval: 'sessionsPerUserPerDay' },
        pagesPerSession: {
          type: 'either',
          description: 'pages read per session: a number, or a map of "N" / "A-B" to probabilities',
          default: { '1': 0.7, '2-5': 0.25, '6-40': 0.05 },
          scalar: {
            type: 'count',
            integer: true,
            min: 1,
            description: 'every session reads this many pages',
            build: (n: number): PagesPerSession => ({ buckets: [{ min: n, max: n, p: 1 }] }),
          },
          map: {
            type: 'dict',
            description: 'probability of each page count or range',
            keyPattern: /^\d+(-\d+)?$/,
            keyDescription: 'page counts "N" or ranges "A-B"',
            values: { type: 'number', description: 'probability', min: 0, max: 1 },
            build: pageBuckets,
          },
        },
        pageSize: whole('posts per feed page', 20, { min: 1, max: 200 }),
        diurnal: {
          type: 'object',
          description: 'daily cycle of activity, or none for a flat rate',
          none: true,
          fields: {
            peakFactor: { type: 'number', description: 'peak rate / mean rate', default: 3, min: 1, interval: 'peakFactor' },
            peakHourUtc: hourOfDay('hour of the daily peak (UTC)', 20),
            startHourUtc: hourOfDay('hour of day the run starts at (UTC)', 0),
          },
        },
        dormantShare: {
          type: 'number',
          description: 'users not seen within policy.dormantDays',
          default: 0.6,
          min: 0,
          max: 1,
          interval: 'dormantShare',
        },
        dormantAway: {
          type: 'list',
          description: 'how long dormant users have been away, [min, max]; default [policy.dormantDays, 90d]',
          length: 2,
          items: duration('time away', undefined, { above: 0 }),
          build: ([lo, hi]: [number, number], at: At) => {
            if (lo > hi) at.fail('min is above max (write [min, max])');
            return [lo, hi];
          },
        },
      },
    },
    events: { type: 'list', description: 'events fired at simulated times', default: [], items: event },
    calibration: {
      type: 'string',
      description:
        "a calibration file written by `feedlab calibrate`, relative to the scenario file's directory: its measured infrastructure keys apply where this file writes none of its own (--calibration FILE on the command line wins over both)",
      build: (p: string, at: At) => (isAbsolute(p) ? p : join(at.baseDir, p)),
    },
    infrastructure: {
      type: 'object',
      description: 'the fan-out system',
      fields: {
        fanoutWorkers: whole('fan-out workers', 50),
        writesPerSecondPerWorker: {
          type: 'count',
          description: 'timeline writes one worker sustains (pipelined)',
          default: 5000,
          above: 0,
        },
        batchSize: whole('followers per pipeline', DEFAULT_FANOUT_BATCH),
        redisShards: whole('Redis shards holding timelines', 16),
        redisProcesses: {
          type: 'count',
          integer: true,
          description: 'none (the default): a Redis process each shard; N: the shards share N processes, each serving one command at a time (a replay on one machine runs one)',
          min: 1,
          none: true,
          default: 'none',
        },
        partitions: whole('event-log partitions, keyed by author', 64),
        postgresConnections: whole('Postgres connections serving timeline rebuilds, one rebuild at a time each', 100),
        costs: {
          type: 'object',
          description: 'service times of the operations the model charges for',
          fields: {
            rtt: duration('network round trip to Redis', '0.3ms'),
            zadd: duration('one ZADD in a pipeline', '2us'),
            zrange: duration('one ZRANGE of a page', '15us'),
            zrangePerEntry: duration("each entry a page's list read returns (zrange is then an empty list's read)", '0s'),
            mgetPerKey: duration('hydrating one post in an MGET', '2us'),
            rebuild: duration('rebuilding a missing timeline from Postgres', '40ms'),
            expand: duration("reading an author's follower list to expand a post (per page of followers)", '1ms'),
            expandPerFollower: duration('reading one more follower of that list', '2us'),
            eventStatements: latencyDistribution("the worker's statement per post event before its fan-out (the author's follower count): one duration, or quantiles drawn per event", '2ms'),
            eventStatementsByIdle: idleCurveSpec(
              "the worker's median statement after each idle time before an event, e.g. { 14ms: 0.81ms, 56ms: 0.79ms, 225ms: 1.35ms }: a drawn statement is moved by the difference between its worker's idle time and eventStatementsGap on this curve (linear in log2 of the idle time, held at the ends; the reference worker); none (the default): not moved",
              'the median statement after that idle time',
            ),
            eventFirstPageByIdle: idleCurveSpec(
              "the worker's median first follower page of a small post after each idle time before its event, e.g. { 56ms: 0.8ms, 225ms: 1.3ms }: the page (expand + expandPerFollower) is moved by the difference between its worker's idle time and eventStatementsGap on this curve (the reference worker); none (the default): not moved",
              'the median first page after that idle time',
            ),
            eventWritesByIdle: idleCurveSpec(
              "the worker's median timeline writes of a small post (one batch) after each idle time before its event, e.g. { 56ms: 1.1ms, 225ms: 1.2ms }: a post's writes take the difference between its worker's idle time and eventStatementsGap on this curve once, before its first batch (the reference worker); none (the default): not moved",
              'the median writes after that idle time',
            ),
            eventWritesSpread: latencyDistribution(
              "a post's timeline writes over what the writes line gives it, drawn per post: 1, or quantiles of the ratio with their min, e.g. { min: 0.7, p50: 1, p90: 1.4, max: 2.3 } (calibrate: its running worker's posts of 30-1,000 followers, each post's whole writes over its size's median); scales the post's per-follower writes (writesPerSecondPerWorker), not its batches' round trips (rtt + batch), so a small post's draw is diluted",
              1,
              { unit: 'number' },
            ),
            eventStatementsGap: duration("the worker's idle time before an event at which eventStatements, expand and the writes were measured (the typical gap of calibrate's hop posts): the idle curves' reference point", '100ms', { above: 0 }),
            pickup: latencyDistribution('a post event entering the log to an idle worker starting on it (a blocked read woken): one duration, or quantiles drawn per event', '0.5ms'),
            batch: duration('one pipelined batch of timeline writes beyond the round trip and its writes', '0s'),
          },
        },
        worker: {
          type: 'object',
          description: "the fan-out worker's shape (the reference worker's defaults)",
          fields: {
            splitPosts: {
              type: 'boolean',
              description: "true (the default): a post's batches are shared by the whole fleet, as the documents' fan-out services do; false: one worker writes a whole post, as the reference worker does",
              default: true,
            },
            pipelines: whole('pipelined batches in flight per post', DEFAULT_PIPELINES, { min: 1, max: 64 }),
            followerPage: whole('followers read from Postgres per page while expanding a post', DEFAULT_FOLLOWER_PAGE, { min: 1, max: 100_000 }),
            eventConcurrency: whole("authors' events one worker handles at once within a batch it took (splitPosts: false)", DEFAULT_EVENT_CONCURRENCY, { min: 1, max: 256 }),
          },
        },
        postToLog: latencyDistribution(
          "from a post's commit to a worker taking its event: the outbox relay and the event log (default: the reference server on a quiet machine)",
          { min: '1ms', p50: '6ms', p90: '12ms', p99: '35ms', max: '100ms' },
        ),
        api: {
          type: 'object',
          description: 'the API tier that serves home-feed pages and posts; none to leave it out (reads cost only their Redis work)',
          none: true,
          fields: {
            instances: {
              type: 'count',
              integer: true,
              description: 'API processes; none (the default): as many as are 50% busy at the peak read rate',
              min: 1,
              none: true,
              default: 'none',
            },
            coresPerInstance: whole('cores each API process serves requests on', 1, { min: 1, max: 1024 }),
            cpuPerRead: duration('CPU of one home-feed page beyond its lists and posts (parse, auth, merge, JSON)', '300us'),
            cpuPerList: duration('CPU per merged list of a page (timeline, own list, each pulled author)', '20us'),
            cpuPerListEntry: duration("CPU per entry a merged list returns (cpuPerList is then an empty list's)", '0s'),
            cpuPerPost: duration('CPU per hydrated post of a page', '10us'),
            cpuPerWrite: duration('CPU of accepting one post (POST, its transaction)', '500us'),
            postListed: latencyDistribution(
              "from a post's creation to its author's recent list holding it: the transaction's commit and the list add, the handler's CPU included (a pulled post is delivered from then; default: the reference server on a quiet machine)",
              // feedlab calibrate here, 2026-12-04: 750 posts, p50 2.8 ms, p90 5.8, p99 11.1, max 32.8
              { min: '1ms', p50: '3ms', p90: '6ms', p99: '11ms', max: '33ms' },
            ),
            network: duration("the client's round trip to the API", '0.2ms'),
            idleOverhead: duration(
              'time a request loses when it finds the API idle (waking the process, cold caches): all of it at no load, none at full load',
              '0s',
            ),
            idleCpu: duration(
              "the part of idleOverhead that is the API's own CPU: it holds the core, so requests queue behind it (a larger value counts as idleOverhead; the rest is waiting)",
              '0s',
            ),
            backgroundCpu: {
              type: 'number',
              description: "cores each API process keeps busy with no request at all (its timers, the outbox relay's polls): counted in its CPU and utilisation",
              default: 0,
              min: 0,
              max: 1,
            },
            spread: latencyDistribution('service time over its mean, as quantiles (1: every request the same)', 1, { unit: 'number' }),
          },
        },
        cores: {
          type: 'count',
          integer: true,
          description: 'none (the default): every service has cores of its own; N: API, workers, Redis and Postgres share N cores (a replay on one machine does)',
          min: 1,
          none: true,
          default: 'none',
        },
        largePostClass: {
          type: 'object',
          description: 'posts by authors with more followers go to their own worker pool; none for one pool',
          none: true,
          default: 'none',
          fields: {
            followers: whole('authors with more followers than this are large', undefined),
            workers: whole('workers of the large pool (fewer than fanoutWorkers)', undefined),
          },
        },
      },
    },
    policy: {
      type: 'object',
      description: 'the fan-out policy',
      fields: {
        kind: {
          type: 'string',
          description: 'fan-out policy',
          oneOf: ['push', 'pull', 'threshold', 'rate', 'reader-cap', 'adaptive'],
          default: 'threshold',
        },
        threshold: whole("pull when an author's followers > threshold", DEFAULT_CELEBRITY_THRESHOLD, { min: 0 }),
        skipDormant: { type: 'boolean', description: 'skip dormant followers on fan-out', default: true },
        // the simulator keeps lengths in 16-bit arrays
        timelineCap: whole('post ids kept per timeline', DEFAULT_TIMELINE_CAP, { min: 1, max: 65535 }),
        leaseDays: { type: 'days', description: 'timeline TTL, in days or a duration', default: DEFAULT_LEASE_DAYS, above: 0 },
        dormantDays: { type: 'days', description: 'unseen this long = dormant, in days or a duration', default: DEFAULT_DORMANT_DAYS, above: 0 },
        celebrityListLength: whole("posts kept in a celebrity's recent-post list", DEFAULT_CELEBRITY_LIST_LENGTH, { min: 1, max: 65535 }),
        readerCap: whole('reader-cap: deliveries kept for readers following more than this', DEFAULT_READER_CAP),
        backlogBound: {
          type: 'count',
          description: 'adaptive: lower the threshold while queued writes exceed this',
          default: DEFAULT_BACKLOG_BOUND,
          above: 0,
        },
        minThreshold: whole('adaptive: the threshold never goes below this', DEFAULT_MIN_THRESHOLD, { min: 0 }),
      },
    },
    slo: {
      type: 'object',
      description: 'service-level objectives the run is checked against',
      fields: {
        fanoutLagP99: duration('p99 time from post to follower timelines', '5s', { above: 0 }),
        readP99: duration('p99 home-feed read latency', '100ms', { above: 0 }),
        redisMemory: {
          type: 'size',
          description: 'Redis memory budget, or none',
          none: true,
          default: 'none',
          above: 0,
          build: (bytes: number | null) => bytes ?? Infinity,
        },
        thresholds,
      },
    },
    plan: {
      type: 'object',
      description: 'what `feedlab plan` assumes beyond the simulated system; none (the default) means every default',
      none: true,
      default: 'none',
      fields: {
        redisNodeMemory: { type: 'size', description: 'usable memory of one Redis node', default: PLAN_DEFAULTS.redisNodeMemory, above: 0 },
        replicas: whole('replicas per Redis shard', PLAN_DEFAULTS.replicas, { min: 0, max: 10 }),
        fragmentation: {
          type: 'number',
          description: 'RSS over used_memory allowed for allocator fragmentation (mem_fragmentation_ratio)',
          default: PLAN_DEFAULTS.fragmentation,
          min: 1,
          max: 3,
        },
        postBodyBytes: { type: 'size', description: 'one post body in the hydration cache, key and overhead included', default: PLAN_DEFAULTS.postBodyBytes, above: 0 },
        postCacheTtl: duration('how long post bodies stay in the hydration cache', `${PLAN_DEFAULTS.postCacheTtl}s`, { min: 0 }),
        staffingQ: {
          type: 'number',
          description: 'square-root staffing factor: 2.375 lets ~1% of requests wait, 1 about 30%',
          default: PLAN_DEFAULTS.staffingQ,
          min: 0,
          max: 5,
        },
      },
      // absent stays absent, so scenarios without a plan section resolve exactly as before
      build: (v: PlanSettings | null) => v ?? undefined,
    },
    replay: {
      type: 'object',
      description: 'how `feedlab replay` maps the scenario onto one machine\'s live stack; none (the default) means every default',
      none: true,
      default: 'none',
      fields: {
        users: { type: 'count', integer: true, description: 'accounts of the graph loaded into Postgres (default: graph.generate.users)', min: 2, max: 2 ** 31 - 1 },
        timeScale: { type: 'number', description: 'simulated seconds per wall second (30: 2 h in 4 min)', default: 1, above: 0, max: 1e6 },
        workers: { type: 'count', integer: true, description: 'fan-out worker processes started in self-contained mode (default: infrastructure.fanoutWorkers, capped)', min: 1, max: 256 },
        warm: { type: 'boolean', description: 'timelines and followee sets warm at the start, as the simulator assumes', default: true },
        policies: {
          type: 'list',
          description: 'a live sweep: the policies replayed in turn when the command line names none',
          minItems: 1,
          items: POLICY_ITEM,
        },
      },
      // absent stays absent (replay fills its defaults from the scenario, see sim/replay/mapping.ts)
      build: (v: { users?: number; timeScale: number; workers?: number; warm: boolean; policies?: string[] } | null): ReplaySettings | undefined =>
        v ? { users: v.users ?? null, timeScale: v.timeScale, workers: v.workers ?? null, warm: v.warm, policies: v.policies ?? null } : undefined,
    },
    sweep: {
      type: 'object',
      description: 'what `feedlab sweep` runs when --policies is not given',
      fields: {
        policies: {
          type: 'list',
          description: 'policies to compare, e.g. push, pull, threshold:25000',
          minItems: 1,
          default: ['push', 'pull', 'threshold:10000', 'threshold:25000', 'threshold:50000'],
          items: POLICY_ITEM,
        },
      },
    },
  },
};
