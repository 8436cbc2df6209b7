// mkdir -p one level at a time (sim/make-dirs.ts): what can be made is, what cannot is refused at
// once naming the level (Node's recursive mkdir looped for ever under /proc).
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../sim/errors.js';
import { checkDirs, makeDirs } from '../../sim/make-dirs.js';
import { scratchDir } from '../cli/cli-helpers.js';

const refusal = (dir: string) => {
  try {
    makeDirs(dir, `--out ${dir}`);
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return (err as Error).message;
  }
  throw new Error(`${dir} was made`);
};

describe('makeDirs', () => {
  it('makes every missing level, and takes one that exists', () => {
    const root = scratchDir();
    const deep = join(root, 'a', 'b', 'c');
    makeDirs(deep, 'out');
    expect(statSync(deep).isDirectory()).toBe(true);
    makeDirs(deep, 'out');
    makeDirs(root, 'out');
  });

  it('checks that a path can be made and leaves nothing behind', () => {
    const root = scratchDir();
    checkDirs(join(root, 'x', 'y'), 'out');
    expect(existsSync(join(root, 'x'))).toBe(false);
    writeFileSync(join(root, 'file'), 'x');
    expect(() => checkDirs(join(root, 'file', 'y'), 'out')).toThrow(`out: ${join(root, 'file')} is not a directory`);
  });

  it.skipIf(!existsSync('/proc/self'))('refuses a directory under /proc at once', () => {
    const began = Date.now();
    expect(refusal('/proc/feedlab-no/such')).toMatch(/^--out \/proc\/feedlab-no\/such: cannot make \/proc\/feedlab-no \(ENOENT\)$/);
    expect(() => checkDirs('/proc/feedlab-no/such', 'out')).toThrow('out: cannot make /proc/feedlab-no (ENOENT)');
    expect(Date.now() - began).toBeLessThan(1000);
  });

  it('refuses a file on the way', () => {
    const root = scratchDir();
    writeFileSync(join(root, 'file'), 'x');
    expect(refusal(join(root, 'file', 'sub'))).toBe(`--out ${join(root, 'file', 'sub')}: ${join(root, 'file')} is not a directory`);
  });
});
