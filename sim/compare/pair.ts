// Two saved documents held against each other (`feedlab compare A.json B.json`): A is the simulated
// side, B the measured one. Either may be one result (feedlab.result/1) or a sweep (feedlab.sweep/1);
// a sweep's runs are paired with the other side's by policy, and a policy only one side has is
// listed as unmatched, not compared. Two single results of different policies are compared, with a
// warning. Documents of different worlds (scenario, users, duration, time scale) are compared too,
// each difference said in one warning line.
import type { RunResult } from '../result.js';
import { formatCount, formatDuration } from '../scenario/units.js';
import { runsOf, type SweepResult } from '../sweep.js';
import type { ComparisonInput, PolicyInput, Side } from './compare.js';

export type ComparableDocument = RunResult | SweepResult;

export interface NamedDocument {
  /** How the reports name it: the file name. */
  name: string;
  doc: ComparableDocument;
}


/** "simulate", "replay", or both when a sweep mixes them. */
export function sourceOf(d: ComparableDocument): string {
  const sources = [...new Set(runsOf(d).map((r) => r.source))];
  return sources.length > 0 ? sources.join('+') : d.schema === 'feedlab.sweep/1' ? 'sweep' : 'result';
}

/** "sim.json: simulate, seed 9, threshold:25000, 1.2k users, 10 min" (a sweep: its policies counted). */
export function documentSummary(d: NamedDocument): string {
  const runs = runsOf(d.doc);
  const first = runs[0];
  const what = d.doc.schema === 'feedlab.sweep/1' ? `sweep of ${runs.length} ${runs.length === 1 ? 'policy' : 'policies'}` : d.doc.policy;
  if (!first) return `${d.name}: ${what}`;
  const sc = first.scenario;
  const span = first.source === 'replay' ? `${formatDuration(sc.durationSeconds)} of wall time at x${timeScale(first)}` : formatDuration(sc.durationSeconds);
  const partial = runs.some((r) => r.partial) ? ', stopped early' : '';
  const contended = runs.some((r) => r.replay?.cpu?.contended === true) ? ', CONTENDED' : '';
  return `${d.name}: ${sourceOf(d.doc)}, ${what}, seed ${sc.seed}, ${formatCount(sc.sampledUsers)} users, ${span}${partial}${contended}`;
}

/** A replay's wall seconds stand for timeScale simulated ones; a simulation runs at 1. */
function timeScale(r: RunResult): number {
  return r.source === 'replay' ? (r.replay?.mapping.timeScale ?? 1) : 1;
}

/** The differences between two documents' worlds that make their figures measure different things. */
export function worldWarnings(a: RunResult, b: RunResult, names: Record<Side, string>): string[] {
  const out: string[] = [];
  const both = (f: (r: RunResult) => string) => `${f(a)} (${names.simulated}) and ${f(b)} (${names.measured})`;
  if (a.scenario.name !== b.scenario.name) out.push(`different scenarios: ${both((r) => `"${r.scenario.name}"`)}`);
  if (a.scenario.sampledUsers !== b.scenario.sampledUsers || a.scenario.sampledEdges !== b.scenario.sampledEdges) {
    out.push(`different worlds: ${both((r) => `${formatCount(r.scenario.sampledUsers)} users, ${formatCount(r.scenario.sampledEdges)} follows`)}`);
  }
  if (a.scenario.population !== b.scenario.population) out.push(`different populations: ${both((r) => formatCount(r.scenario.population))}`);
  const ta = timeScale(a);
  const tb = timeScale(b);
  if (ta !== tb) {
    out.push(`different time scales: ${both((r) => `x${timeScale(r)}`)}; rates (writes/s, the API's CPU in cores) count per wall second, so they differ by the time scale's ratio where the load is the same`);
  }
  if (a.scenario.durationSeconds !== b.scenario.durationSeconds) out.push(`different durations: ${both((r) => formatDuration(r.scenario.durationSeconds))}`);
  return out;
}

/** The policies of both documents paired, what only one side has, and the warnings about them. */
export function pairDocuments(a: NamedDocument, b: NamedDocument): Pick<ComparisonInput, 'scenario' | 'policies' | 'unmatched' | 'warnings' | 'labels' | 'sources' | 'documentLabels'> {
  const runsA = runsOf(a.doc);
  const runsB = runsOf(b.doc);
  const names: Record<Side, string> = { simulated: a.name, measured: b.name };
  const warnings: string[] = [];
  const policies: PolicyInput[] = [];
  const unmatched: Array<{ policy: string; side: Side }> = [];
  if (a.doc.schema === 'feedlab.result/1' && b.doc.schema === 'feedlab.result/1') {
    const [ra, rb] = [a.doc, b.doc];
    if (ra.policy !== rb.policy) warnings.push(`different policies: ${ra.policy} (${a.name}) against ${rb.policy} (${b.name}), compared as one`);
    policies.push({ policy: ra.policy === rb.policy ? ra.policy : `${ra.policy} vs ${rb.policy}`, simulated: [ra], measured: [rb] });
  } else {
    const byPolicy = new Map(runsB.map((r) => [r.policy, r]));
    for (const ra of runsA) {
      const rb = byPolicy.get(ra.policy);
      if (rb) policies.push({ policy: ra.policy, simulated: [ra], measured: [rb] });
      else unmatched.push({ policy: ra.policy, side: 'simulated' });
    }
    const inA = new Set(runsA.map((r) => r.policy));
    for (const rb of runsB) if (!inA.has(rb.policy)) unmatched.push({ policy: rb.policy, side: 'measured' });
    if (unmatched.length > 0) {
      const only = (side: Side) => unmatched.filter((u) => u.side === side).map((u) => u.policy);
      const parts = (['simulated', 'measured'] as Side[]).filter((s) => only(s).length > 0).map((s) => `only in ${names[s]}: ${only(s).join(', ')}`);
      warnings.push(`policies not compared (${parts.join('; ')})`);
    }
  }
  if (policies.length > 0) warnings.push(...worldWarnings(policies[0].simulated[0], policies[0].measured[0], names));
  return {
    scenario: a.doc.scenario.name,
    policies,
    unmatched,
    warnings,
    labels: { simulated: `${sourceOf(a.doc)} (${a.name})`, measured: `${sourceOf(b.doc)} (${b.name})` },
    sources: { simulated: [documentSummary(a)], measured: [documentSummary(b)] },
    documentLabels: { simulated: [a.name], measured: [b.name] },
  };
}
