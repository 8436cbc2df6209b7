// Helpers of the end-to-end tests: the built CLI run as child processes (with their stderr kept
// for the failure message, and every child stopped at the end), a TCP proxy in front of Postgres
// that can be cut and restored, waiting with a bound, and reading a Prometheus text page.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { FaultProxy } from '../../../cli/replay/fault-proxy.js';

export { CI, redisDown } from '../services.js';
export const ROOT = join(import.meta.dirname, '../../..');
export const CLI = join(ROOT, 'dist/cli/main.js');


export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Poll until check returns something other than false; throws after timeoutMs naming what. */
export async function waitFor<T>(what: string, check: () => Promise<T | false> | T | false, timeoutMs: number, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await sleep(everyMs);
  }
}

/** The value of one sample line (`name{labels} value`) of a Prometheus text page; NaN when absent. */
export function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? NaN : Number(line.slice(series.length + 1));
}

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** dist/ at least as new as the sources the CLI is built from (`npm test` builds first; this is for a lone vitest run). */
export function ensureBuilt(): void {
  const sources = Math.max(...['core', 'sim', 'server', 'cli'].map((d) => newestSource(join(ROOT, d))));
  if (existsSync(CLI) && statSync(CLI).mtimeMs >= sources) return;
  spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.json')], { cwd: ROOT, stdio: 'ignore' });
  if (!existsSync(CLI) || statSync(CLI).mtimeMs < sources) throw new Error('tsc did not rebuild dist/cli/main.js (run npm run build)');
}

/** `node dist/cli/main.js ARGS` to completion (bounded); stdout and stderr as text. */
export function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`feedlab ${args.join(' ')}: no exit within ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}`));
    }, timeoutMs);
    proc.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    proc.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A long-running `feedlab` child (serve, worker). */
export class CliChild {
  readonly proc: ChildProcess;
  readonly lines: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(
    readonly name: string,
    args: string[],
    env: NodeJS.ProcessEnv,
  ) {
    this.proc = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let partial = '';
    this.proc.stderr!.setEncoding('utf8').on('data', (d: string) => {
      const parts = (partial + d).split('\n');
      partial = parts.pop() ?? '';
      this.lines.push(...parts.filter((l) => l.length > 0));
      if (this.lines.length > 5000) this.lines.splice(0, this.lines.length - 5000);
    });
    this.proc.stdout!.resume();
    this.exited = new Promise((resolve) => this.proc.on('exit', (code, signal) => resolve({ code, signal })));
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** The last lines of its stderr, for a failure message. */
  tail(n = 15): string {
    return `${this.name} stderr:\n  ${this.lines.slice(-n).join('\n  ')}`;
  }

  /** The first stderr line matching re (waiting for it); throws when the child exits first or after timeoutMs. */
  async line(re: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
    return waitFor(
      `${this.name} to print ${re}`,
      () => {
        for (const l of this.lines) {
          const m = re.exec(l);
          if (m) return m;
        }
        if (!this.running) throw new Error(`${this.name} exited (${this.proc.exitCode ?? this.proc.signalCode}) before printing ${re}\n${this.tail()}`);
        return false;
      },
      timeoutMs,
      25,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${this.tail()}`);
    });
  }

  /** SIGTERM, then SIGKILL after graceMs; resolves once it has exited. A stopped child is continued first. */
  async stop(graceMs = 5_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.running) {
      this.proc.kill('SIGCONT');
      this.proc.kill('SIGTERM');
      const timer = setTimeout(() => this.running && this.proc.kill('SIGKILL'), graceMs);
      try {
        return await this.exited;
      } finally {
        clearTimeout(timer);
      }
    }
    return this.exited;
  }
}

// The replay's fault proxy stands between the services and the tests' processes (cut, hang,
// hangReplies, restore); the machine's Postgres and Redis are never touched.
export { FaultProxy } from '../../../cli/replay/fault-proxy.js';

/** A started proxy in front of a service's URL (redis:// or postgres://), and the URL through it. */
export const proxyInFront = (url: string, defaultPort: number) => FaultProxy.inFront(url, defaultPort);
