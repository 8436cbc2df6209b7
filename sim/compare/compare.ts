// The comparison document (feedlab.compare/1): figure by figure and policy by policy, what the
// simulation gives beside what was measured (and the estimate where there is one), their ratio, the
// noise of each side and a verdict.
//
// Per figure and policy:
//   simulated, measured  the mean over that side's documents (seeds of a simulation, runs of a replay)
//   spread               of each side: (max - min) / mean over its documents; 0 for one document
//   noise                spread(simulated) + spread(measured): how far apart the two sides can land
//                        with nothing wrong beyond what each already varies by on its own. The full
//                        ranges are added (not their half-widths, nor in quadrature) because two or
//                        three documents a side under-state their spread: two draws of a normal
//                        variable are on average 1.13 sigma apart, three span 1.69 sigma. Plus each
//                        side's clock step over its mean (`resolution`) where its documents read
//                        the figure as a difference of whole-millisecond stamps (a replay's lags):
//                        a quantile of them is within a step of the true one.
//   ratio                simulated / measured
//   verdict              within   |ratio - 1| <= 0.15
//                        noise    outside 15%, but |ratio - 1| <= noise: the difference is inside the noise
//                        outside  neither
//                        n/a      a side has no value (not measured, not modelled): which side says `why`
//   replayStages         compare SCENARIO: the same simulations again with each replay's own stages in
//                        place of the costs (sim/compare/replay-stages.ts), judged the same way
//   gap                  of a figure outside: `costs` when with the replay's stages it comes within
//                        15% or inside the noise (the model adds the stages up; the costs it was given
//                        are not what the replay met), `model` when it stays outside (the model lacks
//                        something between the stages), `open` when it stays outside but hangs on
//                        costs the replays' stages leave calibrated (FigureDef.calibratedOnly: either may be it)
// Same inputs, same document: nothing here depends on the clock or on the order of a Map.
import { FEEDLAB_VERSION, type RunResult } from '../result.js';
import { FIGURES, readFigure, type FigureId, type FigureUnit } from './figures.js';
import { mean } from 'simple-statistics';

export const COMPARE_SCHEMA = 'feedlab.compare/1';
/** The agreement asked of the model: within 15% of the measurement. */
export const AGREEMENT = 0.15;
/** Ratios computed from values written with 6 significant digits land a hair off 0.85 and 1.15. */
const EPSILON = 1e-9;

export type Verdict = 'within' | 'noise' | 'outside' | 'n/a';
export type Side = 'simulated' | 'measured';

export interface PolicyInput {
  policy: string;
  /** The closed-form estimate of some figures, by id (feedlab estimate's numbers, in each figure's unit). */
  estimate?: Partial<Record<FigureId, number>>;
  simulated: RunResult[];
  measured: RunResult[];
  /** Why a figure lands where it does (the scenario mode's explanations), by id. */
  notes?: Partial<Record<FigureId, string>>;
  /** The simulated side again with each replay's own stages swapped in: whose each gap is. */
  replayStages?: RunResult[];
}

export interface ComparisonInput {
  /** The scenario's name. */
  scenario: string;
  policies: PolicyInput[];
  /** How each side is named in the reports; by default from its documents ("simulate, seeds 1-3"). */
  labels?: Partial<Record<Side, string>>;
  /** Where each side's documents came from (file names); by default its documents' sources and seeds. */
  sources?: Partial<Record<Side, string[]>>;
  /** Each document's name within its side, per policy (file names); by default "seed N" / "run N". */
  documentLabels?: Partial<Record<Side, string[]>>;
  /** Policies only one side has: listed, not compared. */
  unmatched?: Array<{ policy: string; side: Side }>;
  /** How the simulations with the replays' stages (PolicyInput.replayStages) are named, and their swaps, a line each. */
  replayStages?: { label: string; sources: string[] };
  /** Lines the reports show above the figures (documents of different worlds, different policies). */
  warnings?: string[];
}

