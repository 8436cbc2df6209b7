// The estimate for people: one line per figure, or, with --explain, the formula, the formula with
// the numbers put in and the result, under headings, the document's value beside ours.
import { formatFigure } from './format.js';
import type { EstimateFigure, EstimateResult } from './estimate.js';
import { INPUTS } from './inputs.js';
import { findPreset } from './presets.js';

function documentNote(f: EstimateFigure): string {
  if (!f.document) return '';
  return f.document
    .map((d) => {
      const where = d.where ? ` (${d.where})` : '';
      if (d.agrees === null) return `   the document, with its own inputs: ${d.stated}${where}`;
      return d.erratum ? `   ERRATUM: the document states ${d.stated}${where}; ${d.erratum}` : `   document: ${d.stated}${where} (agrees)`;
    })
    .join('');
}

export function estimateText(r: EstimateResult, explain: boolean): string {
  const out: string[] = [];
  const preset = r.preset ? findPreset(r.preset) : undefined;
  out.push(preset ? `${preset.title}\n${preset.source}` : `feedlab estimate: ${r.source ?? 'feedlab defaults'} and the given inputs`);
  out.push('');
  out.push('Inputs');
  const w = Math.max(...INPUTS.map((i) => i.name.length));
  for (const spec of INPUTS) {
    const assumed = r.assumed.includes(spec.name);
    out.push(`  ${spec.name.padEnd(w)}  ${formatFigure(r.inputs[spec.name], spec.unit).padEnd(12)} ${assumed ? '(assumed: feedlab default)' : ''}`.trimEnd());
  }
  let heading = '';
  const labelWidth = Math.min(60, Math.max(...r.figures.map((f) => f.label.length)));
  for (const f of r.figures) {
    if (f.heading !== heading) {
      heading = f.heading;
      out.push('', heading);
    }
    const value = formatFigure(f.value, f.unit);
    if (explain) {
      out.push(`  ${f.label}`);
      out.push(`    ${f.id} = ${f.formula}`);
      if (f.substituted !== f.formula && f.substituted !== value) out.push(`    ${' '.repeat(f.id.length)} = ${f.substituted}`);
      out.push(`    ${' '.repeat(f.id.length)} = ${value}${documentNote(f)}`);
    } else {
      out.push(`  ${f.label.padEnd(labelWidth)}  ${value}${documentNote(f)}`);
    }
  }
  if (r.notes.length > 0) {
    out.push('', 'Notes');
    for (const n of r.notes) out.push(`  - ${n}`);
  }
  const errata = r.figures.reduce((n, f) => n + (f.document ?? []).filter((d) => d.erratum).length, 0);
  if (r.preset) out.push('', `${errata} errat${errata === 1 ? 'um' : 'a'} in the document's figures.`);
  return out.join('\n') + '\n';
}
