// Reads a scenario file into a resolved Scenario: YAML -> schema (schema.ts, validate.ts) ->
// the checks that span several keys -> events in time order. Every problem is an InputError
// located at file:line:col.
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { InputError } from '../errors.js';
import { scenarioSchema } from './schema.js';
import type { Activity, Scenario } from './types.js';
import { formatCount, formatDuration } from './units.js';
import { Context, validate } from './validate.js';

const DAY = 86400;

/** What the schema yields: a Scenario before the defaults that depend on other keys. */
type Validated = Omit<Scenario, 'source' | 'activity'> & {
  activity: Omit<Activity, 'dormantAway'> & { dormantAway?: [number, number] };
};

export function loadScenario(path: string): Scenario {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (err as Error).message;
    throw new InputError(`cannot read scenario file "${path}": ${why}`);
  }
  return parseScenario(text, path);
}

/** Parses scenario text; `source` names it in errors and anchors relative graph.file paths. */
export function parseScenario(text: string, source: string): Scenario {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const syntax = doc.errors[0];
  if (syntax) {
    const { line, col } = lineCounter.linePos(syntax.pos[0]);
    throw new InputError(`invalid YAML: ${syntax.message.replace(/\s+/g, ' ').trim()}`, `${source}:${line}:${col}`);
  }
  const ctx = new Context(doc, lineCounter, source, dirname(source), scenarioSchema);
  const v = validate(doc.contents ?? null, scenarioSchema, '', ctx) as Validated;
  checkAcrossKeys(v, ctx);
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
  return scenario;
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
  const large = v.infrastructure.largePostClass;
  if (large && large.workers >= v.infrastructure.fanoutWorkers) {
    ctx.fail('infrastructure.largePostClass.workers', `${large.workers} must be fewer than infrastructure.fanoutWorkers (${v.infrastructure.fanoutWorkers}); the large pool is carved out of them`);
  }
  if (v.policy.kind === 'adaptive' && v.policy.minThreshold > v.policy.threshold) {
    ctx.fail('policy.minThreshold', `${v.policy.minThreshold} is above policy.threshold (${v.policy.threshold}); adaptive only lowers the threshold`);
  }
}
