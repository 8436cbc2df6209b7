// Where and when a calibration was measured: the machine (hostname, CPU model, cores, memory), the
// versions of node, Redis, Postgres and feedlab, and how busy the machine was with other work:
// the other processes' share of all its cores over the measurements, taken as sim/replay/cpu.ts
// takes it for a replay (the machine's busy time less this process, the named processes, Redis
// and our Postgres backends).
import { availableParallelism, cpus, hostname, totalmem } from 'node:os';
import type { Redis } from 'ioredis';
import type { Store } from '../../server/store/pool.js';
import { CONTENDED_SHARE, type Provenance } from '../../sim/calibration/document.js';
import { CpuMeter, type CpuSnapshot } from '../../sim/replay/cpu.js';
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
  private first: CpuSnapshot | null = null;

  constructor(redis: Redis, store: Store, pgPort: number, processes: ReadonlyMap<string, number>) {
    this.meter = new CpuMeter(redis, null, pgPort, async (ports) => {
      if (ports.length === 0) return [];
      const r = await store.pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE client_port = ANY ($1::int[])', [ports]);
      return r.rows.map((row) => row.pid);
    });
    this.meter.setProcesses(processes);
  }

  async start(): Promise<void> {
    this.first = await this.meter.snapshot();
  }

  async stop(): Promise<Provenance['contention']> {
    if (!this.first) throw new Error('calibrate: contention was not started');
    const c = this.meter.share(this.first, await this.meter.snapshot());
    // as a replay's result takes it: over everything the machine had (busy and idle)
    const machinePct = c.generator + Object.values(c.processes).reduce((a, b) => a + b, 0) + c.redis + c.postgres + c.other + c.idle;
    const otherShare = machinePct > 0 ? c.other / machinePct : 0;
    return { otherShare, contended: otherShare > CONTENDED_SHARE, overSeconds: c.wallSeconds };
  }
}
