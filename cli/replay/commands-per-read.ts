// Redis commands per feed read, measured the way the simulator counts its operations: a window of
// nothing but first-page reads of warm readers (after the warm pass, before the measured window, so
// no fan-out, cache loss or storm is under way), less what an idle window as long saw (the workers'
// and the API's periodic polls, metrics publishing): commandstats before and after each.
import type { Redis } from 'ioredis';
import { runSchedule } from '../../sim/replay/driver.js';
import { callsDelta, commandCalls } from '../../sim/replay/redis-figures.js';
import { mix32 } from '../../core/random.js';
import { REPLAY } from './settings.js';

export interface CommandsPerRead {
  reads: number;
  seconds: number;
  /** Commands by name over the reads-only window, the idle window's share taken off. */
  calls: Record<string, number>;
}

export async function commandsPerRead(o: {
  redis: Redis;
  host: string;
  port: number;
  token: (user: number) => string;
  readers: Int32Array;
  pageSize: number;
  /** Reads per second to send (at least REPLAY.readsOnlyMinRate). */
  rate: number;
  signal: AbortSignal;
}): Promise<CommandsPerRead | null> {
  if (o.readers.length === 0) return null;
  const ms = REPLAY.readsOnlyMs;
  const idleFrom = await commandCalls(o.redis);
  await new Promise((r) => setTimeout(r, ms));
  const idle = callsDelta(idleFrom, await commandCalls(o.redis));
  if (o.signal.aborted) return null;
  const rate = Math.max(REPLAY.readsOnlyMinRate, o.rate);
  const n = Math.max(1, Math.round((rate * ms) / 1000));
  const users = Int32Array.from({ length: n }, (_, i) => o.readers[mix32(i + 7919) % o.readers.length]);
  const before = await commandCalls(o.redis);
  const r = await runSchedule({
    host: o.host,
    port: o.port,
    posts: { atMs: new Float64Array(0), author: new Int32Array(0), burst: new Uint8Array(0) },
    sessions: { atMs: Float64Array.from({ length: n }, (_, i) => (i * 1000) / rate), user: users, pages: new Uint16Array(n).fill(1) },
    pageSize: o.pageSize,
    token: o.token,
    postText: () => '',
    maxConnections: REPLAY.readsOnlyConnections,
    dropAfterMs: REPLAY.dropAfterMs,
    drainMs: REPLAY.dropAfterMs,
    intervalMs: ms,
    signal: o.signal,
  });
  const seconds = r.wallMs / 1000;
  const calls = callsDelta(before, await commandCalls(o.redis));
  const net: Record<string, number> = {};
  for (const [cmd, k] of calls) {
    if (cmd === 'info') continue; // this process's own INFO reads around the windows
    const background = ((idle.get(cmd) ?? 0) * seconds * 1000) / ms;
    if (k - background > 0) net[cmd] = k - background;
  }
  return { reads: r.totals.reads.completed, seconds, calls: net };
}
