// The benchmark's second part (bench/replay.ts runs it): a shipped replay scenario end to end, as a
// user runs it (`feedlab replay ... --json` in a child process), timed, with its measured figures.
import { formatCpu, type CpuShare } from '../sim/replay/cpu.js';
import { formatBytes } from '../sim/scenario/units.js';
import { f2, fmt, runCli } from './harness.js';

/** The shipped celebrity burst, exactly as a user replays it. */
const E2E_SCENARIO = 'scenarios/celebrity-burst.yaml';
const E2E_TIMEOUT_MS = 20 * 60_000;

/** The shipped celebrity burst replayed as a user runs it; its RESULT lines. */
export async function benchEndToEnd(): Promise<string[]> {
  const args = ['replay', E2E_SCENARIO, '--json', '--quiet'];
  console.log(`end to end: \`node dist/cli/main.js ${args.join(' ')}\` (a child process; about 5 minutes):`);
  const { code, stdout: out, stderr: err, seconds: wall } = await runCli(args, { timeoutMs: E2E_TIMEOUT_MS });
  const doc = ((): ReplayDoc | null => {
    try {
      return JSON.parse(out) as ReplayDoc;
    } catch {
      return null; // reported below
    }
  })();
  if (!doc?.replay) {
    console.log(`  !!! no result document (exit ${code}, ${wall.toFixed(0)} s): ${err.trim().split('\n').slice(-3).join(' | ') || 'no output'}`);
    return [`replay end to end: ${E2E_SCENARIO} FAILED (exit ${code}) after ${wall.toFixed(0)} s`];
  }
  return [printDocument(doc, wall, code)];
}

/** The parts of the result document printed here (JSON: NaN arrives as null). */
type N = number | null;
interface Lat { p50: N; p99: N; count?: N }
interface ReplayDoc {
  partial?: { stoppedAtSeconds: number };
  policy: string;
  summary: {
    fanout: { lagSeconds: Lat; followerLagSeconds: Lat; writesPerSecond: { mean: N; peak: N } };
    reads: { total: number; latencyMs: { p50: N; p99: N }; redisOpsPerRead: { mean: N }; coldReads: number };
    redis: { memoryBytes: { end: N }; naiveUnderestimate: N };
    slo?: { pass: boolean; checks: { id: string; target: number; actual: N; unit: string; pass: boolean }[] };
  };
  replay: {
    mapping: { users: number; follows: number; timeScale: number; simulatedSeconds: number; wallSeconds: number; workers: { started: number } };
    offered: { postsPerSecond: { mean: number; peak: number }; readsPerSecond: { mean: number; peak: number } };
    driver: { totals: Record<'posts' | 'reads', { offered: number; completed: number; lateGenerator: number; lateNoConnection: number; dropped: number }>; latency: { reads: { fromSent: { p50Ms: N; p99Ms: N } }; sendDelay: { p99Ms: N } }; driver: { cpuMicrosPerRequest: N } };
    fanout: { workers: { postLag: Lat; followerLag: Lat }; probes: { postLag: Lat; followerLag: Lat; pairs: number; notSeen: number }; agreement: Record<'followerP50' | 'followerP99' | 'postP50' | 'postP99', N> };
    memory: { classes: Record<string, { keys: number; bytes: number; modelBytes: N; encodings?: Record<string, number> }>; naiveTimelineBytes: number };
    reads: { server: { p50Ms: N; p99Ms: N }; commandsPerRead: { total: number; byCommand: Record<string, number> } | null };
    cpu: { share: CpuShare | null; contended: boolean; otherShare: N };
    saturation: { own: { rate: number } | null };
  };
}

