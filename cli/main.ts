#!/usr/bin/env node
// The feedlab command line: one file per command under cli/commands.
import { EXIT_BAD_INPUT, EXIT_INFRASTRUCTURE, InfrastructureError, InputError } from './errors.js';

type Command = { run(argv: string[]): Promise<number>; summary: string };

const commands: Record<string, () => Promise<Command>> = {
  run: () => import('./commands/run.js'),
  sweep: () => import('./commands/sweep.js'),
  plan: () => import('./commands/plan.js'),
  report: () => import('./commands/report.js'),
  graph: () => import('./commands/graph.js'),
  estimate: () => import('./commands/estimate.js'),
  migrate: () => import('./commands/migrate.js'),
  'load-graph': () => import('./commands/load-graph.js'),
  token: () => import('./commands/token.js'),
  worker: () => import('./commands/worker.js'),
  serve: () => import('./commands/serve.js'),
  replay: () => import('./commands/replay.js'),
  calibrate: () => import('./commands/calibrate.js'),
  compare: () => import('./commands/compare.js'),
};

function help(): string {
  return [
    'feedlab: load simulation and capacity planning for social feeds',
    '',
    'usage: feedlab <command> [options]',
    '',
    '  estimate [SCENARIO] the documents\' back-of-envelope math, step by step (--preset, --set, --explain)',
    '  run SCENARIO        simulate a scenario: fan-out lag, writes/s, Redis memory, read latency, SLOs',
    '  sweep SCENARIO      simulate several fan-out policies and recommend the cheapest that meets every SLO',
    '  plan SCENARIO       a capacity plan: workers, Redis memory and shards, partitions, API, Postgres (--growth, --headroom)',
    '  replay SCENARIO     drive the reference server with the scenario and measure it for real (--policies for a live sweep)',
    '  calibrate           measure the live stack\'s costs into calibration.yaml, which run, sweep, plan and replay take',
    '  compare SCENARIO    the estimate, the calibrated simulation and the replay of one scenario, figure by figure',
    '  compare A B         hold result document A (simulated) against B (measured): ratio, noise, verdict per figure',
    '  report RESULT.json  render a saved report.json again: report.md and a self-contained report.html',
    '  graph generate      generate a power-law follower graph',
    '  graph import FILE   import a SNAP/KONECT edge list',
    '  graph stats FILE    degree statistics and the fitted power-law tail',
    '  migrate             create or update the reference server\'s Postgres schema',
    '  load-graph GRAPH    bulk-load a graph into Postgres (users and follows, with COPY)',
    '  token USER          mint a bearer token for the reference server (FEED_TOKEN_SECRET)',
    '  serve               run the reference feed server (HTTP API, outbox relay; --with-worker)',
    '  worker              run fan-out workers (--concurrency N, --relay for the outbox relay)',
    '',
    'Every command takes --help. --debug prints stack traces.',
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const debug = argv.includes('--debug');
  const args = argv.filter((a) => a !== '--debug');
  const name = args[0];
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(help() + '\n');
    return name ? 0 : EXIT_BAD_INPUT;
  }
  if (name === '--version') {
    process.stdout.write('feedlab 0.1.0\n');
    return 0;
  }
  const load = commands[name];
  if (!load) {
    process.stderr.write(`feedlab: unknown command "${name}" (valid: ${Object.keys(commands).join(', ')})\n`);
    return EXIT_BAD_INPUT;
  }
  try {
    const command = await load();
    return await command.run(args.slice(1));
  } catch (err) {
    if (debug) process.stderr.write(`${(err as Error).stack}\n`);
    if (err instanceof InputError) {
      process.stderr.write(`feedlab: ${err.line()}\n`);
      return EXIT_BAD_INPUT;
    }
    if (err instanceof InfrastructureError) {
      process.stderr.write(`feedlab: ${err.message}\n`);
      return EXIT_INFRASTRUCTURE;
    }
    const bad = pathError(err);
    if (bad) {
      process.stderr.write(`feedlab: ${bad}\n`);
      return EXIT_BAD_INPUT;
    }
    if (!debug) process.stderr.write(`feedlab: internal error: ${(err as Error).message} (run with --debug for the stack)\n`);
    return 70;
  }
}

/** What a user gave that the file system refused (a directory for a file, a missing path, no permission), in one line; null for anything else. */
function pathError(err: unknown): string | null {
  const e = err as NodeJS.ErrnoException;
  if (!(err instanceof Error) || typeof e.path !== 'string') return null;
  const why: Record<string, string> = {
    EISDIR: 'is a directory, not a file',
    ENOTDIR: 'a part of the path is not a directory',
    ENOENT: 'no such file or directory',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
  };
  return e.code !== undefined && why[e.code] ? `${e.path}: ${why[e.code]}` : null;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`feedlab: ${String(err)}\n`);
    process.exitCode = 70;
  },
);
