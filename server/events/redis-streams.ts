// The event log on Redis Streams, read through a consumer group.
//
// Layout. An author's events go to one of N partition streams (N = 16 by default), so one author's
// events stay in order. Every key of a partition carries the same hash tag, `{pK}`, so the
// partition's stream and its dead-letter stream live on one slot and a dead-lettering (XADD to the
// dead-letter stream + XACK of the entry) is one MULTI. The partition count is recorded in
// PREFIX:meta when the log is first opened; opening it later with another count is refused, since
// consumers would miss the partitions they do not know.
//
//   PREFIX:{pK}:log    the partition's stream, trimmed with XADD MAXLEN ~ (a cap, not a retention)
//   PREFIX:{pK}:dead   its dead-letter stream
//   PREFIX:meta        the partition count
//
// Consumers. Every consumer of a group reads every partition with one XREADGROUP (BLOCK), and
// Redis hands each entry to one consumer of the group. A batch is acknowledged (XACK) only after the
// handler resolved. What a consumer holds unacknowledged (its pending entries) comes back to it:
//  - after its handler threw: the consumer re-reads its own pending entries (XREADGROUP id 0), one
//    entry per partition at a time and one handler call per entry, so a poison entry is isolated
//    from its batch, and the partition's later entries wait behind it (order is kept);
//  - after it died: the living claim its entries once they have been idle for minIdleMs
//    (XAUTOCLAIM ... JUSTID, checked every claimIntervalMs) and handle them the same way; a
//    consumer restarted under its old name gets them back at once (it starts with its own pending).
//    Once it holds nothing and has not read for minIdleMs (3 x blockMs at least), the dead consumer
//    is removed from the group (REAP_CONSUMERS): restarts under new names do not pile consumers up.
// Each re-read raises the entry's delivery count (XPENDING). An entry delivered more than
// maxAttempts times (its handler failed, or its consumer died, that often) goes to the partition's
// dead-letter stream and is acknowledged, so it does not block the partition forever; so does an
// entry that does not decode.
//
// Order: within a partition entries are delivered in order, and a consumer never hands an entry of
// a partition to its handler while an earlier one of that partition it holds is unacknowledged.
// With several consumers in a group, consecutive batches of one partition can go to different
// consumers and be handled at the same time; the fan-out worker does not depend on that order
// (timeline writes are scored by creation time and idempotent, deleted posts are filtered on read).
//
// Durability: `publish` resolves when Redis has appended the entries (with Redis's own persistence,
// appendonly/appendfsync, deciding what survives a Redis crash). MAXLEN trimming can drop entries no
// consumer has read yet if consumers fall maxLen behind: size maxLen for the longest outage of the
// workers (the default holds 1M events per partition); a trimmed pending entry is reported through
// onError and dropped from the group.
//
// Topology: the consumer's XREADGROUP names every partition stream, so the streams must be on one
// Redis node: point the event log at a standalone Redis (or one primary), which may be another
// Redis than a clustered timeline cache.
import { Redis, type RedisOptions } from 'ioredis';
import { LuaScript } from '../cache/lua.js';
import { backoffDelay, sleep, type BackoffOptions } from './backoff.js';
import { EventLogInputError, EventLogUnavailableError } from './errors.js';
import { redactUrl as redactRedisUrl } from '../../core/service-url.js';
import { deadLetterStreamKey, EVENT_STREAM_FIELD, eventStreamKey } from '../../core/keys.js';
import {
  checkName,
  checkPartitionCount,
  checkPostEvents,
  decodePostEvent,
  DEFAULT_PARTITIONS,
  encodePostEvent,
  partitionOf,
  type ConsumeOptions,
  type DeadLetter,
  type DeliveredEvent,
  type EventLog,
  type PostEvent,
} from './event-log.js';

import { DEFAULT_REDIS_URL, DEFAULT_STREAM_PREFIX } from '../../core/service-url.js';

export { DEFAULT_REDIS_URL, DEFAULT_STREAM_PREFIX };

