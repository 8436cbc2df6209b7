// How one Redis process serves a fan-out worker's pipeline beside other clients. Redis reads a
// client's pending commands REDIS_QUERY_READ_BYTES at a time and runs all it read before it turns to
// another client, so a command that arrives while a worker's pipelined timeline writes are in flight
// waits for the worker's chunk in progress, and as often as not for the next one too (the event loop
// serves the ready clients in its own order): a wait spread evenly over two chunks' time. By hand
// (2026-12-06, Redis 7.0 on a 2-core AMD EPYC VM: the worker's TimelineCache writing a post to 1,000
// of 3,000 timelines at the cap, before add calls of 50: one script a timeline, 59 to a read, at random times 0.5 s apart on average, and page
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
 * Timelines one call of the add script writes for one post on a standalone Redis (50/n for n posts;
 * server/cache/post-list-add.ts addCalls): a fan-out batch of 1,000 followers is 20 calls, not 1,000. On a cluster a call holds
 * only timelines of one slot, nearly always one. By hand (2026-12-07, Redis 7.0 on a 2-core AMD
 * EPYC VM, one post into 60,000 timelines, batches of 1,000, 2 in flight, three rounds): one list a
 * call 88-111k writes/s at 8.4-9.6 us of Redis CPU and 6.2-9.0 us of the client's a write; 50 lists
 * a call 135-170k/s at 5.8-7.2 us and 1.5-1.9 us; 250 lists 156-174k/s at 5.7-6.4 us. Fifty keeps
 * a call (Redis runs it whole, other clients waiting) near a third of a millisecond.
 */
export const TIMELINES_PER_ADD_CALL = 50;

/** Timelines one add call writes for `posts` posts: TIMELINES_PER_ADD_CALL / posts, at least one (a backfill of 100 posts one a call, so a call, which Redis runs whole, stays short). */
export function timelinesPerAddCall(posts: number): number {
  return Math.max(1, Math.floor(TIMELINES_PER_ADD_CALL / Math.max(1, posts)));
}

/**
 * The bytes of one add call as the fan-out worker pipelines it (server/cache/post-list-add.ts addCalls
 * and addArgs, one post) writing `timelines` timelines: EVALSHA of the add script on each timeline's
 * key, its rebuild marker and its pending set, then the cap, the lease, the empty sentinel, the
 * post's score and id. The keys are all as long as `timelineKey`'s. test/core/redis-pipeline.test.ts
 * holds this to the server's own call.
 */
export function addCallBytes(timelineKey: string, timelines: number, cap: number, leaseMs: number): number {
  const keys: string[] = [];
  for (let i = 0; i < timelines; i++) keys.push(timelineKey, `${timelineKey}:rebuilding`, `${timelineKey}:pending`);
  return respBytes(['EVALSHA', 'x'.repeat(SHA1_HEX), keys.length, ...keys, cap, leaseMs, 'empty', POST_SCORE, POST_ID]);
}

/** How many of a pipeline's commands of `commandBytes` Redis runs in one turn before it serves another client. */
export function commandsPerQueryRead(commandBytes: number): number {
  if (!(commandBytes > 0)) throw new RangeError(`commandsPerQueryRead: a command of ${commandBytes} bytes`);
  return Math.max(1, Math.floor(REDIS_QUERY_READ_BYTES / commandBytes));
}

/** The timeline writes Redis runs in one turn of a fan-out worker's pipeline of add calls of `perCall` timelines: whole calls, at least one. */
export function timelineWritesPerQueryRead(timelineKey: string, cap: number, leaseMs: number, perCall = TIMELINES_PER_ADD_CALL): number {
  return commandsPerQueryRead(addCallBytes(timelineKey, perCall, cap, leaseMs)) * perCall;
}
