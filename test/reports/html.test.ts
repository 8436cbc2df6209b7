// report.html: charts present for runs and sweeps, safe embedding, nothing fetched, same bytes each time.
import { describe, expect, it } from 'vitest';
import { commonSuffix, followersChart, lagBacklogChart, spansDecades, tradeoffChart } from '../../reports/html/chart-specs.js';
import { htmlReport } from '../../reports/html/index.js';
import { scriptJson } from '../../reports/html/page.js';
import type { RunResult } from '../../sim/result.js';
import type { SweepResult } from '../../sim/sweep.js';
import { chartData, chartNames, smallDocs } from './docs.js';

const { run, sweep } = smallDocs();

/** Every chart container has a spec with at least one panel of drawable series. */
function expectDrawable(html: string, names: string[]): void {
  expect(chartNames(html)).toEqual(names);
  const data = chartData(html);
  expect(Object.keys(data).sort()).toEqual([...names].sort());
  for (const name of names) {
    const spec = data[name];
    expect(spec.panels.length, name).toBeGreaterThan(0);
    for (const p of spec.panels) {
      expect(p.series.length, name).toBeGreaterThan(0);
      for (const s of p.series) {
        expect(s.x.length, `${name}: ${s.label}`).toBeGreaterThan(0);
        expect(s.y).toHaveLength(s.x.length);
      }
    }
  }
}

function inlineScripts(html: string): string[] {
  return [...html.matchAll(/<script>([^]*?)<\/script>/g)].map((m) => m[1]);
}

describe('htmlReport for a run', () => {
  const html = htmlReport(run);

  it('has the charts over time, the follower distribution, and the summary tables', () => {
    expectDrawable(html, ['lag-backlog', 'memory', 'read-latency', 'followers']);
    expect(html).toMatch(/<h1>report-small: push:skip-dormant<\/h1>/);
    expect(html).toContain('SLO: NOT MET');
    expect(html).toMatch(/<td>fan-out lag p99, per follower<\/td><td class="num">5 s<\/td>/);
    for (const title of ['Fan-out', 'Redis', 'Reads']) expect(html).toContain(`<caption>${title}</caption>`);
    expect(html).toMatch(/<td class="num">22 min<\/td><td>cacheLoss<\/td>/);
  });

  it('marks each scenario event on the charts over time, labelled with its kind', () => {
    const data = chartData(html);
    for (const name of ['lag-backlog', 'memory', 'read-latency']) {
      expect(data[name].markers.map((m) => [m.x, m.label])).toEqual([
        [300, 'celebrityBurst'],
        [900, 'coldStartStorm'],
        [1320, 'cacheLoss'],
      ]);
    }
  });

  it('draws memory against the budget and the 24 B/entry line, lag and reads against their SLOs', () => {
    const data = chartData(html);
    const mem = data.memory.panels[0];
    expect(mem.series.map((s) => s.label)).toEqual(['Redis memory', "documents' 24 B/entry"]);
    expect(mem.refs).toEqual([expect.objectContaining({ label: 'budget 2 TB', value: 2e12 })]);
    expect(data['lag-backlog'].panels[0].refs[0]).toMatchObject({ label: 'SLO p99 5 s', value: 5 });
    expect(data['read-latency'].panels[0].refs[0]).toMatchObject({ label: 'SLO p99 100 ms', value: 0.1 });
    // read p99 is drawn in seconds, like every duration axis
    expect(data['read-latency'].panels[0].series[0].y[0]).toBeCloseTo(run.series.readP99Ms[0] / 1000, 6);
  });

  it('draws the lag on a log axis when it spans decades, so the SLO line is not on zero', () => {
    expect(spansDecades([0, 0.05, 0.4])).toBe(false);
    expect(spansDecades([0, 0.05, 5, 300])).toBe(true);
    expect(spansDecades([0, 0, 7])).toBe(false);
    const lagOf = (lags: number[]) => lagBacklogChart({ ...run, series: { ...run.series, lagP99Seconds: lags, startSeconds: lags.map((_, i) => i * 60) } }).panels[0];
    // a burst of 300 s beside 50 ms minutes, against the 5 s SLO
    const burst = lagOf([0.05, 0.06, 300, 120, 0.05]);
    expect(burst.y.log).toBe(true);
    expect(burst.title).toMatch(/\(log scale\)$/);
    const quiet = lagOf([0.5, 0.6, 0.7, 0.5, 0.6]);
    expect(quiet.y.log).toBe(false);
  });

  it('draws the follower CCDF on log-log axes with the fitted tail from xmin on', () => {
    const f = run.followers!;
    const spec = followersChart(f)!;
    expect(spec.x.log).toBe(true);
    expect(spec.panels[0].y.log).toBe(true);
    const [points, fit] = spec.panels[0].series;
    expect(points.y[0]).toBeCloseTo((f.accounts - f.withoutFollowers) / f.accounts, 9);
    for (let i = 1; i < points.y.length; i++) expect(points.y[i]).toBeLessThan(points.y[i - 1]);
    expect(fit.label).toBe(`power law α ${f.tail!.alpha.toFixed(2)}`);
    expect(fit.x[0]).toBe(f.tail!.xmin);
    expect(fit.y[0]).toBeCloseTo(f.tail!.nTail / f.accounts, 9);
    expect(spec.markers[0]).toMatchObject({ x: f.tail!.xmin, label: `xmin ${f.tail!.xmin}` });
  });

  it('has no chart for the follower distribution of a document without one', () => {
    const names = chartNames(htmlReport({ ...run, followers: null }));
    expect(names).toEqual(['lag-backlog', 'memory', 'read-latency']);
  });
});

