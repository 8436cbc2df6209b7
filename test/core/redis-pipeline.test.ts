// How Redis takes a fan-out worker's pipeline (core/redis-pipeline.ts): the bytes of one timeline
// write held to the server's own call as ioredis encodes it, and the writes Redis runs in one read.
import { Command } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { commandsPerQueryRead, REDIS_QUERY_READ_BYTES, respBytes, timelineWriteBytes } from '../../core/redis-pipeline.js';
import { makePostId } from '../../core/post-id.js';
import { timelineKey } from '../../core/keys.js';
import { addArgs, addCall } from '../../server/cache/post-list.js';

/** The bytes ioredis writes for a worker's timeline write (TimelineCache.pushEntries, one post). */
function serverCallBytes(key: string, cap: number, leaseMs: number): number {
  const at = 1_800_000_000_000;
  const call = addCall(key, addArgs({ cap, leaseMs }, [{ id: makePostId(at, 1, 7), createdAt: at }]));
  const wire = new Command('evalsha', ['0123456789abcdef0123456789abcdef01234567', call.keys.length, ...call.keys, ...call.args]).toWritable(null as never);
  return Buffer.byteLength(wire as string);
}

describe("a fan-out worker's pipeline at Redis", () => {
  it('counts a command in the protocol as a client sends it', () => {
    // *2\r\n $4\r\n PING\r\n $2\r\n hi\r\n
    expect(respBytes(['PING', 'hi'])).toBe(4 + 4 + 6 + 4 + 4);
    expect(respBytes([])).toBe(4);
    expect(respBytes(['é'])).toBe(4 + 4 + 4);
  });

  it("sizes a timeline write as the server's call, for a bare key and under a replay's prefix", () => {
    for (const prefix of ['', 'feedlab:replay:12345_abcdef0123:']) {
      for (const user of [7, 99_999, 123_456_789]) {
        const key = prefix + timelineKey(user);
        expect(timelineWriteBytes(key, 800, 604_800_000), key).toBe(serverCallBytes(key, 800, 604_800_000));
      }
    }
    expect(timelineWriteBytes('feedlab:replay:12345_abcdef0123:' + timelineKey(99_999), 800, 604_800_000)).toBe(346);
  });

  it('runs as many whole writes as one 16 KB read holds, at least one', () => {
    expect(REDIS_QUERY_READ_BYTES).toBe(16_384);
    expect(commandsPerQueryRead(346)).toBe(47);
    expect(commandsPerQueryRead(16_384)).toBe(1);
    expect(commandsPerQueryRead(40_000)).toBe(1);
    expect(() => commandsPerQueryRead(0)).toThrow(RangeError);
  });
});
