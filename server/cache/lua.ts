// A Lua script run by EVALSHA. The script is loaded (SCRIPT LOAD) once per connection, before its
// first call; when Redis has lost it since (a restart, SCRIPT FLUSH, a failover) the NOSCRIPT reply
// reloads it and the failed calls run again. Only idempotent scripts may be retried that way, and
// every script of server/cache is. Every key a call touches must share one hash slot (redis.ts);
// on a Redis Cluster the script must be loaded on each master (a cluster client's SCRIPT LOAD
// reaches one node), which the NOSCRIPT reload also covers, one node at a time.
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

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
  private readonly loaded = new WeakSet<Redis>();

  constructor(
    readonly name: string,
    readonly source: string,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** SCRIPT LOAD, once per connection. */
  async load(redis: Redis, force = false): Promise<void> {
    if (!force && this.loaded.has(redis)) return;
    const sha = await redis.script('LOAD', this.source);
    if (sha !== this.sha) throw new Error(`script ${this.name}: Redis answered sha ${String(sha)}, expected ${this.sha}`);
    this.loaded.add(redis);
  }

  /** One call. */
  async run(redis: Redis, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
    await this.load(redis);
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!isNoScript(err)) throw err;
      await this.load(redis, true);
      return redis.evalsha(this.sha, keys.length, ...keys, ...args);
    }
  }

  /** Many calls in one pipeline (one round trip); the replies in call order. */
  async runMany(redis: Redis, calls: readonly ScriptCall[]): Promise<ScriptReply[]> {
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

  private async pipeline(redis: Redis, calls: readonly ScriptCall[]): Promise<ScriptReply[]> {
    const pipeline = redis.pipeline();
    for (const { keys, args } of calls) pipeline.evalsha(this.sha, keys.length, ...keys, ...args);
    const replies = await pipeline.exec();
    // exec() answers null only when the pipeline was discarded, which a plain pipeline never is.
    if (!replies) throw new Error(`script ${this.name}: the pipeline was discarded`);
    return replies as ScriptReply[];
  }
}
