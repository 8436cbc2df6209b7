// report.html for a comparison (feedlab.compare/1): the verdicts at a glance (a figure per row, a
// policy per column), then per figure one chart putting estimate, simulated and measured side by
// side for every policy (each document a dot, the range of a side's documents an error bar, the
// +-15% band around the measured mean), with its table and notes. A contended or partial
// measurement is said at the top, in red.
import type { CompareDocument, FigureComparison, Side } from '../../sim/compare/compare.js';
import { FIGURES, type FigureDef, type FigureUnit } from '../../sim/compare/figures.js';
import { countsLine, formatFigure, gapWords, formatRatio, formatShare, headlineOf, hasSpreads, sideCell, stagesCells, STAGES_LEGEND, unmatchedLine, verdictCell, VERDICT_WORDS } from '../compare.js';
import { COLORS } from './chart-specs.js';
import { COMPARE_CHART_DATA_ID, drawComparisonCharts, type CompareChartSpec, type CompareColumn, type CompareUnit } from './compare-chart.js';
import { esc, htmlTable, renderPage, scriptJson } from './page.js';

const SIDE_COLORS = { estimate: COLORS.orange, simulated: COLORS.blue, measured: COLORS.vermilion } as const;

/** The chart's axis unit and the factor into it (read latencies are drawn in seconds, like every duration). */
function chartUnit(unit: FigureUnit): [CompareUnit, number] {
  switch (unit) {
    case 's':
      return ['seconds', 1];
    case 'ms':
      return ['seconds', 1e-3];
    case 'bytes':
      return ['bytes', 1];
    case 'writes/s':
      return ['rate', 1];
    case 'commands':
    case 'writes':
    case 'cores':
      return ['count', 1];
  }
}

const clip = (s: string, n = 48): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** Every policy's estimate, simulated and measured values of one figure, as a chart; null when no side has a value. */
export function compareChart(doc: CompareDocument, def: FigureDef): CompareChartSpec | null {
  const rows = doc.figures.filter((f) => f.id === def.id);
  const [unit, k] = chartUnit(def.unit);
  const scaled = (v: number | null | undefined) => (v === null || v === undefined ? null : v * k);
  const positive: number[] = [];
  for (const f of rows) for (const v of [f.estimate, f.simulated, f.measured, ...f.values.simulated, ...f.values.measured]) if (typeof v === 'number' && v > 0) positive.push(v);
  if (!rows.some((f) => f.simulated !== null || f.measured !== null || typeof f.estimate === 'number')) return null;
  const docLabels = (policy: string, side: Side) => doc.policies.find((p) => p.policy === policy)?.documents[side].map((d) => d.label) ?? [];
  const column = (f: FigureComparison, side: Side): CompareColumn => {
    const labels = docLabels(f.policy, side);
    const values = f.values[side].flatMap((v, i) => (v === null ? [] : [{ label: labels[i] ?? `${i + 1}`, value: v * k }]));
    const spread = f.values[side].length > 1 ? `, spread ${formatShare(f.spread[side])} over ${f.values[side].length}` : '';
    return {
      side,
      mean: scaled(f[side]),
      values,
      ...(f[side] === null ? { missing: f.missing?.[side] ?? 'n/a' } : {}),
      title: `${side}${f.values[side].length > 1 ? ' (mean)' : ''}: ${formatFigure(f.unit, f[side])}${spread}`,
    };
  };
  // the estimate's column only in the charts of figures it gives
  const estimate = doc.sides.estimate && rows.some((f) => typeof f.estimate === 'number');
  return {
    unit,
    // values over more than a factor of 50 apart (push against pull, say) share a log axis
    log: positive.length > 1 && Math.max(...positive) / Math.min(...positive) > 50,
    band: doc.agreement,
    sides: [
      ...(estimate ? [{ side: 'estimate' as const, label: 'estimate', color: SIDE_COLORS.estimate }] : []),
      { side: 'simulated', label: `simulated: ${clip(doc.sides.simulated.label, 40)}`, color: SIDE_COLORS.simulated },
      { side: 'measured', label: `measured: ${clip(doc.sides.measured.label, 40)}`, color: SIDE_COLORS.measured },
    ],
    groups: rows.map((f) => ({
      policy: f.policy,
      verdict: f.verdict === 'n/a' ? 'n/a' : `${f.ratio === null ? '' : `${formatRatio(f.ratio)} `}${VERDICT_WORDS[f.verdict]}`,
      verdictClass: f.verdict,
      measured: scaled(f.measured),
      columns: [
        ...(estimate ? [{ side: 'estimate' as const, mean: scaled(f.estimate), values: [], title: `estimate: ${formatFigure(f.unit, f.estimate)}`, ...(typeof f.estimate === 'number' ? {} : { missing: 'no estimate' }) }] : []),
        column(f, 'simulated'),
        column(f, 'measured'),
      ],
    })),
  };
}

