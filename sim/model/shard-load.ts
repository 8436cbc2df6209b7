// Load on each Redis shard and the queueing delay a request meets there.
// Redis serves one command at a time per shard, so each shard is a single server: its utilisation
// over the last second sets the chance and length of a wait (M/M/1: P(wait) = rho, and the wait
// given one is exponential with mean S / (1 - rho)); when demand exceeds a second of work per
// second, the excess piles up as a backlog every later request waits behind.
import type { Rng } from '../../core/random.js';

const RHO_CAP = 0.98;

export class ShardLoad {
  /** Busy seconds and commands accumulated in the current second. */
  private readonly busy: Float64Array;
  private readonly ops: Float64Array;
  /** Load spread evenly over every shard (keys of many users, as with population scaling). */
  private spreadBusy = 0;
  private spreadOps = 0;
  /** Utilisation and mean service time measured over the last whole second. */
  readonly rho: Float64Array;
  private readonly service: Float64Array;
  /** Seconds of work queued beyond capacity. */
  readonly backlog: Float64Array;
  private second = 0;
  /** The highest utilisation any shard reached in any second. */
  peakRho = 0;
  /** Shards that had more than a second of work in some second: their queue grows without bound. */
  readonly saturated: Uint8Array;
  saturatedSeconds = 0;

  constructor(readonly shards: number) {
    this.busy = new Float64Array(shards);
    this.ops = new Float64Array(shards);
    this.rho = new Float64Array(shards);
    this.service = new Float64Array(shards);
    this.backlog = new Float64Array(shards);
    this.saturated = new Uint8Array(shards);
  }

  /** Close every whole second up to time t. */
  advance(t: number): void {
    const target = Math.floor(t);
    if (target <= this.second) return;
    const gap = target - this.second;
    for (let i = 0; i < this.shards; i++) {
      const work = this.busy[i] + this.spreadBusy / this.shards;
      const ops = this.ops[i] + this.spreadOps / this.shards;
      this.rho[i] = work;
      if (work > this.peakRho) this.peakRho = work;
      if (work > 1) {
        this.saturated[i] = 1;
        this.saturatedSeconds++;
      }
      this.service[i] = ops > 0 ? work / ops : 0;
      // the backlog grows by what did not fit in the second, and drains in idle seconds after it
      this.backlog[i] = Math.max(0, this.backlog[i] + work - 1 - (gap - 1));
      this.busy[i] = 0;
      this.ops[i] = 0;
    }
    this.spreadBusy = 0;
    this.spreadOps = 0;
    this.second = target;
  }

  /** Work on one shard's keys. */
  add(shard: number, seconds: number, commands: number): void {
    this.busy[shard] += seconds;
    this.ops[shard] += commands;
  }

  /** Work spread over all shards. */
  addSpread(seconds: number, commands: number): void {
    this.spreadBusy += seconds;
    this.spreadOps += commands;
  }

  /** A sampled queueing delay at a shard. */
  wait(shard: number, rng: Rng): number {
    const rho = Math.min(this.rho[shard], RHO_CAP);
    let w = this.backlog[shard];
    if (rho > 0 && rng.float() < rho) w += rng.exponential((1 - rho) / this.service[shard]);
    return w;
  }
}
