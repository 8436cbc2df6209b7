// How one Redis process serves a fan-out worker's pipeline beside other clients. Redis reads a
// client's pending commands REDIS_QUERY_READ_BYTES at a time and runs all it read before it turns to
// another client, so a command that arrives while a worker's pipelined timeline writes are in flight
// waits for the worker's chunk in progress, and as often as not for the next one too (the event loop
// serves the ready clients in its own order): a wait spread evenly over two chunks' time. By hand
// (2026-12-06, Redis 7.0 on a 2-core AMD EPYC VM: the worker's TimelineCache writing a post to 1,000
// of 3,000 timelines at the cap, 59 scripts a read, at random times 0.5 s apart on average, and page
// reads of the same timelines at 300 a second from another process): reads during a post p50 1.84
// ms, p90 2.98, p99 4.31 ms, where those outside took 0.17, 0.33 and 0.50 ms. The simulator's Redis
// (sim/model/shard-load.ts) charges that wait.

/** What Redis reads of one client's pending commands per turn of its event loop (its PROTO_IOBUF_LEN). */
export const REDIS_QUERY_READ_BYTES = 16 * 1024;

/** The bytes of a command as a client sends it (RESP: an array of bulk strings). */
export function respBytes(parts: readonly (string | number)[]): number {
  let bytes = `*${parts.length}\r\n`.length;
  for (const p of parts) {
    const n = Buffer.byteLength(String(p));
    bytes += `$${n}\r\n`.length + n + 2;
  }
  return bytes;
}

/** An EVALSHA's script digest: 40 hex characters. */
const SHA1_HEX = 40;
/** A post's score (its creation in ms) and its id (a 64-bit snowflake) as the worker sends them. */
const POST_SCORE = 1_800_000_000_000;
const POST_ID = '1600000000000000000';

/**
 * The bytes of one timeline write as the fan-out worker pipelines it (server/cache/post-list.ts
 * addCall and addArgs, one post): EVALSHA of the add script on the timeline's key, its rebuild
 * marker and its pending set, with the cap, the lease, the empty sentinel, the post's score and id.
 * test/core/redis-pipeline.test.ts holds this to the server's own call.
 */
export function timelineWriteBytes(timelineKey: string, cap: number, leaseMs: number): number {
  return respBytes(['EVALSHA', 'x'.repeat(SHA1_HEX), 3, timelineKey, `${timelineKey}:rebuilding`, `${timelineKey}:pending`, cap, leaseMs, 'empty', POST_SCORE, POST_ID]);
}

/** How many of a pipeline's commands of `commandBytes` Redis runs in one turn before it serves another client. */
export function commandsPerQueryRead(commandBytes: number): number {
  if (!(commandBytes > 0)) throw new RangeError(`commandsPerQueryRead: a command of ${commandBytes} bytes`);
  return Math.max(1, Math.floor(REDIS_QUERY_READ_BYTES / commandBytes));
}
