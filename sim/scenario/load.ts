// Reads a scenario file into a resolved Scenario: YAML -> schema (schema.ts, validate.ts) ->
// the checks that span several keys -> events in time order. Every problem is an InputError
// located at file:line:col.
import { readInputFile } from './read-file.js';
import { dirname } from 'node:path';
import { isMap, LineCounter, parseDocument, type Node } from 'yaml';
import { InputError } from '../errors.js';
import { applyCalibration, INFRASTRUCTURE_SPEC, loadCalibration, writtenKeys, type Calibration } from './calibration.js';
import { scenarioSchema } from './schema.js';
import type { Activity, Interval, IntervalKey, Scenario } from './types.js';
import { formatCount, formatDuration } from './units.js';
import { Context, validate } from './validate.js';
import { applyOverrides, attributeToOverride, type Override } from './overrides.js';

const DAY = 86400;

/** What the schema yields: a Scenario before the defaults that depend on other keys. */
type Validated = Omit<Scenario, 'source' | 'activity' | 'intervals' | 'calibration'> & {
  activity: Omit<Activity, 'dormantAway'> & { dormantAway?: [number, number] };
  /** The included calibration file's path (the `calibration` key). */
  calibration?: string;
};

export interface LoadOptions {
  /**
   * Where the one-line note goes when the file has [low, likely, high] intervals (run, sweep and
   * estimate use the likely values): stderr by default; null for none (feedlab plan samples them).
   */
  onIntervalNote?: ((line: string) => void) | null;
  /** A calibration file given on the command line (--calibration): its keys win over the scenario's and its include's. */
  calibration?: string;
  /** --set key=value (and --duration), written over the file's keys before validation. */
  overrides?: readonly Override[];
}

export function loadScenario(path: string, options: LoadOptions = {}): Scenario {
  const sc = parseScenario(readInputFile(path, 'scenario file'), path, { calibration: options.calibration, overrides: options.overrides });
  const note = options.onIntervalNote === undefined ? (line: string) => process.stderr.write(`${line}\n`) : options.onIntervalNote;
  if (sc.intervals && note) note(intervalNote(sc));
  return sc;
}

/** The note for commands that take one value per input. */
export function intervalNote(sc: Scenario): string {
  const list = (sc.intervals ?? []).map((i) => `${i.path} ${i.likely}`).join(', ');
  return `feedlab: note: ${sc.source} gives intervals; using their likely values (${list}); feedlab plan samples them`;
}

/**
 * Parses scenario text; `source` names it in errors and anchors relative graph.file and calibration
 * paths. `calibration`: a calibration file from the command line, applied over everything else.
 */
export function parseScenario(text: string, source: string, options: { calibration?: string; overrides?: readonly Override[] } = {}): Scenario {
  const overrides = options.overrides ?? [];
  if (overrides.length === 0) return parseDocumentText(text, source, options.calibration, []);
  try {
    return parseDocumentText(text, source, options.calibration, overrides);
  } catch (err) {
    throw err instanceof InputError ? attributeToOverride(err, overrides) : err;
  }
}

function parseDocumentText(text: string, source: string, calibration: string | undefined, overrides: readonly Override[]): Scenario {
  const options = { calibration };
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const syntax = doc.errors[0];
  if (syntax) {
    const { line, col } = lineCounter.linePos(syntax.pos[0]);
    throw new InputError(`invalid YAML: ${syntax.message.replace(/\s+/g, ' ').trim()}`, `${source}:${line}:${col}`);
  }
  applyOverrides(doc, overrides);
  const ctx = new Context(doc, lineCounter, source, dirname(source), scenarioSchema);
  const { calibration: include, ...v } = validate(doc.contents ?? null, scenarioSchema, '', ctx) as Validated;
  // the included file's keys where the scenario writes none, then the command line's over both
  let applied: Calibration | undefined;
  if (include !== undefined) {
    applied = loadCalibration(include, ctx.where('calibration'));
    const root = doc.contents as Node | null;
    const written = writtenKeys(doc, isMap(root) ? (root.get('infrastructure', true) as Node | null) : null, INFRASTRUCTURE_SPEC);
    applyCalibration(v.infrastructure, applied, new Set(written.map((w) => w.path)));
  }
  if (options.calibration !== undefined) {
    applied = loadCalibration(options.calibration);
    applyCalibration(v.infrastructure, applied, new Set());
  }
  checkAcrossKeys(v, ctx);
  checkIntervals(v, ctx);
  const dormantDays = v.policy.dormantDays * DAY;
  const scenario: Scenario = {
    source,
    ...v,
    activity: {
      ...v.activity,
      // Dormant means unseen for dormantDays, so by default they have been away at least that long.
      dormantAway: v.activity.dormantAway ?? [dormantDays, Math.max(90 * DAY, dormantDays)],
    },
    // Array.prototype.sort is stable: events at the same time keep their file order.
    events: [...v.events].sort((a, b) => a.at - b.at),
  };
  if (ctx.intervals.length > 0) scenario.intervals = ctx.intervals.map((i) => ({ ...i }));
  if (applied) scenario.calibration = { ...applied.provenance };
  return scenario;
}

