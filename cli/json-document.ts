// A JSON document a command reads (feedlab report, feedlab compare): the file's parsed content and
// its `schema`, or one line naming the file and what is wrong with it.
import { readFileSync } from 'node:fs';
import { InputError } from './errors.js';

export function readJsonDocument(path: string): { doc: unknown; schema: string | undefined } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new InputError(e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'is a directory, not a result document' : e.message, path);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new InputError(`not valid JSON: ${jsonProblem((err as Error).message, text)}`, path);
  }
  const schema = doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? (doc as { schema?: unknown }).schema : undefined;
  return { doc, schema: typeof schema === 'string' ? schema : undefined };
}

/**
 * V8's JSON error in one line: without the quoted excerpt it may carry (which holds the file's own
 * line breaks, and was cut there mid-message), with a position given as line and column.
 */
export function jsonProblem(message: string, text: string): string {
  const m = message
    .replace(/, (?:\.\.\.)?"[^]*" is not valid JSON$/, '')
    .replace(/\s+/g, ' ')
    .trim();
  const at = /(?: in JSON)? at position (\d+)(?: \(line \d+ column \d+\))?$/.exec(m);
  if (!at) return m;
  const position = Number(at[1]);
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  const column = position - before.lastIndexOf('\n');
  return `${m.slice(0, at.index)} at line ${line}, column ${column}`;
}
