// Sweeping fan-out policies over one workload and picking the cheapest that meets every SLO.
//
// "Cheapest" is counted in servers, from what each policy makes the system do:
//   Redis memory hosts  = peak timeline + list memory / 64 GB, rounded up
//   Redis cores         = Redis commands per second / 100k (one core's comfortable rate), rounded up
//   fan-out workers     = mean timeline writes per second / one worker's rated writes per second, rounded up
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
  /** Shards with more work than a second per second: the read p99 is of queues growing without bound (absent from older documents). */
  saturatedShards?: number;
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
   * policy stopped mid-run on screen (if any) and those without a whole run (never started, or
   * stopped on another thread) are named here, not compared.
   */
  partial?: { stoppedPolicy: string | null; stoppedAtSeconds: number | null; notRun: string[] };
  rows: SweepRow[];
  recommended: { policy: string; reason: string } | null;
  runs: RunResult[];
}

/**
 * What a stopped sweep reports, from each policy's result by index (none: it did not run) and the
 * policy on screen when the stop came: that one stopped at the minute shown (when it had not
 * finished); every other policy without a whole result counts as not run, one stopped on another
 * thread mid-way included.
 */
export function stoppedSweep(labels: readonly string[], byPolicy: readonly (RunResult | undefined)[], onScreen: number | null): NonNullable<SweepResult['partial']> {
  const whole = (i: number) => byPolicy[i] !== undefined && !byPolicy[i]!.partial;
  const stopped = onScreen !== null && byPolicy[onScreen]?.partial ? onScreen : null;
  return {
    stoppedPolicy: stopped !== null ? labels[stopped] : null,
    stoppedAtSeconds: stopped !== null ? byPolicy[stopped]!.partial!.stoppedAtSeconds : null,
    notRun: labels.filter((_, i) => !whole(i) && i !== stopped),
  };
}

/** The figures the server count is made of, from a run's (or a replay's) result document. */
export interface ServerFigures {
  scenario: Pick<RunResult['scenario'], 'durationSeconds'>;
  summary: { fanout: Pick<RunResult['summary']['fanout'], 'deliveries' | 'listWrites' | 'writesPerSecond'>; reads: Pick<RunResult['summary']['reads'], 'perSecond' | 'redisOpsPerRead'>; redis: Pick<RunResult['summary']['redis'], 'memoryBytes'> };
}

/** The runs of a document: a sweep's, or the one of a run. */
export function runsOf(doc: RunResult | SweepResult): RunResult[] {
  return doc.schema === 'feedlab.sweep/1' ? doc.runs : [doc];
}

/** A server count as printed: whole (older documents' fractions with one decimal). */
export function formatServers(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

/** The servers a run needs (the header's three counts and their sum), and the Redis commands per second behind the cores. */
export function serversFor(r: ServerFigures, writesPerSecondPerWorker: number): SweepRow['servers'] & { redisCommandsPerSecond: number } {
  const f = r.summary.fanout;
  const rd = r.summary.reads;
  const commands = (f.deliveries + f.listWrites) / r.scenario.durationSeconds + rd.perSecond.mean * rd.redisOpsPerRead.mean;
  // whole servers: a tenth of a Redis host is a host ("0.1: 0.0 Redis memory hosts" read as none)
  const memoryHosts = Math.ceil(r.summary.redis.memoryBytes.peak / MEMORY_PER_REDIS_HOST);
  const redisCores = Math.ceil(commands / COMMANDS_PER_REDIS_CORE);
  const fanoutWorkers = Math.ceil(f.writesPerSecond.mean / writesPerSecondPerWorker);
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
    saturatedShards: r.summary.redis.saturatedShards,
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
  // a tie in servers goes to the simpler policy (adaptive:25000 was recommended over threshold:25000
  // at the same cost); older documents hold fractions, compared as printed
  const shown = (r: SweepRow) => Number(r.servers.total.toFixed(1));
  const ranked = [...passing].sort((a, b) => shown(a) - shown(b) || complexity(a.policy) - complexity(b.policy) || a.policy.localeCompare(b.policy));
  const best = ranked[0];
  const tied = ranked.filter((r) => r !== best && shown(r) === shown(best));
  const others = rows.filter((r) => r !== best);
  const parts = [`meets every SLO with the fewest servers (${formatServers(best.servers.total)}: ${formatServers(best.servers.memoryHosts)} Redis memory hosts, ${formatServers(best.servers.redisCores)} Redis cores, ${formatServers(best.servers.fanoutWorkers)} fan-out workers)`];
  if (tied.length > 0) parts.push(`a tie with ${tied.map((r) => r.policy).join(', ')} at the same count, and ${best.policy} is the simpler`);
  const failing = others.filter((r) => !r.sloPass);
  if (failing.length > 0) parts.push(`${failing.map((r) => `${r.policy} fails ${r.failed.join(', ')}`).join('; ')}`);
  const dearer = ranked.find((r) => r !== best && !tied.includes(r));
  if (dearer) parts.push(`the next cheapest passing policy, ${dearer.policy}, needs ${formatServers(dearer.servers.total)}`);
  const edge = edgeOfRange(best.policy, rows.map((r) => r.policy));
  if (edge) parts.push(edge);
  return { policy: best.policy, reason: parts.join('; ') };
}

/** How much a policy asks of its operators, for breaking ties: a fixed rule before a switch, a switch before a moving one. */
const COMPLEXITY: Record<string, number> = { push: 0, pull: 0, threshold: 1, 'reader-cap': 2, rate: 2, adaptive: 3 };

function complexity(spec: string): number {
  return COMPLEXITY[spec.split(':')[0]] ?? 4;
}

/** A winner whose threshold is the lowest or highest of its kind swept: the best may lie beyond it. */
function edgeOfRange(winner: string, swept: string[]): string | null {
  const valueOf = (spec: string) => {
    const [kind, value] = spec.split(':');
    return { kind, value: Number(value) };
  };
  const w = valueOf(winner);
  if (!Number.isFinite(w.value)) return null;
  const values = swept.map(valueOf).filter((p) => p.kind === w.kind && Number.isFinite(p.value)).map((p) => p.value);
  if (values.length < 2) return null;
  if (w.value === Math.min(...values)) return `${w.value} is the lowest ${w.kind === 'reader-cap' ? 'reader cap' : 'threshold'} swept: sweep lower ones too, the cheapest may lie below it`;
  if (w.value === Math.max(...values)) return `${w.value} is the highest ${w.kind === 'reader-cap' ? 'reader cap' : 'threshold'} swept: sweep higher ones too, the cheapest may lie above it`;
  return null;
}
