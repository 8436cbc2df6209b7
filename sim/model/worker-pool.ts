// A pool of identical fan-out workers serving batch jobs first come, first served.
// Jobs are handed over in arrival order, so each one's start and finish are known the moment it
// arrives: it goes to the worker that frees up first (the multi-server Lindley recursion). That
// is exact for FIFO and needs no event per batch in the queue.
//
// Beside discrete jobs the pool takes fluid work: the smooth load of many small posts that a
// sampled population stands for (see population.ts). It is shared evenly by every worker.

export class WorkerPool {
  /** Min-heap of the times at which each worker becomes free. */
  private readonly free: Float64Array;
  /** Timeline writes completed in each second of the run: the throughput the workers deliver. */
  readonly writesBySecond: Float64Array;
  /** Total busy time handed out: utilisation = busy / (workers * elapsed). */
  busySeconds = 0;
  /** How much slower the next jobs handed out run than the rated writes per second (shared cores set it). */
  slowdown = 1;
  private fluidUntil = 0;

  constructor(readonly workers: number, readonly writesPerSecond: number, readonly rtt: number, readonly batchSize: number, duration: number) {
    if (workers < 1) throw new RangeError('a worker pool needs at least one worker');
    this.free = new Float64Array(workers);
    this.writesBySecond = new Float64Array(Math.ceil(duration) + 1);
  }

  /** Service time of a job: one round trip per pipelined batch plus the writes at the worker's rate. */
  serviceTime(writes: number): number {
    return this.rtt * Math.max(1, Math.ceil(writes / this.batchSize)) + (writes * this.slowdown) / this.writesPerSecond;
  }

  /**
   * Hand a job of `writes` timeline writes arriving at `t` to the first free worker; returns its
   * finish time. `landed` of them (default all) count as writes done: a write into a timeline that
   * is not there costs the worker its command but writes nothing.
   */
  submit(t: number, writes: number, landed = writes): number {
    const start = this.free[0] > t ? this.free[0] : t;
    const service = this.serviceTime(writes);
    const done = start + service;
    this.busySeconds += service;
    this.countWrites(start, done, landed);
    this.siftDown(0, done);
    return done;
  }

  /**
   * A whole post on one worker (the reference worker): `writes` in batches of batchSize with
   * `pipelines` round trips in flight, so a round trip is paid once per `pipelines` batches and the
   * writes follow one another. Returns when the worker starts it; batchDone gives each batch's end.
   */
  submitWhole(t: number, writes: number, pipelines: number, landed = writes): number {
    const start = this.free[0] > t ? this.free[0] : t;
    const service = wholePostSeconds(this, writes, pipelines);
    this.busySeconds += service;
    this.countWrites(start, start + service, landed);
    this.siftDown(0, start + service);
    return start;
  }

  /** When batch i (from 0) of a whole post of `writes` started at `start` ends (see submitWhole). */
  batchDone(start: number, i: number, writes: number, pipelines: number): number {
    return start + wholePostBatchDone(this, i, writes, pipelines);
  }

  /**
   * Fluid work that arrived over (fluidUntil, t]: every worker takes an equal share after what it
   * already has queued. Adding the same amount to every key keeps the heap a heap.
   */
  addFluid(t: number, writes: number): void {
    const from = this.fluidUntil;
    if (t > this.fluidUntil) this.fluidUntil = t;
    if (writes <= 0) return;
    const share = writes / this.workers;
    const seconds = share / this.writesPerSecond;
    // Keys below `from` are raised to it first, which can reorder them: restore the heap after.
    let reordered = false;
    for (let i = 0; i < this.free.length; i++) {
      const start = this.free[i] > from ? this.free[i] : from;
      if (start !== this.free[i]) reordered = true;
      this.free[i] = start + seconds;
      this.countWrites(start, start + seconds, share);
    }
    this.busySeconds += seconds * this.workers;
    if (reordered) this.heapify();
  }

  /** `count` workers killed and started again at `until` (see ConsumerFleet.hold). Returns how many. */
  hold(count: number, until: number): number {
    const n = Math.min(count, this.workers);
    for (let i = 0; i < n; i++) if (this.free[i] < until) this.free[i] = until;
    this.heapify();
    return n;
  }

  /** Work arriving all at once at t, shared evenly by every worker after what it already has. */
  addLump(t: number, writes: number): void {
    if (writes <= 0) return;
    const share = writes / this.workers;
    const seconds = share / this.writesPerSecond;
    for (let i = 0; i < this.free.length; i++) {
      const start = this.free[i] > t ? this.free[i] : t;
      this.free[i] = start + seconds;
      this.countWrites(start, start + seconds, share);
    }
    this.busySeconds += seconds * this.workers;
    this.heapify();
  }

  private heapify(): void {
    for (let k = (this.free.length >> 1) - 1; k >= 0; k--) this.siftDown(k, this.free[k]);
  }

  /** Put `value` at position k and move it down to where the heap order holds. */
  private siftDown(k: number, value: number): void {
    const heap = this.free;
    const n = heap.length;
    let i = k;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && heap[r] < heap[l] ? r : l;
      if (heap[c] < value) {
        heap[i] = heap[c];
        i = c;
      } else break;
    }
    heap[i] = value;
  }

  private countWrites(start: number, end: number, writes: number): void {
    spreadOverSeconds(this.writesBySecond, start, end, writes);
  }

  /** Writes already handed out but not finished at time t (every worker is busy without a gap until it frees up). */
  backlogWrites(t: number): number {
    let s = 0;
    for (let i = 0; i < this.free.length; i++) if (this.free[i] > t) s += this.free[i] - t;
    return s * this.writesPerSecond;
  }

  /** When the last queued job finishes. */
  drainTime(): number {
    let m = 0;
    for (let i = 0; i < this.free.length; i++) if (this.free[i] > m) m = this.free[i];
    return m;
  }
}

/** Add `writes` done evenly over [start, end) into per-second bins (the last bin is past the run and takes none). */
export function spreadOverSeconds(bins: Float64Array, start: number, end: number, writes: number): void {
  const last = bins.length - 1;
  if (start >= last) return;
  const span = end - start;
  if (span <= 0 || Math.floor(start) === Math.floor(end)) {
    bins[Math.max(0, Math.floor(start))] += writes;
    return;
  }
  const rate = writes / span;
  let t = start;
  while (t < end && t < last) {
    const next = Math.min(end, Math.floor(t) + 1);
    bins[Math.max(0, Math.floor(t))] += (next - t) * rate;
    t = next;
  }
}

/** A worker's write rate, per-batch round trip, batch size and current slowdown. */
export interface Writer {
  readonly rtt: number;
  readonly batchSize: number;
  readonly writesPerSecond: number;
  readonly slowdown: number;
}

/** One worker writing a whole post: a round trip per `pipelines` batches, the writes one after another. */
export function wholePostSeconds(w: Writer, writes: number, pipelines: number): number {
  const batches = Math.max(1, Math.ceil(writes / w.batchSize));
  return w.rtt * Math.ceil(batches / pipelines) + (writes * w.slowdown) / w.writesPerSecond;
}

/** When batch i (from 0) of such a post ends, after its writes started. */
export function wholePostBatchDone(w: Writer, i: number, writes: number, pipelines: number): number {
  return w.rtt * Math.ceil((i + 1) / pipelines) + (Math.min(writes, (i + 1) * w.batchSize) * w.slowdown) / w.writesPerSecond;
}
