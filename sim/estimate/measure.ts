// `feedlab estimate --measure`: write real timelines into a Redis, read what they cost, compare
// with the memory model in core/redis-memory.ts, and remove every key written, also when the
// measurement is aborted or the process is interrupted.
//
// Shape of one scratch timeline (the reference server's): a sorted set whose members are 19-digit
// snowflake post ids (decimal strings, below 2^63) scored by 13-digit millisecond timestamps, with
// an EXPIRE like the 7-day lease. The key is `<prefix><run>:<i>` where <run> is `<pid>-<random>`,
// so a measurement only ever writes, reads and unlinks keys whose names it made itself.
//
// Two figures come back. MEMORY USAGE (SAMPLES 0) of a sample of the keys is what one timeline costs
// by Redis's own account (value, key name and dict entry). The INFO used_memory delta over all keys
// is what the instance really grows by: that adds the expires entry, the keyspace buckets and the
// allocator's fragmentation of skiplist nodes. The key names are longer than a real
// `feed:{u:ID}:home` (by about 16 bytes of allocation per key), which is under 1% of a timeline.

import { Redis } from 'ioredis';
import {
  NAIVE_BYTES_PER_ENTRY,
  timelineInstanceBytes,
  timelineNaiveBytes,
  zsetUsageBytes,
  ZSET_LISTPACK_MAX_ENTRIES,
} from '../../core/redis-memory.js';
import { InfrastructureError, InputError } from '../errors.js';
import { Rng } from '../../core/random.js';
import { redisUrlFromEnv, redactUrl as redactRedisUrl } from '../../core/service-url.js';
import { mean } from 'simple-statistics';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
export const DEFAULT_MEASURE_PREFIX = 'feedlab:measure:';
/** The timeline lease (DESIGN: TTL lease 7 days). The TTL's value does not change the memory. */
export const TIMELINE_LEASE_SECONDS = 7 * 24 * 3600;
/** More entries than this in one measurement is refused (about 2.6 GB of skiplist timelines). */
export const MAX_MEASURE_ENTRIES = 20_000_000;

const CONNECT_TIMEOUT_MS = 2_000;
const COMMAND_TIMEOUT_MS = 30_000;
const ENTRIES_PER_PIPELINE = 20_000;
const UNLINK_BATCH = 500;
const DEFAULT_SAMPLE = 64;
// Twitter's snowflake epoch: (ms - epoch) << 22 gives a 19-digit id for any date from 2020 to 2080.
const SNOWFLAKE_EPOCH_MS = 1_288_834_974_657n;
// Newest timestamp of the generated timelines (2025-06-15); entries go back over the 7-day lease.
const NEWEST_MS = 1_750_000_000_000;

export interface MeasureOptions {
  /** Default: REDIS_URL, else redis://127.0.0.1:6379. */
  redisUrl?: string;
  /** How many timelines to write (>= 1). */
  timelines: number;
  /** Entries per timeline (>= 1); > 128 gives the skiplist encoding, <= 128 the listpack. */
  entries: number;
  /** Base of the scratch key prefix; a unique `<pid>-<random>:` is always appended. */
  prefix?: string;
  /** Aborting stops the writes, removes every key written, then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Fraction (0..1) of the timelines written so far; 1 once the figures are read. */
  onProgress?: (fraction: number) => void;
  /** Keys read with MEMORY USAGE, spread evenly over the timelines. Default 64 (or all, if fewer). */
  sample?: number;
  /** Seed of the generated ids and timestamps. Default 1. */
  seed?: number;
  /** TTL of each scratch key. Default: the 7-day lease. */
  ttlSeconds?: number;
}