/** Prints the document's figures; returns its RESULT line. */
function printDocument(doc: ReplayDoc, wall: number, code: number | null): string {
  const r = doc.replay;
  const m = r.mapping;
  const s = (x: N) => f2(x, ' s');
  const lat = (l: Lat) => `p50 ${s(l.p50)}, p99 ${s(l.p99)}`;
  const contended = r.cpu.contended ? ` !!! contended: other processes took ${((r.cpu.otherShare ?? 0) * 100).toFixed(0)}% of the machine; figures disturbed !!!` : '';
  const partial = doc.partial ? ` !!! partial: stopped at ${doc.partial.stoppedAtSeconds.toFixed(0)} s !!!` : '';
  console.log(
    `  wall time ${wall.toFixed(0)} s (exit ${code}) for a ${m.wallSeconds.toFixed(0)} s window; ${fmt(m.users)} users, ${fmt(m.follows)} follows, time scale ${m.timeScale} ` +
      `(${(m.simulatedSeconds / 60).toFixed(0)} simulated minutes), ${m.workers.started} workers, policy ${doc.policy}; offered ${f2(r.offered.postsPerSecond.mean)} posts/s (peak ${f2(r.offered.postsPerSecond.peak)}), ` +
      `${f2(r.offered.readsPerSecond.mean)} feed pages/s (peak ${f2(r.offered.readsPerSecond.peak)}); closed-loop max ${fmt(r.saturation.own?.rate ?? NaN)} reads/s${partial}${contended}`,
  );
  const w = r.fanout.workers;
  const p = r.fanout.probes;
  const ag = r.fanout.agreement;
  console.log(`  fan-out lag per post: workers ${lat(w.postLag)}; probes ${lat(p.postLag)}; probe/workers p50 ${f2(ag.postP50)}, p99 ${f2(ag.postP99)}`);
  console.log(
    `  fan-out lag per follower: workers (pushed) ${lat(w.followerLag)}; probes ${lat(p.followerLag)} (${fmt(p.pairs)} pairs, ${p.notSeen} never seen); probe/workers p50 ${f2(ag.followerP50)}, p99 ${f2(ag.followerP99)}; ` +
      `with pulled posts by their audience ${lat(doc.summary.fanout.followerLagSeconds)}`,
  );
  const wps = doc.summary.fanout.writesPerSecond;
  console.log(`  timeline writes/s (counted at Redis): mean ${fmt(wps.mean ?? NaN)}, peak ${fmt(wps.peak ?? NaN)}`);
  const mb = (b: N) => (typeof b === 'number' ? formatBytes(b) : 'n/a');
  const classes = Object.entries(r.memory.classes).map(([k, c]) => `${k} ${mb(c.bytes)} (${fmt(c.keys)} keys${c.modelBytes ? `, model ${mb(c.modelBytes)}` : ''})`);
  const tl = r.memory.classes.timelines;
  const modelRatio = tl && tl.modelBytes ? tl.bytes / tl.modelBytes : NaN;
  console.log(
    `  Redis memory by key class: ${classes.join('; ')}; timelines by encoding ${JSON.stringify(tl?.encodings ?? {})}; ` +
      `timelines measured/model ${f2(modelRatio)}, measured/naive 24 B per entry ${f2(doc.summary.redis.naiveUnderestimate)}`,
  );
  const cpr = r.reads.commandsPerRead;
  const byCmd = cpr ? Object.entries(cpr.byCommand).filter(([, v]) => v >= 0.005).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ') : '';
  const rl = doc.summary.reads.latencyMs;
  console.log(
    `  reads: ${fmt(doc.summary.reads.total)} answered; from intended send p50 ${f2(rl.p50, ' ms')}, p99 ${f2(rl.p99, ' ms')}; from actual send p50 ${f2(r.driver.latency.reads.fromSent.p50Ms, ' ms')}, p99 ${f2(r.driver.latency.reads.fromSent.p99Ms, ' ms')}; ` +
      `server histogram p50 ${f2(r.reads.server.p50Ms, ' ms')}, p99 ${f2(r.reads.server.p99Ms, ' ms')}; Redis commands per read ${cpr ? `${cpr.total.toFixed(2)} (${byCmd})` : 'n/a'}; ${fmt(doc.summary.reads.coldReads)} cold reads`,
  );
  const t = r.driver.totals;
  console.log(
    `  driver: ${fmt(t.reads.completed)}/${fmt(t.reads.offered)} reads and ${fmt(t.posts.completed)}/${fmt(t.posts.offered)} posts answered 2xx; late (> 1 ms) ${fmt(t.reads.lateGenerator + t.reads.lateNoConnection + t.posts.lateGenerator + t.posts.lateNoConnection)}, ` +
      `dropped ${fmt(t.reads.dropped + t.posts.dropped)}; send delay p99 ${f2(r.driver.latency.sendDelay.p99Ms, ' ms')}; ${fmt(r.driver.driver.cpuMicrosPerRequest ?? NaN)} µs driver cpu/request`,
  );
  if (r.cpu.share) console.log(`  ${formatCpu(r.cpu.share, 'driver')} (the whole window)`);
  const slo = doc.summary.slo;
  if (slo) console.log(`  the scenario's SLOs: ${slo.checks.map((c) => `${c.id} ${c.unit === 'bytes' ? `${mb(c.actual)} of ${mb(c.target)}` : `${f2(c.actual)} of ${c.target} ${c.unit}`} ${c.pass ? 'ok' : 'FAILED'}`).join('; ')}`);
  const mark = partial || contended ? ' (!!! see the marks above)' : '';
  return (
    `replay end to end: ${E2E_SCENARIO} in ${wall.toFixed(0)} s wall (a ${m.wallSeconds.toFixed(0)} s window); lag p99 per post ${s(w.postLag.p99)} (probes ${s(p.postLag.p99)}), per follower ${s(w.followerLag.p99)} (probes ${s(p.followerLag.p99)}); ` +
      `read p99 ${f2(rl.p99, ' ms')} (server ${f2(r.reads.server.p99Ms, ' ms')}); timelines measured/model ${f2(modelRatio)} (the issue's hand check: within 1%)${mark}`
  );
}
