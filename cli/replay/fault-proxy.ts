// A TCP proxy of feedlab's own between a replay's stack and one of its services (Redis or
// Postgres), on loopback only, to take the service out of reach for a while as a network does:
//  - reset: every connection is reset and new ones are reset on arrival (a crashed service, a
//    refused port); clients see errors at once and reconnect;
//  - hang: connections stay open and nothing flows either way, new ones are accepted and held
//    unconnected (a partition, a stalled host); clients see nothing until their own timeouts, and
//    what was sent meanwhile is delivered when the hang ends, as TCP would retransmit it.
// Tests use hangReplies (requests arrive, answers never come back: a commit whose client never
// hears of it).
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export type OutageMode = 'reset' | 'hang';

/** One proxied connection: the client's socket and the service's (null while held unconnected). */
interface Pair {
  client: Socket;
  upstream: Socket | null;
  /** Closes both sides and forgets the pair. */
  done: () => void;
}

export class FaultProxy {
  private server: Server | null = null;
  private readonly pairs = new Set<Pair>();
  private state: 'up' | 'reset' | 'hang' = 'up';
  private repliesHeld = false;
  port = 0;
  /** Connections accepted and passed on; reset on arrival during a reset; held during a hang; reset by cut(). */
  accepted = 0;
  refused = 0;
  held = 0;
  cutOff = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** A started proxy in front of a service's URL (redis:// or postgres://), and the URL through it. */
  static async inFront(url: string, defaultPort: number): Promise<{ proxy: FaultProxy; url: string }> {
    const base = new URL(url);
    const proxy = new FaultProxy(base.hostname, Number(base.port || defaultPort));
    await proxy.start();
    const through = new URL(base.href);
    through.hostname = '127.0.0.1';
    through.port = String(proxy.port);
    return { proxy, url: through.href };
  }

  async start(): Promise<number> {
    this.server = createServer({ noDelay: true }, (client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(0, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
    return this.port;
  }

  get isUp(): boolean {
    return this.state === 'up';
  }

  private accept(client: Socket): void {
    if (this.state === 'reset') {
      this.refused++;
      reset(client);
      return;
    }
    const pair: Pair = {
      client,
      upstream: null,
      done: () => {
        if (!this.pairs.delete(pair)) return;
        client.destroy();
        pair.upstream?.destroy();
      },
    };
    this.pairs.add(pair);
    client.on('error', pair.done).on('close', pair.done);
    if (this.state === 'hang') {
      this.held++;
      client.pause();
      return;
    }
    this.accepted++;
    this.link(pair);
  }

  /** Connects a pair's service side and lets bytes flow (answers stay held under hangReplies). */
  private link(pair: Pair): void {
    const upstream = connect({ host: this.targetHost, port: this.targetPort, noDelay: true });
    pair.upstream = upstream;
    upstream.on('error', pair.done).on('close', pair.done);
    pair.client.pipe(upstream);
    if (!this.repliesHeld) upstream.pipe(pair.client);
  }

  /** Every connection reset, new ones reset on arrival, until restore(). */
  cut(): void {
    this.state = 'reset';
    for (const p of [...this.pairs]) {
      this.cutOff++;
      reset(p.client);
      if (p.upstream) reset(p.upstream);
    }
    this.pairs.clear();
  }

  /** Nothing flows either way on any connection, new ones are held, until restore(). */
  hang(): void {
    this.state = 'hang';
    for (const { client, upstream } of this.pairs) {
      if (upstream === null) continue;
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  /** Requests still arrive and nothing comes back (committed, never heard of), until restore(). */
  hangReplies(): void {
    this.repliesHeld = true;
    for (const { client, upstream } of this.pairs) {
      if (upstream === null) continue;
      upstream.unpipe(client);
      upstream.pause();
    }
  }

  /** Back to passing everything: held connections are connected and what waited flows. */
  restore(): void {
    const wasHung = this.state === 'hang';
    this.state = 'up';
    const repliesWereHeld = this.repliesHeld;
    this.repliesHeld = false;
    for (const pair of this.pairs) {
      if (pair.upstream === null) {
        this.accepted++;
        this.link(pair);
        continue;
      }
      if (wasHung) pair.client.pipe(pair.upstream);
      if (wasHung || repliesWereHeld) pair.upstream.pipe(pair.client);
    }
  }

  /** Open connections (held ones included). */
  get connections(): number {
    return this.pairs.size;
  }

  async close(): Promise<void> {
    this.cut();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function reset(socket: Socket): void {
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}
