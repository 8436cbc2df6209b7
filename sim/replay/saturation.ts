// Closed-loop saturation (`feedlab replay --max`): the server's maximum read rate on this machine,
// measured twice on the same requests, connections and duration: by our own closed loop
// (sim/replay/http-client.ts) and by autocannon (the load tool the project's design names), so
// that the two figures can be printed side by side and agree, or their difference be explained.
//
// Closed loop only: each connection sends its next request when the previous answer arrives. No
// rate option for autocannon: its rate mode is a per-connection per-second quota and its
// coordinated-omission correction assumes a 1 ms interval whatever the rate (ANCHORS section 4);
// rate-based load is the open-model driver's job (sim/replay/driver.ts).
//
// The same requests: connection c of n sends reads c, c + n, c + 2n, ... in turn (connection
// c % reads.length's one read when there are fewer reads than connections), as pre-built bytes in
// both tools (autocannon's `setRequests` on each client, which builds them once when they have no
// setupRequest). Both run in this process, one after the other, each after a warm-up of its own;
// the client's CPU is this process's (process.cpuUsage), so a server under test must run elsewhere.
//
// Known differences between the two figures: autocannon's latency histogram has 1 ms resolution
// (a sub-millisecond server shows p50 0 or 1 ms); autocannon counts every answer in its window and
// its CPU window includes opening its connections; ours counts 200 answers arriving within the
// window and its CPU runs from the end of the warm-up to the last answer.
import autocannon from 'autocannon';
import { CpuMeter, cpuSecondsOf } from './cpu.js';
import { closedLoop, getRequest, openConnections, pct } from './http-client.js';

export interface SaturationRead {
  /** Path and query, e.g. /v1/feed?limit=20 */
  path: string;
  /** Bearer token. */
  token: string;
}

export interface SaturationOptions {
  host: string;
  port: number;
  /** The GET requests to rotate (e.g. the first feed page of many users). */
  reads: readonly SaturationRead[];
  connections: number;
  durationMs: number;
  /** Closed loop before the measured window, not measured (default 1,000 ms). */
  warmupMs?: number;
}

export interface SaturationFigure {
  tool: 'feedlab' | 'autocannon';
  connections: number;
  /** The measured window, s. */
  seconds: number;
  /** 2xx answers in the window. */
  completed: number;
  /** completed / seconds. */
  rate: number;
  p50Ms: number;
  p99Ms: number;
  /** Network errors and timeouts. */
  errors: number;
  /** Answers other than 2xx (feedlab: other than 200). */
  non2xx: number;
  /** CPU of this process over the window, s, and per completed request, µs. */
  clientCpuSeconds: number;
  clientCpuMicrosPerRequest: number;
}

function check(opts: SaturationOptions): void {
  if (opts.reads.length === 0) throw new RangeError('saturation needs at least one read to send');
  if (!(opts.connections >= 1) || !(opts.durationMs > 0)) throw new RangeError('saturation needs connections >= 1 and durationMs > 0');
}

/** The reads of connection c: c, c + n, c + 2n, ... */
function sliceOf<T>(reads: readonly T[], c: number, n: number): T[] {
  if (reads.length <= n) return [reads[c % reads.length]];
  const out: T[] = [];
  for (let i = c; i < reads.length; i += n) out.push(reads[i]);
  return out;
}

/** Our own closed loop (the keep-alive client of sim/replay/http-client.ts). */
export async function ownClosedLoop(opts: SaturationOptions): Promise<SaturationFigure> {
  check(opts);
  const n = opts.connections;
  const host = `${opts.host}:${opts.port}`;
  const slices = Array.from({ length: n }, (_, c) => sliceOf(opts.reads, c, n).map((r) => getRequest(host, r.path, r.token)));
  const next = new Int32Array(n);
  const pick = (c: number) => {
    const s = slices[c];
    const b = s[next[c]];
    next[c] = next[c] + 1 === s.length ? 0 : next[c] + 1;
    return b;
  };
  const conns = await openConnections(opts.host, opts.port, n);
  try {
    const r = await closedLoop(conns, pick, opts.warmupMs ?? 1_000, opts.durationMs, new CpuMeter(null, null, 0, null));
    const cpuSeconds = cpuSecondsOf(r.cpu, r.cpu.generator);
    return {
      tool: 'feedlab',
      connections: n,
      seconds: r.seconds,
      completed: r.completed,
      rate: r.rate,
      p50Ms: pct(r.latency, 50),
      p99Ms: pct(r.latency, 99),
      errors: r.errors - r.non200,
      non2xx: r.non200,
      clientCpuSeconds: cpuSeconds,
      clientCpuMicrosPerRequest: r.completed > 0 ? (cpuSeconds * 1e6) / r.completed : NaN,
    };
  } finally {
    for (const c of conns) c.close();
  }
}

/** autocannon's closed loop (programmatic API, no rate: ANCHORS section 4) on the same reads. */
export async function autocannonClosedLoop(opts: SaturationOptions): Promise<SaturationFigure> {
  check(opts);
  const n = opts.connections;
  const slices: autocannon.Request[][] = Array.from({ length: n }, (_, c) =>
    sliceOf(opts.reads, c, n).map((r) => ({ method: 'GET' as const, path: r.path, headers: { authorization: `Bearer ${r.token}` } })),
  );
  const base = (seconds: number): autocannon.Options => {
    let client = 0;
    return {
      url: `http://${opts.host}:${opts.port}`,
      connections: n,
      pipelining: 1,
      duration: seconds,
      // Clients are built in order, one per connection: give each its own slice, built once.
      setupClient: (c) => c.setRequests(slices[client++ % n]),
    };
  };
  const warmupMs = opts.warmupMs ?? 1_000;
  if (warmupMs > 0) await autocannon(base(warmupMs / 1000));
  const cpu0 = process.cpuUsage();
  const r = await autocannon(base(opts.durationMs / 1000));
  const cpu = process.cpuUsage(cpu0);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const completed = r['2xx'];
  const seconds = r.duration > 0 ? r.duration : opts.durationMs / 1000;
  return {
    tool: 'autocannon',
    connections: n,
    seconds,
    completed,
    rate: completed / seconds,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    errors: r.errors,
    non2xx: r.non2xx,
    clientCpuSeconds: cpuSeconds,
    clientCpuMicrosPerRequest: completed > 0 ? (cpuSeconds * 1e6) / completed : NaN,
  };
}
