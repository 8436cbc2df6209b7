// A batch on a standalone Redis (server/cache/node-pipelines.ts): the commands go out in one socket
// write, as a pipeline's would, and come back in order with each command's own error in its place.
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import { pipelinePerNode } from '../../../server/cache/node-pipelines.js';
import { keyspace } from '../../../server/cache/redis.js';
import { CI, redisUnreachable, useRedis } from './reachable.js';

const unreachable = await redisUnreachable('test/server/cache/node-pipelines.test.ts');
const ks = keyspace(`feedlab:test:${process.pid}-${randomUUID().slice(0, 8)}:batch:`);

describe.skipIf(unreachable !== null && !CI)('command batches on this machine\'s Redis', () => {
  let redis: Redis;
  useRedis(ks, (r) => (redis = r));

  it('sends the batch in one write and answers in order, a failed command\'s error in its place', async () => {
    const keys = ['a', 'b', 'c'].map((k) => ks.key(k));
    await redis.set(keys[0], 'one');
    await redis.zadd(keys[1], 1, 'm'); // GET on a sorted set: WRONGTYPE
    const socket = redis.stream as Socket;
    // the socket's internal writers: one call between them is one write to the network
    const internals = socket as unknown as { _writev: (...args: unknown[]) => void; _write: (...args: unknown[]) => void };
    const writes = vi.spyOn(internals, '_writev');
    const single = vi.spyOn(internals, '_write');
    try {
      const replies = await pipelinePerNode(redis, 3, (i) => keys[i], (p, i) => p.get(keys[i]).exists(keys[i]), 2);
      expect(writes.mock.calls.length + single.mock.calls.length).toBe(1);
      expect(replies.map(([err, v]) => (err ? err.message.split(' ')[0] : v))).toEqual(['one', 1, 'WRONGTYPE', 1, null, 0]);
    } finally {
      vi.restoreAllMocks();
    }
  });
});
