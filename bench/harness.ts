// What the benchmarks share (the live ones, server.ts, replay.ts, replay-end-to-end.ts, compare.ts, and sweep.ts, plan.ts): cleanups
// that run once on success, failure and interruption alike, the signals that trigger them, the CLI
// run as a user runs it, a child process stopped, number formats, and in-process work timed with
// where the machine's CPU went.
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI_MAIN } from '../cli/replay/processes.js';
import { machineSeconds } from '../sim/replay/cpu.js';

/** Stop a child process (`exited`: its exit): SIGTERM, then SIGKILL if it is still there after 5 s. */
export async function stopChild(proc: ChildProcess, exited: Promise<void>): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** Cleanups run once, last registered first, on success, failure and interruption alike. */
export class Cleanup {
  private readonly steps: Array<{ what: string; run: () => Promise<unknown> | unknown }> = [];
  private running: Promise<void> | null = null;

  add(what: string, run: () => Promise<unknown> | unknown): void {
    this.steps.push({ what, run });
  }

  runAll(): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.splice(0).reverse()) {
        try {
          await step.run();
        } catch (err) {
          console.log(`  !!! cleanup "${step.what}" failed: ${(err as Error).message}`);
        }
      }
    })();
    return this.running;
  }
}

/** Ctrl-C / SIGTERM run `onStop` (the cleanup) and exit 130; returns the off switch. */
export function onSignals(onStop: () => Promise<void>): () => void {
  const h = (signal: NodeJS.Signals) => {
    console.log(`\n${signal}: cleaning up`);
    void onStop().then(() => process.exit(130));
  };
  process.once('SIGINT', h);
  process.once('SIGTERM', h);
  return () => {
    process.off('SIGINT', h);
    process.off('SIGTERM', h);
  };
}

/** Whole numbers with thousands separators; n/a for a figure not measured. */
export const fmt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
/** Two decimals and a unit; n/a for a figure not measured. */
export const f2 = (n: number | null | undefined, unit = '') => (typeof n === 'number' && Number.isFinite(n) ? `${n.toFixed(2)}${unit}` : 'n/a');
export const verdict = (ok: boolean) => (ok ? 'meets the target' : 'MISSES the target');
/** Seconds since `t0` (a performance.now() reading). */
export const secs = (t0: number) => (performance.now() - t0) / 1000;

/**
 * `feedlab ARGS` as a user runs it, in a child process with its own process group (a signal
 * reaches it once, from here, and it stops and cleans up itself), stopped after `timeoutMs`. Its
 * stdout, and its stderr unless `inheritStderr` shows it as it comes (`onStderr` sees it so far, as it comes).
 * `prefix` runs it under another command (GNU time for its peak RSS), in the same group, so the
 * stop reaches both.
 */
export async function runCli(
  args: string[],
  o: { timeoutMs: number; inheritStderr?: boolean; onStderr?: (soFar: string, pid: number) => void; prefix?: readonly string[] },
): Promise<{ code: number | null; stdout: string; stderr: string; seconds: number }> {
  const t0 = performance.now();
  const [command, ...before] = [...(o.prefix ?? []), process.execPath];
  const child = spawn(command, [...before, CLI_MAIN, ...args], { stdio: ['ignore', 'pipe', o.inheritStderr ? 'inherit' : 'pipe'], detached: true });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    err += d;
    o.onStderr?.(err, child.pid!);
  });
  // 'close', not 'exit': the whole document has been read from stdout by then
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const stop = () => {
    try {
      process.kill(-child.pid!, 'SIGINT');
    } catch {
      // gone
    }
  };
  const off = onSignals(async () => {
    stop();
    await exited;
  });
  const timer = setTimeout(stop, o.timeoutMs);
  const code = await exited;
  clearTimeout(timer);
  off();
  return { code, stdout: out, stderr: err, seconds: (performance.now() - t0) / 1000 };
}

/** A piece of in-process work timed: its wall time, this process's CPU (every thread) and the other processes' on the machine. */
export interface TimedCpu<T> {
  seconds: number;
  ownCpu: number;
  otherCpu: number;
  machineSeconds: number;
  result: T;
}

export async function timedCpu<T>(work: () => Promise<T> | T): Promise<TimedCpu<T>> {
  const m0 = machineSeconds();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await work();
  const seconds = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  const m1 = machineSeconds();
  const ownCpu = (c.user + c.system) / 1e6;
  return { seconds, ownCpu, otherCpu: Math.max(0, m1.busy - m0.busy - ownCpu), machineSeconds: m1.total - m0.total, result };
}

/** "12.3 s wall; CPU: this process 24.1 s (98% of the machine), other processes 0.4 s (2%)". */
export function timedCpuLine(s: TimedCpu<unknown>): string {
  const share = (cpu: number) => `${((100 * cpu) / s.machineSeconds).toFixed(0)}%`;
  const wall = s.seconds < 10 ? s.seconds.toFixed(2) : s.seconds.toFixed(1);
  return `${wall} s wall; CPU: this process ${s.ownCpu.toFixed(1)} s (${share(s.ownCpu)} of the machine), other processes ${s.otherCpu.toFixed(1)} s (${share(s.otherCpu)})`;
}
