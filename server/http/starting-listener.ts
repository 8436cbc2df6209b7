// What `feedlab serve` answers on its port while a service it needs is down at start-up
// (server/start-up.ts waits for it): the process is alive (GET /healthz 200), not ready (GET /readyz
// 503 naming what it waits for), and every other request is a 503 with Retry-After in the one error
// shape. A load balancer or an orchestrator sees a server starting, not a refused port. Once the
// services answer it is closed and the real server listens on the same port (a connection arriving
// in the few ms between the two is refused). Connections are not kept alive, so closing is at once.
import { createServer, STATUS_CODES, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorBody } from './errors.js';

export interface StartingListener {
  /** The port it took (the one asked for, or the one picked for 0). */
  readonly port: number;
  readonly url: string;
  /** What it is waiting for, said in /readyz and in every 503 (the latest start-up failure). */
  waitingFor(reason: string): void;
  close(): Promise<void>;
}

export async function listenWhileStarting(host: string, port: number, retryAfterSeconds: number, reason: string): Promise<StartingListener> {
  let waiting = reason;
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?', 1)[0];
    const send = (status: number, body: string, headers: Record<string, string> = {}) => {
      response.writeHead(status, STATUS_CODES[status], { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), connection: 'close', ...headers });
      response.end(body);
    };
    // the request's body is not read: the connection closes after the answer
    if (request.method === 'GET' && path === '/healthz') send(200, JSON.stringify({ status: 'starting' }));
    else if (request.method === 'GET' && path === '/readyz') send(503, errorBody(`not ready: starting, waiting for ${waiting}`), { 'retry-after': String(retryAfterSeconds) });
    else send(503, errorBody(`the server is starting, waiting for ${waiting}; retry shortly`), { 'retry-after': String(retryAfterSeconds) });
  });
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const taken = (server.address() as AddressInfo).port;
  return {
    port: taken,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${taken}`,
    waitingFor: (r) => (waiting = r),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
