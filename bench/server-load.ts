// The load generator of bench/server.ts: keep-alive HTTP/1.1 connections, a closed loop (many
// connections, each sending its next request when the previous answer arrives) to find the
// maximum throughput, and an open loop (constant arrival rate) whose latency is measured from each
// request's *intended* send time (ANCHORS section 4: coordinated omission), plus where the CPU of
// this 2-core machine went during a measurement.
//
// Why a minimal client of its own over node:net rather than node:http's Agent: the generator shares
// the two cores with the server, Redis and Postgres, so every microsecond it spends per request is
// taken from the server it measures. This client writes pre-built request bytes and parses only the
// status line and Content-Length (fastify always sends one for a serialized JSON reply), keeping the
// generator's share of the CPU small; the share it does take is measured and printed. One request
// at a time per connection (no HTTP pipelining), as a browser or an undici Pool connection does.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import * as hdr from 'hdr-histogram-js';

export type Done = (err: Error | null, status: number, body: Buffer | null) => void;

const HEADER_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i;

/** One keep-alive connection carrying one request at a time. */
export class KeepAliveConnection {
  private readonly socket: Socket;
  private buf: Buffer | null = null;
  private done: Done | null = null;
  private keepBody = false;
  private status = 0;
  private bodyStart = -1;
  private bodyLength = -1;
  closed = false;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    const fail = (err?: Error) => {
      this.closed = true;
      const done = this.done;
      this.done = null;
      done?.(err ?? new Error('connection closed'), 0, null);
    };
    socket.on('error', fail);
    socket.on('close', () => fail());
  }

  static open(host: string, port: number): Promise<KeepAliveConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port });
      socket.once('connect', () => resolve(new KeepAliveConnection(socket)));
      socket.once('error', reject);
    });
  }

  /** Send one request (its complete bytes); `done` gets the status (and the body when keepBody). */
  send(request: Buffer, done: Done, keepBody = false): void {
    if (this.done) throw new Error('a request is already in flight on this connection');
    if (this.closed) {
      done(new Error('connection closed'), 0, null);
      return;
    }
    this.done = done;
    this.keepBody = keepBody;
    this.buf = null;
    this.bodyStart = -1;
    this.socket.write(request);
  }

  close(): void {
    this.closed = true;
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    this.buf = this.buf === null ? chunk : Buffer.concat([this.buf, chunk]);
    const buf = this.buf;
    if (this.bodyStart < 0) {
      const end = buf.indexOf(HEADER_END);
      if (end < 0) return;
      const head = buf.toString('latin1', 0, end);
      this.status = Number(head.slice(9, 12));
      const m = CONTENT_LENGTH.exec(head);
      if (!m) {
        this.fail(new Error(`response without Content-Length: ${head.split('\r\n')[0]}`));
        return;
      }
      this.bodyStart = end + 4;
      this.bodyLength = Number(m[1]);
    }
    const complete = this.bodyStart + this.bodyLength;
    if (buf.length < complete) return;
    if (buf.length > complete) {
      this.fail(new Error('bytes after the response: the server answered more than was asked'));
      return;
    }
    const done = this.done;
    const body = this.keepBody ? buf.subarray(this.bodyStart, complete) : null;
    this.done = null;
    this.buf = null;
    done?.(null, this.status, body);
  }

  private fail(err: Error): void {
    const done = this.done;
    this.done = null;
    this.close();
    done?.(err, 0, null);
  }
}

export async function openConnections(host: string, port: number, n: number): Promise<KeepAliveConnection[]> {
  const out: KeepAliveConnection[] = [];
  for (let i = 0; i < n; i += 32) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(32, n - i) }, () => KeepAliveConnection.open(host, port)))));
  }
  return out;
}

/** The bytes of a GET with a bearer token. */
export function getRequest(host: string, path: string, token: string): Buffer {
  return Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\n\r\n`, 'latin1');
}

/** The bytes of a JSON POST with a bearer token. */
export function postRequest(host: string, path: string, token: string, json: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(json), 'utf8');
  const head = `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

/** One request on a connection, as a promise (set-up work, not the measured loops). */
export function request(conn: KeepAliveConnection, bytes: Buffer): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => conn.send(bytes, (err, status, body) => (err ? reject(err) : resolve({ status, body: body! })), true));
}

/** `work(i)` for i in 0..n-1 over the connections, each connection one at a time. */
export async function overConnections(conns: KeepAliveConnection[], n: number, work: (conn: KeepAliveConnection, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    conns.map(async (conn) => {
      while (next < n) await work(conn, next++);
    }),
  );
}

// ---- latency histograms (microseconds) ----

export function newHistogram(): hdr.Histogram {
  return hdr.build({ bitBucketSize: 64, autoResize: true, numberOfSignificantValueDigits: 3 });
}

/** A percentile of a microsecond histogram, in ms. */
export function pct(h: hdr.Histogram, p: number): number {
  return h.totalCount === 0 ? NaN : h.getValueAtPercentile(p) / 1000;
}

// ---- closed loop ----

