// The server benchmark's floor, measured (bench/server.ts runs it after the server's open loop): the
// bare node:http server of bench/bare-server.ts, started in a child process of its own beside the
// idle reference server, driven as the server is (bench/server-loops.ts: the same client,
// connection counts, durations and cpu lines). Its closed-loop maximum, what node:http with the
// load generator and Redis on the same two cores reaches, is set beside the ceiling and the
// server's maximum; its p99 at the server's half-load rate is what the machine allows a read at
// that rate, the floor the server's half-load p99 is held against.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '../core/random.js';
import type { CpuMeter } from '../sim/replay/cpu.js';
import { getRequest, openConnections, type KeepAliveConnection } from '../sim/replay/http-client.js';
import { startBareServer } from './bare-server.js';
import type { CeilingJob } from './server-ceiling.js';
import { bestAgain, closedAt, CLOSED_MS, CLOSED_WARMUP_MS, CONNECTIONS, fmt, openAt, type QuietGate } from './server-loops.js';

/** What the floor is set beside: the server's maximum and the ceiling's, reads/s, and the ceiling's cpu per read, µs. */
export interface FloorReference {
  maxHttp: number;
  ceiling: number;
  ceilingUs: number;
}

export interface FloorFigures {
  /** The floor's closed-loop maximum, reads/s. */
  max: number;
  /** Its p99 at the half-load rate, ms (NaN: not measured, its line says why). */
  p99Half: number;
  /** Other processes' share of a core during that measurement, %. */
  halfOther: number;
}

/**
 * The floor (bench/bare-server.ts): a bare node:http server, in its own process beside the idle
 * server, that does a read's Redis commands and splices the cached bodies into its answer, nothing
 * else. Its closed-loop maximum, measured as the server's, is what node:http on this machine
 * reaches; its p99 at the server's half-load rate (`ref.maxHttp` / 2) is what the machine allows a
 * read at that rate. `job`: the ceiling's (its lists, tokens, bodies and page); `serverPid`: the
 * idle server's process, kept in the cpu lines.
 */
export async function measureFloor(
  job: Omit<CeilingJob, 'inFlight'>,
  bearers: readonly string[],
  serverPid: number,
  cpu: CpuMeter,
  quiet: QuietGate,
  ref: FloorReference,
): Promise<FloorFigures> {
  const bare = await startBareServer({ ...job, bearers: [...bearers] }, join(tmpdir(), `feedlab-bench-bare-${process.pid}.json`));
  let conns: KeepAliveConnection[] = [];
  try {
    conns = await openConnections(bare.host, bare.port, CONNECTIONS);
    const requests = bearers.map((t) => getRequest(`${bare.host}:${bare.port}`, `/v1/feed?limit=${job.page}`, t));
    const readers = new Rng(37);
    const pick = () => requests[readers.int(requests.length)];
    cpu.setProcesses(new Map([['server', serverPid], ['bare', bare.proc.pid!]]));
    console.log(
      `the floor: a bare node:http server (bench/bare-server.ts, its own process; "bare" in the cpu lines, the server idle beside it) doing a read's Redis commands and splicing the cached bodies, nothing else, ` +
        `${CONNECTIONS} keep-alive connections open; closed loop as the server's (${CLOSED_MS / 1000} s per level after ${CLOSED_WARMUP_MS / 1000} s warm-up), then the half-load rate:`,
    );
    const max = await floorMax(conns, pick, cpu, quiet, ref);
    const half = await openAt(conns, pick, Math.round(ref.maxHttp * 0.5), 'at the half-load rate', cpu, quiet, 'bare').catch((err: Error) => {
      console.log(`  at the half-load rate: not measured (${err.message})`);
      return { p99: NaN, other: NaN };
    });
    return { max, p99Half: half.p99, halfOther: half.other };
  } finally {
    cpu.setProcesses(new Map([['server', serverPid]]));
    for (const c of conns) c.close();
    await bare.stop();
  }
}

/** The floor's closed-loop maximum: the server's connection counts, then its best again as often as the server's (PAIRED_ROUNDS), the fastest. */
async function floorMax(conns: KeepAliveConnection[], pick: () => Buffer, cpu: CpuMeter, quiet: QuietGate, ref: FloorReference): Promise<number> {
  const best = await bestAgain((c, label) => closedAt(conns, pick, c, label, cpu, quiet, 'bare'));
  const c = best.cpu;
  const us = (pctOfCore: number) => (pctOfCore * 1e4) / best.rate;
  const floorUs = us(c.processes.bare + c.generator + c.redis + c.postgres);
  console.log(
    `  the floor's max ${fmt(best.rate)} reads/s (${best.concurrency} connections) = ${(best.rate / ref.ceiling).toFixed(2)} of the ceiling (${fmt(ref.ceiling)}/s); ` +
      `the server's max ${fmt(ref.maxHttp)} reads/s = ${(ref.maxHttp / best.rate).toFixed(2)} of the floor's; ` +
      `cpu per read at the floor's max ${fmt(floorUs)} µs (bare ${fmt(us(c.processes.bare))}, load generator ${fmt(us(c.generator))}, redis ${fmt(us(c.redis))}); ` +
      `ceiling/floor cpu ${(ref.ceilingUs / floorUs).toFixed(2)}: the reads ratio the two cores allow the floor when saturated`,
  );
  return best.rate;
}
