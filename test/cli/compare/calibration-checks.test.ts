// compare's doubts about the calibration it simulates with (cli/compare/calibration-checks.ts): a
// contended one, one from another machine, one measured far from the replays' hour.
import { describe, expect, it } from 'vitest';
import { CALIBRATION_FRESH_MINUTES, calibrationChecks, pairedCalibration } from '../../../cli/compare/calibration-checks.js';
import type { RunResult } from '../../../sim/result.js';
import { savedReplay } from '../../sim/compare/documents.js';

const calibration = (date: string, contended = false, host = 'vm') => ({ file: 'cal.yaml', machine: `${host}, 2 x AMD EPYC`, date, contended });

function replayAt(i: 0 | 1, startedAt: string | null, host = 'vm'): RunResult {
  const r = savedReplay(i);
  if (startedAt === null) delete r.replay!.ran;
  else r.replay!.ran = { host, startedAt };
  return r;
}

describe("compare's calibration checks", () => {
  it('has no doubt about a quiet calibration of this machine just before the replays', () => {
    const replays = [[replayAt(0, '2026-12-03T12:19:00Z')], [replayAt(1, '2026-12-03T12:26:00Z')]];
    expect(calibrationChecks([calibration('2026-12-03T12:16:00.000Z')], replays)).toEqual([]);
    // the bound itself is still fresh
    expect(calibrationChecks([calibration(new Date(Date.parse('2026-12-03T12:26:00Z') - CALIBRATION_FRESH_MINUTES * 60_000).toISOString())], replays)).toEqual([]);
    expect(calibrationChecks([], replays)).toEqual([]);
  });

  it('says how far from the furthest replay a stale calibration was measured', () => {
    const replays = [[replayAt(0, '2026-12-03T12:19:00Z')], [replayAt(1, '2026-12-03T13:03:00Z')]];
    const [line, ...rest] = calibrationChecks([calibration('2026-12-03T12:16:00.000Z')], replays);
    expect(rest).toEqual([]);
    expect(line).toMatch(/^the costs \(cal\.yaml, 2026-12-03T12:16:00\.000Z\) were measured 47 min from a replay's start \(more than 30 min\)/);
    expect(calibrationChecks([calibration('2026-12-01T13:03:00.000Z')], replays)[0]).toMatch(/measured 48\.0 h from a replay's start/);
  });

  it('names the machines when the replays ran elsewhere, and says a contended calibration', () => {
    const replays = [[replayAt(0, '2026-12-03T12:19:00Z', 'ci-7')], [replayAt(1, '2026-12-03T12:20:00Z', 'ci-8')]];
    const lines = calibrationChecks([calibration('2026-12-03T12:16:00.000Z', true)], replays);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/were measured CONTENDED/);
    expect(lines[1]).toMatch(/were measured on vm, the replays ran on ci-7, ci-8: the simulated side models another machine$/);
  });

  it('holds each calibration to the replays it pairs with, in their order, and names a stale one alone', () => {
    expect([1, 2, 3].map((run) => pairedCalibration(run, ['a', 'b']))).toEqual(['a', 'b', 'b']);
    expect(pairedCalibration(1, [])).toBeUndefined();
    const replays = [[replayAt(0, '2026-12-03T12:19:00Z')], [replayAt(1, '2026-12-03T13:03:00Z')]];
    // one calibration before each replay: fresh, where the first alone is 47 min from the second replay
    expect(calibrationChecks([calibration('2026-12-03T12:16:00.000Z'), calibration('2026-12-03T12:58:00.000Z')], replays)).toEqual([]);
    // a calibration of another hour among them is named alone, against the replay it pairs with
    const lines = calibrationChecks([calibration('2026-12-03T11:00:00.000Z'), calibration('2026-12-03T12:58:00.000Z')], replays);
    expect(lines).toEqual([expect.stringMatching(/^the costs \(cal\.yaml, 2026-12-03T11:00:00\.000Z\) were measured 79 min from the start of the replay it pairs with \(replay 1\) \(more than 30 min\)/)]);
    // the last calibration serves the replays past them; one past the replays is held to the last replay
    const three = [...replays, [replayAt(0, '2026-12-03T14:00:00Z')]];
    expect(calibrationChecks([calibration('2026-12-03T12:16:00.000Z'), calibration('2026-12-03T12:58:00.000Z')], three)[0]).toMatch(/^the costs \(cal\.yaml, 2026-12-03T12:58:00\.000Z\) were measured 62 min from the start of the replay it pairs with \(replay 3\)/);
    expect(calibrationChecks([calibration('2026-12-03T12:16:00.000Z'), calibration('2026-12-03T12:58:00.000Z'), calibration('2026-12-03T15:03:00.000Z')], replays)[0]).toMatch(/^the costs \(cal\.yaml, 2026-12-03T15:03:00\.000Z\) were measured 2\.0 h from the start of the replay it pairs with \(replay 2\)/);
    // a contended one among them is named alone
    const contended = calibrationChecks([calibration('2026-12-03T12:16:00.000Z'), calibration('2026-12-03T12:58:00.000Z', true)], replays);
    expect(contended).toEqual([expect.stringMatching(/^the costs \(cal\.yaml, 2026-12-03T12:58:00\.000Z\) were measured CONTENDED/)]);
  });

  it('cannot date or place replays written before they recorded where they ran', () => {
    expect(calibrationChecks([calibration('2020-01-01T00:00:00.000Z')], [[replayAt(0, null)], [replayAt(1, null)]])).toEqual([]);
  });
});
