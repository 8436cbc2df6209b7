// Shared by the plan tests: the fixture scenarios and a plan of one with the default options.
import { join } from 'node:path';
import type { PlanOptions } from '../../sim/plan/inputs.js';
import { buildPlan, type PlanDocument } from '../../sim/plan/plan.js';
import { scenarioGraph } from '../../sim/run-scenario.js';
import { loadScenario } from '../../sim/scenario/load.js';
import type { Scenario } from '../../sim/scenario/types.js';

export const fixtures = join(import.meta.dirname, '../fixtures/scenarios');
export const load = (name: string): Scenario => loadScenario(join(fixtures, name), { onIntervalNote: null });
export const OPTIONS: PlanOptions = { growth: 1, headroom: 0.3, samples: 100 };

export function plan(sc: Scenario, options: Partial<PlanOptions> = {}): PlanDocument {
  return buildPlan({ scenario: sc, graph: scenarioGraph(sc), options: { ...OPTIONS, ...options } });
}

export const resource = (doc: PlanDocument, id: string) => doc.resources.find((r) => r.id === id)!;
