// A scenario's or calibration's file read whole, or one InputError naming it and why not.
import { readFileSync } from 'node:fs';
import { InputError } from '../errors.js';

/** The file's text; `what` names it in the error ("scenario file", "calibration file"), `from` is where it was named. */
export function readInputFile(path: string, what: string, from?: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (err as Error).message;
    throw new InputError(`cannot read ${what} "${path}": ${why}`, from);
  }
}
