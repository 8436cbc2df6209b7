import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuMeter, formatCpu } from '../../../sim/replay/cpu.js';
import { autocannonClosedLoop, ownClosedLoop, type SaturationFigure } from '../../../sim/replay/saturation.js';

// A trivial feed server in a child process (the client's CPU is this process's: the server must
// not be in it). It answers GET /v1/feed with a small page when the bearer token is there (401
// otherwise) and counts the distinct tokens it saw, readable (and reset) at /stats.
const SERVER = `
const http = require('node:http');
let tokens = new Set();
const page = JSON.stringify({ posts: [{ id: '1', authorId: 1, text: 'hello', createdAt: 1 }], nextCursor: null });
const server = http.createServer((req, res) => {
  if (req.url === '/stats') {
    const body = JSON.stringify({ tokens: tokens.size });
    tokens = new Set();
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    return res.end(body);
  }
  const m = /^Bearer (u\\d+)$/.exec(req.headers.authorization || '');
  if (!m || !req.url.startsWith('/v1/feed?limit=20')) { res.writeHead(401, { 'content-length': 0 }); return res.end(); }
  tokens.add(m[1]);
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(page) });
  res.end(page);
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

let child: ChildProcess;
let sleeper: ChildProcess;
let port = 0;
beforeAll(async () => {
  child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  sleeper = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60000)'], { stdio: 'ignore' });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  port = Number(chunk.toString().trim());
});
afterAll(() => {
  child?.kill();
  sleeper?.kill();
});

async function distinctTokens(): Promise<number> {
  const r = await fetch(`http://127.0.0.1:${port}/stats`);
  return ((await r.json()) as { tokens: number }).tokens;
}

describe('closed-loop saturation', () => {
  it('measures a trivial server with our closed loop and with autocannon, on the same rotating users', async () => {
    const reads = Array.from({ length: 200 }, (_, u) => ({ path: '/v1/feed?limit=20', token: `u${u}` }));
    const opts = { host: '127.0.0.1', port, reads, connections: 16, durationMs: 2_000, warmupMs: 1_000 };
    await distinctTokens();
    // Where the CPU went meanwhile, by named process (the server and an idle bystander).
    const meter = new CpuMeter(null, null, 0, null);
    meter.setProcesses(new Map([['server', child.pid!], ['idle bystander', sleeper.pid!]]));
    const before = await meter.snapshot();
    const own = await ownClosedLoop(opts);
    const share = meter.share(before, await meter.snapshot());
    const ownTokens = await distinctTokens();
    const ac = await autocannonClosedLoop(opts);
    const acTokens = await distinctTokens();
    const check = (f: SaturationFigure, tool: string) => {
      expect(f.tool).toBe(tool);
      expect(f.connections).toBe(16);
      expect(f.seconds).toBeGreaterThanOrEqual(2);
      expect(f.completed).toBeGreaterThan(1_000);
      expect(f.rate).toBeCloseTo(f.completed / f.seconds, 6);
      expect(f.errors).toBe(0);
      expect(f.non2xx).toBe(0);
      expect(f.p99Ms).toBeGreaterThanOrEqual(f.p50Ms);
      expect(f.clientCpuSeconds).toBeGreaterThan(0);
      expect(f.clientCpuMicrosPerRequest).toBeCloseTo((f.clientCpuSeconds * 1e6) / f.completed, 6);
      // A closed-loop client on this machine spends a few µs to a few hundred µs per request, not ms.
      expect(f.clientCpuMicrosPerRequest).toBeLessThan(2_000);
    };
    expect(share.server).toBe(share.processes.server);
    expect(share.server).toBeGreaterThan(20); // % of a core: the server answered thousands per second
    expect(share.processes['idle bystander']).toBeLessThan(5);
    expect(share.generator).toBeGreaterThan(5);
    expect(share.wallSeconds).toBeGreaterThan(2.5);
    expect(formatCpu(share)).toMatch(/server \d+%, idle bystander \d+%, load generator \d+%/);
    check(own, 'feedlab');
    check(ac, 'autocannon');
    // Both rotated through every user (warm-up included), not one token per connection.
    expect(ownTokens).toBe(200);
    expect(acTokens).toBe(200);
    // The same closed loop against the same server: the same order of magnitude.
    expect(own.rate / ac.rate).toBeGreaterThan(0.33);
    expect(own.rate / ac.rate).toBeLessThan(3);
    console.log(
      [own, ac]
        .map((f) => `${f.tool}: ${Math.round(f.rate)} req/s, p50 ${f.p50Ms.toFixed(2)} ms, p99 ${f.p99Ms.toFixed(2)} ms, client cpu ${f.clientCpuMicrosPerRequest.toFixed(1)} µs/request`)
        .join('\n'),
    );
  });

  it('refuses an empty set of reads', async () => {
    await expect(ownClosedLoop({ host: '127.0.0.1', port, reads: [], connections: 1, durationMs: 100 })).rejects.toThrow(/at least one read/);
    await expect(autocannonClosedLoop({ host: '127.0.0.1', port, reads: [], connections: 1, durationMs: 100 })).rejects.toThrow(/at least one read/);
  });
});
