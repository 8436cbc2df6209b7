// The comparison (feedlab.compare/1) as text: the terminal report and report.md. One table per
// policy, a row per figure: estimate (when given), simulated, measured, their ratio, the noise and
// the verdict; a contended or partial measurement is said above everything else.
import type { CompareDocument, FigureComparison, Gap, Side, Verdict } from '../sim/compare/compare.js';
import { CALIBRATED_ONLY_COSTS, FIGURES, type FigureUnit } from '../sim/compare/figures.js';
import { formatBytes, formatCount } from '../sim/scenario/units.js';
import { fmtMs, fmtSeconds } from './summary-lines.js';

const missing = (v: number | null | undefined): v is null | undefined => v === null || v === undefined || Number.isNaN(v);

/** A figure's value in its unit: 10 ms, 1.2 GB, 3.4k/s, 11.5. */
export function formatFigure(unit: FigureUnit, v: number | null | undefined): string {
  if (missing(v)) return 'n/a';
  switch (unit) {
    case 's':
      return fmtSeconds(v);
    case 'ms':
      return fmtMs(v);
    case 'bytes':
      return formatBytes(v);
    case 'writes/s':
      return `${formatCount(v)}/s`;
    case 'commands':
    case 'writes':
      return formatCount(v);
    case 'cores':
      return `${Number(v.toPrecision(3))} cores`;
  }
}

/** A ratio to three significant digits: 0.912, 1.25, 0.00213. */
export const formatRatio = (r: number | null | undefined): string => (missing(r) ? '' : String(Number(r.toPrecision(3))));
/** A relative spread or noise as a percentage: 0%, 8%, 12.5%. */
export const formatShare = (s: number | null | undefined): string => (missing(s) ? '' : `${Number((s * 100).toPrecision(s < 0.1 ? 2 : 3))}%`);

export const VERDICT_WORDS: Record<Verdict, string> = { within: 'within 15%', noise: 'inside the noise', outside: 'OUTSIDE', 'n/a': 'n/a' };

/** The value of one side in a cell, or why there is none ("not measured"). */
export function sideCell(f: FigureComparison, side: Side): string {
  const v = f[side];
  return v === null ? (f.missing?.[side] ?? 'n/a') : formatFigure(f.unit, v);
}

/** The verdict with its reason when there is no ratio. */
export function verdictCell(f: FigureComparison): string {
  if (f.verdict === 'n/a') return 'n/a';
  if (f.ratio === null && f.why) return `${VERDICT_WORDS[f.verdict]} (${f.why})`;
  return VERDICT_WORDS[f.verdict];
}

export function headlineOf(doc: CompareDocument): string {
  return `${doc.scenario}: ${doc.sides.simulated.label} against ${doc.sides.measured.label}`;
}

/** "12 within 15%, 2 inside the noise, 3 outside (2 the costs', 1 the model's), 8 n/a (a side without the figure)". */
export function countsLine(doc: CompareDocument): string {
  const c = doc.counts;
  const gaps = doc.gaps && c.outside > 0 ? ` (${gapsText(doc.gaps)})` : '';
  return `${c.within} within 15%, ${c.noise} inside the noise, ${c.outside} outside${gaps}, ${c['n/a']} n/a (a side without the figure)`;
}

const GAP_WORDS: Record<Gap, string> = { costs: "the costs'", model: "the model's", open: 'open' };
/** Whose a gap is, in words: "the costs'", "the model's" or "open". */
export const gapWords = (gap: Gap): string => GAP_WORDS[gap];

/** "2 the costs', 1 the model's, 1 open": the figures outside by whose gap; those with no reading with the replays' stages are not counted. */
export function gapsText(gaps: Record<Gap, number>): string {
  return (Object.keys(GAP_WORDS) as Gap[]).map((g) => `${gaps[g]} ${GAP_WORDS[g]}`).join(', ');
}

/** What the simulations with the replays' stages keep calibrated, for the legend. */
const CALIBRATED_ONLY = CALIBRATED_ONLY_COSTS.join('; ');

/** Under the table when the simulations were run again with the replays' stages: what its two last columns say. */
export const STAGES_LEGEND =
  `stages ratio: the same simulations with each replay's own stages in place of the costs (the sources above), over measured; gap, of a figure outside: costs where with the replay's stages it comes within 15% or inside the noise (the model adds up what the replay met, the costs it was given are not that), model where it stays outside (the model lacks something between the stages), open where it stays outside but hangs on costs the replays' stages leave calibrated (${CALIBRATED_ONLY}), so either may be it`;

