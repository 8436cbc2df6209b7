// Run the built CLI (dist/, built by `npm test` before vitest) as a user would, or its program in this process.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Redis } from 'ioredis';
import { expect, vi } from 'vitest';
import { runCli } from '../../cli/program.js';

export const ROOT = resolve(import.meta.dirname, '../..');
const MAIN = join(ROOT, 'dist/cli/main.js');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function feedlab(args: string[], opts: { cwd?: string; timeoutMs?: number } = {}): CliRun {
  const r = spawnSync(process.execPath, [MAIN, ...args], { cwd: opts.cwd ?? ROOT, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: opts.timeoutMs ?? 300_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

export function scratchDir(): string {
  return mkdtempSync(join(tmpdir(), 'feedlab-test-'));
}

export function writeScenario(dir: string, name: string, yaml: string): string {
  const path = join(dir, name);
  writeFileSync(path, yaml);
  return path;
}

/** A small scenario that runs in about a second. */
export const SMALL = `name: small
seed: 11
duration: 20m
population: 2000000
graph:
  generate: { users: 20000, avgFollows: 40, alpha: 2.1, celebrities: [{ count: 2, followers: 0.3, name: star }] }
activity:
  postsPerUserPerDay: { dist: lognormal, mean: 3, sigma: 1 }
  sessionsPerUserPerDay: 5
  dormantShare: 0.5
  diurnal: none
events:
  - at: 5m
    celebrityBurst: { accounts: 2, window: 30s }
infrastructure: { fanoutWorkers: 8, writesPerSecondPerWorker: 5000, redisShards: 8 }
policy: { kind: threshold, threshold: 25000 }
slo: { fanoutLagP99: 5s, readP99: 100ms, redisMemory: 1TB }
`;

/** The single line a bad input prints on stderr (no stack trace), for matching. */
export function oneLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at /);
  return lines[0];
}

/** Each command line is a bad input: exit 2, one line on stderr matching its pattern, nothing on stdout. */
export function expectInputErrors(cases: Array<[string[], RegExp]>): void {
  for (const [args, pattern] of cases) {
    const r = feedlab(args);
    expect(r.code, args.join(' ')).toBe(2);
    expect(oneLine(r.stderr), args.join(' ')).toMatch(pattern);
    expect(r.stdout, args.join(' ')).toBe('');
  }
}

/** Every key under a prefix (a whole SCAN: the shared Redis may hold many others). */
export async function keysUnder(redis: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 10_000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

/** `feedlab ARGV` in this process (cli/program.ts): its exit code and what it wrote. */
export async function inProcess(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => ((out += String(chunk)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => ((err += String(chunk)), true));
  try {
    return { code: await runCli(argv), out, err };
  } finally {
    vi.restoreAllMocks();
  }
}
