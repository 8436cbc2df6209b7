// report.html for a capacity plan (feedlab.plan/1): the plan table (p5/p50/p95 when the inputs were
// sampled), each resource's reason, the intervals sampled, the simulation check, the binding
// constraint and the what-ifs, with two charts: how far the load can grow before each objective
// fails (the binding constraint first), and how much each resource moves between p5 and p95.
// Everything comes from the document as report.json holds it (its rows carry their display strings).
import type { PlanDocument, PlanRow } from '../../sim/plan/plan.js';
import { fmtTime } from '../../sim/plan/resources.js';
import { formatBytes, formatCount } from '../../sim/scenario/units.js';
import { COLORS } from './chart-specs.js';
import { chartFigure, esc, htmlTable, renderPage } from './page.js';
import type { ChartData, ChartSpec, MarkerSpec, SeriesSpec } from './spec.js';

const fmt = (v: number) => (Math.abs(v) >= 1000 ? Math.round(v).toLocaleString('en-US') : Number(v.toPrecision(4)).toString());
const pct = (share: number) => `${Math.round(share * 100)}%`;

/** Short names for the spread chart's right-margin labels (about 30 characters each). */
const SHORT: Record<string, string> = {
  fanoutWorkers: 'fan-out workers',
  redisMemory: 'Redis memory',
  redisShards: 'Redis shards',
  redisNodes: 'Redis nodes',
  partitions: 'partitions',
  apiInstances: 'API instances',
  postgresConnections: 'Postgres connections',
};

/** A load multiple as the binding text writes it: 2.11x, 55.2x. */
export function times(m: number): string {
  if (!Number.isFinite(m)) return 'unbounded';
  return `${m < 10 ? m.toFixed(2) : m.toPrecision(3)}×`;
}

function cells(doc: PlanDocument, r: PlanRow): string[] {
  return [r.label, ...doc.columns.map((c) => r.display[c.key])];
}

/**
 * The headroom of each objective: keep the planned fleet and raise the load; the step curve counts
 * the objectives still met, and each falls at its load multiple (a dashed marker). The first to
 * fall is the binding constraint, ringed.
 */
export function headroomChart(doc: PlanDocument): ChartSpec | null {
  const cs = doc.binding.constraints;
  if (cs.length === 0) return null;
  const binding = cs.find((c) => c.id === doc.binding.constraint);
  const finite = cs.filter((c) => Number.isFinite(c.loadMultiple) && c.loadMultiple > 0).sort((a, b) => a.loadMultiple - b.loadMultiple);
  const ms = finite.map((c) => c.loadMultiple);
  const lo = Math.min(0.5, ...ms.map((m) => m / 1.6));
  const hi = Math.max(4, ...ms.map((m) => m * 1.6));
  let met = cs.filter((c) => c.loadMultiple > 0).length;
  const x = [lo];
  const y = [met];
  const px: number[] = [];
  const py: number[] = [];
  const titles: string[] = [];
  for (const c of finite) {
    x.push(c.loadMultiple, c.loadMultiple);
    y.push(met, met - 1);
    px.push(c.loadMultiple);
    py.push(met);
    titles.push(`${c.label}: holds ${times(c.loadMultiple)} the planned load, then ${c.limit}`);
    met -= 1;
  }
  x.push(hi);
  y.push(met);
  const series: SeriesSpec[] = [{ label: 'objectives met', color: COLORS.blue, x, y }];
  if (px.length) series.push({ label: 'an objective fails', color: COLORS.vermilion, x: px, y: py, style: 'points', titles, endLabel: false });
  const markers: MarkerSpec[] = [{ x: 1, label: 'planned load', detail: `the load the plan is sized for (growth x${doc.settings.growth} applied)` }];
  for (const c of finite) {
    const binds = c === binding ? ' (binds)' : '';
    markers.push({ x: c.loadMultiple, label: `${c.label} ${times(c.loadMultiple)}${binds}`, detail: `${c.label}${binds}: ${c.limit} past ${times(c.loadMultiple)} the planned load` });
  }
  return {
    x: { label: 'load, in multiples of the planned load (log scale)', unit: 'count', log: true },
    markers,
    panels: [
      {
        title: 'Objectives the planned fleet still meets as the load grows',
        y: { label: 'objectives met', unit: 'count', domain: [0, cs.length + 0.9] },
        series,
        refs: [],
        highlights: binding && finite.includes(binding) ? [{ x: binding.loadMultiple, y: py[finite.indexOf(binding)], label: '', color: COLORS.vermilion }] : [],
        height: 230,
      },
    ],
  };
}

