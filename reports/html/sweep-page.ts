// report.html for a sweep (feedlab.sweep/1): the policies' table, the trade-off curves against the
// threshold, and the recommended policy's run over time.
import type { SweepResult } from '../../sim/sweep.js';
import { formatCount } from '../../sim/scenario/units.js';
import { fmtSeconds } from '../summary-lines.js';
import { everything, SWEEP_HEAD, sweepCells, sweepPartialLine } from '../sweep.js';
import { commonSuffix, tradeoffChart } from './chart-specs.js';
import { chartFigure, esc, htmlTable, renderPage } from './page.js';
import { followersBlock, partialBlock, sloBlock, timeChartsBlock } from './run-page.js';
import type { ChartData } from './spec.js';

export function sweepHtml(s: SweepResult): string {
  const sc = s.scenario;
  const rec = s.recommended;
  const recommendedRun = s.runs.find((r) => r.policy === rec?.policy);
  const shown = recommendedRun ?? s.runs[0];
  const charts: ChartData = {};
  const body: string[] = [
    `<h1>Sweep: ${esc(sc.name)}</h1>`,
    sc.description ? `<p class="lead">${esc(sc.description)}</p>` : '',
    `<p>${esc(`${s.rows.length} policies over one graph and seed ${sc.seed}: ${formatCount(sc.population)} users (${formatCount(sc.sampledUsers)} sampled, ${formatCount(sc.sampledEdges)} follows), ${fmtSeconds(sc.durationSeconds)} simulated.`)}</p>`,
    partialBlock(sweepPartialLine(s)),
    rec
      ? `<div class="callout"><p><span class="verdict pass">Recommended: ${esc(rec.policy)}</span></p><p>${esc(rec.reason)}.</p></div>`
      : `<div class="callout fail"><p><span class="verdict fail">No policy meets every ${everything(s)}</span></p></div>`,
    '<h2>Policies</h2>',
    htmlTable(
      SWEEP_HEAD,
      s.rows.map((r) => {
        const c = sweepCells(r);
        if (r.policy === rec?.policy) c[0] = `★ ${c[0]}`;
        return c;
      }),
      { className: 'policies', numeric: [1, 2, 3, 4, 5, 6], rowClass: s.rows.map((r) => (r.policy === rec?.policy ? 'recommended' : r.sloPass ? 'pass' : 'fail')) },
    ),
    "<p class=\"lead\">Servers = Redis memory hosts (64 GB of peak memory each) + Redis cores (100k commands/s each) + fan-out workers (mean writes/s over one worker's rated writes/s). Lag p99 is per follower.</p>",
  ];
  const tradeoff = tradeoffChart(s);
  if (tradeoff) {
    const suffix = commonSuffix(s.rows.map((r) => r.policy));
    charts.tradeoff = tradeoff;
    body.push(
      '<h2>Trade-off against the threshold</h2>',
      chartFigure(
        'tradeoff',
        'Lag, memory and read latency against the push/pull threshold',
        `Each point is one threshold:T policy; a lower threshold pulls more authors at read time (less fan-out, slower reads), a higher one pushes more (more fan-out and memory, faster reads). The other policies are the labelled horizontal lines, the SLO targets the orange dashed ones${rec ? `; the recommended policy is ringed, or starred (★) and drawn thicker` : ''}.${suffix ? ` Every policy here is ${suffix.slice(1)}.` : ''}`,
      ),
    );
  }
  if (shown) {
    const time = timeChartsBlock(shown);
    Object.assign(charts, time.charts);
    body.push(`<h2>${recommendedRun ? 'The recommended policy' : 'The first policy'} over time: ${esc(shown.policy)}</h2>`, ...sloBlock(shown), ...time.html);
    const followers = followersBlock(shown);
    Object.assign(charts, followers.charts);
    if (followers.html.length) body.push('<h2>Follower graph</h2>', ...followers.html);
  }
  const version = s.runs[0]?.tool.version ?? '';
  return renderPage({
    title: `feedlab sweep: ${sc.name}`,
    body: body.filter(Boolean),
    charts,
    footer: `feedlab ${esc(version)}, sweep schema <code>${esc(s.schema)}</code>; every run's full result is in report.json.`,
  });
}
