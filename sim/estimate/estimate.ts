// The estimate: inputs (a preset, a scenario, --set) through every figure, with the formula, the
// formula with the numbers put in, and the document's value beside ours.
import { InputError } from '../errors.js';
import { nearest } from '../../core/suggest.js';
import { parseDuration, parseNumber, parseSize } from '../scenario/units.js';
import { evaluate, FIGURES, type FigureUnit } from './figures.js';
import { formatFigure } from './format.js';
import { defaultInputs, INPUT_NAMES, INPUTS, inputSpec, type Inputs } from './inputs.js';
import { findPreset, PRESETS, type Preset } from './presets.js';

export const ESTIMATE_SCHEMA = 'feedlab.estimate/1';

/** A stated value within this of ours is the document's rounding, not an erratum. */
const ROUNDING = 0.05;

export interface DocumentStatement {
  value: number;
  low?: number;
  high?: number;
  stated: string;
  where?: string;
  /** Does ours agree? null when an input the figure depends on was changed from the document's. */
  agrees: boolean | null;
  erratum?: string;
}

export interface EstimateFigure {
  id: string;
  heading: string;
  label: string;
  value: number;
  unit: FigureUnit;
  formula: string;
  substituted: string;
  /** The document's value (its first statement) and the first erratum, for quick reading. */
  documentValue?: number;
  erratum?: string;
  /** Everything the document states for this figure. */
  document?: DocumentStatement[];
}

export interface EstimateResult {
  schema: typeof ESTIMATE_SCHEMA;
  preset: string | null;
  /** The scenario file the inputs came from, if any. */
  source: string | null;
  inputs: Inputs;
  /** Inputs nobody gave (not the preset, the scenario or --set): feedlab's defaults. */
  assumed: string[];
  figures: EstimateFigure[];
  notes: string[];
}

export function presetOrThrow(name: string): Preset {
  const p = findPreset(name);
  if (!p) {
    const names = PRESETS.map((x) => x.name);
    const near = names.find((x) => x.startsWith(name)) ?? nearest(name, names);
    throw new InputError(`unknown preset "${name}"${near ? `; did you mean "${near}"?` : ''} (valid: ${PRESETS.map((x) => x.name).join(', ')})`);
  }
  return p;
}

/** `name=value` from --set, the value read in the input's unit (sizes take MB/GB, times take ms/s/d). */
export function parseSet(arg: string): [string, number] {
  const eq = arg.indexOf('=');
  if (eq <= 0) throw new InputError(`--set ${arg}: expected name=value, e.g. --set dau=200e6`);
  const name = arg.slice(0, eq).trim();
  const raw = arg.slice(eq + 1).trim();
  const spec = inputSpec(name);
  if (!spec) {
    const near = nearest(name, INPUT_NAMES);
    throw new InputError(`--set ${arg}: unknown input "${name}"${near ? `; did you mean "${near}"?` : ''} (feedlab estimate --inputs lists them)`);
  }
  let value: number;
  try {
    if (spec.unit === 'bytes') value = parseSize(raw);
    else if (spec.unit === 'seconds') value = parseDuration(raw);
    else if (spec.unit === 'share' && raw.endsWith('%')) value = parseNumber(raw.slice(0, -1)) / 100;
    else value = parseScaled(raw);
  } catch (err) {
    throw new InputError(`--set ${arg}: ${(err as Error).message}`);
  }
  if (value < 0 || (spec.unit === 'share' && value > 1)) throw new InputError(`--set ${arg}: ${name} must be ${spec.unit === 'share' ? 'between 0 and 1 (or 0%-100%)' : 'non-negative'}`);
  if (spec.min !== undefined && value < spec.min) throw new InputError(`--set ${arg}: ${name} must be at least ${spec.min}`);
  return [name, value];
}

