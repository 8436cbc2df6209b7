// report.html for a capacity plan: the plan table, the reasons, the intervals, the binding constraint
// and the what-ifs; the headroom and spread charts; self-contained; the same bytes each time.
import { describe, expect, it } from 'vitest';
import { canonical } from '../../reports/files.js';
import { headroomChart, planHtml, spreadChart, times } from '../../reports/html/plan-page.js';
import type { PlanDocument } from '../../sim/plan/plan.js';
import { chartData, chartNames, planDocs } from './docs.js';

// the renderers see the document as report.json holds it
const sampled = canonical(planDocs().sampled).doc;
const point = canonical(planDocs().point).doc;

const td = (s: string) => `<td>${s}</td>`;
const num = (s: string) => `<td class="num">${s}</td>`;

describe('planHtml for a plan over intervals', () => {
  const html = planHtml(sampled);

  it('has the plan table with p5, p50 and p95 for every resource, and the workload table', () => {
    expect(html).toMatch(/<h1>Capacity plan: plan-small<\/h1>/);
    expect(html).toContain('<thead><tr><th>resource</th><th class="num">p5</th><th class="num">p50</th><th class="num">p95</th><th>method</th></tr></thead>');
    for (const r of sampled.resources) expect(html).toContain(`<tr>${td(r.label)}${num(r.display.p5)}${num(r.display.p50)}${num(r.display.p95)}${td(r.method)}</tr>`);
    for (const r of sampled.workload) expect(html).toContain(`<tr>${td(r.label)}${num(r.display.p5)}${num(r.display.p50)}${num(r.display.p95)}</tr>`);
    expect(html).toContain('Plan: every objective met within the limits');
  });

  it("gives each resource's reason, the intervals sampled, the simulation check, the binding constraint and the what-ifs", () => {
    for (const r of sampled.resources) expect(html).toContain(`<li><strong>${r.label}</strong>: `);
    expect(html).toContain(`<p class="lead">At the design point of the reasons, the binding constraint and the what-ifs: ${sampled.designPoint.text.replace(/&/g, "&amp;").slice(0, 40)}`);
    expect(html).toContain('<h2>Intervals sampled</h2>');
    for (const i of sampled.inputs.filter((x) => x.path !== null)) expect(html).toContain(`<tr>${td(i.label)}${td(i.path!)}`);
    expect(html).toContain('<td>activity.postsPerUserPerDay.mean</td>');
    expect(html).toContain('<h2>Simulation check</h2>');
    expect(html).toContain('<h2>Binding constraint</h2>');
    expect(html).toMatch(/<div class="callout"><p>fan-out lag binds: the planned fleet holds [\d.]+x the planned load/);
    const binding = sampled.binding.constraints.find((c) => c.id === sampled.binding.constraint)!;
    expect(html).toContain(`<tr class="recommended"><td>★ ${binding.label}</td>${num(times(binding.loadMultiple))}`);
    expect(html).toContain('<h2>What if</h2>');
    expect(sampled.whatIfs.length).toBeGreaterThan(0);
    for (const w of sampled.whatIfs) expect(html).toContain(`<tr>${td(w.knob)}${td(w.from)}${td(w.to)}`);
  });

  it('draws the spread of the resources and the headroom of each objective', () => {
    expect(chartNames(html)).toEqual(['spread', 'headroom']);
    const data = chartData(html);
    expect(Object.keys(data).sort()).toEqual(['headroom', 'spread']);
    for (const spec of Object.values(data)) {
      for (const p of spec.panels) {
        expect(p.series.length).toBeGreaterThan(0);
        for (const s of p.series) expect(s.y).toHaveLength(s.x.length);
      }
    }
    // every drawn resource passes through 100% at p50; the still ones are named in the caption
    for (const s of data.spread.panels[0].series) {
      expect(s.x).toEqual([5, 50, 95]);
      expect(s.y[1]).toBe(1);
    }
    const memory = sampled.resources.find((r) => r.id === 'redisMemory')!;
    expect(data.spread.panels[0].series[0]).toMatchObject({ label: 'Redis memory', y: [memory.values.p5 / memory.values.p50, 1, memory.values.p95 / memory.values.p50].map((v) => Number(v.toPrecision(6))) });
    expect(html).toMatch(/The same at p5, p50 and p95: fan-out workers \(1\)/);
  });

  it('counts the objectives met as the load grows: each drops at its load multiple, the binding one ringed', () => {
    const spec = headroomChart(sampled)!;
    expect(spec.x.log).toBe(true);
    const [step, drops] = spec.panels[0].series;
    const ms = sampled.binding.constraints.map((c) => c.loadMultiple).sort((a, b) => a - b);
    expect(drops.x).toEqual(ms);
    expect(drops.y).toEqual([3, 2, 1]);
    expect(step.y[0]).toBe(3);
    expect(step.y[step.y.length - 1]).toBe(0);
    const binding = sampled.binding.constraints.find((c) => c.id === sampled.binding.constraint)!;
    expect(binding.loadMultiple).toBe(ms[0]);
    expect(spec.panels[0].highlights).toEqual([expect.objectContaining({ x: binding.loadMultiple, y: 3 })]);
    expect(spec.markers.map((m) => m.x)).toEqual([1, ...ms]);
    expect(spec.markers[1].label).toMatch(/^fan-out lag [\d.]+× \(binds\)$/);
  });

  it('keeps an objective that never fails at the top of the step, and notes it', () => {
    const doc = structuredClone(sampled);
    doc.binding.constraints.find((c) => c.id === 'readLatency')!.loadMultiple = Infinity;
    const spec = headroomChart(doc)!;
    expect(spec.panels[0].series[0].y.at(-1)).toBe(1);
    expect(spec.panels[0].series[1].x).toHaveLength(2);
    expect(planHtml(doc)).toContain('Never fails within the search: read latency.');
  });

  it('refers to nothing outside the file, and gives the same bytes each time', () => {
    expect(html).not.toMatch(/https?:\/\//i);
    expect(html).not.toMatch(/\/\/[a-z0-9.-]+\.[a-z]{2,}/i);
    expect(html).not.toMatch(/\b(src|href|srcset|action)\s*=/i);
    expect(html).not.toMatch(/<link|<iframe|<img|<object|<embed|@import|url\(|fetch\(|XMLHttpRequest|WebSocket|import\(/i);
    expect(html.match(/<script[\s>]/g)).toHaveLength(2);
    expect(planHtml(structuredClone(sampled))).toBe(html);
  });

  it('escapes what the scenario names', () => {
    const evil: PlanDocument = { ...sampled, scenario: { ...sampled.scenario, name: '</script><b>x</b>' } };
    const page = planHtml(evil);
    expect(page).toContain('<h1>Capacity plan: &lt;/script&gt;&lt;b&gt;x&lt;/b&gt;</h1>');
    expect(page.match(/<\/script>/gi)).toHaveLength(2);
  });
});

describe('planHtml for a plan without intervals', () => {
  const html = planHtml(point);

  it('has one "plan" column, no intervals and no spread chart, but the headroom chart', () => {
    expect(point.sampled).toBe(false);
    expect(html).toContain('<thead><tr><th>resource</th><th class="num">plan</th><th>method</th></tr></thead>');
    expect(html).not.toContain('<h2>Intervals sampled</h2>');
    expect(spreadChart(point)).toBeNull();
    expect(chartNames(html)).toEqual(['headroom']);
  });
});