export interface RedisStreamsOptions {
  /** Defaults to $REDIS_URL, then redis://127.0.0.1:6379. Ignored when `redis` is given. */
  readonly url?: string;
  /** A connected client to use instead of one made from `url`. The log does not close it; consumers
   * use duplicates of it for their blocking reads. */
  readonly redis?: Redis;
  /** Start of every key (letters, digits, . _ : -). Default "feedlab:events"; tests use their own. */
  readonly prefix?: string;
  /** Number of partition streams (default 16). Fixed for a prefix once the log is first opened. */
  readonly partitions?: number;
  /** Approximate cap on each partition stream's length (XADD MAXLEN ~). Default 1,000,000. */
  readonly maxLen?: number;
  /** Approximate cap on each dead-letter stream's length. Default 100,000. */
  readonly deadLetterMaxLen?: number;
  /** Entries per partition per read (XREADGROUP COUNT). Default 100. */
  readonly batchSize?: number;
  /** Longest wait of one blocking read, ms (XREADGROUP BLOCK). Default 2,000. */
  readonly blockMs?: number;
  /** How long an entry must have been pending with a consumer before another may claim it, ms.
   * Must exceed the longest handler call, or live consumers' entries get handled twice. Default 30,000. */
  readonly minIdleMs?: number;
  /** How often a consumer looks for entries to claim, ms. Default minIdleMs / 2. */
  readonly claimIntervalMs?: number;
  /** Deliveries of an entry that failed before it is dead-lettered: a handler that throws on an
   * entry maxAttempts times sends it to the dead-letter stream. Default 5. */
  readonly maxAttempts?: number;
  /** Waiting before a failed entry is retried, and after a Redis error. Default 100 ms doubling to 5 s. */
  readonly retry?: BackoffOptions;
  /** Bound on connecting and on each non-blocking command, ms. Default 3,000. */
  readonly timeoutMs?: number;
}

interface Settings {
  readonly prefix: string;
  readonly partitions: number;
  readonly maxLen: number;
  readonly deadLetterMaxLen: number;
  readonly batchSize: number;
  readonly blockMs: number;
  readonly minIdleMs: number;
  readonly claimIntervalMs: number;
  readonly maxAttempts: number;
  readonly retry: BackoffOptions;
  readonly timeoutMs: number;
}

const PREFIX = /^[A-Za-z0-9._:-]{1,200}$/;
const EVENT_FIELD = EVENT_STREAM_FIELD;

function positiveInt(what: string, v: number | undefined, dflt: number, min = 1): number {
  if (v === undefined) return dflt;
  if (!Number.isSafeInteger(v) || v < min) throw new EventLogInputError(`${what} ${v} is not an integer >= ${min}`);
  return v;
}

function settingsFrom(o: RedisStreamsOptions): Settings {
  const prefix = o.prefix ?? DEFAULT_STREAM_PREFIX;
  if (!PREFIX.test(prefix)) {
    throw new EventLogInputError(`key prefix ${JSON.stringify(prefix)} must be 1-200 characters of letters, digits and . _ : -`);
  }
  const minIdleMs = positiveInt('minIdleMs', o.minIdleMs, 30_000);
  const retry = o.retry ?? { initialMs: 100, maxMs: 5_000 };
  if (!(retry.initialMs >= 0) || !(retry.maxMs >= retry.initialMs)) {
    throw new EventLogInputError(`retry backoff ${retry.initialMs}..${retry.maxMs} ms is not a range`);
  }
  return {
    prefix,
    partitions: checkPartitionCount(o.partitions ?? DEFAULT_PARTITIONS),
    maxLen: positiveInt('maxLen', o.maxLen, 1_000_000),
    deadLetterMaxLen: positiveInt('deadLetterMaxLen', o.deadLetterMaxLen, 100_000),
    batchSize: positiveInt('batchSize', o.batchSize, 100),
    blockMs: positiveInt('blockMs', o.blockMs, 2_000),
    minIdleMs,
    claimIntervalMs: positiveInt('claimIntervalMs', o.claimIntervalMs, Math.max(1, Math.floor(minIdleMs / 2))),
    maxAttempts: positiveInt('maxAttempts', o.maxAttempts, 5),
    retry,
    timeoutMs: positiveInt('timeoutMs', o.timeoutMs, 3_000),
  };
}

export { redactUrl as redactRedisUrl } from '../../core/service-url.js';

