// A pool of identical fan-out workers serving batch jobs first come, first served.
// Jobs are handed over in arrival order, so each one's start and finish are known the moment it
// arrives: it goes to the worker that frees up first (the multi-server Lindley recursion). That
// is exact for FIFO and needs no event per batch in the queue.

export class WorkerPool {
  /** Min-heap of the times at which each worker becomes free. */
  private readonly free: Float64Array;
  /** Total busy time handed out: utilisation = busy / (workers * elapsed). */
  busySeconds = 0;

  constructor(readonly workers: number, readonly writesPerSecond: number, readonly rtt: number) {
    if (workers < 1) throw new RangeError('a worker pool needs at least one worker');
    this.free = new Float64Array(workers);
  }

  /** Service time of one pipelined batch: one round trip plus the writes at the worker's rate. */
  serviceTime(writes: number): number {
    return this.rtt + writes / this.writesPerSecond;
  }

  /** Hand a job of `writes` timeline writes arriving at `t` to the first free worker; returns its finish time. */
  submit(t: number, writes: number): number {
    const heap = this.free;
    const start = heap[0] > t ? heap[0] : t;
    const service = this.serviceTime(writes);
    const done = start + service;
    this.busySeconds += service;
    // replace the root and sift down
    const n = heap.length;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && heap[r] < heap[l] ? r : l;
      if (heap[c] < done) {
        heap[i] = heap[c];
        i = c;
      } else break;
    }
    heap[i] = done;
    return done;
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
