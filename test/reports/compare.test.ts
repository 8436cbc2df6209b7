// The comparison's reports: the terminal and Markdown tables, report.html's charts (one per figure,
// a group per policy, each document a dot, the 15% band) and the files of --out, re-rendered alike.
import { describe, expect, it } from 'vitest';
import { compareMarkdown, compareTerminal } from '../../reports/compare.js';
import { canonical, reportFiles } from '../../reports/files.js';
import { compareChart, compareHtml } from '../../reports/html/compare-page.js';
import { COMPARE_CHART_DATA_ID, type CompareChartSpec } from '../../reports/html/compare-chart.js';
import { buildComparison, type CompareDocument } from '../../sim/compare/compare.js';
import { figureDef } from '../../sim/compare/figures.js';
import { savedReplay, simulatedEvents } from '../sim/compare/documents.js';

const policy = 'threshold:100000:skip-dormant';
const seeds = [9, 10, 11].map((s) => simulatedEvents(s));
const runs = [savedReplay(0), savedReplay(1)];

function comparison(measured = runs): CompareDocument {
  return buildComparison({
    scenario: 'replay-events',
    policies: [{ policy, estimate: { memory_timelines_bytes: 40e6 }, simulated: seeds, measured, notes: { read_p99: 'the API tier is not modelled' } }],
  });
}

const doc = comparison();

function chartSpecs(html: string): Record<string, CompareChartSpec> {
  const m = new RegExp(`<script type="application/json" id="${COMPARE_CHART_DATA_ID}">([^]*?)</script>`).exec(html);
  if (!m) throw new Error('no comparison chart data');
  return JSON.parse(m[1]);
}