function message(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return message(err.errors[0]);
  // ioredis's words for "the connection is down and did not come back in time".
  if (err instanceof Error && err.name === 'MaxRetriesPerRequestError') return 'connection lost';
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

/** The error Redis answers when a stream or its group is missing (someone deleted the stream). */
function isNoGroup(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOGROUP');
}

/**
 * Opens the log: connects (unless given a client), and records or checks the partition count.
 * Throws EventLogUnavailableError when Redis is unreachable, EventLogInputError on a bad option or a
 * partition count that disagrees with the log's.
 */
export async function openRedisStreamsLog(options: RedisStreamsOptions = {}): Promise<RedisStreamsLog> {
  const settings = settingsFrom(options);
  let redis: Redis;
  let owned = false;
  let where: string;
  if (options.redis) {
    redis = options.redis;
    where = `${redis.options.host ?? '?'}:${redis.options.port ?? '?'}`;
  } else {
    const url = options.url ?? (process.env.REDIS_URL?.trim() || DEFAULT_REDIS_URL);
    where = redactRedisUrl(url);
    redis = await connect(url, settings.timeoutMs);
    owned = true;
  }
  const log = new RedisStreamsLog(redis, owned, where, settings);
  try {
    await log.checkPartitions();
  } catch (err) {
    if (owned) redis.disconnect();
    throw err;
  }
  return log;
}

async function connect(url: string, timeoutMs: number): Promise<Redis> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new EventLogInputError(`Redis URL "${redactRedisUrl(url)}" is not a URL (expected redis://host:port)`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new EventLogInputError(`Redis URL "${redactRedisUrl(url)}" must start with redis:// or rediss://`);
  }
  // Once connected, a lost connection is re-established by itself (commands wait for it briefly,
  // then fail, and the callers back off); before that, the first failure is final.
  let connected = false;
  const options: RedisOptions = {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => (connected ? Math.min(times * 100, 2_000) : null),
  };
  const client = new Redis(url, options);
  let firstError: unknown;
  // ioredis also reports connection errors as events; without a listener it prints them.
  client.on('error', (err) => {
    if (!connected) firstError ??= err;
  });
  let timer: NodeJS.Timeout | undefined;
  const handshake = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    await Promise.race([client.connect(), handshake]);
    connected = true;
  } catch (err) {
    client.disconnect();
    throw new EventLogUnavailableError(
      `Redis at ${redactRedisUrl(url)} is unreachable (${message(firstError ?? err)}); start it or set REDIS_URL`,
      { cause: firstError ?? err },
    );
  } finally {
    clearTimeout(timer);
  }
  return client;
}

/** Redis's reply to XREADGROUP: per stream, its entries; an entry's fields are null when the entry
 * was deleted (trimmed) while pending. */
type ReadReply = Array<[string, Array<[string, string[] | null]>]> | null;

/** Per-partition state of one consumer. */
interface PartitionState {
  /** Its own pending entries must be handled before new ones (after a failure, a claim, a restart). */
  history: boolean;
  /** No retry of its pending entries before this time (backoff after a failure). */
  retryAt: number;
  /** Consecutive failed handler calls on this partition. */
  failures: number;
}

export class RedisStreamsLog implements EventLog {
  readonly prefix: string;
  readonly partitions: number;
  private readonly settings: Settings;
  private readonly keyToPartition = new Map<string, number>();
  private readonly stopAll = new AbortController();
  private readonly running = new Set<Promise<void>>();
  private closed = false;

  /** Use openRedisStreamsLog, which connects and checks the partition count. */
  constructor(
    readonly redis: Redis,
    private readonly owned: boolean,
    private readonly where: string,
    settings: Settings,
  ) {
    this.settings = settings;
    this.prefix = settings.prefix;
    this.partitions = settings.partitions;
    for (let p = 0; p < this.partitions; p++) this.keyToPartition.set(this.streamKey(p), p);
  }

  /** The stream of partition p. */
  streamKey(p: number): string {
    return eventStreamKey(this.prefix, p);
  }

  /** The dead-letter stream of partition p (same slot as its stream). */
  deadLetterKey(p: number): string {
    return deadLetterStreamKey(this.prefix, p);
  }

  /** Where the partition count is recorded. */
  metaKey(): string {
    return `${this.prefix}:meta`;
  }

  /** Every key this log uses. */
  keys(): string[] {
    const keys = [this.metaKey()];
    for (let p = 0; p < this.partitions; p++) keys.push(this.streamKey(p), this.deadLetterKey(p));
    return keys;
  }

