// The reference worker's fleet (worker.splitPosts: false): consumers of a Redis Streams consumer
// group, each taking post events in batches and writing whole posts, as server/worker does.
//
// A consumer blocked in its read takes an event the moment the log has it (a draw of costs.pickup later).
// A busy one reads again only once its whole batch is handled and acknowledged (two round trips:
// the XACK, then the read), and that read takes every event that arrived meanwhile: Redis hands a
// waiting entry to the first consumer that reads. Within a batch up to eventConcurrency events are
// handled at once (the worker's lanes): their statements and follower pages are waits on Postgres
// and Redis and overlap, while their timeline writes share the consumer's one event loop, served in
// the order they are ready, `pipelines` round trips in flight per post. So a small post that
// arrives while its consumer writes a large one waits for all of it, unless another consumer is
// free. Every consumer reads every partition: the partition of an author does not hold its events.
//
// Events must be taken in the order the log has them (the stage defers a post to that moment).
// Writes per second are counted as the pool does; fluid work (population scaling) is shared evenly.
import { spreadOverSeconds, wholePostBatchDone } from './worker-pool.js';

export class ConsumerFleet {
  /** When each consumer is done with everything it has taken (its last batch's handling). */
  private readonly busyUntil: Float64Array;
  /** When each consumer's latest batch starts. */
  private readonly batchStart: Float64Array;
  /** When each consumer's event loop is free to write again. */
  private readonly writerFree: Float64Array;
  /** When each lane of each consumer frees up (consumer c's lanes at c * lanes ...). */
  private readonly laneFree: Float64Array;
  /** The consumer whose next batch has not started yet, collecting the events that wait (-1: none). */
  private collecting = -1;
  readonly writesBySecond: Float64Array;
  busySeconds = 0;
  /** How much slower writes handed out now run than the rated writes per second (shared cores set it). */
  slowdown = 1;
  /** What the post handed out now takes once before its first batch (a consumer woken from idle: idle-wake.ts writesWake). */
  wakeSeconds = 0;
  private fluidUntil = 0;

  constructor(
    readonly consumers: number,
    readonly writesPerSecond: number,
    /** A pipelined batch's round trip and its own overhead (costs.rtt + costs.batch). */
    readonly perBatch: number,
    readonly batchSize: number,
    readonly pipelines: number,
    readonly lanes: number,
    duration: number,
    /** A bare round trip to Redis: the acknowledgement, then the read (costs.rtt). */
    readonly roundTrip = perBatch,
  ) {
    if (consumers < 1) throw new RangeError('a consumer fleet needs at least one consumer');
    if (lanes < 1) throw new RangeError('a consumer needs at least one lane');
    this.busyUntil = new Float64Array(consumers).fill(-Infinity);
    this.batchStart = new Float64Array(consumers).fill(-Infinity);
    this.writerFree = new Float64Array(consumers).fill(-Infinity);
    this.laneFree = new Float64Array(consumers * lanes).fill(-Infinity);
    this.writesBySecond = new Float64Array(Math.ceil(duration) + 1);
  }

  /** A batch's time beyond its writes: the round trip and its own overhead. */
  get rtt(): number {
    return this.perBatch;
  }

  /** The post's writes until batch `i` ends (all of them: `i` its last), its wake included, never under a round trip. */
  private writesUntil(i: number, writes: number): number {
    return Math.max(this.roundTrip, this.wakeSeconds + wholePostBatchDone(this, i, writes, this.pipelines));
  }

  /** A consumer that has acknowledged its last batch and is reading again by `t`. */
  private readingBy(c: number, t: number): boolean {
    return this.busyUntil[c] + 2 * this.roundTrip <= t;
  }

  /**
   * The event the log took at `t` (calls in increasing t): which consumer handles it and when it
   * starts (a lane of that consumer free, within the batch that took it). `pickup`: how long a
   * consumer blocked in its read takes to start on it once woken.
   */
  take(t: number, pickup: number): { consumer: number; lane: number; start: number } {
    if (this.collecting >= 0 && this.batchStart[this.collecting] <= t) this.collecting = -1;
    let c = -1;
    // the consumer blocked longest in its read is the one Redis wakes
    for (let i = 0; i < this.consumers; i++) if (this.readingBy(i, t) && (c < 0 || this.busyUntil[i] < this.busyUntil[c])) c = i;
    if (c >= 0) {
      this.batchStart[c] = t + pickup;
    } else if (this.collecting >= 0) {
      c = this.collecting;
    } else {
      // every consumer busy: the first to finish takes it, with whatever else arrives until then
      c = 0;
      for (let i = 1; i < this.consumers; i++) if (this.busyUntil[i] < this.busyUntil[c]) c = i;
      this.batchStart[c] = this.busyUntil[c] + 2 * this.roundTrip;
      this.collecting = c;
    }
    const base = c * this.lanes;
    let lane = base;
    for (let i = base + 1; i < base + this.lanes; i++) if (this.laneFree[i] < this.laneFree[lane]) lane = i;
    const start = Math.max(this.batchStart[c], this.laneFree[lane]);
    // held until finish() says when the event is done
    this.laneFree[lane] = Infinity;
    return { consumer: c, lane, start };
  }

