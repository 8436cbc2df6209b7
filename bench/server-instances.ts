// The server benchmark's API tier of two instances (bench/server.ts runs it after the floor): a
// second `feedlab serve` (node id 1) on the same schema, keys and event streams (several instances are a
// supported deployment: migrations under an advisory lock, the outbox claimed with SKIP LOCKED),
// one per core as the ceiling has a thread per core. The client's connections alternate between
// the two, so every connection count splits evenly. One instance leaves about half of the machine
// idle at its maximum; this says what the cores give when both serve, and so whether the single
// event loop or the CPU a read costs bounds the maximum.
import { Rng } from '../core/random.js';
import type { CpuMeter } from '../sim/replay/cpu.js';
import { openConnections, overConnections, request, type KeepAliveConnection } from '../sim/replay/http-client.js';
import { secs } from './harness.js';
import type { ServerChild } from './server-child.js';
import { bestAgain, closedAt, CONNECTIONS, fmt, openAt, type QuietGate } from './server-loops.js';

export interface InstancesFigures {
  /** The two instances' closed-loop maximum, reads/s. */
  max: number;
  /** Their p99 at half of that maximum, ms (NaN: not measured, its line says why). */
  p99Half: number;
  /** Other processes' share of a core during that measurement, %. */
  halfOther: number;
}

/** The names of the two instances in the cpu meter and its lines. */
const NAMES = ['server', 'server 2'] as const;

/**
 * Starts a second instance (`startSecond`) beside `first`, reads every feed once through it (its
 * followee sets load from Postgres then, not during the measurements), and measures the pair as the
 * server alone is measured: the closed loop at each connection count and its best again, then the
 * open loop at half of that maximum. `requests`: one feed request per reader; `firstConns`: open
 * connections to `first`.
 */
export async function measureTwoInstances(
  first: ServerChild,
  firstConns: readonly KeepAliveConnection[],
  startSecond: () => Promise<ServerChild>,
  requests: readonly Buffer[],
  cpu: CpuMeter,
  quiet: QuietGate,
  ceiling: number,
): Promise<InstancesFigures> {
  const second = await startSecond();
  let secondConns: KeepAliveConnection[] = [];
  try {
    secondConns = await openConnections(second.host, second.port, CONNECTIONS / 2);
    const t0 = performance.now();
    await overConnections(secondConns.slice(0, 32), requests.length, async (conn, u) => {
      const r = await request(conn, requests[u]);
      if (r.status !== 200) throw new Error(`the second instance's warm pass: GET /v1/feed answered ${r.status}`);
    });
    const conns = Array.from({ length: CONNECTIONS }, (_, i) => (i % 2 === 0 ? firstConns[i >> 1] : secondConns[i >> 1]));
    cpu.setProcesses(new Map([[NAMES[0], first.proc.pid!], [NAMES[1], second.proc.pid!]]));
    const readers = new Rng(41);
    const pick = () => requests[readers.int(requests.length)];
    console.log(
      `two instances: a second \`feedlab serve\` (child process ${second.proc.pid}) on the same schema, keys and streams, every feed read once through it (${secs(t0).toFixed(1)} s); ` +
        `the connections alternate between the two ("${NAMES[0]}", "${NAMES[1]}" in the cpu lines):`,
    );
    const best = await bestAgain((c, label) => closedAt(conns, pick, c, label, cpu, quiet, NAMES));
    const idle = best.cpu.idle;
    console.log(
      `  two instances' max ${fmt(best.rate)} reads/s (${best.concurrency} connections) = ${(best.rate / ceiling).toFixed(2)} of the ceiling (${fmt(ceiling)}/s); the machine ${idle.toFixed(0)}% idle of 200% meanwhile`,
    );
    const half = await openAt(conns, pick, Math.round(best.rate / 2), 'at half of their max', cpu, quiet, NAMES).catch((err: Error) => {
      console.log(`  at half of their max: not measured (${err.message})`);
      return { p99: NaN, other: NaN };
    });
    return { max: best.rate, p99Half: half.p99, halfOther: half.other };
  } finally {
    cpu.setProcesses(new Map([[NAMES[0], first.proc.pid!]]));
    for (const c of secondConns) c.close();
    await second.stop();
  }
}
