// Posts through the API at random (Poisson) times, as a replay's users send them: the hop's posts and
// a running worker's posts by size. A post answered other than 201 stops calibrate.
import { listedAfterMs } from '../../core/server-timing.js';
import { KeepAliveConnection, postRequest, request } from '../../sim/replay/http-client.js';
import type { Rng } from '../../core/random.js';

export interface PostTarget {
  host: string;
  port: number;
  token: (user: number) => string;
}

export class PacedPoster {
  private readonly free: KeepAliveConnection[] = [];
  private readonly opened: KeepAliveConnection[] = [];
  /** Post id -> the server's ms from its creation to its author's list holding it (Server-Timing `listed`), where it said. */
  readonly listedAfterMs = new Map<string, number>();

  constructor(
    private readonly t: PostTarget,
    private readonly rng: Rng,
  ) {}

  /** `count` posts by `author(i)` at `perSecond` on average; the ids of those answered. */
  async send(count: number, perSecond: number, author: (i: number) => number, text: string): Promise<string[]> {
    const sent: Promise<string>[] = [];
    const start = performance.now();
    let at = 0;
    for (let i = 0; i < count; i++) {
      at += this.rng.exponential(perSecond) * 1000;
      const wait = start + at - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      sent.push(this.post(author(i), text));
    }
    return Promise.all(sent);
  }

  private async post(author: number, text: string): Promise<string> {
    let conn = this.free.pop();
    if (!conn || conn.closed) this.opened.push((conn = await KeepAliveConnection.open(this.t.host, this.t.port)));
    const r = await request(conn, postRequest(`${this.t.host}:${this.t.port}`, '/v1/posts', this.t.token(author), { text }));
    this.free.push(conn);
    if (r.status !== 201) throw new Error(`calibrate: a post was answered ${r.status}: ${r.body.toString('utf8').slice(0, 200)}`);
    const id = (JSON.parse(r.body.toString('utf8')) as { id: string }).id;
    const listed = listedAfterMs(r.serverTiming);
    if (listed !== undefined) this.listedAfterMs.set(id, listed);
    return id;
  }

  close(): void {
    for (const c of this.opened) c.close();
  }
}