describe('htmlReport for a sweep', () => {
  const html = htmlReport(sweep);

  it('has the trade-off curves, the recommended run over time and the policy table', () => {
    expectDrawable(html, ['tradeoff', 'lag-backlog', 'memory', 'read-latency', 'followers']);
    expect(html).toContain(`Recommended: ${sweep.recommended!.policy}`);
    expect(html).toMatch(/<table class="policies">[^]*<tr class="recommended"><td>★ /);
    for (const r of sweep.rows) expect(html).toContain(`<td>${r.policy === sweep.recommended?.policy ? '★ ' : ''}${r.policy}</td>`);
  });

  it('puts threshold policies on a log x axis and every other policy on a labelled line', () => {
    const spec = tradeoffChart(sweep)!;
    expect(spec.x.log).toBe(true);
    expect(spec.panels.map((p) => p.y.label)).toEqual(['lag p99', 'peak memory', 'read p99']);
    expect(commonSuffix(sweep.rows.map((r) => r.policy))).toBe(':skip-dormant');
    for (const p of spec.panels) {
      expect(p.series).toHaveLength(1);
      expect(p.series[0].x).toEqual([1000, 10000, 50000]);
      const labels = p.refs.map((r) => r.label.split(' ')[0]);
      // the recommended one is starred (pull, since whole servers tie it with rate, the less simple)
      const starred = (n: string) => sweep.recommended?.policy.startsWith(`${n}:`);
      expect(labels.slice(0, 3)).toEqual(['push', 'pull', 'rate'].map((n) => (starred(n) ? '★' : n)));
      expect(sweep.recommended?.policy).toMatch(/^pull:/);
      expect(p.refs[1].label).toMatch(/^★ pull /);
    }
    expect(spec.panels[0].series[0].y).toEqual(sweep.rows.slice(2, 5).map((r) => r.lagP99Seconds));
    expect(spec.panels[1].series[0].y).toEqual(sweep.rows.slice(2, 5).map((r) => r.peakMemoryBytes));
    expect(spec.panels[2].series[0].y).toEqual(sweep.rows.slice(2, 5).map((r) => r.readP99Ms / 1000));
  });

  it('rings the recommended point when a threshold policy is recommended', () => {
    const pick = sweep.rows[3].policy; // threshold:10000:skip-dormant
    const s: SweepResult = { ...sweep, recommended: { policy: pick, reason: 'test' } };
    const spec = tradeoffChart(s)!;
    for (const p of spec.panels) expect(p.highlights).toEqual([expect.objectContaining({ x: 10000, label: 'recommended: threshold:10000' })]);
    expect(chartNames(htmlReport(s))).toContain('tradeoff');
  });

  it('has no trade-off chart without threshold policies, and says when no policy passes', () => {
    const rows = sweep.rows.filter((r) => !r.policy.startsWith('threshold'));
    const s: SweepResult = { ...sweep, rows, recommended: null };
    expect(tradeoffChart(s)).toBeNull();
    const page = htmlReport(s);
    expect(chartNames(page)[0]).toBe('lag-backlog');
    expect(page).toContain('No policy meets every SLO');
  });
});

describe('the page is self-contained and safe', () => {
  const hostile = '</script><script>alert(1)</script><!-- \u2028 & "quoted" \'single\'';
  const evil: RunResult = {
    ...run,
    scenario: { ...run.scenario, name: hostile, description: hostile },
    events: run.events.map((e) => ({ ...e, kind: hostile, detail: hostile })),
  };
  const pages = { run: htmlReport(run), sweep: htmlReport(sweep), evil: htmlReport(evil) };

  it('escapes </script> and friends in the embedded JSON and the HTML', () => {
    const html = pages.evil;
    expect(html).not.toContain('<script>alert(1)');
    // exactly the page's own two script elements open and close
    expect(html.match(/<script[\s>]/g)).toHaveLength(2);
    expect(html.match(/<\/script>/gi)).toHaveLength(2);
    expect(html).toContain('<h1>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;!-- \u2028 &amp; &quot;quoted&quot; &#39;single&#39;: push:skip-dormant</h1>');
    // the data round-trips: the marker labels are the hostile string, unchanged
    const data = chartData(html);
    expect(data['lag-backlog'].markers[0].label).toBe(hostile);
    expect(scriptJson({ s: '</script>' })).toBe('{"s":"\\u003c/script\\u003e"}');
  });

  it('refers to nothing outside the file: no URL, no stylesheet or script from anywhere', () => {
    for (const [name, html] of Object.entries(pages)) {
      expect(html, name).not.toMatch(/https?:\/\//i);
      expect(html, name).not.toMatch(/\/\/[a-z0-9.-]+\.[a-z]{2,}/i); // protocol-relative
      expect(html, name).not.toMatch(/\b(src|href|srcset|action)\s*=/i);
      expect(html, name).not.toMatch(/<link|<iframe|<img|<object|<embed|@import|url\(|fetch\(|XMLHttpRequest|WebSocket|import\(/i);
    }
  });

  it('inlines chart code that parses as a script', () => {
    const scripts = inlineScripts(pages.run);
    expect(scripts).toHaveLength(1);
    expect(() => new Function(scripts[0])).not.toThrow();
    expect(scripts[0].length).toBeLessThan(40_000); // small: the chart code, not a library
  });

  it('is deterministic: the same document gives the same bytes', () => {
    expect(htmlReport(run)).toBe(pages.run);
    expect(htmlReport(sweep)).toBe(pages.sweep);
    expect(htmlReport(structuredClone(sweep))).toBe(pages.sweep);
  });
});