  /** Records the partition count for the prefix, or checks it against the recorded one. */
  async checkPartitions(): Promise<void> {
    let recorded: string | null;
    try {
      await this.redis.set(this.metaKey(), String(this.partitions), 'NX');
      recorded = await this.redis.get(this.metaKey());
    } catch (err) {
      throw this.unavailable('could not read the event log\'s partition count', err);
    }
    if (recorded !== String(this.partitions)) {
      throw new EventLogInputError(
        `the event log "${this.prefix}" has ${recorded} partitions, not ${this.partitions}: configure ${recorded}, or use another prefix`,
      );
    }
  }

  async publish(events: readonly PostEvent[]): Promise<void> {
    if (this.closed) throw new EventLogInputError('the event log is closed');
    checkPostEvents(events);
    if (events.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const e of events) {
      pipeline.xadd(
        this.streamKey(partitionOf(e.authorId, this.partitions)),
        'MAXLEN', '~', this.settings.maxLen,
        '*',
        EVENT_FIELD, encodePostEvent(e),
      );
    }
    let results: Array<[Error | null, unknown]> | null;
    try {
      results = await pipeline.exec();
    } catch (err) {
      throw this.unavailable(`could not append ${events.length} events`, err);
    }
    if (!results || results.length !== events.length) throw this.unavailable(`could not append ${events.length} events`, 'no reply');
    const failed = results.find(([err]) => err);
    if (failed) throw this.unavailable(`could not append ${events.length} events`, failed[0]);
  }

  async consume(options: ConsumeOptions): Promise<void> {
    const group = checkName('group', options.group);
    const consumer = checkName('consumer', options.consumer);
    if (this.closed) throw new EventLogInputError('the event log is closed');
    const run = new ConsumerLoop(this, this.settings, group, consumer, options, this.stopAll.signal).run();
    this.running.add(run);
    try {
      await run;
    } finally {
      this.running.delete(run);
    }
  }

  /** Creates the group on every partition stream (and the streams), from the start of each stream,
   * so events appended before the first consumer started are not missed. Resolves with the
   * partitions where the group was not there and was created (none when it was everywhere). */
  async ensureGroup(group: string): Promise<number[]> {
    checkName('group', group);
    const pipeline = this.redis.pipeline();
    for (let p = 0; p < this.partitions; p++) pipeline.xgroup('CREATE', this.streamKey(p), group, '0', 'MKSTREAM');
    const results = await this.exec(pipeline, `could not create consumer group ${group}`);
    const created: number[] = [];
    results.forEach(([err], p) => {
      if (!err) created.push(p);
      else if (!err.message.startsWith('BUSYGROUP')) throw this.unavailable(`could not create consumer group ${group}`, err);
    });
    return created;
  }

  /** Pending (delivered, unacknowledged) plus undelivered entries; a partition the group has not
   * read yet counts whole. Null when Redis cannot tell the lag. */
  async backlog(group: string): Promise<number | null> {
    const [pending, lag] = await Promise.all([this.pending(group), this.lag(group, true)]);
    return lag === null ? null : pending + lag;
  }

  /** Entries delivered to the group's consumers and not yet acknowledged, over all partitions. */
  async pending(group: string): Promise<number> {
    const pipeline = this.redis.pipeline();
    for (let p = 0; p < this.partitions; p++) pipeline.xpending(this.streamKey(p), group);
    const results = await this.exec(pipeline, 'could not read pending entries');
    let total = 0;
    for (const [err, reply] of results) {
      if (err) {
        if (isNoGroup(err)) continue;
        throw this.unavailable('could not read pending entries', err);
      }
      total += Number((reply as [number | string, ...unknown[]])[0]);
    }
    return total;
  }

  /** Entries not yet delivered to the group (Redis's lag), over all partitions; null when Redis cannot
   * tell (after deletions, or before Redis 7). With `pending`, the consumers' backlog. */
  async lag(group: string, countUnread = false): Promise<number | null> {
    const pipeline = this.redis.pipeline();
    for (let p = 0; p < this.partitions; p++) pipeline.xinfo('GROUPS', this.streamKey(p)).xlen(this.streamKey(p));
    const results = await this.exec(pipeline, 'could not read the consumer group');
    let total = 0;
    for (let p = 0; p < this.partitions; p++) {
      const [err, reply] = results[2 * p];
      if (err) {
        if (/no such key/i.test(err.message)) continue;
        throw this.unavailable('could not read the consumer group', err);
      }
      const groups = reply as unknown[][];
      // countUnread: a stream the group does not exist on yet waits whole.
      if (countUnread && !groups.some((info) => info.some((v, i) => i % 2 === 1 && info[i - 1] === 'name' && v === group))) {
        total += Number(results[2 * p + 1][1]);
        continue;
      }
      for (const info of groups) {
        const fields = new Map<string, unknown>();
        for (let i = 0; i + 1 < info.length; i += 2) fields.set(String(info[i]), info[i + 1]);
        if (fields.get('name') !== group) continue;
        const lag = fields.get('lag');
        if (lag === undefined || lag === null) return null;
        total += Number(lag);
      }
    }
    return total;
  }

