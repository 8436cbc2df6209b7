// Sweeping fan-out policies over one workload and picking the cheapest that meets every SLO.
//
// "Cheapest" is counted in servers, from what each policy makes the system do:
//   Redis memory hosts  = peak timeline + list memory / 64 GB
//   Redis cores         = Redis commands per second / 100k (one core's comfortable rate)
//   fan-out workers     = mean timeline writes per second / one worker's rated writes per second
// (the peak second is capped by the fleet's own size whenever a backlog forms, so it cannot rank policies)
import type { RunResult } from './result.js';

export const MEMORY_PER_REDIS_HOST = 64e9;
export const COMMANDS_PER_REDIS_CORE = 100_000;

export interface SweepRow {
  policy: string;
  lagP99Seconds: number;
  peakWritesPerSecond: number;
  peakMemoryBytes: number;
  readP99Ms: number;
  redisOpsPerRead: number;
  redisCommandsPerSecond: number;
  servers: { memoryHosts: number; redisCores: number; fanoutWorkers: number; total: number };
  sloPass: boolean;
  failed: string[];
}

export interface SweepResult {
  schema: 'feedlab.sweep/1';
  scenario: RunResult['scenario'];
  /**
   * Present only when the sweep was stopped: rows and runs hold the policies that finished; the
   * policy stopped mid-run (if any) and those never started are named here, not compared.
   */
  partial?: { stoppedPolicy: string | null; stoppedAtSeconds: number | null; notRun: string[] };
  rows: SweepRow[];
  recommended: { policy: string; reason: string } | null;
  runs: RunResult[];
}

/** The figures the server count is made of, from a run's (or a replay's) result document. */
export interface ServerFigures {
  scenario: Pick<RunResult['scenario'], 'durationSeconds'>;
  summary: { fanout: Pick<RunResult['summary']['fanout'], 'deliveries' | 'listWrites' | 'writesPerSecond'>; reads: Pick<RunResult['summary']['reads'], 'perSecond' | 'redisOpsPerRead'>; redis: Pick<RunResult['summary']['redis'], 'memoryBytes'> };
}

/** The servers a run needs (the header's three counts and their sum), and the Redis commands per second behind the cores. */
export function serversFor(r: ServerFigures, writesPerSecondPerWorker: number): SweepRow['servers'] & { redisCommandsPerSecond: number } {
  const f = r.summary.fanout;
  const rd = r.summary.reads;
  const commands = (f.deliveries + f.listWrites) / r.scenario.durationSeconds + rd.perSecond.mean * rd.redisOpsPerRead.mean;
  const memoryHosts = r.summary.redis.memoryBytes.peak / MEMORY_PER_REDIS_HOST;
  const redisCores = commands / COMMANDS_PER_REDIS_CORE;
  const fanoutWorkers = f.writesPerSecond.mean / writesPerSecondPerWorker;
  return { memoryHosts, redisCores, fanoutWorkers, total: memoryHosts + redisCores + fanoutWorkers, redisCommandsPerSecond: commands };
}

export function sweepRow(r: RunResult, writesPerSecondPerWorker: number): SweepRow {
  const f = r.summary.fanout;
  const rd = r.summary.reads;
  const { redisCommandsPerSecond, ...servers } = serversFor(r, writesPerSecondPerWorker);
  return {
    policy: r.policy,
    lagP99Seconds: f.followerLagSeconds.p99,
    peakWritesPerSecond: f.writesPerSecond.peak,
    peakMemoryBytes: r.summary.redis.memoryBytes.peak,
    readP99Ms: rd.latencyMs.p99,
    redisOpsPerRead: rd.redisOpsPerRead.mean,
    redisCommandsPerSecond,
    servers,
    sloPass: r.summary.slo.pass,
    failed: r.summary.slo.checks.filter((c) => !c.pass).map((c) => c.id),
  };
}

export function recommend(rows: SweepRow[]): { policy: string; reason: string } | null {
  const passing = rows.filter((r) => r.sloPass);
  if (passing.length === 0) return null;
  const best = [...passing].sort((a, b) => a.servers.total - b.servers.total || a.policy.localeCompare(b.policy))[0];
  const others = rows.filter((r) => r !== best);
  const parts = [`meets every SLO with the fewest servers (${best.servers.total.toFixed(1)}: ${best.servers.memoryHosts.toFixed(1)} Redis memory hosts, ${best.servers.redisCores.toFixed(1)} Redis cores, ${best.servers.fanoutWorkers.toFixed(1)} fan-out workers)`];
  const failing = others.filter((r) => !r.sloPass);
  if (failing.length > 0) parts.push(`${failing.map((r) => `${r.policy} fails ${r.failed.join(', ')}`).join('; ')}`);
  const dearer = others.filter((r) => r.sloPass).sort((a, b) => a.servers.total - b.servers.total)[0];
  if (dearer) parts.push(`the next cheapest passing policy, ${dearer.policy}, needs ${dearer.servers.total.toFixed(1)}`);
  return { policy: best.policy, reason: parts.join('; ') };
}
