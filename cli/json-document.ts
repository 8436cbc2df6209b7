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
    throw new InputError(`not valid JSON: ${(err as Error).message.split('\n')[0]}`, path);
  }
  const schema = doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? (doc as { schema?: unknown }).schema : undefined;
  return { doc, schema: typeof schema === 'string' ? schema : undefined };
}
