// The server benchmark's wrk confirmation (bench/server-wrk.ts): wrk's report read right (its
// rate, percentiles in every unit it prints, failed answers), the Lua script's bearer tokens, and,
// where Debian's wrk is installed, a real run against a node:http server that counts the tokens it
// was sent and answers 401 to a request without one.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWrk, wrkMs, wrkReads, wrkScript, wrkVersion } from '../../bench/server-wrk.js';
import { CpuMeter } from '../../sim/replay/cpu.js';

const REPORT = `Running 5s test @ http://127.0.0.1:40123
  1 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     5.12ms    1.23ms  30.01ms   90.00%
    Req/Sec    12.52k   500.00    13.00k    80.00%
  Latency Distribution
     50%  812.00us
     75%    5.50ms
     90%    6.20ms
     99%    1.02s
  62345 requests in 5.00s, 50.12MB read
  Socket errors: connect 0, read 2, write 0, timeout 5
  Non-2xx or 3xx responses: 12
Requests/sec:  12468.20
Transfer/sec:     10.02MB
`;

describe('wrk report', () => {
  it('reads the rate, the p50 and p99 in their units, and the failed answers', () => {
    expect(parseWrk(REPORT)).toEqual({ rate: 12468.2, p50Ms: 0.812, p99Ms: 1020, non2xx: 12, socketErrors: 7 });
    expect([wrkMs('1.5m'), wrkMs('3.00s'), wrkMs('250us'), wrkMs('7ms'), wrkMs('fast')]).toEqual([90_000, 3_000, 0.25, 7, NaN]);
  });

  it('counts a clean run as no failures, and refuses a report without a rate', () => {
    const clean = REPORT.replace(/ {2}Socket errors.*\n {2}Non-2xx.*\n/, '');
    expect(parseWrk(clean)).toMatchObject({ non2xx: 0, socketErrors: 0 });
    expect(() => parseWrk('unable to connect to 127.0.0.1:1 Connection refused')).toThrow(/no rate/);
  });

  it('writes every token into the script, stripped of anything that could end a Lua string', () => {
    const s = wrkScript('/v1/feed?limit=20', ['a.b_c-1', 'x"); os.exit() --']);
    expect(s).toContain('"a.b_c-1"');
    expect(s).toContain('"xos.exit--"');
    expect(s).toContain('wrk.format("GET", "/v1/feed?limit=20"');
  });
});

const WRK = wrkVersion();
if (!WRK) console.warn('\n!!! SKIPPED the live wrk run of test/bench/server-wrk.test.ts: wrk is not installed (apt-get install wrk) !!!\n');

describe.skipIf(!WRK)('wrk against a server', () => {
  let server: Server;
  const seen = new Map<string, number>();
  beforeAll(async () => {
    server = createServer((req, res) => {
      const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (!token) return res.writeHead(401).end();
      seen.set(token, (seen.get(token) ?? 0) + 1);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"posts":[]}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('sends every reader\'s token, all answered 2xx, and names its own CPU', async () => {
    const tokens = ['t0', 't1', 't2', 't3', 't4'];
    const cpu = new CpuMeter(null, process.pid, 0, null);
    const r = await wrkReads({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, path: '/v1/feed', tokens, connections: 4, seconds: 1, cpu, serverPid: process.pid });
    expect(r.non2xx + r.socketErrors).toBe(0);
    expect(r.rate).toBeGreaterThan(100);
    expect([...seen.keys()].sort()).toEqual(tokens);
    expect(r.cpu.processes.wrk).toBeGreaterThan(0);
    expect(r.version).toMatch(/^wrk /);
  });
});