/**
 * The cross-key rules for the ends of intervals: a plan draws anything between low and high, so
 * each end must be a scenario the simulator accepts.
 */
function checkIntervals(v: Validated, ctx: Context): void {
  const of = (key: IntervalKey): Interval | undefined => ctx.intervals.find((i) => i.key === key);
  const g = v.graph;
  const population = of('population');
  const follows = of('avgFollows');
  const at = (i: Interval, message: string): never => {
    throw new InputError(`${i.path}: ${message}`, i.where);
  };
  if (g.kind === 'generate') {
    if (population && population.low < g.users) {
      at(population, `low ${formatCount(population.low)} is below graph.generate.users (${formatCount(g.users)}); the population is what the sampled graph stands for`);
    }
    if (follows && follows.high > g.maxFollows) at(follows, `high ${follows.high} is above graph.generate.maxFollows (${g.maxFollows}); a mean cannot exceed the cap`);
    if (follows && follows.high > g.users - 1) at(follows, `high ${follows.high} is more than the other users there are to follow (${g.users - 1})`);
    if (population) {
      g.celebrities.forEach((c, i) => {
        if (c.followers > 1 && c.followers > population.low) {
          ctx.fail(`graph.generate.celebrities[${i}].followers`, `${formatCount(c.followers)} is more than the population's low end (${formatCount(population.low)}); use a share <= 1 or a smaller count`);
        }
      });
    }
  } else if (follows) {
    at(follows, 'applies only to a generated graph (graph.file gives the follows)');
  }
}

/** Constraints between keys, which the per-key schema cannot express. */
function checkAcrossKeys(v: Validated, ctx: Context): void {
  const g = v.graph;
  if (g.kind === 'generate') {
    if (g.avgFollows > g.maxFollows) {
      ctx.fail('graph.generate.avgFollows', `${g.avgFollows} is above graph.generate.maxFollows (${g.maxFollows}); a mean cannot exceed the cap`);
    }
    if (g.avgFollows > g.users - 1) {
      ctx.fail('graph.generate.avgFollows', `${g.avgFollows} is more than the other users there are to follow (${g.users - 1})`);
    }
    if (v.population !== null && v.population < g.users) {
      ctx.fail('population', `${formatCount(v.population)} is below graph.generate.users (${formatCount(g.users)}); the population is what the sampled graph stands for`);
    }
    const population = v.population ?? g.users;
    g.celebrities.forEach((c, i) => {
      if (c.followers > population) {
        ctx.fail(`graph.generate.celebrities[${i}].followers`, `${formatCount(c.followers)} is more than the population (${formatCount(population)}); use a share <= 1 or a smaller count`);
      }
    });
  }
  v.events.forEach((e, i) => {
    if (e.at >= v.duration) {
      ctx.fail(`events[${i}].at`, `${formatDuration(e.at)} is not before the end of the run (duration ${formatDuration(v.duration)})`);
    }
    if (e.kind === 'cacheLoss' && e.shards > v.infrastructure.redisShards) {
      ctx.fail(`events[${i}].cacheLoss.shards`, `${e.shards} is more than infrastructure.redisShards (${v.infrastructure.redisShards})`);
    }
  });
  const processes = v.infrastructure.redisProcesses;
  if (processes !== null && processes > v.infrastructure.redisShards) {
    ctx.fail('infrastructure.redisProcesses', `${processes} is more than infrastructure.redisShards (${v.infrastructure.redisShards}); a process holds one shard or more`);
  }
  const large = v.infrastructure.largePostClass;
  if (large && large.workers >= v.infrastructure.fanoutWorkers) {
    ctx.fail('infrastructure.largePostClass.workers', `${large.workers} must be fewer than infrastructure.fanoutWorkers (${v.infrastructure.fanoutWorkers}); the large pool is carved out of them`);
  }
  if (v.policy.kind === 'adaptive' && v.policy.minThreshold > v.policy.threshold) {
    ctx.fail('policy.minThreshold', `${v.policy.minThreshold} is above policy.threshold (${v.policy.threshold}); adaptive only lowers the threshold`);
  }
}
