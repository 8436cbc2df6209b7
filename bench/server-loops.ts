// What the server benchmark's read measurements share, the reference server's (bench/server.ts),
// the floor's (bench/server-floor.ts) and the two instances' (bench/server-instances.ts), so that all
// are measured alike: the closed and open loops' settings, the wait for other processes to quieten
// before each measurement, the closed loop at a connection count and at the best of a few, the open
// loop at a rate, and the cpu lines, which also record how busy the rest of the machine was during
// every measurement (the summary's machine line).
import { formatCpu, waitForQuiet, type CpuMeter, type CpuShare } from '../sim/replay/cpu.js';
import { closedLoop, openLoop, pct, type ClosedLoopResult, type KeepAliveConnection } from '../sim/replay/http-client.js';

export const CONNECTIONS = 128;
export const CLOSED_LEVELS = [16, 64, 128];
export const CLOSED_WARMUP_MS = 1_000;
export const CLOSED_MS = 5_000;
export const OPEN_MS = 8_000;
/** Open-loop time at the target rate before each measured open loop (not measured). */
export const OPEN_WARMUP_MS = 2_000;
/** Rounds re-measuring HTTP and the ceiling in turn at their best settings (the floor's best: as many). */
export const PAIRED_ROUNDS = 2;
/** Longest total wait for other processes on the machine to quieten before measurements. */
const QUIET_BUDGET_MS = 20_000;

/** Whole numbers with thousands separators (unlike harness.ts's `fmt`, a figure not measured prints as it is). */
export const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
export const ms = (n: number) => `${n.toFixed(2)} ms`;

/** Waits for other processes to quieten before each measurement, within one budget for the run. */
export class QuietGate {
  private budgetMs = QUIET_BUDGET_MS;
  waitedMs = 0;

  constructor(private readonly cpu: CpuMeter) {}

  async wait(): Promise<void> {
    if (this.budgetMs <= 0) return;
    const r = await waitForQuiet(this.cpu, Math.min(this.budgetMs, 15_000));
    const extra = Math.max(0, r.waitedMs - 600); // the sample itself is not waiting
    this.budgetMs -= extra;
    this.waitedMs += extra;
  }
}

/** The CPU share other processes took during each measurement (% of one core). */
export const seenOther: number[] = [];

/** Other processes' share of a core (%) from which a measurement counts as disturbed. */
export const DISTURBED_OTHER = 25;

/** ' (disturbed: ...)' for a measurement during which other processes took DISTURBED_OTHER% of a core or more, else ''. */
export function disturbance(other: number): string {
  return other >= DISTURBED_OTHER ? ` (disturbed: other processes took ${other.toFixed(0)}% of a core during it)` : '';
}

/** The cpu line of a measurement, remembering how busy the rest of the machine was. */
export function cpuLine(c: CpuShare, generatorName?: string): string {
  seenOther.push(c.other);
  return formatCpu(c, generatorName);
}

/** The serving processes' names in the cpu meter: one, or several that serve together. */
export type Serving = string | readonly string[];

/** The serving processes' share of a core (%), summed. */
function servingShare(c: CpuShare, who: Serving): number {
  return (typeof who === 'string' ? [who] : who).reduce((sum, name) => sum + (c.processes[name] ?? 0), 0);
}

/** CPU time per read (µs) of the serving process or processes (their sum), Redis and Postgres, from the shares (% of a core) and the rate. */
export function perRead(c: CpuShare, rate: number, who: Serving = 'server'): string {
  const us = (pctOfCore: number) => fmt((pctOfCore * 1e4) / rate);
  const names = typeof who === 'string' ? who : who.join(' + ');
  return `cpu per read: ${names} ${us(servingShare(c, who))} µs, redis ${us(c.redis)} µs, postgres ${us(c.postgres)} µs`;
}

/** Closed-loop feed reads on the first `c` of `conns`, printed (`who`: the serving process's name, or names, in the cpu meter). */
export async function closedAt(conns: KeepAliveConnection[], pick: () => Buffer, c: number, label: string, cpu: CpuMeter, quiet: QuietGate, who: Serving = 'server'): Promise<ClosedLoopResult> {
  await quiet.wait();
  const r = await closedLoop(conns.slice(0, c), pick, CLOSED_WARMUP_MS, CLOSED_MS, cpu);
  console.log(
    `  ${label}${String(c).padStart(3)} connections: ${fmt(r.rate)} reads/s, p50 ${ms(pct(r.latency, 50))}, p99 ${ms(pct(r.latency, 99))}${r.errors ? `, ${r.errors} ERRORS (${r.firstError})` : ''}; ` +
      `${perRead(r.cpu, r.rate, who)}; ${cpuLine(r.cpu)}`,
  );
  return r;
}

/** The closed loop at each of CLOSED_LEVELS; the fastest. */
export async function bestOfLevels(at: (c: number, label: string) => Promise<ClosedLoopResult>): Promise<ClosedLoopResult> {
  let best: ClosedLoopResult | null = null;
  for (const c of CLOSED_LEVELS) {
    const r = await at(c, '');
    if (!best || r.rate > best.rate) best = r;
  }
  return best!;
}

/** bestOfLevels, then its best connection count again PAIRED_ROUNDS times (as the server's maximum is the best of as many): the fastest. */
export async function bestAgain(at: (c: number, label: string) => Promise<ClosedLoopResult>): Promise<ClosedLoopResult> {
  let best = await bestOfLevels(at);
  for (let round = 0; round < PAIRED_ROUNDS; round++) {
    const r = await at(best.concurrency, 'again, ');
    if (r.rate > best.rate) best = r;
  }
  return best;
}

/**
 * The open loop at `rate` on `conns` (after OPEN_WARMUP_MS at that rate, not measured), printed as
 * "  `label` (rate/s offered): p50, p99..." with the serving processes' cpu per read; its p99 from
 * the intended send, ms, and other processes' share of a core meanwhile. Throws if a read went
 * unanswered.
 */
export async function openAt(
  conns: KeepAliveConnection[],
  pick: () => Buffer,
  rate: number,
  label: string,
  cpu: CpuMeter,
  quiet: QuietGate,
  who: Serving,
): Promise<{ p99: number; other: number }> {
  await quiet.wait();
  await openLoop(conns, pick, rate, OPEN_WARMUP_MS, cpu);
  const r = await openLoop(conns, pick, rate, OPEN_MS, cpu);
  if (r.errors > 0 || r.completed !== r.intended) throw new Error(`${r.completed} of ${r.intended} answered (${r.errors} errors: ${r.firstError})`);
  console.log(
    `  ${label} (${fmt(rate)}/s offered): p50 ${ms(pct(r.fromIntended, 50))}, p99 ${ms(pct(r.fromIntended, 99))}, max ${ms(r.fromIntended.maxValue / 1000)} ` +
      `(from actual send: p99 ${ms(pct(r.fromSent, 99))}); ${perRead(r.cpu, r.achievedRate, who)}; ${cpuLine(r.cpu)}`,
  );
  return { p99: pct(r.fromIntended, 99), other: r.cpu.other };
}
