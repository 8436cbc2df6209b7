// The terminal report's lines a new user misread (reports/terminal.ts, summary-lines.ts, sweep.ts):
// a column's span, the backlog's two peaks, the documents' ratio under pull, the sweep's verdicts.
import { describe, expect, it } from 'vitest';
import { sparkline, stepsPerColumn } from '../../reports/sparkline.js';
import { sweepTable } from '../../reports/sweep.js';
import { terminalReport } from '../../reports/terminal.js';
import { formatCount } from '../../sim/scenario/units.js';
import { smallDocs } from './docs.js';

describe('the terminal report', () => {
  it("says how many steps a sparkline's column covers", () => {
    expect(stepsPerColumn(60)).toBe(1);
    expect(stepsPerColumn(120)).toBe(2);
    expect(stepsPerColumn(121)).toBe(3);
    expect(sparkline(Array.from({ length: 120 }, (_, i) => i))).toHaveLength(60);
    const { run } = smallDocs();
    const steps = stepsPerColumn(run.series.writesPerSecond.length);
    const header = terminalReport(run).split('\n').find((l) => l.startsWith('Over time'))!;
    expect(header).toContain(steps === 1 ? 'a column a step of' : `a column the max of ${steps} steps of`);
  });

  it("gives the backlog's peak at any post beside the series' peak at a step's end", () => {
    const { run } = smallDocs();
    const lines = terminalReport(run).split('\n');
    const line = lines.slice(lines.findIndex((l) => l.startsWith('Over time'))).find((l) => l.startsWith('  backlog'))!;
    expect(line).toMatch(new RegExp(`at a step's end \\(${formatCount(run.summary.fanout.backlog.peakWrites)} at any post\\)$`));
  });

  it("says there is nothing to count under pull instead of a ratio of 0 B", () => {
    const pull = smallDocs().sweep.runs.find((r) => r.policy.startsWith('pull'))!;
    expect(pull.summary.redis.naiveMemoryBytes.end).toBe(0);
    const line = terminalReport(pull).split('\n').find((l) => l.includes("documents' 24 B/entry"))!;
    expect(line).toMatch(/no timeline entries at the end to count/);
    expect(line).not.toMatch(/0\.0x/);
  });

  it('writes the sweep verdicts in capitals, as the rest of the report', () => {
    const table = sweepTable(smallDocs().sweep);
    expect(table).not.toMatch(/ pass$/m);
    expect(table).toMatch(/ (PASS|FAIL [\w,]+)$/m);
  });

  it('marks a read p99 taken on saturated shards', () => {
    const { sweep } = smallDocs();
    const saturated = { ...sweep, rows: sweep.rows.map((r, i) => (i === 0 ? { ...r, saturatedShards: 2 } : { ...r, saturatedShards: 0 })) };
    const lines = sweepTable(saturated).split('\n');
    expect(lines.find((l) => l.startsWith(sweep.rows[0].policy))).toMatch(/ SATURATED /);
    expect(lines.filter((l) => / SATURATED /.test(l))).toHaveLength(1);
  });
});
