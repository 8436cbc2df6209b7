// A real Redis Cluster for a test file: N masters (no replicas) started from the installed
// redis-server on free high ports, slots split by `redis-cli --cluster create` into equal ranges,
// ready once every node reports cluster_state:ok and the same N masters. stop() kills them and
// removes their directory; it also runs if the test process exits without calling it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** Why no cluster can be started here (no redis-server or redis-cli on PATH), else null. */
export function clusterUnavailable(): string | null {
  for (const bin of ['redis-server', 'redis-cli']) {
    const r = spawnSync(bin, ['--version'], { stdio: 'ignore' });
    if (r.error || r.status !== 0) return `${bin} is not installed (${r.error?.message ?? `exit ${r.status}`})`;
  }
  return null;
}

export interface LocalCluster {
  readonly ports: number[];
  /** `127.0.0.1:P1,127.0.0.1:P2,...`: the REDIS_CLUSTER_NODES value. */
  readonly seeds: string;
  readonly dir: string;
  /** A plain connection to each node, by port (for asserting where keys are). */
  node(port: number): Redis;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** N ports P with P and the cluster bus port P + 10000 free. */
async function freePorts(n: number): Promise<number[]> {
  const out: number[] = [];
  for (let tries = 0; out.length < n && tries < 500; tries++) {
    const p = 20_000 + Math.floor(Math.random() * 30_000);
    if (out.some((q) => Math.abs(q - p) < 2)) continue;
    if ((await portFree(p)) && (await portFree(p + 10_000))) out.push(p);
  }
  if (out.length < n) throw new Error(`found only ${out.length} of ${n} free port pairs`);
  return out;
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    await sleep(50);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (${(last as Error).message})` : ''}`);
}

export async function startLocalCluster(masters = 3): Promise<LocalCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'feedlab-cluster-'));
  const children: ChildProcess[] = [];
  const clients = new Map<number, Redis>();
  let stopped = false;
  const killAll = () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  };
  process.once('exit', killAll);

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    for (const c of clients.values()) c.disconnect();
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            const t = setTimeout(() => c.kill('SIGKILL'), 3_000);
            c.once('exit', () => {
              clearTimeout(t);
              resolve();
            });
            c.kill('SIGTERM');
          }),
      ),
    );
    process.removeListener('exit', killAll);
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const ports = await freePorts(masters);
    for (const port of ports) {
      const child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`),
          '--cluster-node-timeout', '5000', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', '--logfile', join(dir, `redis-${port}.log`)],
        { stdio: 'ignore' },
      );
      children.push(child);
    }
    const node = (port: number) => {
      let c = clients.get(port);
      if (!c) {
        c = new Redis({ host: '127.0.0.1', port, lazyConnect: false, retryStrategy: () => null, maxRetriesPerRequest: 0 });
        c.on('error', () => {});
        clients.set(port, c);
      }
      return c;
    };
    const logs = () => ports.map((p) => { try { return readFileSync(join(dir, `redis-${p}.log`), 'utf8').slice(-500); } catch { return ''; } }).join('\n');
    for (const port of ports) {
      await waitFor(`redis-server on ${port}`, async () => {
        const probe = new Redis({ host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
        probe.on('error', () => {});
        try {
          await probe.connect();
          return (await probe.ping()) === 'PONG';
        } finally {
          probe.disconnect();
        }
      }, 10_000).catch((err) => {
        throw new Error(`${(err as Error).message}; logs: ${logs()}`);
      });
    }
    const create = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed (${create.status}): ${create.stdout.slice(-800)} ${create.stderr.slice(-800)}`);
    await waitFor(
      'cluster_state:ok and every master known on every node',
      async () => {
        for (const port of ports) {
          const info = await node(port).cluster('INFO');
          if (!/cluster_state:ok/.test(info) || !new RegExp(`cluster_known_nodes:${masters}\\b`).test(info)) return false;
          const slots = (await node(port).cluster('SLOTS')) as unknown[];
          if (slots.length !== masters) return false;
        }
        return true;
      },
      30_000,
    );
    return { ports, seeds: ports.map((p) => `127.0.0.1:${p}`).join(','), dir, node, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