describe('the terminal and Markdown reports', () => {
  it('print one table per policy, with the spreads of three seeds and two runs, and the estimate', () => {
    const text = compareTerminal(doc);
    const lines = text.split('\n');
    expect(lines[0]).toBe('compare replay-events: simulate, seeds 9-11 against replay, 2 runs (seed 9)');
    expect(text).toContain(`policy ${policy}`);
    const head = lines.find((l) => l.trim().startsWith('figure'))!;
    expect(head.trim().split(/\s{2,}/)).toEqual(['figure', 'estimate', 'simulated', 'spread', 'measured', 'spread', 'ratio', 'noise', 'verdict']);
    const f = doc.figures.find((x) => x.id === 'memory_timelines_bytes')!;
    const row = lines.find((l) => l.trim().startsWith('memory: home timelines'))!;
    expect(row.trim().split(/\s{2,}/)).toEqual(['memory: home timelines', '40 MB', expect.stringMatching(/MB$/), expect.stringMatching(/%$/), expect.stringMatching(/MB$/), expect.stringMatching(/%$/), String(Number(f.ratio!.toPrecision(3))), expect.stringMatching(/%$/), expect.any(String)]);
    expect(lines.find((l) => l.trim().startsWith('memory: post bodies'))).toMatch(/not modelled\s+\S+ MB.*n\/a$/);
    expect(text).toContain('read_p99 (threshold:100000:skip-dormant): the API tier is not modelled');
    // the four key classes only a replay has, and a large post's writes, which neither side has here
    expect(text).toMatch(/^verdicts: \d+ within 15%, \d+ inside the noise, \d+ outside, 5 n\/a/m);
    expect(lines.find((l) => l.trim().startsWith("stage: a large post's writes per timeline"))).toMatch(/no post of 300 timelines or more\s+not measured\s+n\/a$/);
  });

  it("put the simulated side's inputs (--replay-stages' swaps) under its run, a line each", () => {
    const fed = buildComparison({
      scenario: 'replay-events',
      policies: [{ policy, simulated: seeds, measured: runs }],
      sources: { simulated: ['the run', 'calibration 1: postToLog 5 ms', 'calibration 2: postToLog 6 ms'], measured: ['a.json', 'b.json'] },
    });
    expect(compareTerminal(fed).split('\n').slice(1, 5)).toEqual(['  simulated: the run', '             calibration 1: postToLog 5 ms', '             calibration 2: postToLog 6 ms', '  measured:  a.json, b.json']);
    expect(compareMarkdown(fed)).toContain('- simulated: the run\n  - calibration 1: postToLog 5 ms\n  - calibration 2: postToLog 6 ms\n- measured: a.json, b.json\n');
  });

  it("add the stages ratio and whose each gap is, with the swaps and the legend, when the replays' stages were simulated", () => {
    // the stages' simulations the replays themselves: every figure's stages ratio 1, every gap the costs'
    const closed = buildComparison({
      scenario: 'replay-events',
      policies: [{ policy, simulated: seeds, measured: runs, replayStages: runs }],
      replayStages: { label: "simulate (the replays' stages)", sources: ['push: postToLog 5 ms'] },
    });
    const outside = closed.figures.filter((f) => f.verdict === 'outside');
    expect(outside.length).toBeGreaterThan(0);
    expect(closed.gaps).toEqual({ costs: outside.length, model: 0, open: 0 });
    const text = compareTerminal(closed);
    const lines = text.split('\n');
    expect(lines.slice(3, 5)).toEqual(["  gaps:      simulate (the replays' stages)", '             push: postToLog 5 ms']);
    expect(lines.find((l) => l.trim().startsWith('figure'))!.trim().split(/\s{2,}/).slice(-3)).toEqual(['verdict', 'stages ratio', 'gap']);
    const label = outside[0].label;
    expect(lines.find((l) => l.trim().startsWith(label))).toMatch(/OUTSIDE\s+1\s+costs$/);
    expect(text).toContain(`${closed.counts.outside} outside (${outside.length} the costs', 0 the model's, 0 open)`);
    expect(text).toContain("stages ratio: the same simulations with each replay's own stages in place of the costs");
    expect(text).toContain("(the API's CPU per page and a read's Redis costs; the API's CPU per request; a pulled post's time to its author's list (api.postListed))");
    const md = compareMarkdown(closed);
    expect(md).toContain("- gaps: simulate (the replays' stages)\n  - push: postToLog 5 ms\n");
    expect(md).toMatch(/\| verdict \| stages ratio \| gap \|\n/);
    expect(md).toContain(`| OUTSIDE | 1 | costs |`);
    const html = compareHtml(closed);
    expect(html).toContain('OUTSIDE (the costs&#39;)');
    expect(html).toContain('Whose each gap is: simulate (the replays&#39; stages); push: postToLog 5 ms.');
    // the calibrated simulations again: nothing closes, the reads' gaps open, the rest the model's
    const same = buildComparison({ scenario: 'replay-events', policies: [{ policy, simulated: seeds, measured: runs, replayStages: seeds }] });
    // (the lags would hang on api.postListed too had the replays pulled posts: these pulled none)
    expect(runs.every((r) => r.summary.posts.pulled === 0)).toBe(true);
    const hangs = (id: string) => id.startsWith('read_') || id === 'api_cpu';
    for (const f of same.figures.filter((x) => x.verdict === 'outside')) expect(f.gap, f.id).toBe(hangs(f.id) ? 'open' : 'model');
    // without them, none of it
    expect(compareTerminal(doc)).not.toMatch(/stages ratio|gaps:/);
    expect(compareMarkdown(doc)).not.toMatch(/stages ratio|gaps:/);
  });

  it('say a contended measurement before anything else', () => {
    const contended = structuredClone(runs[1]);
    contended.replay!.cpu.contended = true;
    const c = comparison([runs[0], contended]);
    expect(compareTerminal(c).split('\n')[3]).toMatch(/^!! CONTENDED measurement \(run 2\): /);
    const md = compareMarkdown(c);
    expect(md).toMatch(/^> \*\*CONTENDED measurement \(run 2\): .*suspect\*\*$/m);
    expect(md.indexOf('CONTENDED')).toBeLessThan(md.indexOf('| figure |'));
    expect(compareHtml(c)).toMatch(/<div class="callout fail"><p><strong>CONTENDED measurement/);
  });

  it('put each seed\'s and run\'s value beside the means in Markdown', () => {
    const md = compareMarkdown(doc);
    const f = doc.figures.find((x) => x.id === 'lag_p99')!;
    expect(f.values.simulated).toHaveLength(3);
    const row = md.split('\n').find((l) => l.startsWith('| fan-out lag p99, per follower |'))!;
    expect(row).toMatch(/\| \S+ ms \(\S+ ms, \S+ ms, \S+ ms\) \|/);
    expect(row).toContain('| 196 ms (66 ms, 326 ms) |'); // the two runs' 66.0 and 326 ms, and their mean
    expect(md).toContain('- `lag_p99` fan-out lag p99, per follower: per follower:');
  });
});

