// The server benchmark's `feedlab serve` children (bench/server.ts starts one, and a second for the
// two instances of bench/server-instances.ts): exactly what an operator runs, in a process of its
// own, on the bench's schema and keys, its output kept for a failed start or a diagnosis.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { secs, stopChild } from './harness.js';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '../cli/main.js');

/** A running `feedlab serve` child: its process, address, output lines, and how to stop it. */
export interface ServerChild {
  proc: ChildProcess;
  host: string;
  port: number;
  lines: string[];
  stop(): Promise<void>;
}

/** Where a server child serves: the bench's schema and key prefix, its token secret and threshold, and its id in post ids (distinct per instance). */
export interface ServerChildSettings {
  schema: string;
  prefix: string;
  tokenSecret: string;
  threshold: number;
  nodeId: number;
}

/** `feedlab serve` in a child process; resolves once it listens (throws, the child stopped, if it does not within 30 s). */
export async function startServerChild({ schema, prefix, tokenSecret, threshold, nodeId }: ServerChildSettings): Promise<ServerChild> {
  const t0 = performance.now();
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('FEED_')) env[k] = v;
  env.FEED_TOKEN_SECRET = tokenSecret;
  // Diagnosis only (e.g. "FEED_FOLLOWEE_TTL_MS=600000"): extra settings for the server process.
  for (const kv of (process.env.FEEDLAB_BENCH_SERVER_ENV ?? '').split(/\s+/).filter(Boolean)) {
    const eq = kv.indexOf('=');
    if (eq > 0) env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  const args = [CLI, 'serve', '--port', '0', '--host', '127.0.0.1', '--schema', schema, '--key-prefix', prefix, '--stream-prefix', `${prefix}events`, '--threshold', String(threshold), '--node-id', String(nodeId)];
  // Diagnosis only (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"): node flags for the server process.
  const nodeArgs = (process.env.FEEDLAB_BENCH_SERVER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const proc = spawn(process.execPath, [...nodeArgs, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let partial = '';
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => {
    const parts = (partial + d).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
    if (lines.length > 20_000) lines.splice(0, lines.length - 20_000);
  });
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
    lines.push(...d.split('\n').filter(Boolean).map((l) => `stdout: ${l}`));
    if (lines.length > 20_000) lines.splice(0, lines.length - 20_000);
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const killOnExit = () => proc.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.off('exit', killOnExit);
    await stopChild(proc, exited);
    // Diagnosis only: the server's output (with e.g. --trace-gc in FEEDLAB_BENCH_SERVER_NODE_ARGS).
    if (process.env.FEEDLAB_BENCH_SERVER_LOG) writeFileSync(process.env.FEEDLAB_BENCH_SERVER_LOG, lines.join('\n') + '\n');
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const m = lines.map((l) => /listening on http:\/\/([0-9.]+):(\d+)/.exec(l)).find((x) => x);
    if (m) {
      console.log(`server: \`node dist/cli/main.js serve --threshold ${threshold} --node-id ${nodeId} ...\` (child process ${proc.pid}) listening on ${m[1]}:${m[2]} after ${secs(t0).toFixed(1)} s`);
      return { proc, host: m[1], port: Number(m[2]), lines, stop };
    }
    if (proc.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the server did not start (exit ${proc.exitCode}):\n  ${lines.slice(-20).join('\n  ')}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
