// --calibration FILE on run, sweep, plan and replay (the built CLI): the file's costs applied, the
// provenance in the result document and one line in the reports, a bad file refused in one line.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import type { RunResult } from '../../sim/result.js';
import { expectInputErrors, feedlab, scratchDir, SMALL, writeScenario } from './cli-helpers.js';

let dir: string;
let scenario: string;
let calibration: string;

const CALIBRATION = `calibration:
  machine: { hostname: lab, cpu: Test CPU, cores: 2, memory: 24GB }
  date: 2026-12-02T10:00:00.000Z
  contention: { otherShare: 0.4, contended: true }
infrastructure:
  costs: { rtt: 2ms, zrange: 40us }
`;

const LINE = /^calibrated from \S+cal\.yaml \(lab, 2 x Test CPU, 2026-12-02T10:00:00\.000Z, CONTENDED\)$/m;

beforeAll(() => {
  dir = scratchDir();
  scenario = writeScenario(dir, 'small.yaml', SMALL.replace('duration: 20m', 'duration: 8m'));
  calibration = join(dir, 'cal.yaml');
  writeFileSync(calibration, CALIBRATION);
});

describe('--calibration FILE', () => {
  test('run: the document carries the provenance, the report says it, and the costs move the result', () => {
    const plain = feedlab(['run', scenario, '--json', '--quiet']);
    const r = feedlab(['run', scenario, '--calibration', calibration, '--json', '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as RunResult;
    expect(doc.scenario.calibration).toEqual({ file: calibration, machine: 'lab, 2 x Test CPU', date: '2026-12-02T10:00:00.000Z', contended: true });
    expect((JSON.parse(plain.stdout) as RunResult).scenario.calibration).toBeUndefined();
    // a 2 ms round trip instead of 0.3 ms: every read is slower
    expect(doc.summary.reads.latencyMs.p50).toBeGreaterThan((JSON.parse(plain.stdout) as RunResult).summary.reads.latencyMs.p50);
    expect(feedlab(['run', scenario, '--calibration', calibration, '--quiet']).stdout).toMatch(LINE);
    expect(feedlab(['run', scenario, '--quiet']).stdout).not.toMatch(/calibrated from/);
  });

  test('sweep and plan print the line too', () => {
    const sweep = feedlab(['sweep', scenario, '--policies', 'push', '--calibration', calibration, '--quiet']);
    expect(sweep.code, sweep.stderr).toBe(0);
    expect(sweep.stdout).toMatch(LINE);
    const plan = feedlab(['plan', scenario, '--calibration', calibration, '--quiet']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(LINE);
  });

  test('a bad calibration file is one line located in it (replay too, before any service is reached)', () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, CALIBRATION.replace('rtt: 2ms', 'rtt: 2 parsecs'));
    const where = new RegExp(`^feedlab: ${bad.replace(/[.]/g, '\\.')}:6:17: infrastructure\\.costs\\.rtt: unknown unit "parsecs"`);
    expectInputErrors([
      [['run', scenario, '--calibration', bad], where],
      [['sweep', scenario, '--calibration', bad], where],
      [['plan', scenario, '--calibration', bad], where],
      [['replay', scenario, '--calibration', bad], where],
      [['run', scenario, '--calibration', join(dir, 'missing.yaml')], /^feedlab: cannot read calibration file ".*missing\.yaml": no such file$/],
    ]);
  });
});