describe('report.html of a comparison', () => {
  const html = compareHtml(doc);
  const specs = chartSpecs(html);

  it('has one chart per figure any side has, drawn by its own inlined code, and fetches nothing', () => {
    const names = [...html.matchAll(/data-compare-chart="([^"]+)"/g)].map((m) => m[1]);
    // every figure but a large post's writes, which neither side has here: said in its place instead
    expect(names).toEqual(doc.figures.map((f) => f.id).filter((id) => id !== 'stage_large_writes_per_timeline_p50'));
    expect(html).toMatch(/<code>stage_large_writes_per_timeline_p50<\/code>.*?<p class="lead">Neither side has this figure\.<\/p>/s);
    expect(Object.keys(specs).sort()).toEqual([...names].sort());
    expect(html).toContain('function drawComparisonCharts');
    expect(html).not.toMatch(/<(link|img|iframe)\b|src=|href="http/);
  });

  it('puts estimate, simulated and measured side by side, each document a dot, the band around the measured mean', () => {
    const mem = specs.memory_timelines_bytes;
    expect(mem.sides.map((s) => s.side)).toEqual(['estimate', 'simulated', 'measured']);
    expect(mem.band).toBe(0.15);
    const g = mem.groups[0];
    expect(g.policy).toBe(policy);
    expect(g.columns.map((c) => c.side)).toEqual(['estimate', 'simulated', 'measured']);
    expect(g.columns[0].mean).toBe(40e6);
    expect(g.columns[1].values.map((v) => v.label)).toEqual(['seed 9', 'seed 10', 'seed 11']);
    expect(g.columns[2].values.map((v) => v.label)).toEqual(['run 1', 'run 2']);
    const f = doc.figures.find((x) => x.id === 'memory_timelines_bytes')!;
    expect(g.measured).toBe(f.measured);
    // the estimate only where it gives the figure
    expect(specs.lag_p99.sides.map((s) => s.side)).toEqual(['simulated', 'measured']);
    // read latencies are drawn in seconds like every duration
    expect(specs.read_p99.unit).toBe('seconds');
    // (the chart keeps 6 significant digits)
    expect(specs.read_p99.groups[0].measured! / (doc.figures.find((x) => x.id === 'read_p99')!.measured! / 1000)).toBeCloseTo(1, 5);
    // a class the simulator does not model: the measured side alone, the simulated column saying why
    const bodies = specs.memory_bodies_bytes.groups[0].columns;
    expect(bodies.find((c) => c.side === 'simulated')).toMatchObject({ mean: null, missing: 'not modelled', values: [] });
  });

  it('draws a log axis only when the values are far apart', () => {
    expect(specs.memory_timelines_bytes.log).toBe(false);
    const far = structuredClone(doc);
    for (const f of far.figures) if (f.id === 'lag_p99') f.simulated = f.measured! * 1000;
    expect(compareChart(far, figureDef('lag_p99')!)!.log).toBe(true);
  });

  it('renders from report.json to the same bytes, and report.md is the Markdown report', () => {
    const files = reportFiles(doc);
    expect(Object.keys(files)).toEqual(['report.json', 'report.md', 'report.html']);
    const saved = JSON.parse(files['report.json']) as CompareDocument;
    expect(saved.schema).toBe('feedlab.compare/1');
    expect(reportFiles(saved)).toEqual(files);
    expect(files['report.md']).toBe(compareMarkdown(canonical(doc).doc));
    expect(files['report.html']).toBe(compareHtml(canonical(doc).doc));
  });
});
