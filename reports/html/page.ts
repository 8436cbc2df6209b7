// The page around the charts: one self-contained HTML file (styles, data and chart code inlined,
// nothing fetched), with tables that read without JavaScript. Run, sweep and (later) plan reports
// are built from these pieces.
import { drawCharts } from './charts.js';
import type { ChartData } from './spec.js';

export const CHART_DATA_ID = 'feedlab-charts';

/** Text for HTML content and attribute values. */
export function esc(s: string | number): string {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/**
 * JSON that is safe inside a <script> element: no `<` (so no `</script>` or `<!--`), no `>` or `&`,
 * and no U+2028/U+2029; numbers cut to 6 significant digits like the result documents.
 */
export function scriptJson(value: unknown): string {
  const json = JSON.stringify(value, (_k, v) => (typeof v === 'number' && Number.isFinite(v) && !Number.isInteger(v) ? Number(v.toPrecision(6)) : v));
  return json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The chart code, inlined: drawCharts' own source, run once the page is parsed. */
function chartScript(): string {
  const code = `(${drawCharts.toString()})();`;
  if (/<\/script|<!--/i.test(code)) throw new Error('chart code contains </script or <!--; it cannot be inlined');
  return code;
}

/** A chart's place on the page: the container the chart code draws into, and its caption (plain text). */
export function chartFigure(name: string, title: string, caption = ''): string {
  return [
    '<figure class="chart">',
    `<figcaption><h3>${esc(title)}</h3>${caption ? `<p>${esc(caption)}</p>` : ''}</figcaption>`,
    `<div class="plot" data-chart="${esc(name)}" data-title="${esc(title)}"><p class="nojs">The chart is drawn by the page's script; the figures are in the tables.</p></div>`,
    '</figure>',
  ].join('\n');
}

export interface TableOptions {
  /** Columns (by index) aligned right: figures. */
  numeric?: number[];
  /** A class per row ('' for none). */
  rowClass?: string[];
  caption?: string;
  /** A class for the table ('policies': the first column does not wrap). */
  className?: string;
}

/** A table of plain-text cells (escaped here). */
export function htmlTable(head: string[], rows: string[][], opts: TableOptions = {}): string {
  const align = (i: number) => (opts.numeric?.includes(i) ? ' class="num"' : '');
  const out = [opts.className ? `<table class="${esc(opts.className)}">` : '<table>'];
  if (opts.caption) out.push(`<caption>${esc(opts.caption)}</caption>`);
  out.push(`<thead><tr>${head.map((h, i) => `<th${align(i)}>${esc(h)}</th>`).join('')}</tr></thead>`, '<tbody>');
  rows.forEach((r, ri) => {
    const cls = opts.rowClass?.[ri] ? ` class="${esc(opts.rowClass[ri])}"` : '';
    out.push(`<tr${cls}>${r.map((c, i) => `<td${align(i)}>${esc(c)}</td>`).join('')}</tr>`);
  });
  out.push('</tbody></table>');
  return out.join('\n');
}

export interface Page {
  title: string;
  /** HTML blocks, in order. */
  body: string[];
  charts: ChartData;
  footer: string;
}

export function renderPage(p: Page): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="feedlab">
<title>${esc(p.title)}</title>
<style>
${STYLE}
</style>
</head>
<body>
<main>
${p.body.join('\n')}
</main>
<footer>${p.footer}</footer>
<script type="application/json" id="${CHART_DATA_ID}">${scriptJson(p.charts)}</script>
<script>
${chartScript()}
</script>
</body>
</html>
`;
}

const STYLE = `
:root { color-scheme: light; --ink: #222; --muted: #666; --rule: #ddd; --pass: #17703a; --fail: #b3261e; --accent: #0072B2; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main, footer { max-width: 1000px; margin: 0 auto; padding: 0 20px; }
main { padding-top: 18px; }
h1 { font-size: 1.6em; margin: 0.4em 0 0.2em; }
h2 { font-size: 1.25em; margin: 1.6em 0 0.5em; padding-bottom: 0.2em; border-bottom: 1px solid var(--rule); }
h3 { font-size: 1.05em; margin: 0 0 0.2em; }
p { margin: 0.4em 0; }
.lead { color: var(--muted); }
.verdict { display: inline-block; font-weight: 700; padding: 0.25em 0.7em; border-radius: 4px; color: #fff; }
.verdict.pass { background: var(--pass); }
.verdict.fail { background: var(--fail); }
.callout { border-left: 4px solid var(--accent); background: #f3f8fc; padding: 0.6em 0.9em; margin: 0.8em 0; }
.callout.fail { border-left-color: var(--fail); background: #fdf3f2; }
table { border-collapse: collapse; margin: 0.6em 0 1em; width: 100%; font-size: 0.93em; }
caption { text-align: left; font-weight: 600; padding: 0.3em 0; }
th, td { text-align: left; padding: 0.3em 0.6em; border-bottom: 1px solid var(--rule); vertical-align: top; }
th { background: #f6f6f6; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.pass td:last-child { color: var(--pass); font-weight: 600; }
tr.fail td:last-child { color: var(--fail); font-weight: 600; }
tr.recommended td { background: #fff6e0; font-weight: 600; }
table.policies td:first-child { white-space: nowrap; }
figure.chart { margin: 1.2em 0 1.6em; }
figcaption p { color: var(--muted); margin: 0 0 0.3em; font-size: 0.92em; }
.plot { position: relative; }
.plot svg { display: block; width: 100%; height: auto; }
.plot svg text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; font-size: 12px; fill: #333; }
.plot svg text.tick { font-size: 11.5px; fill: #555; }
.plot svg text.panel-title { font-size: 13px; font-weight: 600; fill: #222; }
.plot svg text.axis-title { font-size: 12px; fill: #444; }
.plot svg text.note { font-size: 11.5px; font-style: italic; fill: #a04000; }
.plot svg text.marker-label { font-size: 11.5px; font-weight: 600; }
.plot svg text.strong { font-weight: 700; }
.plot svg text.halo { paint-order: stroke; stroke: #fff; stroke-width: 3.5px; stroke-linejoin: round; }
.plot .nojs { color: var(--muted); font-style: italic; }
.tip { position: absolute; pointer-events: none; background: rgba(255,255,255,0.96); border: 1px solid #bbb; border-radius: 4px; padding: 0.35em 0.6em; font-size: 12px; line-height: 1.35; box-shadow: 0 2px 6px rgba(0,0,0,0.12); white-space: nowrap; }
.tip-head { font-weight: 600; margin-bottom: 0.15em; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 5px; vertical-align: -1px; }
footer { color: var(--muted); font-size: 0.85em; padding-top: 1em; padding-bottom: 2em; border-top: 1px solid var(--rule); margin-top: 2em; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 0.92em; }
@media print {
  body { font-size: 11pt; }
  main, footer { max-width: none; padding: 0; }
  figure.chart, table { break-inside: avoid; page-break-inside: avoid; }
  h2 { break-after: avoid; page-break-after: avoid; }
  .tip { display: none !important; }
  .verdict { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
`.trim();
