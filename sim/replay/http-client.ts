// The load generator shared by `feedlab replay` (sim/replay/driver.ts, saturation.ts) and the
// server benchmark (bench/server.ts): keep-alive HTTP/1.1 connections, a closed loop (many
// connections, each sending its next request when the previous answer arrives) to find the
// maximum throughput, and an open loop (constant arrival rate) whose latency is measured from each
// request's *intended* send time (ANCHORS section 4: coordinated omission). Where the CPU of the
// machine went during a measurement is sim/replay/cpu.ts.
//
// Why a minimal client of its own over node:net rather than node:http's Agent: the generator shares
// the two cores with the server, Redis and Postgres, so every microsecond it spends per request is
// taken from the server it measures. This client writes pre-built request bytes and parses only the
// status line, Content-Length (fastify always sends one for a serialized JSON reply), a
// `Connection: close` and, where asked (a post's answer), Server-Timing, keeping the generator's share of
// the CPU small; the share it does take is measured and printed. One request at a time per
// connection (no HTTP pipelining), as a browser or an undici Pool connection does.
import { connect, type Socket } from 'node:net';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import * as hdr from 'hdr-histogram-js';
import type { CpuMeter, CpuShare, CpuSnapshot } from './cpu.js';

/** `serverTiming`: the answer's Server-Timing header value, read only when asked (send's `timing`). */
export type Done = (err: Error | null, status: number, body: Buffer | null, serverTiming?: string) => void;

const HEADER_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i;
const CONNECTION_CLOSE = /\r\nconnection:[ \t]*close/i;
const SERVER_TIMING = /\r\nserver-timing:[ \t]*([^\r\n]*)/i;

