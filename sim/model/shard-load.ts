// Load on each Redis process and the queueing delay a request meets there.
// Redis serves one command at a time per process, so each process is a single server (a shard each,
// unless the scenario runs its shards on fewer processes: a replay on one machine runs one): its
// utilisation over the last second sets the chance and length of a wait (M/M/1: P(wait) = rho, and
// the wait given one is exponential with mean S / (1 - rho)); when demand exceeds a second of work
// per second, the excess piles up as a backlog every later request waits behind. The fan-out's
// pipelined timeline writes are kept apart: a request that meets them waits for the worker's chunks
// (core/redis-pipeline.ts), spread evenly over two chunks' time, not for one command.
import type { Rng } from '../../core/random.js';

const RHO_CAP = 0.98;

export class ShardLoad {
  /** Busy seconds and commands accumulated in the current second, by process. */
  private readonly busy: Float64Array;
  private readonly ops: Float64Array;
  /** Of the busy seconds, those of pipelined timeline writes. */
  private readonly piped: Float64Array;
  /** Load spread evenly over every shard (keys of many users, as with population scaling). */
  private spreadBusy = 0;
  private spreadOps = 0;
  private spreadPiped = 0;
  /** Utilisation and mean service time of the commands not pipelined, measured over the last whole second. */
  readonly rho: Float64Array;
  private readonly service: Float64Array;
  /** The share of the last whole second a process spent on pipelined timeline writes. */
  readonly pipedRho: Float64Array;
  /** Seconds of work queued beyond capacity. */
  readonly backlog: Float64Array;
  private second = 0;
  /** The highest utilisation any process reached in any second. */
  peakRho = 0;
  /** Processes that had more than a second of work in some second: their queue grows without bound. */
  readonly saturated: Uint8Array;
  saturatedSeconds = 0;
  readonly processes: number;
  /** Shards on each process. */
  private readonly hosted: Float64Array;

  /**
   * `shards` key shards on `processes` Redis processes (shard i on process i mod processes; one
   * each by default); `chunkSeconds`: Redis's time on one read of a worker's pipeline.
   */
  constructor(
    readonly shards: number,
    processes = shards,
    readonly chunkSeconds = 0,
  ) {
    if (!Number.isInteger(processes) || processes < 1 || processes > shards) throw new RangeError(`ShardLoad: ${processes} Redis processes for ${shards} shards`);
    this.processes = processes;
    this.busy = new Float64Array(processes);
    this.ops = new Float64Array(processes);
    this.piped = new Float64Array(processes);
    this.rho = new Float64Array(processes);
    this.service = new Float64Array(processes);
    this.pipedRho = new Float64Array(processes);
    this.backlog = new Float64Array(processes);
    this.saturated = new Uint8Array(processes);
    this.hosted = new Float64Array(processes);
    for (let shard = 0; shard < shards; shard++) this.hosted[shard % processes]++;
  }

  /** The Redis process serving a shard. */
  processOf(shard: number): number {
    return shard % this.processes;
  }

  /** Close every whole second up to time t. */
  advance(t: number): void {
    const target = Math.floor(t);
    if (target <= this.second) return;
    const gap = target - this.second;
    for (let i = 0; i < this.processes; i++) {
      // the spread load's share of the shards this process holds
      const share = this.hosted[i] / this.shards;
      const work = this.busy[i] + this.spreadBusy * share;
      const piped = this.piped[i] + this.spreadPiped * share;
      const ops = this.ops[i] + this.spreadOps * share;
      this.rho[i] = work;
      if (work > this.peakRho) this.peakRho = work;
      if (work > 1) {
        this.saturated[i] = 1;
        this.saturatedSeconds++;
      }
      this.pipedRho[i] = Math.min(piped, RHO_CAP);
      this.service[i] = ops > 0 ? Math.max(0, work - piped) / ops : 0;
      // the backlog grows by what did not fit in the second, and drains in idle seconds after it
      this.backlog[i] = Math.max(0, this.backlog[i] + work - 1 - (gap - 1));
      this.busy[i] = 0;
      this.ops[i] = 0;
      this.piped[i] = 0;
    }
    this.spreadBusy = 0;
    this.spreadOps = 0;
    this.spreadPiped = 0;
    this.second = target;
  }

  /** Work on one shard's keys: `commands` commands, or pipelined timeline writes when `piped`. */
  add(shard: number, seconds: number, commands: number, piped = false): void {
    const p = shard % this.processes;
    this.busy[p] += seconds;
    if (piped) this.piped[p] += seconds;
    else this.ops[p] += commands;
  }

  /** Work spread over all shards: `commands` commands, and `pipedSeconds` of pipelined timeline writes beside them. */
  addSpread(seconds: number, commands: number, pipedSeconds = 0): void {
    this.spreadBusy += seconds + pipedSeconds;
    this.spreadOps += commands;
    this.spreadPiped += pipedSeconds;
  }

  /** A sampled queueing delay at a shard's process. */
  wait(shard: number, rng: Rng): number {
    const p = shard % this.processes;
    const rho = Math.min(this.rho[p], RHO_CAP);
    let w = this.backlog[p];
    const u = rng.float();
    if (u < this.pipedRho[p]) w += 2 * this.chunkSeconds * rng.float();
    else if (u < rho && this.service[p] > 0) w += rng.exponential((1 - rho) / this.service[p]);
    return w;
  }
}
