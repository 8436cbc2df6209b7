// The replay's fault proxy against an echo server of the test's: bytes pass untouched; a reset
// resets every open connection and every new one until restored; a hang passes nothing either way
// and holds new connections, then delivers what was sent meanwhile, in order, once restored.
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FaultProxy } from '../../../cli/replay/fault-proxy.js';

let echo: Server;
let proxy: FaultProxy;

beforeEach(async () => {
  // the proxy resets the service's side too: the echo's sockets ignore it
  echo = createServer((s) => s.on('error', () => undefined).pipe(s));
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
  const front = await FaultProxy.inFront(`redis://127.0.0.1:${(echo.address() as AddressInfo).port}`, 6379);
  proxy = front.proxy;
  expect(front.url).toBe(`redis://127.0.0.1:${proxy.port}`);
});

afterEach(async () => {
  await proxy.close();
  await new Promise<void>((r) => echo.close(() => r()));
});

/** A client of the proxy: what it received so far, and how it ended. */
function client(): { socket: Socket; received: () => string; ended: Promise<string> } {
  const socket = connect({ host: '127.0.0.1', port: proxy.port });
  let got = '';
  socket.setEncoding('utf8').on('data', (d: string) => (got += d));
  const ended = new Promise<string>((resolve) => {
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    socket.once('close', () => resolve('closed'));
  });
  return { socket, received: () => got, ended };
}

async function until(check: () => boolean, ms = 2000): Promise<void> {
  for (const end = Date.now() + ms; !check(); ) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('FaultProxy', () => {
  it('passes bytes both ways', async () => {
    const c = client();
    c.socket.write('PING\r\n');
    await until(() => c.received() === 'PING\r\n');
    expect(proxy.accepted).toBe(1);
    expect(proxy.connections).toBe(1);
    c.socket.destroy();
  });

  it('reset: open connections are reset, new ones reset on arrival; restore lets new ones through', async () => {
    const open = client();
    open.socket.write('a');
    await until(() => open.received() === 'a');
    proxy.cut();
    expect(await open.ended).toBe('ECONNRESET');
    expect(proxy.isUp).toBe(false);
    const refused = client();
    expect(await refused.ended).toBe('ECONNRESET');
    expect(proxy).toMatchObject({ cutOff: 1, refused: 1 });
    proxy.restore();
    const again = client();
    again.socket.write('b');
    await until(() => again.received() === 'b');
    again.socket.destroy();
  });

  it('hang: nothing flows on open or new connections; restore delivers what was sent meanwhile, in order', async () => {
    const open = client();
    open.socket.write('1');
    await until(() => open.received() === '1');
    proxy.hang();
    open.socket.write('2');
    const late = client();
    late.socket.write('x');
    await settle(300);
    expect(open.received()).toBe('1');
    expect(late.received()).toBe('');
    expect(proxy.held).toBe(1);
    expect(proxy.connections).toBe(2);
    open.socket.write('3');
    proxy.restore();
    await until(() => open.received() === '123' && late.received() === 'x');
    // and the path is whole again
    open.socket.write('4');
    await until(() => open.received() === '1234');
    open.socket.destroy();
    late.socket.destroy();
  });

  it('hangReplies: requests arrive, answers are held until restore', async () => {
    let arrived = '';
    echo.removeAllListeners('connection');
    echo.on('connection', (s) => s.on('error', () => undefined).on('data', (d) => ((arrived += d.toString()), s.write(d))));
    const c = client();
    c.socket.write('q1');
    await until(() => c.received() === 'q1');
    proxy.hangReplies();
    c.socket.write('q2');
    await until(() => arrived === 'q1q2');
    await settle(200);
    expect(c.received()).toBe('q1');
    proxy.restore();
    await until(() => c.received() === 'q1q2');
    c.socket.destroy();
  });
});
