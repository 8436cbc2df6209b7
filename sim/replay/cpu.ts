// Where the CPU of this machine went during a measurement: this process (the load generator or
// replay driver), named processes of ours (the server, fan-out workers...), Redis, the Postgres
// backends serving our processes, and everything else. Read from /proc (Linux) and Redis's
// INFO cpu; used by the server benchmark (bench/server.ts) and `feedlab replay`.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { cpus } from 'node:os';
import type { Redis } from 'ioredis';
import { addWaits, CoreWaitBook, type CoreWait } from './core-wait.js';

export interface CpuSnapshot {
  wall: number;
  /** CPU seconds used so far by: this process, each named process (with its pid), Redis, our Postgres backends (by pid), the whole machine. */
  self: number;
  processes: Map<string, { pid: number; seconds: number }>;
  redis: number;
  postgres: Map<string, number>;
  machine: number;
  /** How long each main thread read waited for a core so far, by pid: this process, the named processes, Redis (when it runs here), our Postgres backends (core-wait.ts). */
  waits: Map<number, CoreWait>;
  /** Redis's pid when it runs on this machine, else null. */
  redisPid: number | null;
}

/** CPU used over an interval, in % of one core (a 2-core machine has 200%: that is everything). */
export interface CpuShare {
  generator: number;
  /** The process named 'server' (0 when there is none). */
  server: number;
  /** Every named process (the server included), by name. */
  processes: Record<string, number>;
  redis: number;
  postgres: number;
  /** Everything else on the machine (other processes, the kernel's interrupts...). */
  other: number;
  idle: number;
  /** The interval, s. */
  wallSeconds: number;
  /** How long the main threads waited for a core over the interval: 'driver', each named process, 'redis' (when it runs on this machine), 'postgres' (the backends together). Absent from older documents. */
  coreWaits?: Record<string, CoreWait>;
  /** The machine's cores (100% each). Absent from older documents. */
  cores?: number;
}

const CLK_TCK = 100;

/** CPU seconds over a share's interval from one of its figures (percent of a core). */
export function cpuSecondsOf(share: Pick<CpuShare, 'wallSeconds'>, pctOfCore: number): number {
  return (pctOfCore / 100) * share.wallSeconds;
}
const CORES = Math.max(1, cpus().length);

/**
 * CPU seconds a process has used so far; 0 once it is gone. Its threads' run time as the scheduler
 * counts it (/proc/PID/task/TID/schedstat, nanoseconds) where the kernel keeps it, else user +
 * system in 10 ms ticks: over a quiet second a Node server burns a tick or two, so the ticks read
 * 0, 10 or 20 ms of the same few ms. A thread that exits takes its time with it, which Node's
 * threads (the libuv pool, V8's helpers) do not while the process runs; CpuMeter keeps the most it
 * has seen of a process, so its figures never go back.
 */
export function processCpuSeconds(pid: number | string): number {
  const run = threadsRunSeconds(pid);
  return Number.isNaN(run) ? procTicks(pid) : run;
}

/** The sum of a process's threads' scheduler run time, seconds; NaN where there is none to read. */
function threadsRunSeconds(pid: number | string): number {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return NaN;
  }
  let ns = 0;
  let read = 0;
  for (const tid of tids) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'latin1').split(' ', 1)[0]);
      read++;
    } catch {
      // the thread exited meanwhile, or the kernel keeps no schedstat
    }
  }
  return read > 0 && Number.isFinite(ns) ? ns / 1e9 : NaN;
}

function procTicks(pid: number | string): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK; // utime, stime (fields 14 and 15)
  } catch {
    return 0;
  }
}

/** A process's resident memory in bytes (VmRSS; NaN when it is gone). */
export function residentBytes(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Whether a pid is a redis-server of this machine. */
function isRedis(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'latin1').startsWith('redis');
  } catch {
    return false;
  }
}

/** Inodes of the sockets a process holds open. */
function socketInodes(pid: number): Set<string> {
  const out = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) out.add(m[1]);
      } catch {
        // closed meanwhile
      }
    }
  } catch {
    // the process is gone
  }
  return out;
}

/** Local ports of these processes' TCP connections to `remotePort` (their Postgres connections). */
export function localPortsTo(pids: readonly number[], remotePort: number): number[] {
  const inodes = new Set<string>();
  for (const pid of pids) for (const i of socketInodes(pid)) inodes.add(i);
  const ports: number[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'latin1');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const local = f[1].split(':');
      const remote = f[2].split(':');
      if (parseInt(remote[remote.length - 1], 16) === remotePort && inodes.has(f[9])) ports.push(parseInt(local[local.length - 1], 16));
    }
  }
  return ports;
}

