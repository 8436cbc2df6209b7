// reportFiles: the three files of --out for a run, a sweep and a plan; the follower distribution behind the log-log chart.
import { describe, expect, it } from 'vitest';
import { reportFiles, REPORT_SCHEMAS } from '../../reports/files.js';
import { htmlReport } from '../../reports/html/index.js';
import { markdownReport } from '../../reports/markdown.js';
import { planHtml } from '../../reports/html/plan-page.js';
import { planMarkdown } from '../../reports/plan.js';
import { sweepMarkdown } from '../../reports/sweep.js';
import { followerDistribution, logBinEdges } from '../../sim/graph/follower-distribution.js';
import { generateGraph } from '../../sim/graph/generate.js';
import { graphStats } from '../../sim/graph/stats.js';
import { stringifyResult, type RunResult } from '../../sim/result.js';
import { chartNames, planDocs, smallDocs } from './docs.js';

const { run, sweep } = smallDocs();
const plans = planDocs();

describe('reportFiles', () => {
  it('writes report.json, report.md, report.html and the series as CSV for a run and for a sweep', () => {
    for (const doc of [run, sweep]) {
      const files = reportFiles(doc);
      expect(Object.keys(files)).toEqual(['report.json', 'report.md', 'report.html', 'series.csv']);
      expect(files['report.json']).toBe(stringifyResult(doc) + '\n');
      expect(files['report.html']).toMatch(/^<!doctype html>/);
    }
    expect(reportFiles(run)['report.md']).toMatch(/^# report-small: push:skip-dormant/);
    expect(reportFiles(sweep)['report.md']).toMatch(/^# Sweep: report-small/);
    expect(REPORT_SCHEMAS).toEqual(['feedlab.result/1', 'feedlab.sweep/1', 'feedlab.plan/1', 'feedlab.compare/1']);
  });

  it('writes the three files for a plan, with or without intervals, re-rendering to the same bytes', () => {
    for (const doc of [plans.sampled, plans.point]) {
      const files = reportFiles(doc);
      expect(Object.keys(files)).toEqual(['report.json', 'report.md', 'report.html']);
      expect(files['report.json']).toBe(stringifyResult(doc) + '\n');
      const saved = JSON.parse(files['report.json']);
      expect(files['report.md']).toBe(planMarkdown(saved));
      expect(files['report.html']).toBe(planHtml(saved));
      expect(reportFiles(saved)).toEqual(files);
    }
    const files = reportFiles(plans.sampled);
    expect(files['report.md']).toMatch(/^# Capacity plan: plan-small/);
    expect(files['report.html']).toMatch(/^<!doctype html>[^]*<h1>Capacity plan: plan-small<\/h1>/);
    expect(chartNames(files['report.html'])).toEqual(['spread', 'headroom']);
  });

  it('renders from the document as report.json holds it, so re-rendering report.json gives the same bytes', () => {
    for (const doc of [run, sweep]) {
      const files = reportFiles(doc);
      const saved = JSON.parse(files['report.json']);
      expect(reportFiles(saved)).toEqual(files);
    }
    const saved = JSON.parse(reportFiles(run)['report.json']) as RunResult;
    expect(reportFiles(run)['report.md']).toBe(markdownReport(saved));
    expect(reportFiles(run)['report.html']).toBe(htmlReport(saved));
    expect(reportFiles(sweep)['report.md']).toBe(sweepMarkdown(JSON.parse(reportFiles(sweep)['report.json'])));
  });

  it('refuses a document it has no report for', () => {
    expect(() => reportFiles({ ...run, schema: 'feedlab.nope/1' } as unknown as RunResult)).toThrow(/no report for schema feedlab.nope\/1/);
  });
});

describe('followerDistribution', () => {
  const g = generateGraph({ users: 20000, avgFollows: 30, alpha: 2.2, maxFollows: 5000, followsSigma: 1, seed: 3, celebrities: [] });
  const f = followerDistribution(g);

  it('counts every account once: in a log bin, or among those without a follower', () => {
    expect(f.accounts).toBe(20000);
    expect(f.withoutFollowers + f.bins.reduce((n, b) => n + b.accounts, 0)).toBe(20000);
    for (const b of f.bins) {
      expect(b.accounts).toBeGreaterThan(0);
      expect(b.hi).toBeGreaterThan(b.lo);
    }
    for (let i = 1; i < f.bins.length; i++) expect(f.bins[i].lo).toBeGreaterThanOrEqual(f.bins[i - 1].hi);
    expect(f.bins[f.bins.length - 1].hi).toBeGreaterThan(f.maxFollowers);
  });

  it('bins ten to a decade on rounded edges', () => {
    expect(logBinEdges(100)).toEqual([1, 2, 3, 4, 5, 6, 8, 10, 13, 16, 20, 25, 32, 40, 50, 63, 79, 100, 126]);
  });

  it('carries the same fitted tail as graph stats', () => {
    const stats = graphStats(g, { source: 'test' }).powerLaw!;
    expect(f.tail).toEqual({ alpha: stats.alpha, sigma: stats.sigma, xmin: stats.xmin, nTail: stats.nTail, ks: stats.ks });
    expect(Math.abs(f.tail!.alpha - 2.2)).toBeLessThan(0.2);
  });

  it('is in every run result, the same for every policy over one graph', () => {
    expect(run.followers).toEqual(sweep.runs[0].followers);
    expect(JSON.parse(stringifyResult(run)).followers.bins.length).toBe(run.followers!.bins.length);
  });
});

describe('series.csv', () => {
  it('has a row per step of every run, in the header\'s units, and reads back to the series', () => {
    const lines = reportFiles(run)['series.csv'].split('\r\n');
    expect(lines.at(-1)).toBe('');
    const header = lines[0].split(',');
    expect(header.slice(0, 4)).toEqual(['policy', 'start_seconds', 'posts_per_second', 'timeline_writes_per_second']);
    const rows = lines.slice(1, -1).map((l) => l.split(','));
    expect(rows).toHaveLength(run.series.startSeconds.length);
    const col = (name: string) => rows.map((r) => r[header.indexOf(name)]);
    expect(col('policy').every((p) => p === run.policy)).toBe(true);
    expect(col('lag_p99_seconds').map(Number)).toEqual(JSON.parse(reportFiles(run)['report.json']).series.lagP99Seconds);
    expect(col('redis_memory_bytes').map(Number)).toEqual(JSON.parse(reportFiles(run)['report.json']).series.memoryBytes);
    // a sweep: every run's rows, one after the other
    const sweepRows = reportFiles(sweep)['series.csv'].split('\r\n').slice(1, -1);
    expect(sweepRows).toHaveLength(sweep.runs.reduce((n, r) => n + r.series.startSeconds.length, 0));
    expect(new Set(sweepRows.map((l) => l.split(',')[0]))).toEqual(new Set(sweep.runs.map((r) => r.policy)));
  });
});
