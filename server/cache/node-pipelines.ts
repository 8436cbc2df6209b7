// Pipelines over keys of many slots. An ioredis cluster pipeline goes to one node and is refused
// ("All keys in the pipeline should belong to the same slots allocation group") when its keys live
// on several, so on a cluster the commands are grouped by the node serving their slot (the
// client's slot map) and each node gets its own pipeline, all in flight at once: a fan-out batch
// of 1,000 followers over three masters is three pipelines, one round trip of wall time. A
// standalone Redis gets one write of all the commands (corked, below).
//
// Slots move (resharding, failover). A command sent by a stale slot map is answered MOVED, one on
// a slot being migrated ASK, or TRYAGAIN when its keys are split between the two nodes for the
// moment (a script's list moved, its absent marker "not yet"). Those items are sent again, each
// alone, after the slot map is refreshed: ioredis follows the MOVED or ASK of a lone command
// itself. What is still answered TRYAGAIN is sent again after a pause, a few times (a slot's
// keys move in milliseconds); past that the error is the item's reply, and the caller fails as
// for any other error (a fan-out event is delivered again). Only idempotent commands may go
// through here, which every caller's are (the cache scripts, PEXPIRE, reads, SET).
//
// On a standalone Redis the batch is not an ioredis Pipeline but the same commands sent one by
// one while the socket is corked: one write, the replies in order, as a pipeline gives them.
// Measured here (batches of 8 GETs, 4 in flight): ioredis's Pipeline objects made half of the
// young objects survive each scavenge, every scavenge took 5-7 ms, and a server reading feeds
// paused that long every ~65 ms; corked commands ran 1.7x the batches with 0.2 ms scavenges.
import type { ChainableCommander, Redis } from 'ioredis';
import type { Socket } from 'node:net';
import { keySlot } from '../../core/keys.js';
import { holdWritesIfBusy } from './busy-writes.js';
import { isCluster, type RedisLike } from './redis-like.js';

/** One command's outcome, as Pipeline.exec() gives it. */
export type PipelineReply = [Error | null, unknown];

const REDIRECTED = /^(MOVED|ASK|TRYAGAIN)\b/;
/** Rounds of re-sending redirected items, and the pause before each after the first. (A lone
 * command answered TRYAGAIN alone is also retried by ioredis, up to 16 times 100 ms, so a slot
 * stuck mid-migration holds a batch for seconds before it fails.) */
const RESEND_ROUNDS = 5;
const RESEND_PAUSE_MS = 100;

function isRedirect(r: PipelineReply | undefined): boolean {
  return r !== undefined && r[0] !== null && REDIRECTED.test(r[0].message);
}

async function exec(p: ChainableCommander): Promise<PipelineReply[]> {
  const replies = await p.exec();
  // exec() answers null only when a transaction was discarded, which a plain pipeline never is.
  if (!replies) throw new Error('the pipeline was discarded');
  return replies as PipelineReply[];
}

/** A stand-in for a pipeline: each command called on it is sent at once, its outcome kept in order. */
function recorder(redis: Redis, replies: Promise<PipelineReply>[]): ChainableCommander {
  const ok = (value: unknown): PipelineReply => [null, value];
  const failed = (err: unknown): PipelineReply => [err instanceof Error ? err : new Error(String(err)), null];
  const target = redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const proxy: ChainableCommander = new Proxy({} as ChainableCommander, {
    get: (_, name: string) =>
      (...args: unknown[]) => {
        replies.push(target[name](...args).then(ok, failed));
        return proxy;
      },
  });
  return proxy;
}

/** The items' commands on a corked socket (one write), their outcomes in order. */
function corked(redis: Redis, count: number, add: (p: ChainableCommander, i: number) => void): Promise<PipelineReply[]> {
  const replies: Promise<PipelineReply>[] = [];
  const batch = recorder(redis, replies);
  // a busy connection's socket stays corked to the end of the turn (busy-writes.ts)
  holdWritesIfBusy(redis);
  // Not connected: nothing to cork; each command is answered at once with ioredis's error (the
  // offline queue is off, server/cache/redis.ts), as a pipeline's would be.
  const socket = redis.status === 'ready' ? (redis.stream as Socket | undefined) : undefined;
  socket?.cork();
  try {
    for (let i = 0; i < count; i++) add(batch, i);
  } finally {
    socket?.uncork();
  }
  return Promise.all(replies);
}

/**
 * Queue `count` items and run them: `add(p, i)` queues item i's commands, exactly `per` of them
 * (or per(i)), every one on the slot of keyOf(i). One corked write on a standalone Redis, one
 * pipeline per node on a cluster, concurrently. The replies in item order, as one pipeline would
 * give them.
 */
export async function pipelinePerNode(
  redis: RedisLike,
  count: number,
  keyOf: (i: number) => string,
  add: (p: ChainableCommander, i: number) => void,
  per: number | ((i: number) => number) = 1,
): Promise<PipelineReply[]> {
  if (count === 0) return [];
  if (!isCluster(redis)) return corked(redis, count, add);
  // Where each item's replies start in the result.
  const start = new Array<number>(count + 1);
  start[0] = 0;
  for (let i = 0; i < count; i++) start[i + 1] = start[i] + (typeof per === 'number' ? per : per(i));
  // Items by node: the slot map lists each slot's master then its replicas, the same node set
  // ioredis requires of a pipeline.
  const groups = new Map<string, number[]>();
  for (let i = 0; i < count; i++) {
    const node = redis.slots[keySlot(keyOf(i))]?.join(';') ?? '';
    const group = groups.get(node);
    if (group) group.push(i);
    else groups.set(node, [i]);
  }
  const replies = new Array<PipelineReply>(start[count]);
  const run = async (items: readonly number[]) => {
    const p = redis.pipeline();
    for (const i of items) add(p, i);
    const got = await exec(p);
    let at = 0;
    for (const i of items) for (let k = start[i]; k < start[i + 1]; k++) replies[k] = got[at++];
  };
  await Promise.all([...groups.values()].map(run));
  const redirected = (i: number) => {
    for (let k = start[i]; k < start[i + 1]; k++) if (isRedirect(replies[k])) return true;
    return false;
  };
  let todo: number[] = [];
  for (let i = 0; i < count; i++) if (redirected(i)) todo.push(i);
  for (let round = 0; todo.length > 0 && round < RESEND_ROUNDS; round++) {
    if (round === 0) redis.refreshSlotsCache();
    else await new Promise((resolve) => setTimeout(resolve, RESEND_PAUSE_MS));
    await Promise.all(todo.map((i) => run([i])));
    todo = todo.filter(redirected);
  }
  return replies;
}
