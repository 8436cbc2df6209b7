// Graph generation, save and load at the issue's sizes, against its targets (1M users / 20M edges
// in < 5 s, 1M / 100M in < 30 s) and against igraph's Static_Power_Law on the same sizes, timed in
// the same run, in the library and through `feedlab graph generate` (start-up and the saved file
// included). Each measurement runs in its own process so that its peak RSS is its own.
//
//   node dist/bench/graph.js            the whole benchmark
//   npm run bench -- graph              the same, through bench/run.ts

import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadGraph, saveGraph } from '../sim/graph/file.js';
import { generateGraph } from '../sim/graph/generate.js';
import { runCli } from './harness.js';

const USERS = 1_000_000;
const ALPHA = 2.1;
/** igraph has no lognormal out-degree law; a power law of exponent 3 is the closest thin tail it offers. */
const IGRAPH_OUT_EXPONENT = 3;
const SIZES = [
  { follows: 20, target: 5 },
  { follows: 100, target: 30 },
];
const SELF = fileURLToPath(import.meta.url);
/** GNU time, for the CLI's peak RSS (a spawned child's is not reported); without it the CLI's wall time only. */
const GNU_TIME = '/usr/bin/time';

interface Measured {
  seconds: number;
  edges: number;
  maxRssMB: number;
  saveSeconds?: number;
  loadSeconds?: number;
}

export async function benchGraph(): Promise<void> {
  const python = igraphPython();
  for (const { follows, target } of SIZES) {
    const label = `${USERS / 1e6}M users / ${(USERS * follows) / 1e6}M edges`;
    const ours = child(['generate', String(follows), follows === 100 ? 'save-load' : '']);
    if (!ours) {
      console.log(`graph generate ${label}: FAILED (see stderr)`);
      continue;
    }
    console.log(
      `graph generate ${label}: ${ours.seconds.toFixed(2)} s, peak RSS ${ours.maxRssMB.toFixed(0)} MB, ${fmt(ours.edges)} edges; target ${target} s, ratio ${(ours.seconds / target).toFixed(2)} (< 1 meets it)`,
    );
    if (ours.saveSeconds !== undefined) {
      console.log(`graph save+load ${label}: save ${ours.saveSeconds.toFixed(2)} s, load ${ours.loadSeconds!.toFixed(2)} s (${(ours.edges * 8 / 1e9).toFixed(2)} GB of edge ids)`);
    }
    const cli = await throughCli(follows);
    if (cli) {
      console.log(
        `feedlab graph generate ${label}, the file saved: ${cli.seconds.toFixed(2)} s wall from the command's start to its exit${Number.isFinite(cli.maxRssMB) ? `, peak RSS ${cli.maxRssMB.toFixed(0)} MB` : ''}; CLI/library ${(cli.seconds / ours.seconds).toFixed(2)}${cli.edges === ours.edges ? '' : ` !!! ${fmt(cli.edges)} edges, not the library's ${fmt(ours.edges)}`}`,
      );
    } else console.log(`feedlab graph generate ${label}: FAILED (see stderr)`);
    if (python) {
      const ig = runIgraph(python, USERS, USERS * follows);
      if (ig) {
        console.log(
          `igraph Static_Power_Law(${USERS}, ${USERS * follows}, ${IGRAPH_OUT_EXPONENT}, ${ALPHA}) ${label}: ${ig.seconds.toFixed(2)} s, peak RSS ${ig.maxRssMB.toFixed(0)} MB; ours/igraph ${(ours.seconds / ig.seconds).toFixed(3)} (${(ig.seconds / ours.seconds).toFixed(1)}x)${cli ? `, through the CLI ${(cli.seconds / ig.seconds).toFixed(3)} (${(ig.seconds / cli.seconds).toFixed(1)}x)` : ''}`,
        );
      } else console.log(`igraph Static_Power_Law ${label}: FAILED or timed out`);
    }
  }
}

/** One measurement in a fresh process: returns what it printed as JSON. */
function child(args: string[]): Measured | null {
  const r = spawnSync(process.execPath, ['--max-old-space-size=8192', SELF, '--child', ...args.filter(Boolean)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 600_000 });
  if (r.status !== 0) return null;
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Measured;
}