export interface FigureComparison {
  id: FigureId;
  label: string;
  unit: FigureUnit;
  policy: string;
  /** Present when the estimate gives this figure (null: asked for, not given). */
  estimate?: number | null;
  simulated: number | null;
  measured: number | null;
  ratio: number | null;
  noise: number | null;
  /** Present where a side read the figure with a coarse clock: each such side's step over its mean, added (part of `noise`). */
  resolution?: number;
  verdict: Verdict;
  spread: Record<Side, number | null>;
  /** Each document's value, in the order of the side's documents (null where it has none). */
  values: Record<Side, Array<number | null>>;
  /** Why the verdict is n/a (or the ratio null): which side lacks the figure, and why, in one line. */
  why?: string;
  /** A side without the figure, and why ("not measured", "not modelled"). */
  missing?: Partial<Record<Side, string>>;
  note?: string;
  /** The simulated side with the replay's own stages (compare SCENARIO), judged against the same measurement. */
  replayStages?: { simulated: number | null; ratio: number | null; noise: number | null; verdict: Verdict };
  /** Of a figure outside with replayStages: whose gap it is (see the head of this file). */
  gap?: Gap;
}

/** Whose a gap is: the costs the model was given (the replay's own stages close it), the model's, or either (open). */
export type Gap = 'costs' | 'model' | 'open';

export interface DocumentFlags {
  label: string;
  source: RunResult['source'];
  seed: number;
  contended: boolean;
  /** Seconds it covers when stopped early. */
  partialAtSeconds: number | null;
}

export interface CompareDocument {
  schema: typeof COMPARE_SCHEMA;
  tool: { name: 'feedlab'; version: string };
  scenario: string;
  agreement: number;
  sides: Record<Side, { label: string; sources: string[] }> & { estimate: boolean; replayStages?: { label: string; sources: string[] } };
  /** Any measured document contended (another load on the machine) or stopped early: every ratio is suspect. */
  measurement: { contended: boolean; partial: boolean };
  warnings: string[];
  policies: Array<{ policy: string; documents: Record<Side, DocumentFlags[]> }>;
  unmatched: Array<{ policy: string; side: Side }>;
  counts: Record<Verdict, number>;
  /** With replayStages: the figures outside by whose gap they are. */
  gaps?: Record<Gap, number>;
  figures: FigureComparison[];
}

const SIDES: Side[] = ['simulated', 'measured'];

/** (max - min) / mean; 0 for one value or equal values; null without values or with a zero mean. */
export function spreadOf(xs: number[]): number | null {
  if (xs.length === 0) return null;
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  if (hi === lo) return 0;
  const m = Math.abs(mean(xs));
  return m > 0 ? (hi - lo) / m : null;
}

/** The coarsest clock step a side's documents read the figure with (their resolution), 0 where none is coarse. */
function stepOf(def: (typeof FIGURES)[number], docs: readonly RunResult[]): number {
  return def.resolution ? Math.max(0, ...docs.map((d) => def.resolution!(d) ?? 0)) : 0;
}

export function verdictOf(ratio: number, noise: number): Exclude<Verdict, 'n/a'> {
  const off = Math.abs(ratio - 1);
  if (off <= AGREEMENT + EPSILON) return 'within';
  if (off <= noise + EPSILON) return 'noise';
  return 'outside';
}

/** "1-3" for consecutive seeds, else "1, 4, 9". */
function seedList(seeds: number[]): string {
  const s = [...new Set(seeds)].sort((a, b) => a - b);
  const consecutive = s.length > 2 && s.every((v, i) => i === 0 || v === s[i - 1] + 1);
  return consecutive ? `${s[0]}-${s[s.length - 1]}` : s.join(', ');
}

/** "simulate, seeds 1-3" or "replay, 2 runs (seed 9)": a side's documents (per policy) when no file names are given. */
export function describeDocuments(byPolicy: RunResult[][]): string {
  const docs = byPolicy.flat();
  if (docs.length === 0) return 'no documents';
  const sources = [...new Set(docs.map((d) => d.source))].join(' and ');
  const seeds = docs.map((d) => d.scenario.seed);
  const each = Math.max(...byPolicy.map((p) => p.length));
  const distinct = new Set(seeds).size;
  if (each === 1) return `${sources}, ${distinct === 1 ? 'seed' : 'seeds'} ${seedList(seeds)}`;
  if (distinct === each) return `${sources}, seeds ${seedList(seeds)}`;
  return `${sources}, ${each} runs (${distinct === 1 ? 'seed' : 'seeds'} ${seedList(seeds)})`;
}