  /** Dead letters of every partition, oldest first within a partition, up to `limit` per partition. */
  async readDeadLetters(limit = 1000): Promise<DeadLetter[]> {
    const pipeline = this.redis.pipeline();
    for (let p = 0; p < this.partitions; p++) pipeline.xrange(this.deadLetterKey(p), '-', '+', 'COUNT', limit);
    const results = await this.exec(pipeline, 'could not read dead letters');
    const letters: DeadLetter[] = [];
    results.forEach(([err, reply], p) => {
      if (err) throw this.unavailable('could not read dead letters', err);
      for (const [, flat] of reply as Array<[string, string[]]>) {
        const f = new Map<string, string>();
        for (let i = 0; i + 1 < flat.length; i += 2) f.set(flat[i], flat[i + 1]);
        const raw = f.get('raw') ?? '';
        let event: PostEvent | undefined;
        try {
          event = decodePostEvent(raw);
        } catch {
          event = undefined;
        }
        letters.push({
          partition: p,
          position: f.get('position') ?? '',
          raw,
          ...(event ? { event } : {}),
          group: f.get('group') ?? '',
          consumer: f.get('consumer') ?? '',
          deliveries: Number(f.get('deliveries') ?? 0),
          reason: f.get('reason') ?? '',
          at: Number(f.get('at') ?? 0),
        });
      }
    });
    return letters;
  }

  /** Deletes every key of this log: its streams, dead letters, groups and partition count. */
  async destroy(): Promise<void> {
    await this.redis.del(...this.keys());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopAll.abort();
    await Promise.allSettled([...this.running]);
    if (this.owned) {
      try {
        await this.redis.quit();
      } catch {
        this.redis.disconnect();
      }
    }
  }

  /** @internal The partition of one of this log's stream keys. */
  partitionOfKey(key: string): number {
    const p = this.keyToPartition.get(key);
    if (p === undefined) throw new Error(`unexpected stream ${key}`);
    return p;
  }

  /** @internal Runs a pipeline; a lost connection becomes EventLogUnavailableError. Per-command
   * errors stay in the replies. */
  async exec(pipeline: ReturnType<Redis['pipeline']>, what: string): Promise<Array<[Error | null, unknown]>> {
    try {
      return (await pipeline.exec()) ?? [];
    } catch (err) {
      throw this.unavailable(what, err);
    }
  }

  /** @internal */
  unavailable(what: string, err: unknown): EventLogUnavailableError {
    return new EventLogUnavailableError(`${what}: Redis at ${this.where}: ${message(err)}`, { cause: err });
  }
}

/**
 * Removes every consumer of the group (but the caller) that holds no pending entry and has not read
 * for ARGV[3] ms: a dead one (a live consumer reads every blockMs, far more often). One script, so
 * that a consumer that took an entry between the look and the removal is kept: XGROUP DELCONSUMER
 * drops a consumer's pending entries for good. Returns how many were removed.
 */
const REAP_CONSUMERS = new LuaScript(
  'reap-idle-consumers',
  `local removed = 0
for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local f = {}
  for i = 1, #c, 2 do f[c[i]] = c[i + 1] end
  if f['name'] ~= ARGV[2] and f['pending'] == 0 and f['idle'] >= tonumber(ARGV[3]) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], f['name'])
    removed = removed + 1
  end
end
return removed`,
);

/** One consumer's loop: claims, own pending entries, new entries; until stopped. */
class ConsumerLoop {
  private readonly state: PartitionState[];
  private readonly stop = new AbortController();
  /** A connection of its own for blocking reads; disconnected to interrupt one when stopping. */
  private readonly reader: Redis;
  /** The last handler error per entry (partition/id), for the dead letter's reason. */
  private readonly lastError = new Map<string, string>();
  private nextClaimAt = 0;
  private redisFailures = 0;
  /** The group must be (re)created: at the start, and after an error (the stream may be gone). */
  private needGroup = true;

