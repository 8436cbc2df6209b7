// The capacity plan for people: the plan table (p5/p50/p95 when the inputs were sampled), each
// resource's reason, the simulation check, the binding constraint and the what-ifs; as terminal
// text and as Markdown. Everything comes from the feedlab.plan/1 document.
import type { PlanDocument, PlanRow } from '../sim/plan/plan.js';
import { thresholdVerdict } from '../sim/plan/check.js';
import { calibrationLine, checkLines } from './summary-lines.js';

function table(head: string[], rows: string[][]): string[] {
  const widths = head.map((_, i) => Math.max(...[head, ...rows].map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd();
  return [line(head), ...rows.map(line)];
}

function cells(doc: PlanDocument, r: PlanRow): string[] {
  return [r.label, ...doc.columns.map((c) => r.display[c.key])];
}

function headline(doc: PlanDocument): string {
  const s = doc.settings;
  const sampling = doc.sampled ? `${s.samples} samples of its intervals (${s.distribution})` : 'no intervals (one point)';
  return `${doc.scenario.name}: capacity plan, policy ${doc.scenario.policy}, growth x${s.growth}, headroom ${Math.round(s.headroom * 100)}%, ${sampling}, seed ${doc.scenario.seed}`;
}

function inputLines(doc: PlanDocument): string[] {
  return doc.inputs
    .filter((i) => i.path !== null)
    .map((i) => `  ${i.path} [${i.low}, ${i.likely}, ${i.high}]: sampled p5 ${fmt(i.sampled.p5)}, p50 ${fmt(i.sampled.p50)}, p95 ${fmt(i.sampled.p95)}`);
}

const fmt = (v: number) => (Math.abs(v) >= 1000 ? Math.round(v).toLocaleString('en-US') : Number(v.toPrecision(4)).toString());

export function planText(doc: PlanDocument): string {
  const head = ['resource', ...doc.columns.map((c) => c.label)];
  const calibrated = calibrationLine(doc.scenario);
  const out: string[] = [headline(doc), ...(calibrated ? [calibrated] : []), ''];
  if (doc.sampled) out.push('Intervals', ...inputLines(doc), '');
  out.push(...table(head, doc.resources.map((r) => cells(doc, r))), '');
  out.push(...table(['workload and figures', ...doc.columns.map((c) => c.label)], doc.workload.map((r) => cells(doc, r))), '');
  // (documents written before the design point was recorded have none)
  if (doc.designPoint) out.push(`Design point of the reasons, the binding constraint and the what-ifs: ${doc.designPoint.text}`, '');
  out.push('Why');
  for (const r of doc.resources) out.push(`  ${r.label}: ${r.reason}`);
  out.push('', `Binding constraint: ${doc.binding.reason}`, '', 'What if');
  for (const w of doc.whatIfs) out.push(`  ${w.text}`);
  out.push('');
  const thresholds = thresholdVerdict(doc.check);
  if (thresholds.checks.length > 0) out.push(`Thresholds on the simulation check's runs: ${thresholds.pass ? 'all met' : 'NOT MET'}`, ...checkLines(thresholds.checks).map((l) => `  ${l}`), '');
  out.push(doc.satisfied ? 'Plan: every objective met within the limits' : `Plan: NOT SATISFIED\n${doc.problems.map((p) => `  ${p}`).join('\n')}`);
  return out.join('\n') + '\n';
}

export function planMarkdown(doc: PlanDocument): string {
  const s = doc.settings;
  const calibrated = calibrationLine(doc.scenario);
  const out: string[] = [`# Capacity plan: ${doc.scenario.name}`, '', `${headline(doc)}.`, '', ...(calibrated ? [calibrated, ''] : [])];
  if (doc.sampled) {
    out.push('## Intervals', '', '| input | low | likely | high | p5 | p50 | p95 |', '|---|---|---|---|---|---|---|');
    for (const i of doc.inputs.filter((x) => x.path !== null)) out.push(`| ${i.path} | ${fmt(i.low)} | ${fmt(i.likely)} | ${fmt(i.high)} | ${fmt(i.sampled.p5)} | ${fmt(i.sampled.p50)} | ${fmt(i.sampled.p95)} |`);
    out.push('');
  }
  const cols = doc.columns.map((c) => c.label);
  out.push('## Plan', '', `| resource | ${cols.join(' | ')} | method |`, `|---|${cols.map(() => '---:').join('|')}|---|`);
  for (const r of doc.resources) out.push(`| ${r.label} | ${doc.columns.map((c) => r.display[c.key]).join(' | ')} | ${r.method} |`);
  out.push('', `| workload and figures | ${cols.join(' | ')} |`, `|---|${cols.map(() => '---:').join('|')}|`);
  for (const r of doc.workload) out.push(`| ${r.label} | ${doc.columns.map((c) => r.display[c.key]).join(' | ')} |`);
  out.push('', '## Why', '');
  if (doc.designPoint) out.push(`At the design point of the reasons, the binding constraint and the what-ifs: ${doc.designPoint.text}.`, '');
  for (const r of doc.resources) out.push(`- **${r.label}**: ${r.reason}`);
  out.push('', '## Binding constraint', '', doc.binding.reason, '', '## What if', '');
  for (const w of doc.whatIfs) out.push(`- ${w.text}`);
  const thresholds = thresholdVerdict(doc.check);
  if (thresholds.checks.length > 0) out.push('', "## Thresholds on the simulation check's runs", '', ...checkLines(thresholds.checks).map((l) => `- ${l}`));
  out.push('', '## Verdict', '', doc.satisfied ? 'Every objective is met within the limits.' : `**Not satisfied:**\n\n${doc.problems.map((p) => `- ${p}`).join('\n')}`);
  out.push('', `Growth x${s.growth} multiplies the users; headroom ${Math.round(s.headroom * 100)}% keeps every resource at most ${Math.round((1 - s.headroom) * 100)}% busy (or full) at the peak. ${doc.method.closedForm} ${doc.method.simulated}`, '');
  return out.join('\n');
}
