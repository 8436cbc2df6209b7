// Services sharing a machine's cores (infrastructure.cores: a replay on one machine runs the API,
// the workers, Redis and Postgres side by side). CPU work of every stage is added per second; work
// that starts in a second is slowed by how busy the cores were in the second before, as a request
// at an M/M/c station is: its mean time over its service is 1 + C(c, rho) / (c (1 - rho)), with
// C the Erlang-C probability of waiting. Without shared cores every factor is 1.

/** Utilisation above which the factor stops growing (the queue would grow without bound). */
const RHO_CAP = 0.95;

/** The Erlang-C probability that a request at c servers, each rho busy, waits. */
export function erlangC(c: number, rho: number): number {
  if (rho <= 0) return 0;
  if (rho >= 1) return 1;
  const a = c * rho;
  // the sum of a^k / k! for k < c, and the last term a^c / c!, built up term by term
  let term = 1;
  let sum = 1;
  for (let k = 1; k < c; k++) {
    term *= a / k;
    sum += term;
  }
  const last = (term * a) / c;
  const tail = last / (1 - rho);
  return tail / (sum + tail);
}

/** Mean time at an M/M/c station over the service time: 1 + C(c, rho) / (c (1 - rho)). */
export function slowdownAt(c: number, rho: number): number {
  const r = Math.min(rho, RHO_CAP);
  return 1 + erlangC(c, r) / (c * (1 - r));
}

export class SharedCores {
  /** CPU seconds of work started in each second of the run. */
  private readonly work: Float64Array;
  /** The highest utilisation of the shared cores in any second. */
  peakUtilisation = 0;

  constructor(
    readonly cores: number | null,
    duration: number,
  ) {
    this.work = new Float64Array(cores === null ? 1 : Math.ceil(duration) + 1);
  }

  /** Add CPU work (seconds) started at t. */
  addWork(t: number, seconds: number): void {
    if (this.cores === null || seconds <= 0) return;
    const i = Math.min(this.work.length - 1, Math.max(0, Math.floor(t)));
    this.work[i] += seconds;
  }

  /** How much slower CPU work starting at t runs than on idle cores. */
  factor(t: number): number {
    if (this.cores === null) return 1;
    const prev = Math.floor(t) - 1;
    if (prev < 0) return 1;
    const rho = this.work[Math.min(prev, this.work.length - 1)] / this.cores;
    if (rho > this.peakUtilisation) this.peakUtilisation = rho;
    return slowdownAt(this.cores, rho);
  }
}
