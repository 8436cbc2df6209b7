// The server benchmark's floor: a bare node:http server doing a feed read's Redis work and nothing
// else, in a process of its own as `feedlab serve` is. GET /v1/feed answers the bearer token's
// reader with the ceiling's read (bench/server-ceiling.ts: one pipeline of lease renewals, slices
// and the follows token, then one MGET of the page's bodies) and the cached bodies spliced into the
// JSON as they are. No framework, auth check, schema, metrics, cursor or fallback: what is left of a
// read's p99 here at the same offered rate is what the machine, Node's event loop and Redis cost,
// the floor the reference server's half-load p99 is held against; its closed-loop maximum, what
// node:http reaches on the same cores, is the floor the server's maximum is held against.
//
// As a child: `node dist/bench/bare-server.js CONFIG.json` prints `bare listening on HOST:PORT`.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { stopChild } from './harness.js';
import { ceilingRead, type CeilingJob } from './server-ceiling.js';

export type BareConfig = Pick<CeilingJob, 'redisUrl' | 'lists' | 'tokens' | 'bodyPrefix' | 'page' | 'fetch' | 'leaseMs'> & {
  /** The bearer token of each reader, in the order of `lists`. */
  bearers: string[];
};

async function serve(config: BareConfig): Promise<void> {
  const redis = new Redis(config.redisUrl, { lazyConnect: true, connectionName: 'feedlab-bench-bare' });
  await redis.connect();
  const readerOf = new Map(config.bearers.map((t, u) => [t, u]));
  const server = createServer((req, res) => {
    const u = readerOf.get((req.headers.authorization ?? '').slice('Bearer '.length));
    if (u === undefined || !req.url?.startsWith('/v1/feed')) {
      res.writeHead(u === undefined ? 401 : 404).end();
      return;
    }
    ceilingRead(redis, config, config.lists[u], config.tokens[u]).then(
      (bodies) => {
        const body = `{"posts":[${bodies.filter((b) => b !== null).join(',')}],"nextCursor":null}`;
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
      },
      (err: Error) => res.writeHead(500).end(err.message),
    );
  });
  server.keepAliveTimeout = 75_000;
  server.listen(0, '127.0.0.1', () => {
    const a = server.address() as AddressInfo;
    console.log(`bare listening on ${a.address}:${a.port}`);
  });
  process.once('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    redis.disconnect();
  });
}

/** How long the floor may take to listen (it connects to Redis first). */
const START_TIMEOUT_MS = 30_000;

/** Start the floor in a child process; resolves once it listens. The child is killed if this process exits first. */
export async function startBareServer(config: BareConfig, configPath: string): Promise<{ proc: ChildProcess; host: string; port: number; stop(): Promise<void> }> {
  // the config holds bearer tokens: it is read once at the child's start and removed
  writeFileSync(configPath, JSON.stringify(config), { mode: 0o600 });
  const proc = spawn(process.execPath, [fileURLToPath(import.meta.url), configPath], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const killOnExit = () => proc.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.off('exit', killOnExit);
    rmSync(configPath, { force: true });
    await stopChild(proc, exited);
  };
  let timer: NodeJS.Timeout | undefined;
  const listening = await new Promise<RegExpExecArray | null>((resolve) => {
    let out = '';
    proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /bare listening on ([0-9.]+):(\d+)/.exec(out);
      if (m) resolve(m);
    });
    void exited.then(() => resolve(null));
    timer = setTimeout(() => resolve(null), START_TIMEOUT_MS);
  });
  clearTimeout(timer);
  if (!listening) {
    await stop();
    throw new Error(`the bare floor server did not start within ${START_TIMEOUT_MS / 1000} s`);
  }
  rmSync(configPath, { force: true });
  return { proc, host: listening[1], port: Number(listening[2]), stop };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  serve(JSON.parse(readFileSync(process.argv[2], 'utf8')) as BareConfig).catch((err: Error) => {
    console.error(`bare floor server: ${err.message}`);
    process.exit(1);
  });
}