  constructor(
    private readonly log: RedisStreamsLog,
    private readonly s: Settings,
    private readonly group: string,
    private readonly consumer: string,
    private readonly o: ConsumeOptions,
    closing: AbortSignal,
  ) {
    // Start with the consumer's own pending entries: a consumer restarted under its old name gets
    // back what it held when it stopped.
    this.state = Array.from({ length: s.partitions }, () => ({ history: true, retryAt: 0, failures: 0 }));
    this.reader = log.redis.duplicate({
      lazyConnect: true,
      // A blocking read must outlive its BLOCK; a dead connection still ends it.
      commandTimeout: s.blockMs + s.timeoutMs,
    });
    this.reader.on('error', () => {});
    this.signals = [o.signal, closing];
    for (const signal of this.signals) {
      if (signal.aborted) this.abort();
      else signal.addEventListener('abort', this.abort, { once: true });
    }
  }

  private readonly signals: AbortSignal[];
  private readonly abort = (): void => {
    this.stop.abort();
    this.reader.disconnect();
  };

  private get stopped(): boolean {
    return this.stop.signal.aborted;
  }

  private created(partitions: number[]): void {
    try {
      this.o.onGroupCreated?.(partitions);
    } catch (err) {
      this.report(err);
    }
  }

  private report(err: unknown): void {
    try {
      this.o.onError?.(err);
    } catch {
      // A reporting callback must not stop the consumer.
    }
  }

  async run(): Promise<void> {
    try {
      while (!this.stopped) {
        try {
          if (this.needGroup) {
            const created = await this.log.ensureGroup(this.group);
            this.needGroup = false;
            if (created.length > 0) this.created(created);
          }
          await this.step();
          this.redisFailures = 0;
        } catch (err) {
          if (this.stopped) break;
          if (err instanceof EventLogInputError) throw err;
          this.redisFailures++;
          this.needGroup = true;
          this.report(isNoGroup(err) || err instanceof EventLogUnavailableError ? err : this.log.unavailable(`consumer ${this.consumer} of ${this.group}`, err));
          await sleep(backoffDelay(this.redisFailures, this.s.retry), this.stop.signal);
        }
      }
    } finally {
      this.reader.disconnect();
      for (const signal of this.signals) signal.removeEventListener('abort', this.abort);
    }
  }

  /** One round: claim what dead consumers left (when due), retry own pending entries (when due),
   * read new entries. */
  private async step(): Promise<void> {
    const now = Date.now();
    if (now >= this.nextClaimAt) {
      await this.claimIdle();
      this.nextClaimAt = Date.now() + this.s.claimIntervalMs;
    }
    const due: number[] = [];
    for (let p = 0; p < this.s.partitions; p++) {
      const st = this.state[p];
      if (st.history && st.retryAt <= Date.now()) due.push(p);
    }
    if (due.length > 0) await this.handleOwnPending(due);
    if (this.stopped) return;

    const fresh: number[] = [];
    let wakeAt = this.nextClaimAt;
    for (let p = 0; p < this.s.partitions; p++) {
      const st = this.state[p];
      if (!st.history) fresh.push(p);
      else wakeAt = Math.min(wakeAt, st.retryAt);
    }
    const waitMs = Math.min(this.s.blockMs, Math.max(0, wakeAt - Date.now()));
    if (fresh.length > 0) await this.readNew(fresh, waitMs);
    else await sleep(waitMs, this.stop.signal);
  }

  /** XAUTOCLAIM, on every partition, of entries idle for minIdleMs (a dead consumer's); they become
   * this consumer's pending entries, handled before the partition's new ones. JUSTID: the claim does
   * not count as a delivery, the read that follows does. Then the consumers left holding nothing are
   * removed. */
  private async claimIdle(): Promise<void> {
    await this.claimEntries();
    const keys = Array.from({ length: this.s.partitions }, (_, p) => this.log.streamKey(p));
    // a live consumer blocked in XREADGROUP looks idle for up to blockMs: never taken for dead
    const deadAfterMs = Math.max(this.s.minIdleMs, 3 * this.s.blockMs);
    // housekeeping: a failure is reported and tried again at the next claim, never an outage of the loop
    try {
      const reaped = await REAP_CONSUMERS.runMany(this.log.redis, keys.map((key) => ({ keys: [key], args: [this.group, this.consumer, deadAfterMs] })));
      const failed = reaped.find(([err]) => err !== null);
      if (failed) this.report(this.log.unavailable(`removing dead consumers of ${this.group}`, failed[0]));
    } catch (err) {
      this.report(this.log.unavailable(`removing dead consumers of ${this.group}`, err));
    }
  }