/** Resources grouped by their spread (p5/p50, 1, p95/p50); the ones that do not move are listed apart. */
function spreads(doc: PlanDocument): { moving: Array<{ rows: PlanRow[]; y: number[] }>; still: string[] } {
  const moving: Array<{ rows: PlanRow[]; y: number[] }> = [];
  const still: string[] = [];
  for (const r of doc.resources) {
    const { p5, p50, p95 } = r.values;
    if (![p5, p50, p95].every(Number.isFinite) || !(p50 > 0)) continue;
    if (p5 === p50 && p95 === p50) {
      still.push(`${r.label} (${r.display.p50})`);
      continue;
    }
    const y = [p5 / p50, 1, p95 / p50].map((v) => Number(v.toPrecision(6)));
    const same = moving.find((m) => m.y.every((v, i) => v === y[i]));
    if (same) same.rows.push(r);
    else moving.push({ rows: [r], y });
  }
  return { moving, still };
}

/** Each resource at p5 and p95 as a share of its p50: how much the sampled inputs move it. */
export function spreadChart(doc: PlanDocument): ChartSpec | null {
  if (!doc.sampled) return null;
  const { moving } = spreads(doc);
  if (moving.length === 0) return null;
  const palette = [COLORS.blue, COLORS.vermilion, COLORS.green, COLORS.purple, COLORS.orange, COLORS.sky, COLORS.yellow];
  const series: SeriesSpec[] = moving.map((m, i) => ({
    label: m.rows.map((r) => SHORT[r.id] ?? r.label).join(', '),
    color: palette[i % palette.length],
    x: [5, 50, 95],
    y: m.y,
    style: 'linepoints',
    titles: (['p5', 'p50', 'p95'] as const).map((q, j) => `${q}: ${m.rows.map((r) => `${r.label} ${r.display[q]}`).join(', ')} (${pct(m.y[j])} of p50)`),
  }));
  return {
    x: { label: 'percentile over the sampled inputs', unit: 'count', domain: [0, 100] },
    markers: [],
    panels: [
      {
        title: 'Each resource at p5, p50 and p95, as a share of its p50',
        y: { label: 'share of p50', unit: 'share' },
        series,
        refs: [],
        height: 230,
      },
    ],
  };
}

function intervalsBlock(doc: PlanDocument): string[] {
  const sampled = doc.inputs.filter((i) => i.path !== null);
  const fixed = doc.inputs.filter((i) => i.path === null);
  const out = [
    '<h2>Intervals sampled</h2>',
    `<p>${esc(`${doc.settings.samples} draws of the scenario's [low, likely, high] intervals (${doc.settings.distribution}); the plan's p5/p50/p95 are over those draws.`)}</p>`,
    htmlTable(
      ['input', 'scenario key', 'low', 'likely', 'high', 'sampled p5', 'p50', 'p95'],
      sampled.map((i) => [i.label, i.path!, fmt(i.low), fmt(i.likely), fmt(i.high), fmt(i.sampled.p5), fmt(i.sampled.p50), fmt(i.sampled.p95)]),
      { numeric: [2, 3, 4, 5, 6, 7] },
    ),
  ];
  if (fixed.length) out.push(`<p class="lead">${esc(`Single values (no interval): ${fixed.map((i) => `${i.label} ${fmt(i.likely)}`).join(', ')}.`)}</p>`);
  return out;
}

function checkBlock(doc: PlanDocument): string[] {
  if (doc.check.length === 0) return [];
  const rows = doc.check.map((c) => [
    c.quantile,
    String(c.closedFormWorkers),
    c.runs.map((r) => `${r.workers} → ${fmtTime(r.lagP99Seconds)}`).join(', '),
    String(c.workers),
    fmtTime(c.lagP99Seconds),
    `${fmt(c.readP99Ms)} ms`,
    formatBytes(c.peakMemoryBytes),
    c.pass ? 'PASS' : 'FAIL',
  ]);
  return [
    '<h2>Simulation check</h2>',
    `<p>${esc(`The fan-out fleet at the samples at the p50 and p95 of the closed-form workers, simulated until the lag p99 meets ${fmtTime(doc.slo.fanoutLagP99Seconds)}.`)}</p>`,
    htmlTable(['sample', 'closed-form workers', 'runs: workers → lag p99', 'workers', 'lag p99', 'read p99', 'peak memory', 'lag objective'], rows, {
      numeric: [1, 3, 4, 5, 6],
      rowClass: doc.check.map((c) => (c.pass ? 'pass' : 'fail')),
    }),
  ];
}

