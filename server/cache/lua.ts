// A Lua script run by EVALSHA. The script is loaded (SCRIPT LOAD) once per connection, before its
// first call; when Redis has lost it since (a restart, SCRIPT FLUSH, a failover) the NOSCRIPT reply
// reloads it and the failed calls run again. Only idempotent scripts may be retried that way, and
// every script of server/cache is. Every key a call touches must share one hash slot (redis.ts).
// On a Redis Cluster a client's SCRIPT LOAD would reach one random node, so the script is loaded
// on every master (and reloaded on every master after a NOSCRIPT: a promoted replica or a new
// master has an empty script cache), and a batch of calls goes as one pipeline per node
// (node-pipelines.ts).
import { createHash } from 'node:crypto';
import { pipelinePerNode } from './node-pipelines.js';
import { masters, type RedisLike } from './redis-like.js';

export type ScriptArg = string | number;

/** One call: the keys (all of one hash slot) and the arguments. */
export interface ScriptCall {
  keys: readonly string[];
  args: readonly ScriptArg[];
}

/** Per call of a batch: the error (a script error or a transport error), else the reply. */
export type ScriptReply = [Error | null, unknown];

function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}

export class LuaScript {
  readonly sha: string;
  /** Connections this script is known to be loaded on. */
  private readonly loaded = new WeakSet<RedisLike>();

  constructor(
    readonly name: string,
    readonly source: string,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** SCRIPT LOAD, once per connection (on each master of a cluster). */
  async load(redis: RedisLike, force = false): Promise<void> {
    if (!force && this.loaded.has(redis)) return;
    const shas = await Promise.all(masters(redis).map((node) => node.script('LOAD', this.source)));
    const wrong = shas.find((sha) => sha !== this.sha);
    if (wrong !== undefined) throw new Error(`script ${this.name}: Redis answered sha ${String(wrong)}, expected ${this.sha}`);
    this.loaded.add(redis);
  }

  /** One call. */
  async run(redis: RedisLike, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
    await this.load(redis);
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!isNoScript(err)) throw err;
      await this.load(redis, true);
      return redis.evalsha(this.sha, keys.length, ...keys, ...args);
    }
  }

  /** Many calls in one pipeline (one round trip; on a cluster one pipeline per node, concurrently); the replies in call order. */
  async runMany(redis: RedisLike, calls: readonly ScriptCall[]): Promise<ScriptReply[]> {
    if (calls.length === 0) return [];
    await this.load(redis);
    const replies = await this.pipeline(redis, calls);
    const lost = replies.flatMap((r, i) => (isNoScript(r[0]) ? [i] : []));
    if (lost.length > 0) {
      await this.load(redis, true);
      const again = await this.pipeline(
        redis,
        lost.map((i) => calls[i]),
      );
      lost.forEach((i, j) => (replies[i] = again[j]));
    }
    return replies;
  }

  private pipeline(redis: RedisLike, calls: readonly ScriptCall[]): Promise<ScriptReply[]> {
    return pipelinePerNode(
      redis,
      calls.length,
      (i) => calls[i].keys[0],
      (p, i) => {
        const { keys, args } = calls[i];
        p.evalsha(this.sha, keys.length, ...keys, ...args);
      },
    );
  }
}
