// Result documents of a small real run and sweep (test/fixtures/scenarios/report-small.yaml), and
// capacity plans of test/fixtures/scenarios/plan-small.yaml (intervals) and plan-push.yaml (one
// point), built in-process once per test file.
import { join } from 'node:path';
import { buildPlan, type PlanDocument } from '../../sim/plan/plan.js';
import type { RunResult } from '../../sim/result.js';
import { policyFor, prepare, runPolicy, scenarioGraph } from '../../sim/run-scenario.js';
import { loadScenario } from '../../sim/scenario/load.js';
import { recommend, sweepRow, type SweepResult } from '../../sim/sweep.js';

export const FIXTURE = join(import.meta.dirname, '../fixtures/scenarios/report-small.yaml');
export const PLAN_FIXTURE = join(import.meta.dirname, '../fixtures/scenarios/plan-small.yaml');
export const PLAN_PUSH_FIXTURE = join(import.meta.dirname, '../fixtures/scenarios/plan-push.yaml');

let docs: { run: RunResult; sweep: SweepResult } | null = null;

export function smallDocs(): { run: RunResult; sweep: SweepResult } {
  if (docs) return docs;
  const sc = loadScenario(FIXTURE);
  const prepared = prepare(sc, scenarioGraph(sc));
  const run = runPolicy(prepared, policyFor(sc));
  const runs = ['push', 'pull', 'threshold:1000', 'threshold:10000', 'threshold:50000', 'rate'].map((p) => runPolicy(prepared, policyFor(sc, p)));
  const rows = runs.map((r) => sweepRow(r, sc.infrastructure.writesPerSecondPerWorker));
  docs = { run, sweep: { schema: 'feedlab.sweep/1', scenario: runs[0].scenario, rows, recommended: recommend(rows), runs } };
  return docs;
}

let plans: { sampled: PlanDocument; point: PlanDocument } | null = null;

/** A plan over intervals (p5/p50/p95) and one without (a single "plan" column). */
export function planDocs(): { sampled: PlanDocument; point: PlanDocument } {
  if (plans) return plans;
  const plan = (path: string) => {
    const sc = loadScenario(path, { onIntervalNote: null });
    return buildPlan({ scenario: sc, graph: scenarioGraph(sc), options: { growth: 1, headroom: 0.3, samples: 50 } });
  };
  plans = { sampled: plan(PLAN_FIXTURE), point: plan(PLAN_PUSH_FIXTURE) };
  return plans;
}

/** The chart specs a page embeds, parsed back. */
export function chartData(html: string): Record<string, { panels: Array<{ series: Array<{ x: number[]; y: number[]; label: string }>; refs: Array<{ label: string; value: number }>; highlights?: Array<{ label: string }> }>; markers: Array<{ label: string; x: number }> }> {
  const m = /<script type="application\/json" id="feedlab-charts">([^]*?)<\/script>/.exec(html);
  if (!m) throw new Error('no chart data block');
  return JSON.parse(m[1]);
}

/** The names of the page's chart containers, in order. */
export function chartNames(html: string): string[] {
  return [...html.matchAll(/data-chart="([^"]+)"/g)].map((m) => m[1]);
}