export interface MeasureResult {
  /** The Redis, password hidden. */
  redisUrl: string;
  redisVersion: string;
  /** The server's zset-max-listpack-entries, null when CONFIG is not allowed. */
  listpackMaxEntries: number | null;
  /** The full scratch prefix of this run (every key written started with it; none is left). */
  prefix: string;
  timelines: number;
  entries: number;
  totalEntries: number;
  /** OBJECT ENCODING of the sampled keys: 'listpack', 'skiplist', or 'mixed(a,b)'. */
  encoding: string;
  measured: {
    sampledKeys: number;
    /** Mean MEMORY USAGE ... SAMPLES 0 of the sampled keys. */
    usageBytesPerTimeline: number;
    usageBytesPerEntry: number;
    usageBytesMin: number;
    usageBytesMax: number;
    usedMemoryBefore: number;
    usedMemoryAfter: number;
    /** INFO used_memory after - before. */
    usedMemoryDelta: number;
    /** Growth of normal clients' buffers (our pipeline's query buffer) over the same span. */
    clientBuffersDelta: number;
    /** (usedMemoryDelta - clientBuffersDelta) / timelines. */
    instanceBytesPerTimeline: number;
    /** (usedMemoryDelta - clientBuffersDelta) / totalEntries. */
    instanceBytesPerEntry: number;
  };
  model: {
    encoding: 'listpack' | 'skiplist';
    /** zsetUsageBytes(entries) */
    usageBytesPerTimeline: number;
    usageBytesPerEntry: number;
    /** timelineInstanceBytes(entries) */
    instanceBytesPerTimeline: number;
    instanceBytesPerEntry: number;
  };
  /** measured / model. */
  ratio: { usage: number; instance: number };
  naive: {
    bytesPerEntry: number;
    bytesPerTimeline: number;
    /** measured instance bytes per entry / naive bytes per entry. */
    measuredOverNaive: number;
  };
  keysWritten: number;
  keysRemoved: number;
  /** Caveats worth printing beside the figures (encoding or config not as modelled, noisy delta). */
  notes: string[];
}

export { redisUrlFromEnv, redactUrl as redactRedisUrl } from '../../core/service-url.js';

/**
 * Open a connection that fails fast: 2 s to connect, no reconnects, no offline queue, so an
 * unreachable Redis is one InfrastructureError line and never an endless retry loop.
 */
