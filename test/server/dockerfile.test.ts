// The Dockerfile's steps, replayed without a Docker engine (none runs on the development machines):
// its COPY lines into an empty folder, its RUN lines there with sh, then its ENTRYPOINT. This is the
// image's build but for the base image (node:20 on Debian bookworm, as here), so a file the build
// needs and the COPY lines forget, or a RUN step that fails, fails here.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const steps = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'))
  .map((l) => {
    const space = l.indexOf(' ');
    return { op: l.slice(0, space), arg: l.slice(space + 1) };
  });

describe('the Dockerfile, replayed without an engine', () => {
  const dir = mkdtempSync(join(tmpdir(), 'feedlab-image-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('uses only the steps replayed here', () => {
    expect(new Set(steps.map((s) => s.op))).toEqual(new Set(['FROM', 'WORKDIR', 'COPY', 'RUN', 'ENTRYPOINT']));
    expect(steps[0]).toEqual({ op: 'FROM', arg: 'node:20-bookworm-slim' });
  });

  it('builds from the files it copies, and the image\'s entry point runs feedlab', () => {
    for (const { op, arg } of steps) {
      if (op === 'COPY') {
        const parts = arg.split(/\s+/);
        const dest = parts.pop() as string;
        for (const src of parts) cpSync(join(ROOT, src), join(dir, dest === './' ? src : dest), { recursive: true });
      } else if (op === 'RUN') {
        execFileSync('sh', ['-c', arg], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      }
    }
    const entry = JSON.parse(steps.find((s) => s.op === 'ENTRYPOINT')!.arg) as string[];
    expect(entry).toEqual(['node', 'dist/cli/main.js']);
    const run = (...args: string[]) => execFileSync(process.execPath, [entry[1], ...args], { cwd: dir, encoding: 'utf8' });
    expect(run('token', '42', '--secret', 'a-secret-of-at-least-32-bytes-0123456789')).toMatch(/^ey[\w-]+\.[\w-]+\.[\w-]+\n$/);
    expect(run('serve', '--help')).toMatch(/feedlab serve/);
    expect(run('worker', '--help')).toMatch(/feedlab worker/);
    // Dev dependencies pruned: the compiler is not in the image.
    expect(() => execFileSync('sh', ['-c', 'test -e node_modules/typescript'], { cwd: dir })).toThrow();
  }, 240_000);
});
