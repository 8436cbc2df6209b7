// The estimate: inputs (a preset, a scenario, --set) through every figure, with the formula, the
// formula with the numbers put in, and the document's value beside ours.
import { InputError } from '../errors.js';
import { nearest } from '../scenario/suggest.js';
import { parseDuration, parseNumber, parseSize } from '../scenario/units.js';
import { evaluate, FIGURES, type FigureUnit } from './figures.js';
import { formatFigure } from './format.js';
import { defaultInputs, INPUT_NAMES, INPUTS, inputSpec, type Inputs } from './inputs.js';
import { findPreset, PRESETS, type Preset } from './presets.js';

export const ESTIMATE_SCHEMA = 'feedlab.estimate/1';

/** A stated value within this of ours is the document's rounding, not an erratum. */
const ROUNDING = 0.05;

export interface EstimateFigure {
  id: string;
  heading: string;
  label: string;
  value: number;
  unit: FigureUnit;
  formula: string;
  substituted: string;
  documentValue?: number;
  documentStated?: string;
  erratum?: string;
}

export interface EstimateResult {
  schema: typeof ESTIMATE_SCHEMA;
  preset: string | null;
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
    else value = parseNumber(raw);
  } catch (err) {
    throw new InputError(`--set ${arg}: ${(err as Error).message}`);
  }
  if (value < 0 || (spec.unit === 'share' && value > 1)) throw new InputError(`--set ${arg}: ${name} must be ${spec.unit === 'share' ? 'between 0 and 1 (or 0%-100%)' : 'non-negative'}`);
  return [name, value];
}

export interface EstimateRequest {
  preset?: string;
  /** Inputs taken from a scenario file. */
  scenarioInputs?: Partial<Inputs>;
  sets?: Array<[string, number]>;
}

export function runEstimate(req: EstimateRequest): EstimateResult {
  const preset = req.preset ? presetOrThrow(req.preset) : null;
  const inputs = defaultInputs();
  const given = new Set<string>();
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
  const { values } = evaluate(inputs);
  const figures = FIGURES.map((f): EstimateFigure => {
    const doc = preset?.documentValues[f.id];
    const value = values[f.id];
    const out: EstimateFigure = { id: f.id, heading: f.heading, label: f.label, value, unit: f.unit, formula: f.formula, substituted: substitute(f.formula, values) };
    if (doc) {
      out.documentValue = doc.value;
      if (doc.stated) out.documentStated = doc.stated;
      const off = Math.abs(value - doc.value) / Math.max(Math.abs(doc.value), 1e-12);
      if (doc.erratum) out.erratum = doc.erratum;
      else if (off > ROUNDING) out.erratum = `${formatFigure(value, f.unit)} follows from the inputs`;
    }
    return out;
  });
  return {
    schema: ESTIMATE_SCHEMA,
    preset: preset?.name ?? null,
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
