// From a scenario to result documents: build (or load) the graph once, the population once, and
// simulate each fan-out policy asked for over them.
import { parsePolicy, PolicySpecError, type FanoutPolicy } from '../core/fanout-policy.js';
import { loadGraph } from './graph/file.js';
import { generateGraph } from './graph/generate.js';
import type { FollowerGraph } from './graph/graph.js';
import { buildPopulation, type Population } from './model/population.js';
import { simulate } from './model/simulation.js';
import { buildResult, type RunResult } from './result.js';
import type { Scenario } from './scenario/types.js';

export type ProgressFn = (fraction: number, detail: string) => void;

export class ScenarioError extends Error {}

/** The scenario's graph: generated from its parameters, or read from its file. */
export function scenarioGraph(sc: Scenario, onProgress?: ProgressFn): FollowerGraph {
  if (sc.graph.kind === 'file') return loadGraph(sc.graph.path);
  const gen = sc.graph;
  const scale = sc.population ? sc.population / gen.users : 1;
  const celebrities = gen.celebrities.map((c) => {
    // a share stays a share; an absolute count is at population scale, so the sample holds count/scale
    const followers = c.followers <= 1 ? c.followers : c.followers / scale;
    if (c.followers > 1 && followers > gen.users - 1) {
      throw new ScenarioError(
        `${sc.source}: graph.generate.celebrities: ${c.followers} followers is ${Math.round(followers)} sampled users at scale ${scale}, more than the ${gen.users - 1} there are`,
      );
    }
    return { count: c.count, followers: c.followers <= 1 ? c.followers : Math.max(2, Math.round(followers)), name: c.name };
  });
  return generateGraph(
    { users: gen.users, avgFollows: gen.avgFollows, alpha: gen.alpha, maxFollows: gen.maxFollows, followsSigma: gen.followsSigma, seed: sc.seed, celebrities },
    onProgress,
  );
}

/** The scenario's own policy section as a core policy. */
export function basePolicy(sc: Scenario): FanoutPolicy {
  const p = sc.policy;
  return {
    kind: p.kind,
    threshold: p.threshold,
    skipDormant: p.skipDormant,
    readerCap: p.readerCap,
    backlogBound: p.backlogBound,
    minThreshold: p.minThreshold,
  };
}

/** A policy spec from the command line or a sweep list, on top of the scenario's settings. */
export function policyFor(sc: Scenario, spec?: string): FanoutPolicy {
  const base = basePolicy(sc);
  if (spec === undefined) return base;
  try {
    return parsePolicy(spec, base);
  } catch (err) {
    if (err instanceof PolicySpecError) throw new ScenarioError(err.message);
    throw err;
  }
}

export interface PreparedScenario {
  scenario: Scenario;
  graph: FollowerGraph;
  population: Population;
}

export function prepare(sc: Scenario, graph: FollowerGraph): PreparedScenario {
  if (sc.population !== null && sc.population < graph.users) {
    throw new ScenarioError(`${sc.source}: population ${sc.population} is smaller than the graph's ${graph.users} users`);
  }
  return { scenario: sc, graph, population: buildPopulation(graph, sc) };
}

export function runPolicy(prepared: PreparedScenario, policy: FanoutPolicy, onProgress?: ProgressFn): RunResult {
  const metrics = simulate({ scenario: prepared.scenario, population: prepared.population, policy, onProgress });
  return buildResult(prepared.scenario, { users: prepared.graph.users, edges: prepared.graph.edges, provenance: { ...prepared.graph.provenance } }, metrics);
}