function measureInChild(follows: number, saveLoad: boolean): Measured {
  const started = performance.now();
  const g = generateGraph({ users: USERS, avgFollows: follows, alpha: ALPHA, maxFollows: 5000, followsSigma: 1, seed: 1, celebrities: [] });
  const seconds = (performance.now() - started) / 1000;
  const out: Measured = { seconds, edges: g.edges, maxRssMB: process.resourceUsage().maxRSS / 1024 };
  if (saveLoad) {
    const path = join(tmpdir(), `feedlab-bench-${process.pid}.fgraph`);
    try {
      let t = performance.now();
      saveGraph(g, path);
      out.saveSeconds = (performance.now() - t) / 1000;
      t = performance.now();
      const back = loadGraph(path);
      out.loadSeconds = (performance.now() - t) / 1000;
      if (back.edges !== g.edges) throw new Error('loaded graph differs');
    } finally {
      rmSync(path, { force: true });
    }
  }
  return out;
}

/** `feedlab graph generate` of the same graph into a file, as a user runs it: its whole wall time (start-up and save included). */
async function throughCli(follows: number): Promise<Measured | null> {
  const path = join(tmpdir(), `feedlab-bench-cli-${process.pid}.fgraph`);
  const args = ['graph', 'generate', '--users', String(USERS), '--avg-follows', String(follows), '--alpha', String(ALPHA), '--seed', '1', '-o', path, '-q'];
  try {
    const r = await runCli(args, { timeoutMs: 600_000, prefix: existsSync(GNU_TIME) ? [GNU_TIME, '-f', 'maxrss-kb %M'] : [] });
    if (r.code !== 0) {
      process.stderr.write(r.stderr);
      return null;
    }
    const edges = Number(/([\d,]+) edges/.exec(r.stdout)?.[1]?.replaceAll(',', '') ?? NaN);
    const rss = Number(/maxrss-kb (\d+)/.exec(r.stderr)?.[1] ?? NaN);
    return { seconds: r.seconds, edges, maxRssMB: rss / 1024 };
  } finally {
    rmSync(path, { force: true });
  }
}

/** A python3 that can import igraph; tries Debian's python3-igraph once when none can. */
function igraphPython(): string | null {
  const candidates = ['python3', '/usr/bin/python3'];
  const find = () => candidates.find((py) => spawnSync(py, ['-c', 'import igraph'], { stdio: 'ignore' }).status === 0) ?? null;
  let python = find();
  if (!python) {
    const apt = spawnSync('apt-get', ['install', '-y', 'python3-igraph'], { stdio: 'ignore', timeout: 300_000 });
    python = find();
    if (!python) {
      console.log(`!!! IGRAPH NOT AVAILABLE: python3 cannot import igraph and "apt-get install -y python3-igraph" ${apt.error ? `could not run (${apt.error.message})` : `exited ${apt.status}`}; no igraph comparison in this run !!!`);
    }
  }
  return python;
}

const IGRAPH_SCRIPT = `
import sys, time, resource, json, igraph
n, m, eo, ei = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
t = time.perf_counter()
g = igraph.Graph.Static_Power_Law(n, m, eo, ei, loops=False, multiple=False, finite_size_correction=True)
dt = time.perf_counter() - t
print(json.dumps({"seconds": dt, "edges": g.ecount(), "maxRssMB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
`;

function runIgraph(python: string, n: number, m: number): Measured | null {
  const r = spawnSync(python, ['-c', IGRAPH_SCRIPT, String(n), String(m), String(IGRAPH_OUT_EXPONENT), String(ALPHA)], { encoding: 'utf8', timeout: 1_200_000 });
  if (r.status !== 0) return null;
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Measured;
}

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  if (args[0] === '--child') {
    const m = measureInChild(Number(args[2]), args[3] === 'save-load');
    process.stdout.write(JSON.stringify(m) + '\n');
  } else {
    await benchGraph();
  }
}
