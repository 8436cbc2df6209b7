// How Redis takes a fan-out worker's pipeline (core/redis-pipeline.ts): the bytes of one timeline
// write held to the server's own call as ioredis encodes it, and the writes Redis runs in one read.
import { Command, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { addCallBytes, commandsPerQueryRead, REDIS_QUERY_READ_BYTES, respBytes, TIMELINES_PER_ADD_CALL, timelineWritesPerQueryRead } from '../../core/redis-pipeline.js';
import { makePostId } from '../../core/post-id.js';
import { timelineKey } from '../../core/keys.js';
import { addArgs, addCalls } from '../../server/cache/post-list-add.js';

/** A standalone client that never connects: addCalls only asks whether it is a cluster. */
const standalone = new Redis({ lazyConnect: true });

/** The bytes ioredis writes for each add call of a worker's batch (TimelineCache.pushEntries, one post). */
function serverCallBytes(keys: readonly string[], cap: number, leaseMs: number): number[] {
  const at = 1_800_000_000_000;
  const { calls } = addCalls(standalone, keys, addArgs({ cap, leaseMs }, [{ id: makePostId(at, 1, 7), createdAt: at }]));
  return calls.map((call) => {
    const wire = new Command('evalsha', ['0123456789abcdef0123456789abcdef01234567', call.keys.length, ...call.keys, ...call.args]).toWritable(null as never);
    return Buffer.byteLength(wire as string);
  });
}

describe("a fan-out worker's pipeline at Redis", () => {
  it('counts a command in the protocol as a client sends it', () => {
    // *2\r\n $4\r\n PING\r\n $2\r\n hi\r\n
    expect(respBytes(['PING', 'hi'])).toBe(4 + 4 + 6 + 4 + 4);
    expect(respBytes([])).toBe(4);
    expect(respBytes(['é'])).toBe(4 + 4 + 4);
  });

  it("sizes an add call as the server's, for bare keys and under a replay's prefix", () => {
    for (const prefix of ['', 'feedlab:replay:12345_abcdef0123:']) {
      for (const first of [100, 99_000, 123_456_000]) {
        // a batch of 120 followers whose keys are all as long: two full calls and one of 20
        const keys = Array.from({ length: 120 }, (_, i) => prefix + timelineKey(first + i));
        const whole = addCallBytes(keys[0], TIMELINES_PER_ADD_CALL, 800, 604_800_000);
        expect(serverCallBytes(keys, 800, 604_800_000), keys[0]).toEqual([whole, whole, addCallBytes(keys[0], 20, 800, 604_800_000)]);
      }
    }
    expect(TIMELINES_PER_ADD_CALL).toBe(50);
    expect(addCallBytes('feedlab:replay:12345_abcdef0123:' + timelineKey(99_999), 1, 800, 604_800_000)).toBe(346);
    expect(addCallBytes('feedlab:replay:12345_abcdef0123:' + timelineKey(99_999), 50, 800, 604_800_000)).toBe(9_806);
  });

  it('writes fewer timelines a call for several posts: a backfill of 100 posts one a call', () => {
    const keys = Array.from({ length: 120 }, (_, i) => timelineKey(1000 + i));
    const posts = (n: number) => Array.from({ length: n }, (_, i) => ({ id: makePostId(1_800_000_000_000 + i, 1, 7), createdAt: 1_800_000_000_000 + i }));
    const sizes = (n: number) => addCalls(standalone, keys, addArgs({ cap: 800, leaseMs: 1 }, posts(n))).lists.map((l) => l.length);
    expect(sizes(1)).toEqual([50, 50, 20]);
    expect(sizes(2)).toEqual([25, 25, 25, 25, 20]);
    expect(sizes(100)).toEqual(new Array(120).fill(1));
  });

  it('runs as many whole writes as one 16 KB read holds, at least one', () => {
    expect(REDIS_QUERY_READ_BYTES).toBe(16_384);
    expect(commandsPerQueryRead(346)).toBe(47);
    expect(commandsPerQueryRead(16_384)).toBe(1);
    expect(commandsPerQueryRead(40_000)).toBe(1);
    expect(() => commandsPerQueryRead(0)).toThrow(RangeError);
  });

  it('runs whole add calls in one read: one call of 50 timelines under a replay prefix, three with short keys', () => {
    expect(timelineWritesPerQueryRead('feedlab:replay:12345_abcdef0123:' + timelineKey(99_999), 800, 604_800_000)).toBe(50);
    // feed:{u:7}:home and its two derived keys: 50 lists in about 5 KB, three calls to a read
    expect(timelineWritesPerQueryRead(timelineKey(7), 800, 604_800_000)).toBe(150);
  });
});
