// The files `--out DIR` writes for a result document: report.json, report.md and report.html, and
// series.csv for a run's or a sweep's time series.
//
// Every renderer works from the document as report.json holds it (numbers cut to 6 significant
// digits, parsed back), so `feedlab run --out` and `feedlab report report.json` write the same bytes.
//
// Adding a document type: give it an entry in RENDERERS with its Markdown and HTML renderers (the
// HTML page can be built from reports/html's renderPage, htmlTable and chartFigure), and add its type
// to ReportDocument.
import { stringifyResult, RESULT_SCHEMA, type RunResult } from '../sim/result.js';
import { COMPARE_SCHEMA, type CompareDocument } from '../sim/compare/compare.js';
import type { PlanDocument } from '../sim/plan/plan.js';
import type { SweepResult } from '../sim/sweep.js';
import { compareMarkdown } from './compare.js';
import { compareHtml } from './html/compare-page.js';
import { htmlReport } from './html/index.js';
import { planHtml } from './html/plan-page.js';
import { markdownReport } from './markdown.js';
import { planMarkdown } from './plan.js';
import { seriesCsv } from './series-csv.js';
import { sweepMarkdown } from './sweep.js';

export type ReportDocument = RunResult | SweepResult | PlanDocument | CompareDocument;

interface Renderers<D> {
  markdown(doc: D): string;
  html(doc: D): string;
  /** The time series as CSV, for documents that have them. */
  csv?(doc: D): string;
}

const RENDERERS: { [schema: string]: Renderers<never> } = {
  [RESULT_SCHEMA]: { markdown: markdownReport, html: htmlReport, csv: seriesCsv } satisfies Renderers<RunResult>,
  'feedlab.sweep/1': { markdown: sweepMarkdown, html: htmlReport, csv: seriesCsv } satisfies Renderers<SweepResult>,
  'feedlab.plan/1': { markdown: planMarkdown, html: planHtml } satisfies Renderers<PlanDocument>,
  [COMPARE_SCHEMA]: { markdown: compareMarkdown, html: compareHtml } satisfies Renderers<CompareDocument>,
};

/** The schemas reportFiles renders, for error messages. */
export const REPORT_SCHEMAS = Object.keys(RENDERERS);

/** JSON numbers that stringifyResult writes as strings (they have no JSON form). */
function reviveNonFinite(_key: string, v: unknown): unknown {
  return v === 'Infinity' ? Infinity : v === '-Infinity' ? -Infinity : v;
}

/** The document as report.json holds it, and that text. */
export function canonical<D>(doc: D): { json: string; doc: D } {
  const json = stringifyResult(doc);
  return { json, doc: JSON.parse(json, reviveNonFinite) as D };
}

/** { 'report.json', 'report.md', 'report.html' } for a run, sweep, plan or compare document, and 'series.csv' for a run's or a sweep's time series. */
export function reportFiles(doc: ReportDocument): Record<string, string> {
  const renderers = RENDERERS[doc.schema] as Renderers<ReportDocument> | undefined;
  if (!renderers) throw new Error(`no report for schema ${String(doc.schema)} (valid: ${REPORT_SCHEMAS.join(', ')})`);
  const c = canonical(doc);
  return {
    'report.json': c.json + '\n',
    'report.md': renderers.markdown(c.doc),
    'report.html': renderers.html(c.doc),
    ...(renderers.csv ? { 'series.csv': renderers.csv(c.doc) } : {}),
  };
}
