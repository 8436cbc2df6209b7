// The server benchmark's second opinion: the closed-loop maximum of feed reads measured again with
// a client nobody here wrote, Debian's `wrk` (a C load generator on its own event loop), whose Lua
// script signs each request with a reader's bearer token. Its CPU is read from /proc while it runs
// and printed beside the server's, so no side's load generator hides in "other".
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CpuMeter, CpuShare } from '../sim/replay/cpu.js';

export interface WrkResult {
  rate: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers other than 2xx/3xx, and socket errors (connect, read, write, timeout). */
  non2xx: number;
  socketErrors: number;
  cpu: CpuShare;
  version: string;
}

/** `wrk -v`'s first line, or null when wrk is not installed. */
export function wrkVersion(): string | null {
  const r = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  if (r.error) return null;
  return (r.stdout + r.stderr).split('\n')[0].trim() || 'wrk';
}

/** A Lua script for wrk: GET `path` as the readers in turn (a stride through them, as the in-house client draws them uniformly). */
export function wrkScript(path: string, tokens: readonly string[]): string {
  const list = tokens.map((t) => `"${t.replace(/[^A-Za-z0-9._-]/g, '')}"`).join(',\n');
  return `local tokens = {\n${list}\n}
local n = #tokens
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", "${path}", { ["Authorization"] = "Bearer " .. tokens[(i * 7919) % n + 1] })
end
`;
}

/** Milliseconds from wrk's latency notation (e.g. 812.00us, 1.20ms, 2.01s). */
export function wrkMs(text: string): number {
  const m = /^([0-9.]+)(us|ms|s|m)$/.exec(text.trim());
  if (!m) return NaN;
  const v = Number(m[1]);
  return m[2] === 'us' ? v / 1000 : m[2] === 'ms' ? v : m[2] === 's' ? v * 1000 : v * 60_000;
}

/** The figures of wrk's --latency report. */
export function parseWrk(out: string): Pick<WrkResult, 'rate' | 'p50Ms' | 'p99Ms' | 'non2xx' | 'socketErrors'> {
  const rate = Number(/Requests\/sec:\s+([0-9.]+)/.exec(out)?.[1] ?? NaN);
  const p50Ms = wrkMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? '');
  const p99Ms = wrkMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? '');
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const s = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const socketErrors = s ? Number(s[1]) + Number(s[2]) + Number(s[3]) + Number(s[4]) : 0;
  if (!(rate > 0)) throw new Error(`wrk printed no rate:\n${out}`);
  return { rate, p50Ms, p99Ms, non2xx, socketErrors };
}

/**
 * `wrk -t1 -c<connections> -d<seconds>s --latency` against the server, one thread as the in-house
 * client has one event loop. The meter names wrk as a process while it runs (its CPU read every
 * 100 ms, so that it counts up to its exit) and the server's naming is put back afterwards.
 */
export async function wrkReads(o: { host: string; port: number; path: string; tokens: readonly string[]; connections: number; seconds: number; cpu: CpuMeter; serverPid: number }): Promise<WrkResult> {
  const version = wrkVersion();
  if (!version) throw new Error('wrk is not installed (Debian: apt-get install wrk)');
  const dir = mkdtempSync(join(tmpdir(), 'feedlab-wrk-'));
  try {
    const script = join(dir, 'feed.lua');
    writeFileSync(script, wrkScript(o.path, o.tokens));
    const proc = spawn('wrk', ['-t1', `-c${o.connections}`, `-d${o.seconds}s`, '--latency', '-s', script, `http://${o.host}:${o.port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    proc.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    o.cpu.setProcesses(new Map([['server', o.serverPid], ['wrk', proc.pid!]]));
    const a = await o.cpu.snapshot();
    const poll = setInterval(() => o.cpu.remember(), 100);
    const code = await exited;
    clearInterval(poll);
    const b = await o.cpu.snapshot();
    o.cpu.setProcesses(new Map([['server', o.serverPid]]));
    if (code !== 0) throw new Error(`wrk exited ${code}:\n${out}`);
    return { ...parseWrk(out), cpu: o.cpu.share(a, b), version };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
