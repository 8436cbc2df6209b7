// The server benchmark's API tier of two instances (bench/server.ts runs it after the floor): a
// second `feedlab serve` on the same schema, keys and event streams (several instances are a
// supported deployment: migrations under an advisory lock, the outbox claimed with SKIP LOCKED),
// one per core as the ceiling has a thread per core. The client's connections alternate between
// the two, so every connection count splits evenly. One instance leaves about half of the machine
// idle at its maximum; this says what the cores give when both serve, and so whether the single
// event loop or the CPU a read costs bounds the maximum.
import { Rng } from '../core/random.js';
import type { CpuMeter } from '../sim/replay/cpu.js';
import { openConnections, openLoop, overConnections, pct, request, type KeepAliveConnection } from '../sim/replay/http-client.js';
import { bestOfLevels, closedAt, CONNECTIONS, cpuLine, fmt, ms, OPEN_MS, OPEN_WARMUP_MS, PAIRED_ROUNDS, type QuietGate } from './server-loops.js';

/** A running `feedlab serve` child (bench/server.ts starts them). */
export interface ServingChild {
  proc: { pid?: number };
  host: string;
  port: number;
  stop(): Promise<void>;
}

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
  first: ServingChild,
  firstConns: readonly KeepAliveConnection[],
  startSecond: () => Promise<ServingChild>,
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
      `two instances: a second \`feedlab serve\` (child process ${second.proc.pid}) on the same schema, keys and streams, every feed read once through it (${((performance.now() - t0) / 1000).toFixed(1)} s); ` +
        `the connections alternate between the two ("${NAMES[0]}", "${NAMES[1]}" in the cpu lines):`,
    );
    const at = (c: number, label: string) => closedAt(conns, pick, c, label, cpu, quiet, NAMES);
    let best = await bestOfLevels(at);
    for (let round = 0; round < PAIRED_ROUNDS; round++) {
      const r = await at(best.concurrency, 'again, ');
      if (r.rate > best.rate) best = r;
    }
    const idle = best.cpu.idle;
    console.log(
      `  two instances' max ${fmt(best.rate)} reads/s (${best.concurrency} connections) = ${(best.rate / ceiling).toFixed(2)} of the ceiling (${fmt(ceiling)}/s); the machine ${idle.toFixed(0)}% idle of 200% meanwhile`,
    );
    const half = await halfLoad(conns, pick, Math.round(best.rate / 2), cpu, quiet).catch((err: Error) => {
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

/** The pair's p99 at `rate`, and other processes' share of a core meanwhile (throws if a read went unanswered). */
async function halfLoad(conns: KeepAliveConnection[], pick: () => Buffer, rate: number, cpu: CpuMeter, quiet: QuietGate): Promise<{ p99: number; other: number }> {
  await quiet.wait();
  await openLoop(conns, pick, rate, OPEN_WARMUP_MS, cpu);
  const r = await openLoop(conns, pick, rate, OPEN_MS, cpu);
  if (r.errors > 0 || r.completed !== r.intended) throw new Error(`the two answered ${r.completed} of ${r.intended} (${r.errors} errors: ${r.firstError})`);
  const serversUs = fmt((NAMES.reduce((s, n) => s + (r.cpu.processes[n] ?? 0), 0) * 1e4) / r.achievedRate);
  console.log(
    `  at half of their max (${fmt(rate)}/s offered): p50 ${ms(pct(r.fromIntended, 50))}, p99 ${ms(pct(r.fromIntended, 99))}, max ${ms(r.fromIntended.maxValue / 1000)} ` +
      `(from actual send: p99 ${ms(pct(r.fromSent, 99))}); the two servers' cpu per read ${serversUs} µs; ${cpuLine(r.cpu)}`,
  );
  return { p99: pct(r.fromIntended, 99), other: r.cpu.other };
}