  /** How long consumer `c` was idle (done with everything it took) before `start`; <= 0 when busy, Infinity before its first event. */
  idleBefore(c: number, start: number): number {
    return start - this.busyUntil[c];
  }

  /**
   * The writes of the event just taken by consumer `c`, ready at `ready` (its statements and first
   * page done): `writes` timeline writes (`landed` of them into existing timelines), in batches of
   * batchSize. Returns when its writes start on the consumer's event loop; batchDone gives each
   * batch's end. Call finish() once the event is done.
   */
  write(c: number, ready: number, writes: number, landed = writes): number {
    const start = this.writerFree[c] > ready ? this.writerFree[c] : ready;
    const service = this.writesUntil(Math.max(1, Math.ceil(writes / this.batchSize)) - 1, writes);
    this.busySeconds += service;
    this.countWrites(start, start + service, landed);
    this.writerFree[c] = start + service;
    return start;
  }

  /** When batch i (from 0) of a post of `writes` whose writes started at `start` ends (see write). */
  batchDone(start: number, i: number, writes: number): number {
    return start + this.writesUntil(i, writes);
  }

  /** The event taken on consumer `c`'s `lane` is done at `done`: the lane frees and the batch lasts at least until then. */
  finish(c: number, lane: number, done: number): void {
    this.laneFree[lane] = done;
    if (done > this.busyUntil[c]) this.busyUntil[c] = done;
  }

  /**
   * `count` consumers killed (the first ones) and started again at `until`: none takes, handles or
   * writes anything before then. What they had taken ends as computed (the reference worker's
   * claim of a dead consumer's events, FEED_CLAIM_IDLE_MS after, is not modelled). Returns how many.
   */
  hold(count: number, until: number): number {
    const n = Math.min(count, this.consumers);
    for (let c = 0; c < n; c++) {
      if (this.busyUntil[c] < until) this.busyUntil[c] = until;
      if (this.writerFree[c] < until) this.writerFree[c] = until;
      for (let l = c * this.lanes; l < (c + 1) * this.lanes; l++) if (this.laneFree[l] < until) this.laneFree[l] = until;
      // a batch it was collecting starts once it reads again
      if (this.batchStart[c] < until + 2 * this.roundTrip && this.collecting === c) this.collecting = -1;
    }
    return n;
  }

  /** Fluid work that arrived over (fluidUntil, t], shared evenly by every consumer after what it has. */
  addFluid(t: number, writes: number): void {
    const from = this.fluidUntil;
    if (t > this.fluidUntil) this.fluidUntil = t;
    if (writes <= 0) return;
    const share = writes / this.consumers;
    const seconds = share / this.writesPerSecond;
    for (let c = 0; c < this.consumers; c++) {
      const start = Math.max(this.writerFree[c], from);
      this.writerFree[c] = start + seconds;
      if (this.writerFree[c] > this.busyUntil[c]) this.busyUntil[c] = this.writerFree[c];
      this.countWrites(start, start + seconds, share);
    }
    this.busySeconds += seconds * this.consumers;
  }

  private countWrites(start: number, end: number, writes: number): void {
    spreadOverSeconds(this.writesBySecond, start, end, writes);
  }

  /** Writes handed out but not yet written at t. */
  backlogWrites(t: number): number {
    let s = 0;
    for (let c = 0; c < this.consumers; c++) if (this.writerFree[c] > t) s += this.writerFree[c] - t;
    return s * this.writesPerSecond;
  }

  /** When the last event taken is done. */
  drainTime(): number {
    let m = 0;
    for (let c = 0; c < this.consumers; c++) if (this.busyUntil[c] > m) m = this.busyUntil[c];
    return m;
  }
}