function flags(doc: RunResult, label: string): DocumentFlags {
  return {
    label,
    source: doc.source,
    seed: doc.scenario.seed,
    contended: doc.replay?.cpu?.contended === true,
    partialAtSeconds: doc.partial ? doc.partial.stoppedAtSeconds : null,
  };
}

function defaultLabel(doc: RunResult, i: number): string {
  return doc.source === 'replay' ? `run ${i + 1}` : `seed ${doc.scenario.seed}`;
}

/** One side's reading of a figure: each document's value, their mean and spread, or why none. */
function sideOf(def: (typeof FIGURES)[number], docs: readonly RunResult[]): { values: Array<number | null>; mean: number | null; spread: number | null; why?: string } {
  const readings = docs.map((d) => readFigure(def, d));
  const present = readings.flatMap((r) => (r.value === null ? [] : [r.value]));
  const out = { values: readings.map((r) => r.value), mean: present.length > 0 ? mean(present) : null, spread: spreadOf(present) };
  return present.length > 0 ? out : { ...out, why: readings.find((r) => r.value === null)?.why ?? 'no documents' };
}

/** Ratio, noise and verdict of two sides' readings (both present); `whys` gets the reason where there is no ratio. */
function judge(
  def: (typeof FIGURES)[number],
  docs: Record<Side, readonly RunResult[]>,
  read: Record<Side, { mean: number | null; spread: number | null }>,
  measuredLabel: string,
  whys: string[],
): { ratio: number | null; noise: number | null; resolution?: number; verdict: Verdict } {
  const s = read.simulated.mean;
  const m = read.measured.mean;
  if (s === null || m === null) return { ratio: null, noise: null, verdict: 'n/a' };
  // each side's coarsest clock step over its mean, added
  const step = { simulated: stepOf(def, docs.simulated), measured: stepOf(def, docs.measured) };
  const steps = SIDES.reduce((sum, side) => (step[side] > 0 && read[side].mean !== 0 ? sum + step[side] / Math.abs(read[side].mean!) : sum), 0);
  const noise = (read.simulated.spread ?? 0) + (read.measured.spread ?? 0) + steps;
  const out: { ratio: number | null; noise: number | null; resolution?: number; verdict: Verdict } = {
    ratio: null,
    noise: read.simulated.spread === null || read.measured.spread === null ? null : noise,
    verdict: 'n/a',
  };
  if (steps > 0) out.resolution = steps;
  if (m !== 0) {
    out.ratio = s / m;
    out.verdict = verdictOf(out.ratio, noise);
  } else if (s === 0) {
    out.ratio = 1; // both zero: nothing of it on either side (no list memory under push)
    out.verdict = 'within';
  } else if (Math.abs(s) <= step.measured) {
    // a whole-ms clock read 0 where the model has less than its step (a 0.28 ms pickup): no ratio, inside the noise
    out.verdict = 'noise';
    whys.push(`${measuredLabel}: 0 on a clock of ${step.measured * 1000} ms steps, the simulated value under one`);
  } else {
    out.verdict = 'outside';
    whys.push(`${measuredLabel}: 0, so no ratio`);
  }
  return out;
}

