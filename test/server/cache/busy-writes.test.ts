// Writes to a busy Redis held to the end of the turn (server/cache/busy-writes.ts), on this
// machine's Redis (REDIS_URL, default 127.0.0.1:6379): an idle connection writes at once, a busy
// one sends the turn's commands in one write, and every reply still reaches its command.
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { Cluster, type Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUSY_QUEUE, holdWritesIfBusy } from '../../../server/cache/busy-writes.js';
import { pipelinePerNode } from '../../../server/cache/node-pipelines.js';
import { closeRedis, connectRedis, dropKeyspace, keyspace } from '../../../server/cache/redis.js';
import { CI, REDIS_URL, redisUnreachable } from './reachable.js';

const unreachable = await redisUnreachable('test/server/cache/busy-writes.test.ts');
const ks = keyspace(`feedlab:test:${process.pid}-${randomUUID().slice(0, 8)}:busy:`);

/** Socket writes (write or writev calls reaching the handle) while `f` runs and its turn ends. */
async function writesDuring(socket: Socket, f: () => Promise<unknown>): Promise<{ writes: number; result: unknown }> {
  const s = socket as unknown as { _write: (...a: unknown[]) => unknown; _writev: (...a: unknown[]) => unknown };
  const [write, writev] = [s._write, s._writev];
  let writes = 0;
  s._write = (...a) => (writes++, write.apply(socket, a));
  s._writev = (...a) => (writes++, writev.apply(socket, a));
  try {
    const result = await f();
    return { writes, result };
  } finally {
    s._write = write;
    s._writev = writev;
  }
}

describe.skipIf(unreachable !== null && !CI)('writes to a busy Redis', () => {
  let redis: Redis;
  beforeAll(async () => {
    redis = await connectRedis({ url: REDIS_URL });
    await redis.set(ks.key('k'), 'v');
  });
  afterAll(async () => {
    if (!redis) return;
    await dropKeyspace(redis, ks);
    await closeRedis(redis);
  });

  it('writes at once on an idle connection', async () => {
    const socket = redis.stream as Socket;
    holdWritesIfBusy(redis);
    expect(socket.writableCorked).toBe(0);
    const { writes, result } = await writesDuring(socket, () => Promise.all([redis.get(ks.key('k')), redis.get(ks.key('k'))]));
    expect(result).toEqual(['v', 'v']);
    expect(writes).toBe(2);
  });

  it('sends a busy turn in one write, each reply to its command', async () => {
    const socket = redis.stream as Socket;
    const { writes, result } = await writesDuring(socket, async () => {
      // commands awaiting replies: the connection is busy from BUSY_QUEUE of them
      const first = Array.from({ length: BUSY_QUEUE }, (_, i) => redis.echo(`a${i}`));
      expect(redis.commandQueue.length).toBeGreaterThanOrEqual(BUSY_QUEUE);
      // this turn's later batches and MGETs wait for the turn's end, then go together
      const later = Array.from({ length: 10 }, (_, b) =>
        pipelinePerNode(redis, 3, () => ks.key('k'), (p, i) => p.echo(`b${b}.${i}`)).then((r) => r.map(([, v]) => v)),
      );
      expect(socket.writableCorked).toBe(1);
      return [await Promise.all(first), await Promise.all(later)];
    });
    expect(result).toEqual([Array.from({ length: BUSY_QUEUE }, (_, i) => `a${i}`), Array.from({ length: 10 }, (_, b) => [0, 1, 2].map((i) => `b${b}.${i}`))]);
    // the 32 lone commands each written at once, the ten batches in one write at the turn's end
    expect(writes).toBe(BUSY_QUEUE + 1);
    expect(socket.writableCorked).toBe(0);
  });

  it('leaves a cluster and a connection not ready alone, however many commands wait', () => {
    expect(() => holdWritesIfBusy(new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true }))).not.toThrow();
    let corks = 0;
    const stream = { cork: () => corks++, uncork: () => {} };
    const standIn = (status: string) => ({ status, commandQueue: { length: 100 }, stream }) as unknown as Redis;
    holdWritesIfBusy(standIn('reconnecting'));
    expect(corks).toBe(0);
    // the same stand-in ready is busy: its writes are held
    holdWritesIfBusy(standIn('ready'));
    expect(corks).toBe(1);
  });
});