  private async claimEntries(): Promise<void> {
    const pipeline = this.log.redis.pipeline();
    for (let p = 0; p < this.s.partitions; p++) {
      pipeline.xautoclaim(this.log.streamKey(p), this.group, this.consumer, this.s.minIdleMs, '0-0', 'COUNT', this.s.batchSize, 'JUSTID');
    }
    const results = (await pipeline.exec()) ?? [];
    results.forEach(([err, reply], p) => {
      if (err) throw err;
      const [, ids, deleted] = reply as [string, string[], string[] | undefined];
      if (ids.length > 0) this.state[p].history = true;
      if (deleted && deleted.length > 0) {
        this.report(new EventLogUnavailableError(
          `partition ${p}: ${deleted.length} pending entries were trimmed from the stream before they were acknowledged (maxLen too small?)`,
        ));
      }
    });
  }

  /** The head of this consumer's pending entries on each due partition, each handled on its own (so
   * a poison entry fails alone), dead-lettered when delivered more than maxAttempts times. */
  private async handleOwnPending(due: number[]): Promise<void> {
    const keys = due.map((p) => this.log.streamKey(p));
    const reply = (await this.reader.xreadgroup(
      'GROUP', this.group, this.consumer,
      'COUNT', 1,
      'STREAMS', ...keys, ...keys.map(() => '0'),
    )) as ReadReply;
    for (const [key, entries] of reply ?? []) {
      if (this.stopped) return;
      const p = this.log.partitionOfKey(key);
      const st = this.state[p];
      if (entries.length === 0) {
        st.history = false; // caught up: read new entries again
        continue;
      }
      const [id, fields] = entries[0];
      const stream = this.log.streamKey(p);
      if (fields === null) {
        await this.log.redis.xack(stream, this.group, id);
        this.report(new EventLogUnavailableError(`partition ${p}: pending entry ${id} was trimmed from the stream before it was acknowledged (maxLen too small?)`));
        continue;
      }
      const raw = fieldValue(fields, EVENT_FIELD);
      const pendingInfo = (await this.log.redis.xpending(stream, this.group, id, id, 1)) as Array<[string, string, number, number]>;
      if (pendingInfo.length === 0) continue; // acknowledged meanwhile (by a consumer that had it before us)
      const deliveries = Number(pendingInfo[0][3]);
      let event: PostEvent;
      try {
        event = decodePostEvent(raw ?? '');
      } catch (err) {
        await this.deadLetter(p, id, raw ?? '', deliveries, `malformed: ${message(err)}`, undefined);
        continue;
      }
      if (deliveries > this.s.maxAttempts) {
        const last = this.lastError.get(`${p}/${id}`);
        const reason = last
          ? `handler failed ${deliveries - 1} times; last: ${last}`
          : `delivered ${deliveries - 1} times without acknowledgement (its consumers died?)`;
        await this.deadLetter(p, id, raw ?? '', deliveries, reason, event);
        st.failures = 0;
        continue;
      }
      const ok = await this.handle([{ event, partition: p, position: id, deliveries, loggedAt: entryMs(id) }]);
      if (ok) {
        await this.ack([{ partition: p, position: id }]);
        st.failures = 0;
        st.retryAt = 0;
      } else {
        st.failures++;
        st.retryAt = Date.now() + backoffDelay(st.failures, this.s.retry);
      }
    }
  }