export function unmatchedLine(doc: CompareDocument): string | null {
  if (doc.unmatched.length === 0) return null;
  const by = (side: Side) => doc.unmatched.filter((u) => u.side === side).map((u) => u.policy);
  const parts = (['simulated', 'measured'] as Side[]).filter((s) => by(s).length > 0).map((s) => `${by(s).join(', ')} only in ${doc.sides[s].label}`);
  return `not compared: ${parts.join('; ')}`;
}

/** The figures of one policy, in the table's order. */
export function policyFigures(doc: CompareDocument, policy: string): FigureComparison[] {
  return doc.figures.filter((f) => f.policy === policy);
}

/** Whether any side holds more than one document: then the spreads get their own columns. */
export function hasSpreads(doc: CompareDocument): boolean {
  return doc.policies.some((p) => p.documents.simulated.length > 1 || p.documents.measured.length > 1);
}

export function tableHead(doc: CompareDocument): string[] {
  const spreads = hasSpreads(doc);
  return ['figure', ...(doc.sides.estimate ? ['estimate'] : []), 'simulated', ...(spreads ? ['spread'] : []), 'measured', ...(spreads ? ['spread'] : []), 'ratio', 'noise', 'verdict', ...(doc.sides.replayStages ? ['stages ratio', 'gap'] : [])];
}

/** The ratio with the replays' stages and whose gap a figure outside is (STAGES_LEGEND). */
export function stagesCells(f: FigureComparison): [string, string] {
  return [formatRatio(f.replayStages?.ratio), f.gap ?? ''];
}

export function tableRow(doc: CompareDocument, f: FigureComparison): string[] {
  const spreads = hasSpreads(doc);
  return [
    f.label,
    ...(doc.sides.estimate ? [f.estimate === undefined || f.estimate === null ? '' : formatFigure(f.unit, f.estimate)] : []),
    sideCell(f, 'simulated'),
    ...(spreads ? [formatShare(f.spread.simulated)] : []),
    sideCell(f, 'measured'),
    ...(spreads ? [formatShare(f.spread.measured)] : []),
    formatRatio(f.ratio),
    formatShare(f.noise),
    verdictCell(f),
    ...(doc.sides.replayStages ? stagesCells(f) : []),
  ];
}

/** The simulations with the replays' stages, then their swaps a line each (none without them). */
function stagesSources(doc: CompareDocument): string[] {
  const st = doc.sides.replayStages;
  return st ? [st.label, ...st.sources] : [];
}

/** The per-figure notes (the scenario mode's "why"), as "id (policy): note". */
function noteLines(doc: CompareDocument): string[] {
  return doc.figures.filter((f) => f.note).map((f) => `${f.id} (${f.policy}): ${f.note}`);
}

/** Columns that read left to right (the figure's name, the verdict, the gap); the numbers line up on the right. */
const WORDS_COLUMNS = new Set(['figure', 'verdict', 'gap']);