function compareFigure(def: (typeof FIGURES)[number], p: PolicyInput, labels: Record<Side, string>): FigureComparison {
  const read = { simulated: sideOf(def, p.simulated), measured: sideOf(def, p.measured) };
  const whys: string[] = [];
  const missing: Partial<Record<Side, string>> = {};
  for (const side of SIDES) {
    const why = read[side].why;
    if (why === undefined) continue;
    missing[side] = why;
    whys.push(`${labels[side]}: ${why}`);
  }
  const judged = judge(def, p, read, labels.measured, whys);
  const out: FigureComparison = {
    id: def.id,
    label: def.label,
    unit: def.unit,
    policy: p.policy,
    simulated: read.simulated.mean,
    measured: read.measured.mean,
    ratio: judged.ratio,
    noise: judged.noise,
    verdict: judged.verdict,
    spread: { simulated: read.simulated.spread, measured: read.measured.spread },
    values: { simulated: read.simulated.values, measured: read.measured.values },
  };
  if (p.estimate) {
    const e = p.estimate[def.id];
    out.estimate = typeof e === 'number' && Number.isFinite(e) ? e : null;
  }
  if (judged.resolution !== undefined) out.resolution = judged.resolution;
  if (whys.length > 0) out.why = whys.join('; ');
  if (Object.keys(missing).length > 0) out.missing = missing;
  const note = p.notes?.[def.id];
  if (note) out.note = note;
  if (p.replayStages) {
    const fed = sideOf(def, p.replayStages);
    const j = judge(def, { simulated: p.replayStages, measured: p.measured }, { simulated: fed, measured: read.measured }, labels.measured, []);
    out.replayStages = { simulated: fed.mean, ratio: j.ratio, noise: j.noise, verdict: j.verdict };
    if (out.verdict === 'outside' && j.verdict !== 'n/a') out.gap = j.verdict !== 'outside' ? 'costs' : def.calibratedOnly?.(p.measured) ? 'open' : 'model';
  }
  return out;
}

/** The feedlab.compare/1 document of one scenario's policies. */
export function buildComparison(input: ComparisonInput): CompareDocument {
  const all = (side: Side) => input.policies.map((p) => p[side]);
  const labels = {} as Record<Side, string>;
  const sides = {} as CompareDocument['sides'];
  for (const side of SIDES) {
    labels[side] = input.labels?.[side] ?? describeDocuments(all(side));
    sides[side] = { label: labels[side], sources: input.sources?.[side] ?? [describeDocuments(all(side))] };
  }
  sides.estimate = input.policies.some((p) => p.estimate !== undefined);

  const policies = input.policies.map((p) => ({
    policy: p.policy,
    documents: Object.fromEntries(SIDES.map((side) => [side, p[side].map((d, i) => flags(d, input.documentLabels?.[side]?.[i] ?? defaultLabel(d, i)))])) as Record<Side, DocumentFlags[]>,
  }));
  const measuredFlags = policies.flatMap((p) => p.documents.measured);
  const simulatedFlags = policies.flatMap((p) => p.documents.simulated);
  const measurement = { contended: measuredFlags.some((f) => f.contended), partial: measuredFlags.some((f) => f.partialAtSeconds !== null) };

  const warnings = [...(input.warnings ?? [])];
  const named = (fs: DocumentFlags[], pick: (f: DocumentFlags) => boolean) => [...new Set(fs.filter(pick).map((f) => f.label))].join(', ');
  // first in every report: a contended measurement, then a partial one
  if (measurement.partial) {
    warnings.unshift(`PARTIAL measurement (${named(measuredFlags, (f) => f.partialAtSeconds !== null)}): stopped early; its figures cover only the part that ran`);
  }
  if (measurement.contended) {
    warnings.unshift(`CONTENDED measurement (${named(measuredFlags, (f) => f.contended)}): other load took a large share of the machine or of its Redis while it ran; every ratio against it is suspect`);
  }
  if (simulatedFlags.some((f) => f.partialAtSeconds !== null)) {
    warnings.push(`partial simulation (${named(simulatedFlags, (f) => f.partialAtSeconds !== null)}): stopped early; its figures cover only the part that ran`);
  }

  const figures: FigureComparison[] = [];
  for (const def of FIGURES) for (const p of input.policies) figures.push(compareFigure(def, p, labels));
  const counts: Record<Verdict, number> = { within: 0, noise: 0, outside: 0, 'n/a': 0 };
  for (const f of figures) counts[f.verdict]++;
  const fed = input.policies.some((p) => p.replayStages !== undefined);
  if (fed) sides.replayStages = input.replayStages ?? { label: "the simulation with the replays' stages", sources: [] };
  const gaps: Record<Gap, number> = { costs: 0, model: 0, open: 0 };
  for (const f of figures) if (f.gap) gaps[f.gap]++;

  return {
    schema: COMPARE_SCHEMA,
    tool: { name: 'feedlab', version: FEEDLAB_VERSION },
    scenario: input.scenario,
    agreement: AGREEMENT,
    sides,
    measurement,
    warnings,
    policies,
    unmatched: input.unmatched ?? [],
    counts,
    ...(fed ? { gaps } : {}),
    figures,
  };
}