/** The whole machine's busy and total CPU seconds since boot (/proc/stat, every core). */
export function machineSeconds(): { busy: number; total: number } {
  try {
    const line = readFileSync('/proc/stat', 'latin1').split('\n')[0];
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const total = v.slice(0, 8).reduce((s, x) => s + x, 0);
    const idle = v[3] + v[4];
    return { busy: (total - idle) / CLK_TCK, total: total / CLK_TCK };
  } catch {
    return { busy: 0, total: 0 };
  }
}

/** The Postgres backend pids serving these client ports (pg_stat_activity). */
export type BackendLookup = (clientPorts: number[]) => Promise<number[]>;

/**
 * CPU shares over an interval. Postgres counts only the backends serving this process's and the
 * named processes' connections (found by their client ports), so other databases' users on the
 * machine do not land there; Redis is one server for everyone on the machine, so its figure
 * includes whatever else used it meanwhile. Without a Redis client or a backend lookup, those
 * figures are 0 (and land in `other`).
 */
export class CpuMeter {
  private processes = new Map<string, number>();
  /** The CPU seconds each process was last seen at: what a process killed (or a backend gone) used counts up to then. */
  private readonly lastSeen = new Map<number, number>();
  /** Redis's pid, once INFO server's process_id was found to be a redis-server of this machine. */
  private redisPid: number | null = null;
  private readonly waitBook = new CoreWaitBook();

  constructor(
    private readonly redis: Redis | null,
    serverPid: number | null,
    private readonly pgPort: number,
    private readonly backends: BackendLookup | null,
  ) {
    this.setServer(serverPid);
  }

  /** The process named 'server' (null: none; the other named processes stay). */
  setServer(pid: number | null): void {
    if (pid) this.processes.set('server', pid);
    else this.processes.delete('server');
  }

  /** Every named process to account for (replaces the previous set, 'server' included). */
  setProcesses(processes: ReadonlyMap<string, number>): void {
    this.processes = new Map(processes);
  }

  /** Each named process's resident memory now, bytes (the driver's as 'driver'). */
  resident(): Record<string, number> {
    const out: Record<string, number> = { driver: process.memoryUsage.rss() };
    for (const [name, pid] of this.processes) out[name] = residentBytes(pid);
    return out;
  }

  /**
   * A process's CPU seconds now, or the most seen when it is gone: never less than before, as a
   * dying process's threads (and a thread that exited, wrk's) leave the sum of those still there.
   */
  private ticks(pid: number): number {
    const t = Math.max(processCpuSeconds(pid), this.lastSeen.get(pid) ?? 0);
    if (t > 0) this.lastSeen.set(pid, t);
    return t;
  }

  /** Reads every named process's CPU now: call it just before killing one, so its share is whole. */
  remember(): void {
    for (const pid of this.processes.values()) this.ticks(pid);
    this.waitBook.read(this.processes.values());
  }

  async snapshot(): Promise<CpuSnapshot> {
    const info = this.redis ? await this.redis.info('cpu').catch(() => '') : '';
    const num = (k: string) => Number(new RegExp(`${k}:([0-9.]+)`).exec(info)?.[1] ?? 0);
    const pids = [process.pid, ...this.processes.values()];
    const backends = this.backends ? await this.backends(localPortsTo(pids, this.pgPort)).catch(() => [] as number[]) : [];
    const postgres = new Map<string, number>();
    for (const b of backends) postgres.set(String(b), this.ticks(b));
    const processes = new Map<string, { pid: number; seconds: number }>();
    for (const [name, pid] of this.processes) processes.set(name, { pid, seconds: this.ticks(pid) });
    const redisPid = await this.localRedisPid();
    const waits = this.waitBook.read([...pids, ...backends, ...(redisPid === null ? [] : [redisPid])]);
    const u = process.cpuUsage();
    return {
      wall: performance.now(),
      self: (u.user + u.system) / 1e6,
      processes,
      redis: num('used_cpu_sys') + num('used_cpu_user'),
      postgres,
      machine: machineSeconds().busy,
      waits,
      redisPid,
    };
  }

  /** Redis's pid while it is a redis-server of this machine (asked again when it is not: a restart, a failed INFO), else null (a remote Redis, or one in a container of its own). */
  private async localRedisPid(): Promise<number | null> {
    if (!this.redis) return null;
    if (this.redisPid !== null && isRedis(this.redisPid)) return this.redisPid;
    const info = await this.redis.info('server').catch(() => '');
    const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
    this.redisPid = pid > 0 && isRedis(pid) ? pid : null;
    return this.redisPid;
  }

