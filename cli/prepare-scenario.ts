// Shared by run, sweep, plan and replay: read the scenario, apply command-line overrides, build the graph and
// population with progress on stderr, and turn every domain error into a one-line input error.
import { loadScenario, type LoadOptions } from '../sim/scenario/load.js';
import { parseOverride, type Override } from '../sim/scenario/overrides.js';
import type { Scenario } from '../sim/scenario/types.js';
import type { FollowerGraph } from '../sim/graph/graph.js';
import { prepare, ScenarioError, type PreparedScenario } from '../sim/run-scenario.js';
import { scenarioGraphOnThreads } from '../sim/parallel/scenario-graph.js';
import { InputError } from './errors.js';
import { Progress } from './output.js';

/** --set and --duration as overrides of the scenario's keys, checked against its schema. */
export function overridesOf(values: { set?: string[]; duration?: string }): Override[] {
  const out = (values.set ?? []).map(parseOverride);
  if (values.duration !== undefined) out.push({ ...parseOverride(`duration=${values.duration}`), arg: `duration=${values.duration}` });
  return out;
}

/**
 * The scenario at `path` with the command's --seed, --calibration and --set / --duration applied
 * (the command line has already refused a missing or second scenario); `load` for the rest
 * (plan silences the note on intervals, which it samples).
 */
export function readScenario(
  path: string,
  values: { seed?: string; calibration?: string; set?: string[]; duration?: string },
  load: Pick<LoadOptions, 'onIntervalNote'> = {},
): Scenario {
  const sc = loadScenario(path, { ...load, calibration: values.calibration, overrides: overridesOf(values) });
  if (values.seed !== undefined) sc.seed = seedFlag(values.seed);
  return sc;
}

/** --seed: a whole number the simulation can hold exactly (a 20-digit seed was silently rounded). */
export function seedFlag(raw: string): number {
  const s = Number(raw);
  if (!/^\s*\d+\s*$/.test(raw) || !Number.isSafeInteger(s)) {
    throw new InputError(`--seed must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER} (2^53 - 1, held exactly), got "${raw}"`);
  }
  return s;
}

/** Domain errors (bad policy, impossible celebrity, bad graph parameters) become exit-2 input errors; anything else stays internal. */
export function asInputError<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw inputErrorOf(err);
  }
}

/** asInputError for work that resolves later (policies and checks on worker threads). */
export async function asInputErrorLater<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw inputErrorOf(err);
  }
}

function inputErrorOf(err: unknown): unknown {
  return err instanceof ScenarioError ? new InputError(err.message) : err;
}

/** The scenario's graph (on `threads` threads when it is large: the same graph), its progress shown. */
export async function graphWithProgress(sc: Scenario, showProgress: boolean, threads: number): Promise<FollowerGraph> {
  const progress = new Progress('graph', showProgress && sc.graph.kind === 'generate');
  const graph = await asInputErrorLater(() => scenarioGraphOnThreads(sc, threads, (f, d) => progress.update(f, d)));
  progress.done(`${graph.users} users, ${graph.edges} follows`);
  return graph;
}

/** The scenario's graph (graphWithProgress) and its population. */
export async function prepareWithProgress(sc: Scenario, showProgress: boolean, threads: number): Promise<PreparedScenario> {
  const graph = await graphWithProgress(sc, showProgress, threads);
  return asInputError(() => prepare(sc, graph));
}