export interface ClosedLoopResult {
  concurrency: number;
  seconds: number;
  completed: number;
  rate: number;
  errors: number;
  firstError: string | null;
  /** Send to answer, ms: in a closed loop this is all there is (no schedule to fall behind). */
  latency: hdr.Histogram;
  cpu: CpuShare;
}

/**
 * Every connection sends, waits for the answer, sends again, for warmupMs + durationMs; the answers
 * that arrive within the last durationMs are counted.
 */
export function closedLoop(conns: KeepAliveConnection[], pick: () => Buffer, warmupMs: number, durationMs: number, cpu: CpuMeter): Promise<ClosedLoopResult> {
  return new Promise((resolve) => {
    const latency = newHistogram();
    const started = performance.now();
    const from = started + warmupMs;
    const until = from + durationMs;
    let completed = 0;
    let errors = 0;
    let firstError: string | null = null;
    let running = conns.length;
    let cpuStart: CpuSnapshot | null = null;
    const startCpu = setTimeout(() => void cpu.snapshot().then((s) => (cpuStart = s)), warmupMs);
    const finish = async () => {
      clearTimeout(startCpu);
      const end = await cpu.snapshot();
      resolve({
        concurrency: conns.length,
        seconds: durationMs / 1000,
        completed,
        rate: completed / (durationMs / 1000),
        errors,
        firstError,
        latency,
        cpu: cpu.share(cpuStart ?? end, end),
      });
    };
    const loop = (conn: KeepAliveConnection) => {
      const sent = performance.now();
      conn.send(pick(), (err, status) => {
        const now = performance.now();
        if (now >= from && now < until) {
          if (err || status !== 200) {
            errors++;
            firstError ??= err ? err.message : `HTTP ${status}`;
          } else {
            completed++;
            latency.recordValue(Math.max(1, Math.round((now - sent) * 1000)));
          }
        }
        if (now < until && !conn.closed) loop(conn);
        else if (--running === 0) void finish();
      });
    };
    for (const c of conns) loop(c);
  });
}

// ---- open loop ----

export interface OpenLoopResult {
  targetRate: number;
  intended: number;
  completed: number;
  errors: number;
  firstError: string | null;
  /** Completed requests per second, from the first intended send to the last answer. */
  achievedRate: number;
  /** Answer minus intended send time, µs: the coordinated-omission-corrected latency. */
  fromIntended: hdr.Histogram;
  /** Answer minus actual send time, µs: what a closed-loop tool would report. */
  fromSent: hdr.Histogram;
  /** Requests sent more than 1 ms after their intended time (the generator fell behind, or no
   * connection was free); their wait is in fromIntended. */
  sentLate: number;
  /** Most requests waiting for a free connection at once. */
  maxQueued: number;
  /** This generator's own event-loop delay, ms (a stalled generator would delay sends and answers alike). */
  generatorLagP99: number;
  generatorLagMax: number;
  cpu: CpuShare;
}

/**
 * Constant arrival rate: request i is due at t0 + i/rate whatever happened to the ones before
 * (open model); it goes out on a free connection as soon as it is due (timers wake the generator
 * every ~1 ms; an answer arriving also sends whatever is due). Its latency counts from when it was
 * due, so a stalled server shows in the tail instead of silently slowing the generator down.
 */
export function openLoop(conns: KeepAliveConnection[], pick: () => Buffer, rate: number, durationMs: number, cpu: CpuMeter): Promise<OpenLoopResult> {
  return new Promise((resolve) => {
    const total = Math.round((rate * durationMs) / 1000);
    const interval = 1000 / rate;
    const fromIntended = newHistogram();
    const fromSent = newHistogram();
    const free = conns.filter((c) => !c.closed);
    const queue: number[] = [];
    let head = 0;
    let admitted = 0;
    let settled = 0;
    let completed = 0;
    let errors = 0;
    let firstError: string | null = null;
    let sentLate = 0;
    let maxQueued = 0;
    let lastAnswer = 0;
    let inFlight = 0;
    let timer: NodeJS.Timeout | null = null;
    let cpuStart: CpuSnapshot;
    let t0 = 0;
    const lag: IntervalHistogram = monitorEventLoopDelay({ resolution: 1 });

    const admit = (now: number) => {
      while (admitted < total && t0 + admitted * interval <= now) queue.push(t0 + admitted++ * interval);
      if (queue.length - head > maxQueued) maxQueued = queue.length - head;
    };
    const dispatch = () => {
      while (head < queue.length && free.length > 0) {
        const intended = queue[head++];
        const conn = free.pop()!;
        const sent = performance.now();
        if (sent - intended > 1) sentLate++;
        inFlight++;
        conn.send(pick(), (err, status) => {
          const now = performance.now();
          settled++;
          if (err || status !== 200) {
            errors++;
            firstError ??= err ? err.message : `HTTP ${status}`;
          } else {
            completed++;
            fromIntended.recordValue(Math.max(1, Math.round((now - intended) * 1000)));
            fromSent.recordValue(Math.max(1, Math.round((now - sent) * 1000)));
          }
          lastAnswer = now;
          inFlight--;
          if (!conn.closed) free.push(conn);
          else if (free.length === 0 && inFlight === 0) {
            // Every connection is gone: what is left can never be sent.
            errors += total - settled;
            firstError ??= 'every connection closed';
            settled = total;
            admitted = total;
          }
          if (head > 4096 && head === queue.length) {
            queue.length = 0;
            head = 0;
          }
          admit(now);
          dispatch();
          if (settled === total) void finish();
        });
      }
    };
    const tick = () => {
      timer = null;
      const now = performance.now();
      admit(now);
      dispatch();
      if (admitted < total) timer = setTimeout(tick, Math.max(0, t0 + admitted * interval - performance.now()));
    };
    const finish = async () => {
      if (timer) clearTimeout(timer);
      lag.disable();
      const end = await cpu.snapshot();
      resolve({
        generatorLagP99: lag.percentile(99) / 1e6,
        generatorLagMax: lag.max / 1e6,
        targetRate: rate,
        intended: total,
        completed,
        errors,
        firstError,
        achievedRate: completed / ((lastAnswer - t0) / 1000),
        fromIntended,
        fromSent,
        sentLate,
        maxQueued,
        cpu: cpu.share(cpuStart, end),
      });
    };
    void cpu.snapshot().then((s) => {
      cpuStart = s;
      lag.enable();
      t0 = performance.now() + 1;
      tick();
    });
  });
}

