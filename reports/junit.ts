// The SLO and threshold checks as JUnit XML (--junit FILE), the format CI systems read test results
// in: one test suite per run (a sweep's per policy), one test case per check, a failure for each
// check that did not pass, with its actual value and target.
import { create } from 'xmlbuilder2';
import type { RunResult } from '../sim/result.js';
import { runsOf, type SweepResult } from '../sim/sweep.js';
import { sloTarget, sloValue } from './summary-lines.js';

export function junitXml(doc: RunResult | SweepResult): string {
  const runs = runsOf(doc);
  const checks = runs.flatMap((r) => r.summary.slo.checks);
  const failed = checks.filter((c) => !c.pass).length;
  const root = create({ version: '1.0', encoding: 'UTF-8' }).ele('testsuites', { name: `feedlab ${doc.scenario.name}`, tests: checks.length, failures: failed });
  for (const r of runs) {
    const cs = r.summary.slo.checks;
    const suite = root.ele('testsuite', { name: `${r.scenario.name} ${r.policy}`, tests: cs.length, failures: cs.filter((c) => !c.pass).length, errors: 0 });
    // a stopped run's checks cover only the part that ran
    if (r.partial) suite.ele('properties').ele('property', { name: 'partial', value: `stopped at ${r.partial.stoppedAtSeconds} s simulated` });
    for (const c of cs) {
      const test = suite.ele('testcase', { classname: `feedlab.${r.scenario.name}.${r.policy}`, name: c.threshold ? c.id : `${c.id}: ${c.description}` });
      const line = `${sloValue(c.unit, c.actual)} (${sloTarget(c)})`;
      if (!c.pass) test.ele('failure', { message: `${c.id}: ${line}`, type: c.threshold ? 'threshold' : 'objective' }).txt(`${c.description}: ${line}`);
      else test.ele('system-out').txt(`${c.description}: ${line}`);
    }
  }
  return root.end({ prettyPrint: true }) + '\n';
}