/** The table's rows padded into columns; the first row is its head. */
function columns(rows: string[][]): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const left = rows[0].map((h) => WORDS_COLUMNS.has(h));
  return rows.map((r) => r.map((c, i) => (left[i] ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd());
}

export function compareTerminal(doc: CompareDocument): string {
  // the simulated side's first source is the run; any more are its inputs (--replay-stages' swaps), a line each
  const [run, ...inputs] = doc.sides.simulated.sources;
  const out = [`compare ${headlineOf(doc)}`, `  simulated: ${run ?? ''}`, ...inputs.map((x) => `             ${x}`), `  measured:  ${doc.sides.measured.sources.join(', ')}`];
  const [stagesLabel, ...stageSwaps] = stagesSources(doc);
  if (stagesLabel) out.push(`  gaps:      ${stagesLabel}`, ...stageSwaps.map((x) => `             ${x}`));
  for (const w of doc.warnings) out.push(`!! ${w}`);
  const unmatched = unmatchedLine(doc);
  if (unmatched) out.push(unmatched);
  out.push('');
  const head = tableHead(doc);
  for (const p of doc.policies) {
    out.push(`policy ${p.policy}`);
    for (const l of columns([head, ...policyFigures(doc, p.policy).map((f) => tableRow(doc, f))])) out.push(`  ${l}`);
    out.push('');
  }
  const notes = noteLines(doc);
  if (notes.length > 0) {
    out.push('Notes');
    for (const n of notes) out.push(`  ${n}`);
    out.push('');
  }
  out.push(`verdicts: ${countsLine(doc)}`);
  if (doc.sides.replayStages) out.push(STAGES_LEGEND);
  out.push('ratio = simulated / measured; noise = the spread of the simulated side + that of the measured side ((max - min) / mean, 0 for one document), + the clock step of a side over its mean where it read whole milliseconds (the lags, hop and pickup p99 of a replay); inside the noise: outside 15% but |ratio - 1| <= noise');
  return out.join('\n') + '\n';
}

/** A side's value with each document's beside it when there are several: "10 ms (9 ms, 11 ms)". */
function withDocuments(f: FigureComparison, side: Side): string {
  const cell = sideCell(f, side);
  const vs = f.values[side];
  if (vs.length < 2 || f[side] === null) return cell;
  return `${cell} (${vs.map((v) => formatFigure(f.unit, v)).join(', ')})`;
}

const mdCell = (s: string): string => s.replace(/\|/g, '\\|');

export function compareMarkdown(doc: CompareDocument): string {
  const out = [`# Compare: ${doc.scenario}`, '', `Simulated side: ${doc.sides.simulated.label}. Measured side: ${doc.sides.measured.label}.`, ''];
  const [run, ...inputs] = doc.sides.simulated.sources;
  out.push(`- simulated: ${run ?? ''}`, ...inputs.map((x) => `  - ${x}`), `- measured: ${doc.sides.measured.sources.join(', ')}`);
  const [stagesLabel, ...stageSwaps] = stagesSources(doc);
  if (stagesLabel) out.push(`- gaps: ${stagesLabel}`, ...stageSwaps.map((x) => `  - ${x}`));
  out.push('');
  for (const w of doc.warnings) out.push(`> **${mdCell(w)}**`, '');
  const unmatched = unmatchedLine(doc);
  if (unmatched) out.push(`**${unmatched}**`, '');
  out.push(`**Verdicts: ${countsLine(doc)}.**`, '');
  const head = tableHead(doc);
  const simulatedAt = head.indexOf('simulated');
  const measuredAt = head.indexOf('measured');
  for (const p of doc.policies) {
    const docs = (side: Side) => p.documents[side].map((d) => d.label).join(', ');
    out.push(`## ${p.policy}`, '', `Simulated: ${docs('simulated')}. Measured: ${docs('measured')}.`, '');
    out.push(`| ${head.join(' | ')} |`, `|${head.map((h) => (WORDS_COLUMNS.has(h) ? '---' : '---:')).join('|')}|`);
    for (const f of policyFigures(doc, p.policy)) {
      const row = tableRow(doc, f);
      row[simulatedAt] = withDocuments(f, 'simulated');
      row[measuredAt] = withDocuments(f, 'measured');
      out.push(`| ${row.map(mdCell).join(' | ')} |`);
    }
    out.push('');
  }
  const notes = noteLines(doc);
  if (notes.length > 0) {
    out.push('## Notes', '');
    for (const n of notes) out.push(`- ${mdCell(n)}`);
    out.push('');
  }
  out.push('## How to read it', '');
  out.push(
    `- ratio = simulated / measured, each the mean over its side's documents (seeds of a simulation, runs of a replay); within 15%: |ratio - 1| <= ${doc.agreement}.`,
    "- spread of a side = (max - min) / mean over its documents (0 for one document); noise = the simulated spread + the measured spread. Inside the noise: outside 15%, but |ratio - 1| <= noise.",
    ...(doc.sides.replayStages ? [`- ${STAGES_LEGEND}.`] : []),
    '- n/a: a side has no such figure (a replay does not measure it, or the simulator does not model it); never a number made up for it.',
    '',
  );
  for (const f of FIGURES) out.push(`- \`${f.id}\` ${f.label}: ${f.about}.`);
  out.push('', `Compare schema \`${doc.schema}\`, feedlab ${doc.tool.version}. The same figures are in report.json.`, '');
  return out.join('\n');
}