/** Each document's value, for the table's last column: "seed 1 9 ms, seed 2 11 ms; run 1 8 ms, run 2 8.2 ms". */
function documentsCell(doc: CompareDocument, f: FigureComparison): string {
  const p = doc.policies.find((x) => x.policy === f.policy);
  const side = (sd: Side) => f.values[sd].map((v, i) => `${p?.documents[sd][i]?.label ?? i + 1} ${formatFigure(f.unit, v)}`).join(', ');
  return `${side('simulated')}; ${side('measured')}`;
}

/** A verdict that does not wrap: "inside the noise" on one line. */
const unbroken = (s: string): string => s.replace(/ /g, '\u00a0');

function figureTable(doc: CompareDocument, def: FigureDef): string {
  const rows = doc.figures.filter((f) => f.id === def.id);
  const spreads = hasSpreads(doc);
  const head = ['policy', ...(doc.sides.estimate ? ['estimate'] : []), 'simulated', ...(spreads ? ['spread'] : []), 'measured', ...(spreads ? ['spread'] : []), 'ratio', 'noise', ...(spreads ? ['each document (simulated; measured)'] : []), 'verdict'];
  const body = rows.map((f) => [
    f.policy,
    ...(doc.sides.estimate ? [typeof f.estimate === 'number' ? formatFigure(f.unit, f.estimate) : ''] : []),
    sideCell(f, 'simulated'),
    ...(spreads ? [formatShare(f.spread.simulated)] : []),
    sideCell(f, 'measured'),
    ...(spreads ? [formatShare(f.spread.measured)] : []),
    formatRatio(f.ratio),
    formatShare(f.noise),
    ...(spreads ? [documentsCell(doc, f)] : []),
    f.verdict === 'n/a' ? verdictCell(f) : unbroken(verdictCell(f)),
    ...(doc.sides.replayStages ? stagesCells(f) : []),
  ]);
  if (doc.sides.replayStages) head.push('stages ratio', 'gap');
  const numeric = head.map((h, i) => (h === 'policy' || h === 'verdict' || h === 'gap' || h.startsWith('each') ? -1 : i)).filter((i) => i >= 0);
  return htmlTable(head, body, { numeric, className: 'policies', rowClass: rows.map((f) => (f.verdict === 'within' || f.verdict === 'noise' ? 'pass' : f.verdict === 'outside' ? 'fail' : '')) });
}

function figureBlock(doc: CompareDocument, def: FigureDef, charts: Record<string, CompareChartSpec>): string[] {
  const rows = doc.figures.filter((f) => f.id === def.id);
  const notes = rows.filter((f) => f.note).map((f) => `<li>${esc(`${f.policy}: ${f.note}`)}</li>`);
  const spec = compareChart(doc, def);
  const caption = `${def.about}.`;
  const out = ['<figure class="chart">', `<figcaption><h3>${esc(def.label)} <code>${esc(def.id)}</code></h3><p>${esc(caption)}</p></figcaption>`];
  if (spec) {
    charts[def.id] = spec;
    out.push(`<div class="plot" data-compare-chart="${esc(def.id)}" data-title="${esc(def.label)}"><p class="nojs">The chart is drawn by the page's script; the figures are in the table.</p></div>`);
  } else {
    out.push('<p class="lead">Neither side has this figure.</p>');
  }
  out.push('</figure>', figureTable(doc, def));
  if (notes.length > 0) out.push(`<ul>${notes.join('')}</ul>`);
  return out;
}