// ---- where the CPU went ----

export interface CpuSnapshot {
  wall: number;
  /** CPU seconds used so far by: this process, the server process, Redis, our Postgres backends (by pid), the whole machine. */
  self: number;
  server: number;
  redis: number;
  postgres: Map<string, number>;
  machine: number;
}

/** CPU used over an interval, in % of one core (the machine has 2: 200% is everything). */
export interface CpuShare {
  generator: number;
  server: number;
  redis: number;
  postgres: number;
  /** Everything else on the machine (other processes, the kernel's interrupts...). */
  other: number;
  idle: number;
}

const CLK_TCK = 100;

function procTicks(pid: number | string): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK; // utime, stime (fields 14 and 15)
  } catch {
    return 0;
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

function machineSeconds(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'latin1').split('\n')[0];
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const total = v.slice(0, 8).reduce((s, x) => s + x, 0);
  const idle = v[3] + v[4];
  return { busy: (total - idle) / CLK_TCK, total: total / CLK_TCK };
}

/** The Postgres backend pids serving these client ports (pg_stat_activity). */
export type BackendLookup = (clientPorts: number[]) => Promise<number[]>;

/**
 * CPU shares over an interval. Postgres counts only the backends serving this process's and the
 * server's connections (found by their client ports), so other databases' users on the machine do
 * not land there; Redis is one server for everyone on the machine, so its figure includes whatever
 * else used it meanwhile.
 */
export class CpuMeter {
  constructor(
    private readonly redis: Redis,
    private serverPid: number | null,
    private readonly pgPort: number,
    private readonly backends: BackendLookup,
  ) {}

  setServer(pid: number | null): void {
    this.serverPid = pid;
  }

  async snapshot(): Promise<CpuSnapshot> {
    const info = await this.redis.info('cpu').catch(() => '');
    const num = (k: string) => Number(new RegExp(`${k}:([0-9.]+)`).exec(info)?.[1] ?? 0);
    const pids = [process.pid, ...(this.serverPid ? [this.serverPid] : [])];
    const backends = await this.backends(localPortsTo(pids, this.pgPort)).catch(() => [] as number[]);
    const postgres = new Map<string, number>();
    for (const b of backends) postgres.set(String(b), procTicks(b));
    const u = process.cpuUsage();
    return {
      wall: performance.now(),
      self: (u.user + u.system) / 1e6,
      server: this.serverPid ? procTicks(this.serverPid) : 0,
      redis: num('used_cpu_sys') + num('used_cpu_user'),
      postgres,
      machine: machineSeconds().busy,
    };
  }

  share(a: CpuSnapshot, b: CpuSnapshot): CpuShare {
    const wall = (b.wall - a.wall) / 1000;
    const p = (x: number) => (100 * x) / wall;
    const generator = p(b.self - a.self);
    const server = p(b.server - a.server);
    const redis = p(b.redis - a.redis);
    let pg = 0;
    // A backend that connected meanwhile counts from 0; one that exited meanwhile is lost (undercount).
    for (const [pid, t] of b.postgres) pg += t - (a.postgres.get(pid) ?? 0);
    const postgres = p(Math.max(0, pg));
    const machine = p(b.machine - a.machine);
    return { generator, server, redis, postgres, other: Math.max(0, machine - generator - server - redis - postgres), idle: Math.max(0, 200 - machine) };
  }
}

/**
 * Other engineers' builds and tests may share this machine: before a measurement, wait (at most
 * maxMs) until processes other than ours use less than `quietPct` of the 200%. Returns the last
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
  return `cpu of 2 cores (200%): server ${f(c.server)}, ${generatorName} ${f(c.generator)}, redis ${f(c.redis)}, postgres ${f(c.postgres)}, other ${f(c.other)}, idle ${f(c.idle)}${busy}`;
}
