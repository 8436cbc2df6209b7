// report.html: one self-contained page per result document, chosen by its schema.
import type { RunResult } from '../../sim/result.js';
import type { SweepResult } from '../../sim/sweep.js';
import { runHtml } from './run-page.js';
import { sweepHtml } from './sweep-page.js';

export { chartFigure, esc, htmlTable, renderPage, scriptJson, type Page } from './page.js';
export type { ChartData, ChartSpec } from './spec.js';

/** The documents report.html is written for. A plan (feedlab.plan/1) joins here with its own page. */
export type HtmlDocument = RunResult | SweepResult;

export function htmlReport(doc: HtmlDocument): string {
  switch (doc.schema) {
    case 'feedlab.result/1':
      return runHtml(doc);
    case 'feedlab.sweep/1':
      return sweepHtml(doc);
    default:
      throw new Error(`no HTML report for schema ${(doc as { schema?: unknown }).schema}`);
  }
}
