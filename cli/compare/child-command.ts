// Another feedlab command run as a child process by `feedlab compare SCENARIO` (replay, calibrate):
// exactly what a user would run, with its own cleanup. It gets its own process group, so Ctrl-C
// reaches it once, from here, and it stops and removes what it made before this process exits.
// Its stdout (a --json document) is collected; its exit code becomes ours: 2 an input error, 3 a
// service unreachable, 130 interrupted, each with the child's last line.
import { spawn } from 'node:child_process';
import { CLI_MAIN } from '../replay/processes.js';
import { EXIT_BAD_INPUT, EXIT_INFRASTRUCTURE, EXIT_INTERRUPTED, InfrastructureError, InputError } from '../errors.js';
import { formatSeconds } from '../output.js';

export class ChildInterrupted extends Error {}

export interface ChildOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

/**
 * Run `feedlab <args>`; `tick` is called every few seconds with the seconds elapsed (progress).
 * Resolves with its output when it exits 0 or 1 (a failed threshold still writes its document).
 */
export async function runFeedlab(args: string[], tick?: (seconds: number) => void): Promise<ChildOutcome> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI_MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
    try {
      process.kill(-child.pid!, 'SIGINT');
    } catch {
      // already gone
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const timer = tick ? setInterval(() => tick((performance.now() - t0) / 1000), 5_000) : null;
  try {
    const code = await exited;
    const seconds = (performance.now() - t0) / 1000;
    const last = stderr.trim().split('\n').filter(Boolean).pop() ?? '';
    const what = `feedlab ${args[0]} exited ${code} after ${formatSeconds(seconds)}`;
    if (interrupted || code === EXIT_INTERRUPTED) throw new ChildInterrupted(`${what}: interrupted`);
    if (code === EXIT_BAD_INPUT) throw new InputError(`${what}: ${last.replace(/^feedlab: /, '')}`);
    if (code === EXIT_INFRASTRUCTURE) throw new InfrastructureError(`${what}: ${last.replace(/^feedlab: /, '')}`);
    if (code !== 0 && code !== 1) throw new Error(`${what}: ${last || 'no output'}`);
    return { code, stdout, stderr, seconds };
  } finally {
    if (timer) clearInterval(timer);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
