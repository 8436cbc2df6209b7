// mkdir -p, one level at a time. Node's recursive mkdir loops for ever where mkdir answers ENOENT
// under an existing directory (`--out /proc/foo` hung after the whole run); each level made alone
// fails at once, and the caller says so before any long work.
import { accessSync, constants, mkdirSync, rmdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { InputError } from './errors.js';

/** Make dir and its missing parents, or throw an InputError `${what}: why` naming the level that failed. */
export function makeDirs(dir: string, what: string): void {
  for (const level of missingLevels(dir, what)) makeLevel(level, what);
}

/**
 * Whether makeDirs would succeed, leaving nothing behind: the existing ancestor is a writable
 * directory and the first missing level can be made (it is made, then removed). For a check before
 * long work that must not leave a directory when the work is refused for another reason.
 */
export function checkDirs(dir: string, what: string): void {
  const first = missingLevels(dir, what)[0];
  if (first === undefined) return;
  makeLevel(first, what);
  rmdirSync(first);
}

/** The levels of dir that do not exist, shallowest first; throws when the existing ancestor cannot take them. */
function missingLevels(dir: string, what: string): string[] {
  const missing: string[] = [];
  let p = resolve(dir);
  for (;;) {
    let st;
    try {
      st = statSync(p);
    } catch {
      const parent = dirname(p);
      if (parent === p) break;
      missing.push(p);
      p = parent;
      continue;
    }
    if (!st.isDirectory()) throw new InputError(`${what}: ${p} is not a directory`);
    try {
      accessSync(p, constants.W_OK);
    } catch {
      throw new InputError(`${what}: ${p} is not writable`);
    }
    break;
  }
  return missing.reverse();
}

function makeLevel(level: string, what: string): void {
  try {
    mkdirSync(level);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' && statSync(level).isDirectory()) return;
    throw new InputError(`${what}: cannot make ${level} (${code ?? (err as Error).message})`);
  }
}
