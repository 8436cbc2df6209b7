// The built CLI on a pseudo-terminal (util-linux `script`), as a person at a terminal runs it: for the
// dashboard's tests (test/dashboard/cli.test.ts) and replay's (test/cli/replay.test.ts).
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './cli-helpers.js';

const MAIN = join(ROOT, 'dist/cli/main.js');

/** The environment of a person at a terminal: no CI, colour allowed. */
export function personEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, TERM: 'xterm-256color', ...extra };
  if (!('CI' in extra)) delete env.CI;
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  return env;
}

/** Ink's redraws: cursor up, cursor hidden. The plain progress line only uses \r and erase-line. */
export const CURSOR_UP = '\x1b[1A';
export const CURSOR_HIDE = '\x1b[?25l';

export const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;
if (!hasScript) {
  const line = 'test/dashboard/cli.test.ts: util-linux `script` is not installed: the pseudo-terminal tests are SKIPPED';
  if (process.env.CI === 'true') throw new Error(line);
  console.warn(`\n!!! ${line}\n`);
}

export interface PtyRun {
  code: number | null;
  output: string;
}

/**
 * Run the built CLI on a pseudo-terminal (120x40 unless `size` says otherwise). `when(output)` is polled as output arrives; the
 * first time it returns a string, that string is typed.
 */
export function onPty(args: string[], opts: { env?: NodeJS.ProcessEnv; keys?: Array<(out: string) => string | null>; size?: string; timeoutMs?: number } = {}): Promise<PtyRun> {
  const quoted = [process.execPath, MAIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('script', ['-qfec', `stty ${opts.size ?? 'rows 40 cols 120'}; exec ${quoted}`, '/dev/null'], {
    cwd: ROOT,
    env: opts.env ?? personEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  const keys = [...(opts.keys ?? [])];
  child.stdout.on('data', (d: Buffer) => {
    output += d.toString('utf8');
    const key = keys[0]?.(output);
    if (key) {
      keys.shift();
      child.stdin.write(key);
    }
  });
  child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