/** One keep-alive connection carrying one request at a time. */
export class KeepAliveConnection {
  private readonly socket: Socket;
  private buf: Buffer | null = null;
  private done: Done | null = null;
  private keepBody = false;
  private status = 0;
  private bodyStart = -1;
  private bodyLength = -1;
  private wantTiming = false;
  private serverTiming: string | undefined;
  /** The current answer said `Connection: close`: the connection is closed once it is complete. */
  private closeAfter = false;
  private closedByUs = false;
  private notified = false;
  closed = false;
  /** Called once when the connection closes; `byUs` is false when the server (or the network) closed it. */
  onClosed: ((conn: KeepAliveConnection, byUs: boolean) => void) | null = null;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    const fail = (err?: Error) => {
      this.closed = true;
      const done = this.done;
      this.done = null;
      done?.(err ?? new Error('connection closed'), 0, null);
      if (!this.notified) {
        this.notified = true;
        this.onClosed?.(this, this.closedByUs);
      }
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

  /** Send one request (its complete bytes); `done` gets the status (and the body when keepBody, the Server-Timing header when timing). */
  send(request: Buffer, done: Done, keepBody = false, timing = false): void {
    if (this.done) throw new Error('a request is already in flight on this connection');
    if (this.closed) {
      done(new Error('connection closed'), 0, null);
      return;
    }
    this.done = done;
    this.keepBody = keepBody;
    this.wantTiming = timing;
    this.buf = null;
    this.bodyStart = -1;
    this.socket.write(request);
  }

  close(): void {
    if (!this.closed) this.closedByUs = true;
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
      this.closeAfter = CONNECTION_CLOSE.test(head);
      this.serverTiming = this.wantTiming ? SERVER_TIMING.exec(head)?.[1] : undefined;
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
    if (this.closeAfter) {
      // The server closes it after this answer: never reuse it (a request written now would race
      // the server's FIN and fail). Closed on the server's word, so not by us.
      this.closed = true;
      this.socket.destroy();
    }
    done?.(null, this.status, body, this.serverTiming);
  }

  /** A broken answer: the connection is unusable (the server's fault, so not closed "by us"). */
  private fail(err: Error): void {
    const done = this.done;
    this.done = null;
    this.closed = true;
    this.socket.destroy();
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

/**
 * At most `max` keep-alive connections to one server, opened on demand (`want`) and reopened when
 * the server closes one; `onReady` is called whenever a connection becomes free. A free connection
 * is taken last-in first-out, so the ones left idle are the ones a server's idle timeout closes.
 */
export class ConnectionPool {
  private readonly free: KeepAliveConnection[] = [];
  private readonly all = new Set<KeepAliveConnection>();
  private opening = 0;
  private retryAt = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private unreplaced = 0;
  private shut = false;
  /** Connections opened, lost (closed by the server or the network), reopened to replace a lost one. */
  opened = 0;
  lost = 0;
  reopened = 0;
  connectErrors = 0;
  firstConnectError: string | null = null;
  /** Most connections open at once. */
  peak = 0;

  constructor(
    private readonly host: string,
    private readonly port: number,
    readonly max: number,
    private readonly onReady: () => void,
  ) {
    if (!(max >= 1)) throw new RangeError(`a connection pool needs at least 1 connection (got ${max})`);
  }

  /** Open (or opening) connections. */
  get size(): number {
    return this.all.size + this.opening;
  }

  /** A free connection, or null. */
  take(): KeepAliveConnection | null {
    while (this.free.length > 0) {
      const c = this.free.pop()!;
      if (!c.closed) return c;
    }
    return null;
  }

  /** Back after its answer; a closed one is forgotten. */
  give(conn: KeepAliveConnection): void {
    if (!conn.closed && !this.shut) this.free.push(conn);
  }

  /** Make sure that `waiting` requests will get connections: open more, up to the cap. */
  want(waiting: number): void {
    if (this.shut) return;
    const now = performance.now();
    if (now < this.retryAt) {
      this.retryTimer ??= setTimeout(() => {
        this.retryTimer = null;
        this.onReady();
      }, this.retryAt - now);
      return;
    }
    let n = Math.min(waiting - this.opening, this.max - this.size);
    while (n-- > 0) this.openOne();
  }

  /** Open n connections now (before a run), resolving when they are up. */
  async preopen(n: number): Promise<void> {
    const target = Math.min(n, this.max);
    const waits: Promise<void>[] = [];
    while (this.size < target) waits.push(this.openOne());
    await Promise.all(waits);
  }

  closeAll(): void {
    this.shut = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const c of this.all) c.close();
    this.free.length = 0;
  }

  private openOne(): Promise<void> {
    this.opening++;
    return KeepAliveConnection.open(this.host, this.port).then(
      (conn) => {
        this.opening--;
        if (this.shut) {
          conn.close();
          return;
        }
        this.opened++;
        if (this.unreplaced > 0) {
          this.unreplaced--;
          this.reopened++;
        }
        this.all.add(conn);
        this.peak = Math.max(this.peak, this.all.size);
        conn.onClosed = (c, byUs) => {
          this.all.delete(c);
          const i = this.free.indexOf(c);
          if (i >= 0) this.free.splice(i, 1);
          if (!byUs && !this.shut) {
            this.lost++;
            this.unreplaced++;
            this.onReady(); // whoever waits may now open a replacement
          }
        };
        this.free.push(conn);
        this.onReady();
      },
      (err: Error) => {
        this.opening--;
        this.connectErrors++;
        this.firstConnectError ??= err.message;
        // Refused or unreachable: do not hammer it; whoever waits asks again after the pause.
        this.retryAt = performance.now() + 100;
        if (!this.shut) this.want(1);
      },
    );
  }
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
export function request(conn: KeepAliveConnection, bytes: Buffer): Promise<{ status: number; body: Buffer; serverTiming?: string }> {
  return new Promise((resolve, reject) => conn.send(bytes, (err, status, body, serverTiming) => (err ? reject(err) : resolve({ status, body: body!, serverTiming })), true, true));
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
  /** Failed requests: network errors and answers other than 200 (`non200` of them). */
  errors: number;
  non200: number;
  firstError: string | null;
  /** Send to answer, ms: in a closed loop this is all there is (no schedule to fall behind). */
  latency: hdr.Histogram;
  cpu: CpuShare;
}

/**
 * Every connection sends, waits for the answer, sends again, for warmupMs + durationMs; the answers
 * that arrive within the last durationMs are counted. `pick(c)` gives the next request of
 * connection number c; an answer with `okStatus` (200; 201 for posts) is a success.
 */
export function closedLoop(conns: KeepAliveConnection[], pick: (conn: number) => Buffer, warmupMs: number, durationMs: number, cpu: CpuMeter, okStatus = 200): Promise<ClosedLoopResult> {
  return new Promise((resolve) => {
    const latency = newHistogram();
    const started = performance.now();
    const from = started + warmupMs;
    const until = from + durationMs;
    let completed = 0;
    let errors = 0;
    let non200 = 0;
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
        non200,
        firstError,
        latency,
        cpu: cpu.share(cpuStart ?? end, end),
      });
    };
    const loop = (conn: KeepAliveConnection, c: number) => {
      const sent = performance.now();
      conn.send(pick(c), (err, status) => {
        const now = performance.now();
        if (now >= from && now < until) {
          if (err || status !== okStatus) {
            errors++;
            if (!err) non200++;
            firstError ??= err ? err.message : `HTTP ${status}`;
          } else {
            completed++;
            latency.recordValue(Math.max(1, Math.round((now - sent) * 1000)));
          }
        }
        if (now < until && !conn.closed) loop(conn, c);
        else if (--running === 0) void finish();
      });
    };
    conns.forEach(loop);
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
 * (A replay's schedule of posts and read sessions is sim/replay/driver.ts.)
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