  /**
   * The main threads' waits for a core between two snapshots, by name ('driver', each named
   * process, 'redis', 'postgres' for the backends together): a process started meanwhile counts
   * from its start, one gone meanwhile (killed and restarted under its name, a backend closed) up
   * to its last reading.
   */
  private coreWaits(a: CpuSnapshot, b: CpuSnapshot): Record<string, CoreWait> {
    const out: Record<string, CoreWait> = {};
    const add = (key: string, pid: number | null | undefined) => {
      const w = pid ? this.waitBook.over(pid, a.waits, b.waits) : null;
      if (w) out[key] = out[key] ? addWaits(out[key], w) : w;
    };
    add('driver', process.pid);
    for (const [name, now] of b.processes) {
      add(name, now.pid);
      const before = a.processes.get(name)?.pid;
      if (before !== now.pid) add(name, before);
    }
    add('redis', b.redisPid);
    if (a.redisPid !== b.redisPid) add('redis', a.redisPid);
    for (const pid of new Set([...a.postgres.keys(), ...b.postgres.keys()])) add('postgres', Number(pid));
    return out;
  }

  share(a: CpuSnapshot, b: CpuSnapshot): CpuShare {
    const wall = (b.wall - a.wall) / 1000;
    const p = (x: number) => (wall > 0 ? (100 * x) / wall : 0);
    const generator = p(b.self - a.self);
    const processes: Record<string, number> = {};
    let named = 0;
    for (const [name, now] of b.processes) {
      // A process that started (or was named) meanwhile counts from its start; one it replaced (a
      // restart) up to when it was last seen.
      const before = a.processes.get(name);
      const replaced = before && before.pid !== now.pid ? Math.max(0, (this.lastSeen.get(before.pid) ?? before.seconds) - before.seconds) : 0;
      const x = p(replaced + Math.max(0, now.seconds - (before && before.pid === now.pid ? before.seconds : 0)));
      processes[name] = x;
      named += x;
    }
    const redis = p(b.redis - a.redis);
    let pg = 0;
    // A backend that connected meanwhile counts from 0; one that exited meanwhile up to when it was
    // last seen (what it used after that is lost: an undercount of at most a sample's interval).
    for (const [pid, t] of b.postgres) pg += t - (a.postgres.get(pid) ?? 0);
    for (const [pid, t] of a.postgres) if (!b.postgres.has(pid)) pg += Math.max(0, (this.lastSeen.get(Number(pid)) ?? t) - t);
    const postgres = p(Math.max(0, pg));
    const machine = p(b.machine - a.machine);
    return {
      generator,
      server: processes.server ?? 0,
      processes,
      redis,
      postgres,
      other: Math.max(0, machine - generator - named - redis - postgres),
      idle: Math.max(0, 100 * CORES - machine),
      wallSeconds: wall,
      coreWaits: this.coreWaits(a, b),
      cores: CORES,
    };
  }
}

/**
 * Other engineers' builds and tests may share this machine: before a measurement, wait (at most
 * maxMs) until processes other than ours use less than `quietPct` of the machine. Returns the last
 * share seen, for the caller to report.
 */
export async function waitForQuiet(cpu: CpuMeter, maxMs: number, quietPct = 15): Promise<{ otherPct: number; waitedMs: number }> {
  const started = performance.now();
  for (;;) {
    const a = await cpu.snapshot();
    await new Promise((r) => setTimeout(r, 500));
    const share = cpu.share(a, await cpu.snapshot());
    const waitedMs = performance.now() - started;
    if (share.other < quietPct || waitedMs >= maxMs) return { otherPct: share.other, waitedMs };
  }
}

export function formatCpu(c: CpuShare, generatorName = 'load generator'): string {
  const f = (x: number) => `${x.toFixed(0)}%`;
  const busy = c.other > 25 ? ' !!! other processes busy: figure disturbed' : '';
  const extra = Object.entries(c.processes)
    .filter(([name]) => name !== 'server')
    .map(([name, x]) => `, ${name} ${f(x)}`)
    .join('');
  return `cpu of ${CORES} cores (${100 * CORES}%): server ${f(c.server)}${extra}, ${generatorName} ${f(c.generator)}, redis ${f(c.redis)}, postgres ${f(c.postgres)}, other ${f(c.other)}, idle ${f(c.idle)}${busy}`;
}
