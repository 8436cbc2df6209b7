// report.html for a run (feedlab.result/1), and the run sections a sweep page reuses.
import type { RunResult } from '../../sim/result.js';
import { formatCount } from '../../sim/scenario/units.js';
import { fmtSeconds, hasThresholdChecks, headline, partialLine, sloValue, summarySections, targetValue } from '../summary-lines.js';
import { followersChart, lagBacklogChart, memoryChart, readLatencyChart } from './chart-specs.js';
import { chartFigure, esc, htmlTable, renderPage } from './page.js';
import type { ChartData } from './spec.js';

export interface Block {
  html: string[];
  charts: ChartData;
}


/** A run or sweep stopped early says so at the top. */
export function partialBlock(line: string | null): string {
  return line ? `<div class="callout fail"><p><strong>${esc(line)}</strong></p></div>` : '';
}

export function sloBlock(r: RunResult): string[] {
  const s = r.summary.slo;
  // a threshold's target carries its operator (an objective's is always <=)
  const rows = s.checks.map((c) => [c.threshold ? `${c.description} (threshold ${c.id})` : c.description, `${c.threshold ? `${c.threshold.op} ` : ''}${targetValue(c)}`, sloValue(c.unit, c.actual), c.pass ? 'PASS' : 'FAIL']);
  const heading = hasThresholdChecks(r) ? `SLO and thresholds: ${s.pass ? 'all met' : 'NOT MET'}` : `SLO: ${s.pass ? 'all met' : 'NOT MET'}`;
  return [
    `<p><span class="verdict ${s.pass ? 'pass' : 'fail'}">${esc(heading)}</span></p>`,
    htmlTable(['objective', 'target', 'actual', 'verdict'], rows, { numeric: [1, 2], rowClass: s.checks.map((c) => (c.pass ? 'pass' : 'fail')) }),
  ];
}

/** The three charts over time, with their captions. */
export function timeChartsBlock(r: RunResult): Block {
  const events = r.events.length > 0 ? ` Dashed purple lines mark the scenario's events (${[...new Set(r.events.map((e) => e.kind))].join(', ')}).` : '';
  return {
    html: [
      chartFigure(
        'lag-backlog',
        'Fan-out lag and backlog over time',
        `How long followers wait for a post to reach their timeline (p99 of the posts made in each minute, weighted by followers), and the timeline writes waiting for a fan-out worker.${events}`,
      ),
      chartFigure(
        'memory',
        'Redis memory over time',
        `Timeline sorted sets and celebrity lists with Redis 7's measured encodings, against the memory budget; the dashed grey line is the design documents' 24 bytes per entry (${r.summary.redis.naiveUnderestimate.toFixed(1)}x under at the end).`,
      ),
      chartFigure('read-latency', 'Read latency over time', 'The p99 of home-feed page reads in each minute against the read SLO, and the read rate with the cold reads (timelines rebuilt from Postgres).'),
    ],
    charts: { 'lag-backlog': lagBacklogChart(r), memory: memoryChart(r), 'read-latency': readLatencyChart(r) },
  };
}

export function followersBlock(r: RunResult): Block {
  const f = r.followers;
  const spec = f && followersChart(f);
  if (!f || !spec) return { html: [], charts: {} };
  const t = f.tail;
  const fit = t
    ? `The dashed line is the power-law tail fitted by discrete maximum likelihood: α = ${t.alpha.toFixed(3)} ± ${t.sigma.toFixed(3)} from xmin = ${formatCount(t.xmin)} followers (${t.nTail.toLocaleString('en-US')} accounts in the tail, Kolmogorov-Smirnov distance ${t.ks.toFixed(4)}).`
    : 'No power-law tail could be fitted.';
  const scale = r.scenario.scale > 1 ? ` Each sampled account stands for ${formatCount(r.scenario.scale)} accounts of the ${formatCount(r.scenario.population)}-user population.` : '';
  return {
    html: [
      chartFigure(
        'followers',
        'Follower distribution',
        `Follower counts of the ${formatCount(f.accounts)}-account sampled graph (largest ${formatCount(f.maxFollowers)}; ${formatCount(f.withoutFollowers)} accounts with no follower are off the log axis). ${fit}${scale}`,
      ),
    ],
    charts: { followers: spec },
  };
}

export function figuresBlock(r: RunResult): string[] {
  const out = ['<h2>Figures</h2>'];
  for (const s of summarySections(r)) out.push(htmlTable(['figure', 'value'], s.rows, { caption: s.title }));
  if (r.events.length > 0) {
    out.push('<h2>Events</h2>', htmlTable(['at', 'event', 'what happened'], r.events.map((e) => [fmtSeconds(e.at), e.kind, e.detail]), { numeric: [0] }));
  }
  return out;
}

export function runHtml(r: RunResult): string {
  const time = timeChartsBlock(r);
  const followers = followersBlock(r);
  const body = [
    `<h1>${esc(r.scenario.name)}: ${esc(r.policy)}</h1>`,
    r.scenario.description ? `<p class="lead">${esc(r.scenario.description)}</p>` : '',
    `<p>${esc(headline(r))}</p>`,
    partialBlock(partialLine(r)),
    ...sloBlock(r),
    '<h2>Over time</h2>',
    ...time.html,
    ...(followers.html.length ? ['<h2>Follower graph</h2>', ...followers.html] : []),
    ...figuresBlock(r),
  ].filter(Boolean);
  return renderPage({
    title: `feedlab: ${r.scenario.name} (${r.policy})`,
    body,
    charts: { ...time.charts, ...followers.charts },
    footer: `feedlab ${esc(r.tool.version)}, result schema <code>${esc(r.schema)}</code>. The same figures are in report.json and report.md.`,
  });
}
