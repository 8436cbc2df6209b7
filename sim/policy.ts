// The fan-out policy a run uses: the scenario's policy section, or a spec on top of it.
import { parsePolicy, PolicySpecError, type FanoutPolicy } from '../core/fanout-policy.js';
import { ScenarioError } from './scenario-error.js';
import type { Scenario } from './scenario/types.js';
import { fullListReadSeconds } from './model/list-reads.js';

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

/**
 * The rate policy's costs (Feeding Frenzy): a push costs a write at the worker and at Redis; a pull
 * costs one more list read of a full slice per feed read. The simulator and the planner use these.
 */
export function pushPullCosts(sc: Scenario): { push: number; pull: number } {
  const infra = sc.infrastructure;
  return { push: 1 / infra.writesPerSecondPerWorker + infra.costs.zadd, pull: fullListReadSeconds(infra.costs, sc.activity.pageSize) };
}
