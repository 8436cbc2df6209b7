import { describe, expect, it } from 'vitest';
import { formatSeconds, writtenLine } from '../../cli/output.js';
import { wall } from '../../cli/dashboard/format.js';

describe('elapsed and ETA times', () => {
  it('rounds to whole seconds before splitting off the minutes (239.6 s is 4m0s, never 3m60s)', () => {
    expect(formatSeconds(239.6)).toBe('4m0s');
    expect(formatSeconds(179.4)).toBe('2m59s');
    expect(formatSeconds(61)).toBe('1m1s');
    expect(wall(239.6)).toBe('4m00s');
    expect(wall(187.2)).toBe('3m07s');
    expect(wall(4.24)).toBe('4.2s');
  });
});

describe('where --out put the files', () => {
  it('names the first report with its directory, the others after it, and counts the rest', () => {
    const reports = { 'report.json': '{}', 'report.md': '', 'report.html': '' };
    expect(writtenLine('out', reports)).toBe('report written to out/report.json, report.md and report.html');
    expect(writtenLine('out', { 'report.json': '{}', 'report.md': '' })).toBe('report written to out/report.json, report.md');
    expect(writtenLine('out', { 'calibration.yaml': '', 'replay-1.json': '', ...reports })).toBe(
      'report written to out/report.json, report.md and report.html (and 2 more files beside them)',
    );
  });
});