  /** New entries of the given partitions, one handler call for the batch. */
  private async readNew(partitions: number[], waitMs: number): Promise<void> {
    const keys = partitions.map((p) => this.log.streamKey(p));
    const block = waitMs >= 1 ? ['BLOCK', Math.round(waitMs)] : [];
    let reply: ReadReply;
    const readSince = Date.now();
    try {
      reply = (await this.reader.xreadgroup(
        'GROUP', this.group, this.consumer,
        'COUNT', this.s.batchSize,
        ...(block as ['BLOCK', number]),
        'STREAMS', ...keys, ...keys.map(() => '>'),
      )) as ReadReply;
    } catch (err) {
      // Stopping disconnects the reader mid-read. Anything Redis handed out to that read is pending
      // with this consumer and comes back to it, or to another, later.
      if (this.stopped) return;
      throw err;
    }
    if (!reply) return;
    const batch: DeliveredEvent[] = [];
    for (const [key, entries] of reply) {
      const p = this.log.partitionOfKey(key);
      for (const [id, fields] of entries) {
        const raw = fields ? fieldValue(fields, EVENT_FIELD) : undefined;
        try {
          batch.push({ event: decodePostEvent(raw ?? ''), partition: p, position: id, deliveries: 1, loggedAt: entryMs(id), readSince });
        } catch (err) {
          await this.deadLetter(p, id, raw ?? '', 1, `malformed: ${message(err)}`, undefined);
        }
      }
    }
    if (batch.length === 0) return;
    if (await this.handle(batch)) {
      await this.ack(batch);
      for (const d of batch) this.state[d.partition].failures = 0;
    } else {
      // Everything in the batch stays pending; each partition in it retries its pending entries,
      // one at a time, before reading new ones.
      const now = Date.now();
      for (const p of new Set(batch.map((d) => d.partition))) {
        const st = this.state[p];
        st.history = true;
        st.failures++;
        st.retryAt = now + backoffDelay(st.failures, this.s.retry);
      }
    }
  }

  /** Calls the handler; false when it threw (reported, remembered for the dead letter). */
  private async handle(batch: DeliveredEvent[]): Promise<boolean> {
    try {
      await this.o.handler(batch, this.stop.signal);
      for (const d of batch) this.lastError.delete(`${d.partition}/${d.position}`);
      return true;
    } catch (err) {
      const text = message(err);
      // Entries claimed away by other consumers never come back here: keep the memory bounded.
      if (this.lastError.size > 10_000) this.lastError.clear();
      for (const d of batch) this.lastError.set(`${d.partition}/${d.position}`, text);
      this.report(err);
      return false;
    }
  }

  /** XACK, retried while Redis is away (unless stopping: then the entries stay pending and come back). */
  private async ack(entries: ReadonlyArray<{ partition: number; position: string }>): Promise<void> {
    const byPartition = new Map<number, string[]>();
    for (const e of entries) {
      const ids = byPartition.get(e.partition);
      if (ids) ids.push(e.position);
      else byPartition.set(e.partition, [e.position]);
    }
    for (let attempt = 1; ; attempt++) {
      try {
        const pipeline = this.log.redis.pipeline();
        for (const [p, ids] of byPartition) pipeline.xack(this.log.streamKey(p), this.group, ...ids);
        const results = (await pipeline.exec()) ?? [];
        const failed = results.find(([err]) => err);
        if (failed) throw failed[0];
        return;
      } catch (err) {
        this.report(this.log.unavailable(`could not acknowledge ${entries.length} entries`, err));
        if (this.stopped) return;
        await sleep(backoffDelay(attempt, this.s.retry), this.stop.signal);
      }
    }
  }

  /** Moves an entry to its partition's dead-letter stream and acknowledges it, in one MULTI. */
  private async deadLetter(p: number, id: string, raw: string, deliveries: number, reason: string, event: PostEvent | undefined): Promise<void> {
    const at = Date.now();
    const results = await this.log.redis
      .multi()
      .xadd(
        this.log.deadLetterKey(p),
        'MAXLEN', '~', this.s.deadLetterMaxLen,
        '*',
        'raw', raw,
        'position', id,
        'group', this.group,
        'consumer', this.consumer,
        'deliveries', String(deliveries),
        'reason', reason,
        'at', String(at),
      )
      .xack(this.log.streamKey(p), this.group, id)
      .exec();
    const failed = results?.find(([err]) => err);
    if (!results || failed) throw failed?.[0] ?? new Error('dead-lettering was discarded');
    this.lastError.delete(`${p}/${id}`);
    const letter: DeadLetter = {
      partition: p, position: id, raw, ...(event ? { event } : {}),
      group: this.group, consumer: this.consumer, deliveries, reason, at,
    };
    try {
      this.o.onDeadLetter?.(letter);
    } catch {
      // A reporting callback must not stop the consumer.
    }
  }
}

/** The ms of a stream entry id ("1700000000000-0"): when Redis took the entry (ids made with '*'). */
function entryMs(id: string): number | undefined {
  const ms = Number(id.slice(0, id.indexOf('-')));
  return Number.isSafeInteger(ms) && ms > 0 ? ms : undefined;
}

function fieldValue(fields: string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}
