// The processes a self-contained replay starts: `feedlab serve` and `feedlab worker`, exactly what an
// operator runs, each in a process (and process group) of its own, so the machine's two cores are
// shared by the OS between the server, the workers, Redis, Postgres and the driver, and the CPU each
// used can be read from /proc. Their own process groups keep a Ctrl-C at the terminal for the driver,
// which then stops them in order; a watchdog (reaper.ts) stops them if the driver dies.
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built CLI beside this file (dist/cli/main.js). */
export const CLI_MAIN = join(dirname(fileURLToPath(import.meta.url)), '../main.js');

/** Lines of a service's stderr kept for error messages. */
const KEEP_LINES = 2_000;

export class ServiceProcess {
  readonly lines: string[] = [];
  private readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private partial = '';
  /** Its ready line was seen (ready()): it handles the signals a service handles. */
  private isReady = false;

  private constructor(
    readonly name: string,
    readonly proc: ChildProcess,
  ) {
    const take = (d: string) => {
      const parts = (this.partial + d).split('\n');
      this.partial = parts.pop() ?? '';
      this.lines.push(...parts);
      if (this.lines.length > KEEP_LINES) this.lines.splice(0, this.lines.length - KEEP_LINES);
    };
    proc.stderr!.setEncoding('utf8').on('data', take);
    proc.stdout!.setEncoding('utf8').on('data', take);
    this.exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
  }

  /** Start `node dist/cli/main.js ARGS` with `env` (nothing of the driver's FEED_* settings leaks in). */
  static start(name: string, args: string[], env: Record<string, string>): ServiceProcess {
    const base: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('FEED_') && k !== 'NODE_OPTIONS') base[k] = v;
    const proc = spawn(process.execPath, [CLI_MAIN, ...args], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    return new ServiceProcess(name, proc);
  }

  get pid(): number {
    return this.proc.pid ?? -1;
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** Resolves with the first line matching `ready`; rejects (with the service's last lines) if it exits or times out first. */
  async ready(ready: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const line of this.lines) {
        const m = ready.exec(line);
        if (m) {
          this.isReady = true;
          return m;
        }
      }
      if (!this.running || Date.now() > deadline) {
        const why = this.running ? `did not start within ${Math.round(timeoutMs / 1000)} s` : `exited (${this.proc.exitCode ?? this.proc.signalCode})`;
        await this.stop(1_000);
        throw new Error(`${this.name} ${why}: ${this.lines.slice(-6).join(' | ') || 'no output'}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** SIGTERM (the service finishes what it holds), SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.running) return;
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /**
   * Ask a `feedlab worker` to publish its figures now (SIGUSR2). Only once it is ready: before it
   * handles the signal, the signal's default would end it. False when it was not asked.
   */
  askToPublish(): boolean {
    if (!this.isReady || !this.running) return false;
    this.signal('SIGUSR2');
    return true;
  }

  /** SIGKILL at once. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.signal('SIGKILL');
    await this.exited;
  }

  private signal(sig: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, sig);
    } catch {
      try {
        this.proc.kill(sig);
      } catch {
        // gone
      }
    }
  }
}

/** Ask every ready `feedlab worker` among `processes` to publish its figures now; how many were asked. */
export function askWorkersToPublish(processes: readonly ServiceProcess[]): number {
  return processes.filter((p) => p.name.startsWith('worker ') && p.askToPublish()).length;
}

/** The watchdog (reaper.ts), told about the scratch space and every process started. */
export class Watchdog {
  private readonly proc: ChildProcess;

  constructor(logFile: string | null) {
    this.proc = spawn(process.execPath, [join(dirname(fileURLToPath(import.meta.url)), 'reaper.js')], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
    this.proc.unref();
    (this.proc.stdin as unknown as { unref?: () => void }).unref?.();
    this.send({ log: logFile ?? undefined });
  }

  send(message: object): void {
    try {
      this.proc.stdin!.write(JSON.stringify(message) + '\n');
    } catch {
      // the watchdog is gone: the driver cleans up itself
    }
  }

  /** Everything is cleaned up: the watchdog exits without doing anything. */
  release(): void {
    this.send({ done: true });
    this.proc.stdin!.end();
  }
}