export function planHtml(doc: PlanDocument): string {
  const s = doc.settings;
  const sc = doc.scenario;
  const charts: ChartData = {};
  const sampling = doc.sampled ? `${s.samples} samples of its intervals (${s.distribution})` : 'no intervals (one point)';
  const body: string[] = [
    `<h1>Capacity plan: ${esc(sc.name)}</h1>`,
    sc.description ? `<p class="lead">${esc(sc.description)}</p>` : '',
    `<p>${esc(`Policy ${sc.policy}, growth x${s.growth}, headroom ${pct(s.headroom)}, ${sampling}, seed ${sc.seed}; ${formatCount(sc.sampledUsers)} sampled users, ${formatCount(sc.sampledEdges)} follows, ${fmtTime(sc.durationSeconds)} simulated in the check.`)}</p>`,
    `<p>${esc(`Objectives: fan-out lag p99 ${fmtTime(doc.slo.fanoutLagP99Seconds)}, read p99 ${fmtTime(doc.slo.readP99Seconds)}, Redis memory ${Number.isFinite(doc.slo.redisMemoryBytes) ? formatBytes(doc.slo.redisMemoryBytes) : 'unbounded'}.`)}</p>`,
    doc.satisfied
      ? '<p><span class="verdict pass">Plan: every objective met within the limits</span></p>'
      : `<div class="callout fail"><p><span class="verdict fail">Plan: NOT SATISFIED</span></p><ul>${doc.problems.map((p) => `<li>${esc(p)}</li>`).join('')}</ul></div>`,
    '<h2>Plan</h2>',
    htmlTable(
      ['resource', ...doc.columns.map((c) => c.label), 'method'],
      doc.resources.map((r) => [...cells(doc, r), r.method]),
      { numeric: doc.columns.map((_, i) => i + 1) },
    ),
    htmlTable(
      ['workload and figures', ...doc.columns.map((c) => c.label)],
      doc.workload.map((r) => cells(doc, r)),
      { numeric: doc.columns.map((_, i) => i + 1), caption: 'What the plan is sized for' },
    ),
  ];
  const spread = spreadChart(doc);
  if (spread) {
    charts.spread = spread;
    const { still } = spreads(doc);
    body.push(
      chartFigure(
        'spread',
        'How much the intervals move each resource',
        `Each line is a resource at the p5, p50 and p95 of the sampled inputs, as a share of its p50 (the table has the values; hover a point for them). Resources with the same spread share a line.${still.length ? ` The same at p5, p50 and p95: ${still.join(', ')}.` : ''}`,
      ),
    );
  }
  body.push('<h2>Why</h2>');
  // plans saved before the design point existed have none
  if (doc.designPoint) body.push(`<p class="lead">At the design point of the reasons, the binding constraint and the what-ifs: ${esc(doc.designPoint.text)}.</p>`);
  body.push(`<ul>${doc.resources.map((r) => `<li><strong>${esc(r.label)}</strong>: ${esc(r.reason)}</li>`).join('')}</ul>`);
  if (doc.sampled) body.push(...intervalsBlock(doc));
  body.push(...checkBlock(doc));

  body.push('<h2>Binding constraint</h2>', `<div class="callout"><p>${esc(doc.binding.reason)}.</p></div>`);
  body.push(
    htmlTable(
      ['objective', 'holds up to (times the planned load)', 'then'],
      [...doc.binding.constraints].sort((a, b) => a.loadMultiple - b.loadMultiple).map((c) => [`${c.id === doc.binding.constraint ? '★ ' : ''}${c.label}`, times(c.loadMultiple), c.limit]),
      { numeric: [1], rowClass: [...doc.binding.constraints].sort((a, b) => a.loadMultiple - b.loadMultiple).map((c) => (c.id === doc.binding.constraint ? 'recommended' : '')) },
    ),
  );
  const headroom = headroomChart(doc);
  if (headroom) {
    charts.headroom = headroom;
    const unbounded = doc.binding.constraints.filter((c) => !Number.isFinite(c.loadMultiple)).map((c) => c.label);
    body.push(
      chartFigure(
        'headroom',
        'Headroom of each objective',
        `The planned fleet kept as it is while the load grows: the line counts the objectives still met, and drops where one fails (dashed purple lines, hover a red point for what runs out). The first to fail binds.${unbounded.length ? ` Never fails within the search: ${unbounded.join(', ')}.` : ''}`,
      ),
    );
  }

  body.push('<h2>What if</h2>');
  if (doc.whatIfs.length === 0) body.push('<p>No design knob to try for this policy.</p>');
  else body.push(htmlTable(['knob', 'from', 'to', 'what moves'], doc.whatIfs.map((w) => [w.knob, w.from, w.to, w.text]), { className: 'policies' }));
  body.push(`<p class="lead">${esc(`Growth x${s.growth} multiplies the users; headroom ${pct(s.headroom)} keeps every resource at most ${pct(1 - s.headroom)} busy (or full) at the peak. ${doc.method.closedForm} ${doc.method.simulated}`)}</p>`);

  return renderPage({
    title: `feedlab plan: ${sc.name}`,
    body: body.filter(Boolean),
    charts,
    footer: `feedlab ${esc(doc.tool.version)}, plan schema <code>${esc(doc.schema)}</code>. The same plan is in report.json and report.md.`,
  });
}
