// The soak benchmark (issue 13): the shipped soak (scenarios/soak.yaml, 11 minutes of wall time of
// steady posting and reading) replayed as a user runs it, and every process's resident memory over
// the window from its result document (`replay.processMemory`, sampled at each series step): a
// line a minute, and whether it levelled off, by the slope of the second half (a least-squares fit)
// against the first minute's memory.
import { linearRegression } from 'simple-statistics';
import type { RunResult } from '../sim/result.js';
import { formatBytes } from '../sim/scenario/units.js';
import { f2, fmt, runCli } from './harness.js';

const SOAK = 'scenarios/soak.yaml';
const TIMEOUT_MS = 30 * 60_000;
/** Levelled off: over the second half, growth under this share of the process's memory per 10 minutes. */
const LEVEL_SHARE_PER_10_MIN = 0.05;

export async function benchSoak(): Promise<void> {
  const args = ['replay', SOAK, '--json', '--quiet'];
  console.log(`soak: \`node dist/cli/main.js ${args.join(' ')}\` (a child process; about 14 minutes)`);
  const { code, stdout, stderr, seconds } = await runCli(args, { timeoutMs: TIMEOUT_MS });
  let doc: RunResult | null = null;
  try {
    doc = JSON.parse(stdout) as RunResult;
  } catch {
    // reported below
  }
  const x = doc?.replay;
  const pm = x?.processMemory;
  if (!doc || !x || !pm) {
    console.log(`  !!! no result document with process memory (exit ${code}, ${seconds.toFixed(0)} s): ${stderr.trim().split('\n').slice(-3).join(' | ') || 'no output'}`);
    console.log(`  RESULT soak: FAILED (exit ${code})`);
    return;
  }
  const t = x.driver.totals;
  console.log(
    `  exit ${code}, ${seconds.toFixed(0)} s wall for a ${x.mapping.wallSeconds.toFixed(0)} s window; ${fmt(t.posts.completed)}/${fmt(t.posts.offered)} posts and ${fmt(t.reads.completed)}/${fmt(t.reads.offered)} reads answered 2xx; ` +
      `read p99 ${f2(doc.summary.reads.latencyMs.p99, ' ms')}; reconciliation ${x.reconciliation ? (x.reconciliation.ok ? 'ok' : 'FAILED') : 'n/a'}` +
      (x.cpu.share ? `; other processes ${x.cpu.share.other.toFixed(0)}% of 200%${x.cpu.contended ? ' !!! contended !!!' : ''}` : ''),
  );
  const names = Object.keys(pm.residentBytes);
  console.log(`  resident memory (MB) a minute apart: ${['t (s)', ...names].join(' | ')}`);
  let nextAt = 0;
  pm.atSeconds.forEach((at, i) => {
    if (at < nextAt && i !== pm.atSeconds.length - 1) return;
    nextAt = at + 60;
    console.log(`    ${[at.toFixed(0), ...names.map((n) => (pm.residentBytes[n][i] / 1e6).toFixed(1))].join(' | ')}`);
  });
  const verdicts = names.map((n) => {
    const points = pm.atSeconds.map((at, i) => [at, pm.residentBytes[n][i]]).filter(([, v]) => Number.isFinite(v));
    const half = points.filter(([at]) => at >= pm.atSeconds[pm.atSeconds.length - 1] / 2);
    const base = points.find(([at]) => at >= 60)?.[1] ?? points[0]?.[1] ?? NaN;
    const slope = half.length >= 2 ? linearRegression(half).m : NaN; // bytes per second
    const per10 = slope * 600;
    const level = Number.isFinite(per10) && per10 < LEVEL_SHARE_PER_10_MIN * base;
    return `${n} ${formatBytes(base)} at 1 min -> ${formatBytes(points[points.length - 1]?.[1] ?? NaN)}, second half ${per10 >= 0 ? '+' : ''}${formatBytes(per10)} per 10 min: ${level ? 'levels off' : 'GROWS'}`;
  });
  console.log(`  RESULT soak: ${(x.mapping.wallSeconds / 60).toFixed(0)} min of mixed traffic; ${verdicts.join('; ')} (levels off: under ${LEVEL_SHARE_PER_10_MIN * 100}% per 10 min)`);
}
