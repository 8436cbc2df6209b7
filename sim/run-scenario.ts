// From a scenario to result documents: build (or load) the graph once, the population once, and
// simulate each fan-out policy asked for over them.
import type { FanoutPolicy } from '../core/fanout-policy.js';
import { loadGraph } from './graph/file.js';
import { followerDistribution, type FollowerDistribution } from './graph/follower-distribution.js';
import { generateGraph, validateGenerateParams, type GenerateParams } from './graph/generate.js';
import type { FollowerGraph } from './graph/graph.js';
import { buildPopulation, type Population } from './model/population.js';
import { simulate, type SimulationInput } from './model/simulation.js';
import { buildResult, type RunResult } from './result.js';
import type { GraphSpec, Scenario } from './scenario/types.js';

export type ProgressFn = (fraction: number, detail: string) => void;

export { ScenarioError } from './scenario-error.js';
import { ScenarioError } from './scenario-error.js';
export { basePolicy, policyFor } from './policy.js';

/** The scenario's graph: generated from its parameters, or read from its file. */
export function scenarioGraph(sc: Scenario, onProgress?: ProgressFn): FollowerGraph {
  return sc.graph.kind === 'file' ? loadGraph(sc.graph.path) : generateGraph(scenarioGenerateParams(sc, sc.graph), onProgress);
}

/** The generator's parameters of a scenario's generated graph (celebrities at the sample's scale), checked. */
export function scenarioGenerateParams(sc: Scenario, gen: Extract<GraphSpec, { kind: 'generate' }>): GenerateParams {
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
  const params = { users: gen.users, avgFollows: gen.avgFollows, alpha: gen.alpha, maxFollows: gen.maxFollows, followsSigma: gen.followsSigma, seed: sc.seed, celebrities };
  try {
    validateGenerateParams(params);
  } catch (err) {
    throw new ScenarioError(`${sc.source}: ${(err as Error).message}`);
  }
  return params;
}

export interface PreparedScenario {
  scenario: Scenario;
  graph: FollowerGraph;
  population: Population;
  /** The graph's follower distribution and fitted tail, computed once for every run over it. */
  followers: FollowerDistribution;
}

export function prepare(sc: Scenario, graph: FollowerGraph): PreparedScenario {
  if (sc.population !== null && sc.population < graph.users) {
    throw new ScenarioError(`${sc.source}: population ${sc.population} is smaller than the graph's ${graph.users} users`);
  }
  const population = buildPopulation(graph, sc);
  for (const ev of sc.events) {
    if (ev.kind === 'celebrityBurst' && ev.accounts > population.burstAccounts.length) {
      throw new ScenarioError(`${sc.source}: a celebrityBurst at ${ev.at}s asks for ${ev.accounts} accounts; the graph has ${population.burstAccounts.length}`);
    }
  }
  return { scenario: sc, graph, population, followers: followerDistribution(graph) };
}

/** `live` (optional): a per-minute snapshot callback and a stop check, for the dashboard. */
export function runPolicy(prepared: PreparedScenario, policy: FanoutPolicy, onProgress?: ProgressFn, live?: Pick<SimulationInput, 'onMinute' | 'shouldStop'>): RunResult {
  const metrics = simulate({ scenario: prepared.scenario, population: prepared.population, policy, onProgress, ...live });
  return buildResult(prepared.scenario, { users: prepared.graph.users, edges: prepared.graph.edges, provenance: { ...prepared.graph.provenance }, followers: prepared.followers }, metrics);
}
