// The soak benchmark (issue 13): the shipped soak (scenarios/soak.yaml, 11 minutes of wall time of
// steady posting and reading) replayed as a user runs it, with every process's memory over the
// window two ways: its resident memory at each series step, from the result document
// (`replay.processMemory`), and the live heap of the API and of each worker after a full garbage
// collection, read through their inspectors every PROBE_EVERY_MS of the window (heap-probe.ts).
// RSS between collections is mostly garbage V8 has not collected yet (measured here: the API at
// 176-298 MB before a forced collection, 119-120 MB after); the heap after a full collection is
// what a leak grows, so the verdict is on it: levelled off when it grew less than LEVEL_SHARE over
// the window's second half.
import { readdirSync, readFileSync } from 'node:fs';
import { linearRegression } from 'simple-statistics';
import type { RunResult } from '../sim/result.js';
import { formatBytes } from '../sim/scenario/units.js';
import { f2, fmt, runCli } from './harness.js';
import { heapAfterGc, type HeapAfterGc } from './heap-probe.js';

const SOAK = 'scenarios/soak.yaml';
const TIMEOUT_MS = 40 * 60_000;
const PROBE_EVERY_MS = 120_000;
/** Levelled off: the heap after a full collection grew by less than this share over the second half. */
const LEVEL_SHARE = 0.05;

/** The replay's service processes (children of the CLI process `parent`), by name. */
function serviceProcesses(parent: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== parent) continue;
      const args = readFileSync(`/proc/${entry}/cmdline`, 'latin1').split('\0');
      const command = args.find((a) => a === 'serve' || a === 'worker');
      if (command === 'serve') out.set('server', Number(entry));
      else if (command === 'worker') out.set(`worker ${args[args.indexOf('--consumer') + 1]?.split('-').at(-1) ?? entry}`, Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

export async function benchSoak(): Promise<void> {
  const args = ['replay', SOAK, '--json'];
  console.log(`soak: \`node dist/cli/main.js ${args.join(' ')}\` (a child process; about 18 minutes), its processes' heaps after a full collection every ${PROBE_EVERY_MS / 1000} s of the window`);
  const heaps = new Map<string, { at: number; h: HeapAfterGc }[]>();
  let windowAt = 0;
  let timer: NodeJS.Timeout | null = null;
  let probing: Promise<void> = Promise.resolve();
  const probe = (parent: number) => {
    probing = probing.then(async () => {
      const at = (performance.now() - windowAt) / 1000;
      for (const [name, pid] of serviceProcesses(parent)) {
        try {
          const h = await heapAfterGc(pid);
          heaps.set(name, [...(heaps.get(name) ?? []), { at, h }]);
          console.log(`  ${at.toFixed(0).padStart(4)} s ${name}: heap after a full collection ${formatBytes(h.heapUsed)} (before it ${formatBytes(h.heapUsedBefore)}), RSS ${formatBytes(h.rss)} (before it ${formatBytes(h.rssBefore)})`);
        } catch (err) {
          console.log(`  ${at.toFixed(0).padStart(4)} s ${name}: !!! not probed: ${(err as Error).message}`);
        }
      }
    });
  };
  const { code, stdout, stderr, seconds } = await runCli(args, {
    timeoutMs: TIMEOUT_MS,
    onStderr: (soFar, parent) => {
      if (timer || !/window: \d+ s of the schedule/.test(soFar)) return;
      windowAt = performance.now();
      probe(parent);
      timer = setInterval(() => probe(parent), PROBE_EVERY_MS);
    },
  });
  if (timer) clearInterval(timer);
  await probing;
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
      `read p99 ${f2(doc.summary.reads.latencyMs.p99, ' ms')} (the probes' collections included); reconciliation ${x.reconciliation ? (x.reconciliation.ok ? 'ok' : 'FAILED') : 'n/a'}` +
      (x.cpu.share ? `; other processes ${x.cpu.share.other.toFixed(0)}% of 200%${x.cpu.contended ? ' !!! contended !!!' : ''}` : ''),
  );
  const names = Object.keys(pm.residentBytes);
  console.log(`  resident memory (MB) a minute apart, as collections leave it: ${['t (s)', ...names].join(' | ')}`);
  let nextAt = 0;
  pm.atSeconds.forEach((at, i) => {
    if (at < nextAt && i !== pm.atSeconds.length - 1) return;
    nextAt = at + 60;
    console.log(`    ${[at.toFixed(0), ...names.map((n) => (pm.residentBytes[n][i] / 1e6).toFixed(1))].join(' | ')}`);
  });
  const verdicts = [...heaps].map(([name, points]) => {
    const end = points[points.length - 1];
    const half = points.filter((p) => p.at >= end.at / 2).map((p): [number, number] => [p.at, p.h.heapUsed]);
    const growth = half.length >= 2 ? linearRegression(half).m * (half[half.length - 1][0] - half[0][0]) : NaN;
    const level = Number.isFinite(growth) && growth < LEVEL_SHARE * points[0].h.heapUsed;
    return `${name} ${formatBytes(points[0].h.heapUsed)} -> ${formatBytes(end.h.heapUsed)} (${Number.isFinite(growth) ? `${growth >= 0 ? '+' : '-'}${formatBytes(Math.abs(growth))}` : 'n/a'} over the second half): ${level ? 'levels off' : 'GROWS'}`;
  });
  console.log(
    `  RESULT soak: ${(x.mapping.wallSeconds / 60).toFixed(0)} min of mixed traffic; the heap after a full collection: ${verdicts.join('; ') || 'not probed'} ` +
      `(levels off: under ${LEVEL_SHARE * 100}% growth over the second half)`,
  );
}
