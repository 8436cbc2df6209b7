// The SLO and threshold checks as JUnit XML (--junit FILE), the format CI systems read test results
// in: one test suite per run (a sweep's per policy; a plan's: its thresholds and the plan itself),
// one test case per check, a failure for each check that did not pass, with its actual value and
// target.
import { create } from 'xmlbuilder2';
import { thresholdVerdict } from '../sim/plan/check.js';
import type { PlanDocument } from '../sim/plan/plan.js';
import type { RunResult } from '../sim/result.js';
import type { SloCheck } from '../sim/slo.js';
import { runsOf, type SweepResult } from '../sim/sweep.js';
import { sloTarget, sloValue } from './summary-lines.js';

/** One test case: its name, and the failure's message or what passed. */
interface Case {
  name: string;
  failure?: { message: string; type: string; text: string };
  out?: string;
}

interface Suite {
  name: string;
  classname: string;
  cases: Case[];
  /** A stopped run's checks cover only the part that ran. */
  partial?: string;
}

function checkCase(c: SloCheck): Case {
  const line = `${sloValue(c.unit, c.actual)} (${sloTarget(c)})`;
  const name = c.threshold ? c.id : `${c.id}: ${c.description}`;
  if (!c.pass) return { name, failure: { message: `${c.id}: ${line}`, type: c.threshold ? 'threshold' : 'objective', text: `${c.description}: ${line}` } };
  return { name, out: `${c.description}: ${line}` };
}

function suitesXml(name: string, suites: readonly Suite[]): string {
  const all = suites.flatMap((s) => s.cases);
  const root = create({ version: '1.0', encoding: 'UTF-8' }).ele('testsuites', { name, tests: all.length, failures: all.filter((c) => c.failure).length });
  for (const s of suites) {
    const suite = root.ele('testsuite', { name: s.name, tests: s.cases.length, failures: s.cases.filter((c) => c.failure).length, errors: 0 });
    if (s.partial) suite.ele('properties').ele('property', { name: 'partial', value: s.partial });
    for (const c of s.cases) {
      const test = suite.ele('testcase', { classname: s.classname, name: c.name });
      if (c.failure) test.ele('failure', { message: c.failure.message, type: c.failure.type }).txt(c.failure.text);
      else test.ele('system-out').txt(c.out ?? '');
    }
  }
  return root.end({ prettyPrint: true }) + '\n';
}

export function junitXml(doc: RunResult | SweepResult): string {
  return suitesXml(
    `feedlab ${doc.scenario.name}`,
    runsOf(doc).map((r) => ({
      name: `${r.scenario.name} ${r.policy}`,
      classname: `feedlab.${r.scenario.name}.${r.policy}`,
      cases: r.summary.slo.checks.map(checkCase),
      partial: r.partial ? `stopped at ${r.partial.stoppedAtSeconds} s simulated` : undefined,
    })),
  );
}

/** A plan's suite: the plan itself (every objective within the limits) and each threshold on its simulation check's runs. */
export function planJunitXml(doc: PlanDocument): string {
  const s = doc.scenario;
  const plan: Case = doc.satisfied
    ? { name: 'plan: every objective met within the limits', out: 'every objective met within the limits' }
    : { name: 'plan: every objective met within the limits', failure: { message: `plan not satisfied: ${doc.problems.join('; ')}`, type: 'plan', text: doc.problems.join('\n') } };
  return suitesXml(`feedlab plan ${s.name}`, [{ name: `${s.name} plan ${s.policy}`, classname: `feedlab.${s.name}.plan`, cases: [plan, ...thresholdVerdict(doc.check).checks.map(checkCase)] }]);
}
