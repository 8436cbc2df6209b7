// --set key=value (and --duration): a scenario key given on the command line, written into the
// scenario's YAML before it is validated, so a value set there meets every check a value written in
// the file meets (units, ranges, cross-key rules) and an error names the flag, not the file.
import { isMap, parseDocument, type Document, type YAMLMap } from 'yaml';
import { nearest } from '../../core/suggest.js';
import { InputError } from '../errors.js';
import { scenarioSchema, type Spec } from './schema.js';

export interface Override {
  /** As given: `policy.threshold=10000`. */
  arg: string;
  path: string[];
  /** The value's YAML text, parsed as the file's would be (`2h`, `[push, pull]`, `{ kind: push }`). */
  text: string;
}

/** Parse `key.path=value`, the key checked against the scenario's keys (did-you-mean on a typo). */
export function parseOverride(arg: string): Override {
  const eq = arg.indexOf('=');
  if (eq <= 0) throw new InputError(`--set ${arg}: expected key=value with the scenario's own key names, e.g. --set policy.threshold=10000`);
  const key = arg.slice(0, eq).trim();
  const text = arg.slice(eq + 1).trim();
  if (text === '') throw new InputError(`--set ${arg}: needs a value after "="`);
  const path = key.split('.');
  let spec: Spec = scenarioSchema;
  for (let i = 0; i < path.length; i++) {
    const at = path.slice(0, i).join('.');
    const fields = fieldsOf(spec);
    if (fields === 'any') break; // a map of named things (pagesPerSession "2-5"): its own checks apply
    if (fields === null) throw new InputError(`--set ${arg}: ${at} holds a value, not keys: set ${at}=... whole`);
    const next = fields[path[i]];
    if (next === undefined) {
      const near = nearest(path[i], Object.keys(fields));
      const where = at === '' ? 'the scenario' : at;
      throw new InputError(`--set ${arg}: ${where} has no key "${path[i]}"${near ? `; did you mean "${[...path.slice(0, i), near].join('.')}"?` : ` (valid: ${Object.keys(fields).join(', ')})`}`);
    }
    spec = next;
  }
  return { arg, path, text };
}

/** The keys below a spec: its fields, 'any' for a map of patterned keys, null for a value. */
function fieldsOf(spec: Spec): Readonly<Record<string, Spec>> | 'any' | null {
  if (spec.type === 'object') return spec.fields;
  if (spec.type === 'either') return fieldsOf(spec.map);
  if (spec.type === 'dict') return 'any';
  return null;
}

/** Write the overrides into a parsed scenario document (the later of two on one key wins). */
export function applyOverrides(doc: Document, overrides: readonly Override[]): void {
  for (const o of overrides) {
    const value = parseDocument(o.text);
    if (value.errors.length > 0) throw new InputError(`--set ${o.arg}: the value is not valid YAML (${value.errors[0].message.split('\n')[0]})`);
    if (!isMap(doc.contents)) doc.contents = doc.createNode({}) as typeof doc.contents;
    let map = doc.contents as YAMLMap;
    for (const key of o.path.slice(0, -1)) {
      // a key whose parent is written as a plain value (postsPerUserPerDay: 2) replaces it with a map
      const child: unknown = map.get(key, true);
      if (isMap(child)) map = child as YAMLMap;
      else {
        const made = doc.createNode({}) as YAMLMap;
        map.set(doc.createNode(key), made);
        map = made;
      }
    }
    // keys as scalar nodes, as the file's own are (the validator reads them so)
    map.set(doc.createNode(o.path.at(-1)), value.contents);
  }
}

/** An error about an overridden key, said against the flag that set it rather than the file. */
export function attributeToOverride(err: InputError, overrides: readonly Override[]): InputError {
  const o = [...overrides].reverse().find((x) => err.message.startsWith(`${x.path.join('.')}:`) || err.message.startsWith(`${x.path.join('.')}[`));
  return o ? new InputError(err.message, `--set ${o.arg}`) : err;
}