export async function connectRedis(url: string): Promise<Redis> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InputError(`REDIS_URL "${url}" is not a URL (expected redis://host:port or rediss://...)`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new InputError(`REDIS_URL "${redactRedisUrl(url)}" must start with redis:// or rediss://`);
  }
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    commandTimeout: COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
    reconnectOnError: () => false,
  });
  // ioredis reports connection errors as events too; without a listener Node prints them.
  let firstError: unknown; // the cause; later ones are its consequences ("Connection is closed")
  client.on('error', (err) => {
    firstError ??= err;
  });
  // connectTimeout covers the TCP connect only; a peer that accepts and never answers (not a Redis,
  // or a stalled one) would hang the ready check, so the whole handshake gets the same bound.
  let timer: NodeJS.Timeout | undefined;
  const handshake = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CONNECT_TIMEOUT_MS / 1000} s`)), CONNECT_TIMEOUT_MS);
  });
  try {
    await Promise.race([client.connect(), handshake]);
  } catch (err) {
    client.disconnect();
    throw new InfrastructureError(`Redis at ${redactRedisUrl(url)} is unreachable (${connectErrorText(firstError ?? err)}); start it or set REDIS_URL`);
  } finally {
    clearTimeout(timer);
  }
  return client;
}

/** Glob-escape a literal for SCAN MATCH. */
export function escapeGlob(literal: string): string {
  return literal.replace(/[\\*?[\]]/g, (c) => `\\${c}`);
}

function errorText(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return e?.code && e.message && !e.message.includes(e.code) ? `${e.code}: ${e.message}` : (e?.message ?? String(err));
}

function connectErrorText(err: unknown): string {
  const text = errorText(err);
  return /protocol error/i.test(text) ? `something answered that does not speak the Redis protocol: ${text}` : text;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The measurement was aborted', 'AbortError');
}

function validate(opts: MeasureOptions): void {
  const positiveInt = (name: string, v: unknown) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new InputError(`${name} must be a whole number >= 1 (got ${String(v)})`);
  };
  positiveInt('timelines', opts.timelines);
  positiveInt('entries', opts.entries);
  if (opts.sample !== undefined) positiveInt('sample', opts.sample);
  if (opts.ttlSeconds !== undefined) positiveInt('ttlSeconds', opts.ttlSeconds);
  const total = opts.timelines * opts.entries;
  if (total > MAX_MEASURE_ENTRIES) {
    throw new InputError(`timelines x entries = ${total} is more than ${MAX_MEASURE_ENTRIES} entries; measure fewer timelines (a few thousand suffice)`);
  }
  if (opts.prefix !== undefined && (opts.prefix.length === 0 || /[\s]/.test(opts.prefix))) {
    throw new InputError(`prefix must be non-empty and without spaces (got "${opts.prefix}")`);
  }
}

function infoField(info: string, field: string): string | undefined {
  const m = new RegExp(`^${field}:(.*)$`, 'm').exec(info);
  return m ? m[1].trim() : undefined;
}

function infoNumber(info: string, field: string): number {
  const v = Number(infoField(info, field));
  return Number.isFinite(v) ? v : 0;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** INFO memory once the lazy-free thread has nothing pending (an earlier UNLINK would skew the delta). */
async function settledMemoryInfo(client: Redis, signal?: AbortSignal): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const info = await client.info('memory');
    if (infoNumber(info, 'lazyfree_pending_objects') === 0 || Date.now() > deadline) return info;
    if (signal?.aborted) return info;
    await sleep(20);
  }
}

/**
 * The ZADD arguments of one timeline: ascending timestamps over the lease window and snowflake ids
 * made from them ((ms - epoch) << 22 | worker/sequence bits), so members are distinct 19-digit
 * decimal strings below 2^63 and scores 13-digit integers, as the reference server writes them.
 */
export function timelineZaddArgs(rng: Rng, entries: number): Array<string | number> {
  const args: Array<string | number> = new Array(entries * 2);
  const spanMs = TIMELINE_LEASE_SECONDS * 1000;
  const stepMax = Math.max(2, Math.floor((2 * spanMs) / entries));
  let ms = NEWEST_MS - spanMs;
  for (let i = 0; i < entries; i++) {
    ms += 1 + (rng.uint32() % stepMax);
    const low = BigInt(rng.uint32() & 0x3fffff);
    args[2 * i] = ms;
    args[2 * i + 1] = (((BigInt(ms) - SNOWFLAKE_EPOCH_MS) << 22n) | low).toString();
  }
  return args;
}

/**
 * Write `timelines` x `entries` timeline zsets under a scratch prefix, read MEMORY USAGE and the
 * INFO used_memory delta, compare with the model, and remove every key written. Rejects with
 * InfrastructureError when Redis is unreachable or goes away, InputError on bad options, and the
 * signal's reason (an AbortError by default) when aborted; the keys are removed in every case
 * (if Redis itself has gone, they are left to expire with their TTL, and the error says so).
 */
export async function measureTimelineMemory(opts: MeasureOptions): Promise<MeasureResult> {
  validate(opts);
  const { timelines, entries, signal, onProgress } = opts;
  signal?.throwIfAborted();
  const url = opts.redisUrl ?? redisUrlFromEnv();
  const runId = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const prefix = `${opts.prefix ?? DEFAULT_MEASURE_PREFIX}${runId}:`;
  const keyOf = (i: number) => `${prefix}${i}`;
  const ttl = opts.ttlSeconds ?? TIMELINE_LEASE_SECONDS;
  const totalEntries = timelines * entries;

  const client = await connectRedis(url);
  let keysSent = 0; // keys 0..keysSent-1 may exist; cleanup unlinks exactly these names
  let outcome: { ok: true; result: MeasureResult } | { ok: false; error: unknown } | undefined;
  try {
    outcome = { ok: true, result: await run() };
  } catch (err) {
    outcome = { ok: false, error: err };
  }
  let keysRemoved = 0;
  try {
    keysRemoved = await removeKeys(client, url, prefix, keysSent);
  } catch (err) {
    const lost = new InfrastructureError(
      `could not remove the scratch keys ${prefix}* from Redis at ${redactRedisUrl(url)} (${errorText(err)}); ` +
        `they expire within ${ttl} s, or remove them with: redis-cli --scan --pattern '${escapeGlob(prefix)}*' | xargs redis-cli unlink`,
    );
    if (outcome.ok || !(outcome.error instanceof InfrastructureError)) outcome = { ok: false, error: lost };
  } finally {
    client.disconnect();
  }
  if (!outcome.ok) throw outcome.error;
  outcome.result.keysRemoved = keysRemoved;
  onProgress?.(1);
  return outcome.result;

  async function run(): Promise<MeasureResult> {
    const notes: string[] = [];
    const check = () => {
      if (signal?.aborted) throw abortReason(signal);
    };
    let serverInfo: string;
    let before: string;
    try {
      serverInfo = await client.info('server');
      before = await settledMemoryInfo(client, signal);
    } catch (err) {
      throw lostConnection(err);
    }
    check();
    const maxmemory = infoNumber(before, 'maxmemory');
    const need = timelines * timelineInstanceBytes(entries) * 1.25;
    if (maxmemory > 0 && infoNumber(before, 'used_memory') + need > maxmemory) {
      const mb = (b: number) => `${(b / 2 ** 20).toFixed(0)} MB`;
      throw new InputError(
        `the measurement needs about ${mb(need)} but Redis at ${redactRedisUrl(url)} has ${mb(Math.max(0, maxmemory - infoNumber(before, 'used_memory')))} ` +
          `left under maxmemory (writing more could evict other keys); measure fewer timelines`,
      );
    }
    let listpackMaxEntries: number | null = null;
    try {
      const cfg = (await client.config('GET', 'zset-max-listpack-entries')) as string[];
      if (cfg.length >= 2) listpackMaxEntries = Number(cfg[1]);
    } catch {
      // CONFIG is often disabled on managed Redis; OBJECT ENCODING below still tells the encoding.
    }
    if (listpackMaxEntries !== null && listpackMaxEntries !== ZSET_LISTPACK_MAX_ENTRIES) {
      notes.push(`this Redis has zset-max-listpack-entries ${listpackMaxEntries}; the model assumes ${ZSET_LISTPACK_MAX_ENTRIES}`);
    }

    // Writes, pipelined in chunks; the abort signal is honoured between chunks, and an in-flight
    // chunk is always awaited so that cleanup (on the same connection) runs after it.
    const rng = Rng.derive(opts.seed ?? 1, `measure:${entries}`);
    const perChunk = Math.max(1, Math.floor(ENTRIES_PER_PIPELINE / entries));
    for (let start = 0; start < timelines; start += perChunk) {
      check();
      const end = Math.min(timelines, start + perChunk);
      const pipeline = client.pipeline();
      for (let i = start; i < end; i++) {
        pipeline.zadd(keyOf(i), ...timelineZaddArgs(rng, entries));
        pipeline.expire(keyOf(i), ttl);
      }
      keysSent = end;
      let replies: Array<[Error | null, unknown]> | null;
      try {
        replies = await pipeline.exec();
      } catch (err) {
        throw lostConnection(err);
      }
      const failed = replies?.find(([e]) => e);
      if (!replies || failed) throw lostConnection(failed?.[0] ?? new Error('pipeline returned nothing'));
      onProgress?.(end / timelines);
    }
    check();

    let after: string;
    const usages: number[] = [];
    const encodings = new Set<string>();
    const sample = Math.min(timelines, opts.sample ?? DEFAULT_SAMPLE);
    try {
      after = await settledMemoryInfo(client, signal);
      for (let s = 0; s < sample; s++) {
        check();
        const key = keyOf(Math.floor((s * timelines) / sample));
        const [usage, encoding, card] = await Promise.all([
          client.call('MEMORY', 'USAGE', key, 'SAMPLES', '0') as Promise<number | null>,
          client.object('ENCODING', key) as Promise<string | null>,
          client.zcard(key),
        ]);
        if (usage === null || encoding === null || card !== entries) {
          throw new InfrastructureError(
            `scratch key ${key} holds ${card} entries instead of ${entries} (evicted or expired by the server?); the measurement is void`,
          );
        }
        usages.push(usage);
        encodings.add(encoding);
      }
    } catch (err) {
      throw lostConnection(err);
    }

    const usageMean = mean(usages);
    const usedMemoryBefore = infoNumber(before, 'used_memory');
    const usedMemoryAfter = infoNumber(after, 'used_memory');
    const usedMemoryDelta = usedMemoryAfter - usedMemoryBefore;
    const clientBuffersDelta = infoNumber(after, 'mem_clients_normal') - infoNumber(before, 'mem_clients_normal');
    const instanceDelta = usedMemoryDelta - clientBuffersDelta;
    const modelEncoding = entries > ZSET_LISTPACK_MAX_ENTRIES ? 'skiplist' : 'listpack';
    const encoding = encodings.size === 1 ? [...encodings][0] : `mixed(${[...encodings].sort().join(',')})`;
    if (encoding !== modelEncoding) notes.push(`Redis chose the ${encoding} encoding; the model assumes ${modelEncoding} for ${entries} entries`);
    const modelUsage = zsetUsageBytes(entries);
    const modelInstance = timelineInstanceBytes(entries);
    const usageBytesMin = Math.min(...usages);
    const usageBytesMax = Math.max(...usages);
    if (instanceDelta < usageMean * timelines * 0.5 || instanceDelta > usageMean * timelines * 2) {
      notes.push(
        `used_memory grew by ${usedMemoryDelta} B for ${timelines} timelines of ~${Math.round(usageMean)} B each: ` +
          `other clients were probably writing or freeing meanwhile; the instance-wide figure is unreliable (measure more timelines, on a quiet Redis)`,
      );
    }
    return {
      redisUrl: redactRedisUrl(url),
      redisVersion: infoField(serverInfo, 'redis_version') ?? 'unknown',
      listpackMaxEntries,
      prefix,
      timelines,
      entries,
      totalEntries,
      encoding,
      measured: {
        sampledKeys: usages.length,
        usageBytesPerTimeline: usageMean,
        usageBytesPerEntry: usageMean / entries,
        usageBytesMin,
        usageBytesMax,
        usedMemoryBefore,
        usedMemoryAfter,
        usedMemoryDelta,
        clientBuffersDelta,
        instanceBytesPerTimeline: instanceDelta / timelines,
        instanceBytesPerEntry: instanceDelta / totalEntries,
      },
      model: {
        encoding: modelEncoding,
        usageBytesPerTimeline: modelUsage,
        usageBytesPerEntry: modelUsage / entries,
        instanceBytesPerTimeline: modelInstance,
        instanceBytesPerEntry: modelInstance / entries,
      },
      ratio: { usage: usageMean / modelUsage, instance: instanceDelta / timelines / modelInstance },
      naive: {
        bytesPerEntry: NAIVE_BYTES_PER_ENTRY,
        bytesPerTimeline: timelineNaiveBytes(entries),
        measuredOverNaive: instanceDelta / totalEntries / NAIVE_BYTES_PER_ENTRY,
      },
      keysWritten: keysSent,
      keysRemoved: 0,
      notes,
    };
  }

  function lostConnection(err: unknown): unknown {
    if (err instanceof InfrastructureError || err instanceof InputError) return err;
    if (signal?.aborted && err === signal.reason) return err;
    return new InfrastructureError(`Redis at ${redactRedisUrl(url)} failed during the measurement (${errorText(err)})`);
  }
}

/**
 * UNLINK exactly the keys `<prefix>0 .. <prefix>(count-1)`, on the measuring connection when it is
 * still up (so it runs after any write in flight), else on a fresh one. Returns how many existed.
 */
async function removeKeys(client: Redis, url: string, prefix: string, count: number): Promise<number> {
  if (count === 0) return 0;
  let conn = client;
  let fresh: Redis | undefined;
  if (client.status !== 'ready') {
    fresh = await connectRedis(url);
    conn = fresh;
  }
  try {
    let removed = 0;
    for (let start = 0; start < count; start += UNLINK_BATCH) {
      const keys: string[] = [];
      for (let i = start; i < Math.min(count, start + UNLINK_BATCH); i++) keys.push(`${prefix}${i}`);
      removed += await conn.unlink(...keys);
    }
    return removed;
  } finally {
    fresh?.disconnect();
  }
}

export interface CleanupOnSignalOptions {
  /** Default: SIGINT and SIGTERM. */
  signals?: NodeJS.Signals[];
  /** Default: process.exit. Called with 128 + the signal number (130 for SIGINT, 143 for SIGTERM). */
  exit?: (code: number) => void;
  /** Where the one-line notices go. Default: stderr. */
  log?: (line: string) => void;
}

const FORCE_EXIT_GRACE_MS = 2_000;
const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

/**
 * Run `fn` with an AbortSignal that SIGINT/SIGTERM abort, for the duration only. On the first
 * signal `fn` is expected to stop and clean up (measureTimelineMemory removes its keys and
 * rejects); once it has settled the process exits with 128 + signal number (130 for Ctrl-C).
 * A further signal more than 2 s after the first exits at once (keys may then remain until their
 * TTL); one within 2 s, a reflexive double Ctrl-C, is ignored so the cleanup can finish.
 * Without a signal, returns (or throws) whatever `fn` does, and the handlers are removed.
 */
export async function withCleanupOnSignal<T>(fn: (signal: AbortSignal) => Promise<T>, options: CleanupOnSignalOptions = {}): Promise<T> {
  const signals = options.signals ?? ['SIGINT', 'SIGTERM'];
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const controller = new AbortController();
  let received: NodeJS.Signals | undefined;
  const exitCode = (sig: NodeJS.Signals) => 128 + (SIGNAL_NUMBERS[sig] ?? 2);
  let receivedAt = 0;
  const handler = (sig: NodeJS.Signals) => {
    if (received) {
      // A quick double Ctrl-C is a reflex, not a decision: cleanup takes milliseconds, so only a
      // signal after the grace period abandons it.
      if (Date.now() - receivedAt < FORCE_EXIT_GRACE_MS) return;
      log(`feedlab: interrupted again; scratch keys (${DEFAULT_MEASURE_PREFIX}* unless another prefix was given) may remain until their TTL expires`);
      exit(exitCode(sig));
      return;
    }
    received = sig;
    receivedAt = Date.now();
    log(`feedlab: ${sig}: removing the measurement's scratch keys before exiting (${sig} again after 2 s to stop at once)`);
    controller.abort(new DOMException(`interrupted by ${sig}`, 'AbortError'));
  };
  for (const s of signals) process.on(s, handler);
  try {
    const value = await fn(controller.signal);
    if (received) exit(exitCode(received));
    return value;
  } catch (err) {
    if (received) {
      if (!(err instanceof DOMException && err.name === 'AbortError')) log(`feedlab: ${errorText(err)}`);
      exit(exitCode(received));
    }
    throw err;
  } finally {
    for (const s of signals) process.off(s, handler);
  }
}