/** The verdicts at a glance: a figure per row, a policy per column, each cell the ratio and the verdict. */
function overviewTable(doc: CompareDocument): string {
  const policies = doc.policies.map((p) => p.policy);
  const rows = FIGURES.map((def) => [
    def.label,
    ...policies.map((p) => {
      const f = doc.figures.find((x) => x.id === def.id && x.policy === p);
      if (!f) return '';
      if (f.verdict === 'n/a') return `n/a (${Object.values(f.missing ?? {}).join(', ') || 'no value'})`;
      return `${formatRatio(f.ratio)} ${VERDICT_WORDS[f.verdict]}${f.gap ? ` (${gapWords(f.gap)})` : ''}`.trim();
    }),
  ]);
  return htmlTable(['figure', ...policies], rows, { numeric: policies.map((_, i) => i + 1), caption: doc.sides.replayStages ? "simulated / measured, the verdict, and of a figure outside whose gap it is" : 'simulated / measured, and the verdict' });
}

function chartScript(specs: Record<string, CompareChartSpec>): string[] {
  const code = `(${drawComparisonCharts.toString()})();`;
  if (/<\/script|<!--/i.test(code)) throw new Error('comparison chart code contains </script or <!--; it cannot be inlined');
  return [`<script type="application/json" id="${COMPARE_CHART_DATA_ID}">${scriptJson(specs)}</script>`, `<script>\n${code}\n</script>`];
}

export function compareHtml(doc: CompareDocument): string {
  const c = doc.counts;
  const charts: Record<string, CompareChartSpec> = {};
  const body: string[] = [
    `<h1>Compare: ${esc(doc.scenario)}</h1>`,
    `<p>${esc(`Simulated side: ${doc.sides.simulated.label}. Measured side: ${doc.sides.measured.label}.${doc.sides.estimate ? ' With the estimate.' : ''}`)}</p>`,
    `<p class="lead">${esc(`Simulated: ${doc.sides.simulated.sources.join('; ')}. Measured: ${doc.sides.measured.sources.join(', ')}.`)}</p>`,
  ];
  const stages = doc.sides.replayStages;
  if (stages) body.push(`<p class="lead">${esc(`Whose each gap is: ${stages.label}; ${stages.sources.join('; ')}.`)}</p>`);
  for (const w of doc.warnings) {
    const loud = /^(CONTENDED|PARTIAL) /.test(w);
    body.push(`<div class="callout${loud ? ' fail' : ''}"><p>${loud ? `<strong>${esc(w)}</strong>` : esc(w)}</p></div>`);
  }
  const unmatched = unmatchedLine(doc);
  if (unmatched) body.push(`<div class="callout"><p>${esc(unmatched)}</p></div>`);
  body.push(
    `<p><span class="verdict ${c.outside === 0 ? 'pass' : 'fail'}">${esc(c.outside === 0 ? 'No figure outside 15% beyond the noise' : `${c.outside} ${c.outside === 1 ? 'figure' : 'figures'} OUTSIDE 15%`)}</span></p>`,
    `<p>${esc(`${countsLine(doc)}, over ${doc.policies.length} ${doc.policies.length === 1 ? 'policy' : 'policies'}.`)}</p>`,
    ...(stages ? [`<p class="lead">${esc(`${STAGES_LEGEND}.`)}</p>`] : []),
    '<h2>Verdicts</h2>',
    overviewTable(doc),
    `<p class="lead">${esc(`ratio = simulated / measured, each the mean over its side's documents; within 15%: |ratio - 1| <= ${doc.agreement}. A side's spread is (max - min) / mean over its documents (0 for one); noise = the simulated spread + the measured spread (+ a side's clock step over its mean where it read whole milliseconds: a replay's lags, hop and pickup p99), and a difference outside 15% but within the noise is "inside the noise". n/a: a side has no such figure (not measured by a replay, not modelled by the simulator), never a made-up number.`)}</p>`,
  );
  let group = '';
  for (const def of FIGURES) {
    if (def.group !== group) {
      group = def.group;
      body.push(`<h2>${esc(group[0].toUpperCase() + group.slice(1))}</h2>`);
    }
    body.push(...figureBlock(doc, def, charts));
  }
  body.push(...chartScript(charts));
  return renderPage({
    title: `feedlab compare: ${headlineOf(doc)}`,
    body,
    charts: {},
    footer: `feedlab ${esc(doc.tool.version)}, compare schema <code>${esc(doc.schema)}</code>. The same figures are in report.json and report.md.`,
  });
}