/** A number as the output prints it: 200e6, 25k, 2.5M, 2B. */
function parseScaled(raw: string): number {
  const m = /^(\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s*([kKmMbB])$/.exec(raw);
  if (!m) return parseNumber(raw);
  const mult = { k: 1e3, m: 1e6, b: 1e9 }[m[2].toLowerCase() as 'k' | 'm' | 'b'];
  return Number(m[1]) * mult;
}

export interface EstimateRequest {
  preset?: string;
  /** Inputs taken from a scenario file, and its path. */
  scenarioInputs?: Partial<Inputs>;
  source?: string;
  sets?: Array<[string, number]>;
}

export function runEstimate(req: EstimateRequest): EstimateResult {
  const preset = req.preset ? presetOrThrow(req.preset) : null;
  const inputs = defaultInputs();
  const given = new Set<string>();
  const documentInputs = { ...defaultInputs(), ...(preset?.inputs ?? {}) } as Inputs;
  const apply = (src: Partial<Inputs> | undefined) => {
    for (const [k, v] of Object.entries(src ?? {})) {
      if (v === undefined) continue;
      inputs[k] = v;
      given.add(k);
    }
  };
  apply(preset?.inputs);
  apply(req.scenarioInputs);
  for (const [k, v] of req.sets ?? []) {
    inputs[k] = v;
    given.add(k);
  }
  // inputs moved away from the document's own: figures that depend on them cannot be checked
  const moved = new Set(INPUT_NAMES.filter((k) => inputs[k] !== documentInputs[k]));
  const { values, inputsOf } = evaluate(inputs);
  const figures = FIGURES.map((f): EstimateFigure => {
    const value = values[f.id];
    const out: EstimateFigure = { id: f.id, heading: f.heading, label: f.label, value, unit: f.unit, formula: f.formula, substituted: substitute(f.formula, values) };
    const stated = preset?.documentValues[f.id];
    if (stated) {
      const comparable = ![...inputsOf[f.id]].some((k) => moved.has(k));
      out.document = (Array.isArray(stated) ? stated : [stated]).map((d): DocumentStatement => {
        const statement: DocumentStatement = { value: d.value, stated: d.stated ?? formatFigure(d.value, f.unit), agrees: null };
        if (d.low !== undefined) statement.low = d.low;
        if (d.high !== undefined) statement.high = d.high;
        if (d.where) statement.where = d.where;
        if (!comparable) return statement;
        const lo = (d.low ?? d.value) * (1 - ROUNDING);
        const hi = (d.high ?? d.value) * (1 + ROUNDING);
        statement.agrees = !d.erratum && value >= Math.min(lo, hi) && value <= Math.max(lo, hi);
        if (d.erratum) statement.erratum = d.erratum;
        else if (!statement.agrees) statement.erratum = `${formatFigure(value, f.unit)} follows from the inputs`;
        return statement;
      });
      out.documentValue = out.document[0].value;
      const firstErratum = out.document.find((d) => d.erratum);
      if (firstErratum) out.erratum = firstErratum.erratum;
    }
    return out;
  });
  return {
    schema: ESTIMATE_SCHEMA,
    preset: preset?.name ?? null,
    source: req.source ?? null,
    inputs,
    assumed: INPUTS.filter((i) => !given.has(i.name)).map((i) => i.name),
    figures,
    notes: preset?.notes ?? [],
  };
}

/** The formula with every input and earlier figure replaced by its value. */
function substitute(formula: string, values: Record<string, number>): string {
  return formula.replace(/[A-Za-z_][A-Za-z0-9_.]*/g, (name) => {
    if (!(name in values)) return name;
    const spec = inputSpec(name);
    const unit = spec ? spec.unit : FIGURES.find((f) => f.id === name)!.unit;
    return formatFigure(values[name], unit);
  });
}

/** Which figures move when an input changes: for `--set` and its tests. */
export function figuresDependingOn(input: string): string[] {
  const { inputsOf } = evaluate(defaultInputs());
  return FIGURES.filter((f) => inputsOf[f.id].has(input)).map((f) => f.id);
}
