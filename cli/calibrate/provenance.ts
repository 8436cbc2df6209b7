// Where and when a calibration was measured: the machine (hostname, CPU model, cores, memory), the
// versions of node, Redis, Postgres and feedlab, and how busy the machine was with other work:
// the other processes' share of all its cores over the measurements, taken as sim/replay/cpu.ts
// takes it for a replay (the machine's busy time less this process, the named processes, Redis
// and our Postgres backends).
import { availableParallelism, cpus, hostname, totalmem } from 'node:os';
import type { Redis } from 'ioredis';
import type { Store } from '../../server/store/pool.js';
import { CONTENDED_SHARE, type Provenance } from '../../sim/calibration/document.js';
import { CpuMeter, processCpuSeconds, type BackendLookup, type CpuSnapshot } from '../../sim/replay/cpu.js';
import type { CoreWait } from '../../sim/replay/core-wait.js';
import { FEEDLAB_VERSION } from '../../sim/result.js';

export function machine(): Provenance['machine'] {
  return { hostname: hostname(), cpu: cpus()[0]?.model.trim() || 'unknown', cores: availableParallelism(), memoryBytes: totalmem() };
}

export async function versions(redis: Redis, store: Store): Promise<Provenance['versions']> {
  const info = await redis.info('server');
  const r = await store.pool.query<{ v: string }>("SELECT current_setting('server_version') AS v");
  return { node: process.version, redis: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown', postgres: r.rows[0]?.v.split(' ')[0] ?? 'unknown', feedlab: FEEDLAB_VERSION };
}

/** The other processes' share of the machine between start() and stop(). */
export class Contention {
  private readonly meter: CpuMeter;
  private readonly backends: BackendLookup;
  private first: CpuSnapshot | null = null;

  constructor(
    private readonly redis: Redis,
    store: Store,
    private readonly pgPort: number,
    processes: ReadonlyMap<string, number>,
  ) {
    this.backends = async (ports) => {
      if (ports.length === 0) return [];
      const r = await store.pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE client_port = ANY ($1::int[])', [ports]);
      return r.rows.map((row) => row.pid);
    };
    this.meter = new CpuMeter(redis, null, pgPort, this.backends);
    this.meter.setProcesses(processes);
  }

  /** Start counting these processes' waits for a core (with Redis's, our Postgres backends' and this process's as 'driver'); stop() gives them. */
  async watchWaits(processes: ReadonlyMap<string, number>): Promise<{ stop(): Promise<Record<string, CoreWait>> }> {
    const meter = new CpuMeter(this.redis, null, this.pgPort, this.backends);
    meter.setProcesses(processes);
    const from = await meter.snapshot();
    return { stop: async () => meter.share(from, await meter.snapshot()).coreWaits ?? {} };
  }

  async start(): Promise<void> {
    this.first = await this.meter.snapshot();
  }

  /** CPU seconds of our processes that ran for part of the measurement only (gone before stop()). */
  private passing = 0;
  private readonly passingFrom = new Map<number, number>();

  /** A process of ours started after start() (a worker for one figure): call once it runs, and passed() just before it stops. */
  passingStart(pid: number): void {
    this.passingFrom.set(pid, processCpuSeconds(pid));
  }

  /** Its CPU is ours, not other processes' (its Postgres backends are not told apart: they count as other). */
  passed(pid: number): void {
    const from = this.passingFrom.get(pid);
    if (from === undefined) return;
    this.passing += Math.max(0, processCpuSeconds(pid) - from);
    this.passingFrom.delete(pid);
  }

  async stop(): Promise<Provenance['contention']> {
    if (!this.first) throw new Error('calibrate: contention was not started');
    const c = this.meter.share(this.first, await this.meter.snapshot());
    const other = Math.max(0, c.other - (c.wallSeconds > 0 ? (100 * this.passing) / c.wallSeconds : 0));
    // as a replay's result takes it: over everything the machine had (busy and idle)
    const machinePct = c.generator + Object.values(c.processes).reduce((a, b) => a + b, 0) + c.redis + c.postgres + c.other + c.idle;
    const otherShare = machinePct > 0 ? other / machinePct : 0;
    return { otherShare, contended: otherShare > CONTENDED_SHARE, overSeconds: c.wallSeconds };
  }
}
