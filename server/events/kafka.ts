// The event log on Kafka (kafkajs), for FEED_BUS=kafka.
//
// Events go to the topic `post_events` keyed by author id, so the default (murmur2, Java-compatible)
// partitioner keeps one author's events in one partition, in order. The producer waits for every
// in-sync replica (acks -1) and keeps one request in flight, so a retried send cannot reorder.
//
// Consumers join a consumer group and get whole partitions. Offsets are committed by hand, only after
// the handler resolved for everything up to them (autoCommit off, eachBatchAutoResolve off), so a
// consumer that dies, or a partition that moves in a rebalance, makes the next owner start after the
// last batch that was handled: at-least-once. A batch whose handler throws is retried message by
// message (so a poison message fails alone) with a bounded exponential backoff, in order, and the
// partition waits behind it; a message whose handler failed maxAttempts times, or that does not
// decode, is sent to the dead-letter topic (`post_events.dead`) and committed past. Kafka keeps no
// delivery count: attempts are counted in the consumer, so a message that crashes its consumer every
// time is retried by each new owner (they start counting again).
import { Kafka, logLevel as KafkaLogLevel, Partitioners, type Batch, type EachBatchPayload, type KafkaMessage, type Producer } from 'kafkajs';
import { backoffDelay, sleep, type BackoffOptions } from './backoff.js';
import { EventLogInputError, EventLogUnavailableError } from './errors.js';
import {
  checkName,
  checkPartitionCount,
  checkPostEvents,
  decodePostEvent,
  DEFAULT_PARTITIONS,
  encodePostEvent,
  type BatchHandler,
  type ConsumeOptions,
  type DeadLetter,
  type DeliveredEvent,
  type EventLog,
  type PostEvent,
} from './event-log.js';

import { DEFAULT_KAFKA_BROKERS } from '../service-settings.js';

export { DEFAULT_KAFKA_BROKERS };
export const DEFAULT_TOPIC = 'post_events';

export interface KafkaLogOptions {
  /** host:port of the bootstrap brokers. Defaults to $KAFKA_BROKERS (comma-separated), then 127.0.0.1:9092. */
  readonly brokers?: readonly string[];
  /** A Kafka client to use instead of one made from `brokers`. */
  readonly kafka?: Kafka;
  /** Default "feedlab"; consumers add their name to it. */
  readonly clientId?: string;
  /** Default "post_events". */
  readonly topic?: string;
  /** Default "<topic>.dead". */
  readonly deadLetterTopic?: string;
  /** Create the topics when missing (default true), with this many partitions (default 16) and
   * this replication factor (default 1, for a single-node broker). */
  readonly createTopics?: boolean;
  readonly partitions?: number;
  readonly replicationFactor?: number;
  /** Handler failures on a message before it is dead-lettered. Default 5. */
  readonly maxAttempts?: number;
  /** Waiting before a failed message is retried. Default 100 ms doubling to 5 s. */
  readonly retry?: BackoffOptions;
  /** Connection timeout, ms. Default 3,000. */
  readonly connectionTimeoutMs?: number;
  /** Consumer session timeout, ms (a consumer silent this long loses its partitions). Default 30,000. */
  readonly sessionTimeoutMs?: number;
  /** kafkajs's own logging: 'nothing' | 'error' | 'warn' | 'info' | 'debug'. Default 'warn'. */
  readonly logLevel?: 'nothing' | 'error' | 'warn' | 'info' | 'debug';
}

/** Brokers from $KAFKA_BROKERS ("host:port,host:port"), or the local default. */
export function kafkaBrokersFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  const list = (env.KAFKA_BROKERS ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  return list.length > 0 ? list : [...DEFAULT_KAFKA_BROKERS];
}

const TOPIC = /^[A-Za-z0-9._-]{1,249}$/;

function message(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

function levelOf(name: KafkaLogOptions['logLevel']): KafkaLogLevel {
  switch (name ?? 'warn') {
    case 'nothing': return KafkaLogLevel.NOTHING;
    case 'error': return KafkaLogLevel.ERROR;
    case 'info': return KafkaLogLevel.INFO;
    case 'debug': return KafkaLogLevel.DEBUG;
    default: return KafkaLogLevel.WARN;
  }
}

interface Settings {
  readonly brokers: string[];
  readonly clientId: string;
  readonly topic: string;
  readonly deadLetterTopic: string;
  readonly createTopics: boolean;
  readonly partitions: number;
  readonly replicationFactor: number;
  readonly maxAttempts: number;
  readonly retry: BackoffOptions;
  readonly connectionTimeoutMs: number;
  readonly sessionTimeoutMs: number;
  readonly logLevel: KafkaLogLevel;
}

function settingsFrom(o: KafkaLogOptions): Settings {
  const topic = o.topic ?? DEFAULT_TOPIC;
  const deadLetterTopic = o.deadLetterTopic ?? `${topic}.dead`;
  for (const t of [topic, deadLetterTopic]) {
    if (!TOPIC.test(t)) throw new EventLogInputError(`topic ${JSON.stringify(t)} must be 1-249 characters of letters, digits and . _ -`);
  }
  const int = (what: string, v: number | undefined, dflt: number): number => {
    if (v === undefined) return dflt;
    if (!Number.isSafeInteger(v) || v < 1) throw new EventLogInputError(`${what} ${v} is not an integer >= 1`);
    return v;
  };
  const retry = o.retry ?? { initialMs: 100, maxMs: 5_000 };
  if (!(retry.initialMs >= 0) || !(retry.maxMs >= retry.initialMs)) {
    throw new EventLogInputError(`retry backoff ${retry.initialMs}..${retry.maxMs} ms is not a range`);
  }
  return {
    brokers: o.brokers ? [...o.brokers] : kafkaBrokersFromEnv(),
    clientId: checkName('client', o.clientId ?? 'feedlab'),
    topic,
    deadLetterTopic,
    createTopics: o.createTopics ?? true,
    partitions: checkPartitionCount(o.partitions ?? DEFAULT_PARTITIONS),
    replicationFactor: int('replicationFactor', o.replicationFactor, 1),
    maxAttempts: int('maxAttempts', o.maxAttempts, 5),
    retry,
    connectionTimeoutMs: int('connectionTimeoutMs', o.connectionTimeoutMs, 3_000),
    sessionTimeoutMs: int('sessionTimeoutMs', o.sessionTimeoutMs, 30_000),
    logLevel: levelOf(o.logLevel),
  };
}

function newKafka(s: Settings, clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers: s.brokers,
    connectionTimeout: s.connectionTimeoutMs,
    logLevel: s.logLevel,
    // Bounded: an unreachable broker fails the call within seconds, and the caller backs off.
    retry: { retries: 3, initialRetryTime: 200, maxRetryTime: 2_000 },
  });
}

/**
 * Opens the log: connects a producer and creates the topics when missing. Throws
 * EventLogUnavailableError when the brokers are unreachable, EventLogInputError on a bad option.
 */
export async function openKafkaLog(options: KafkaLogOptions = {}): Promise<KafkaEventLog> {
  const s = settingsFrom(options);
  const kafka = options.kafka ?? newKafka(s, s.clientId);
  const where = s.brokers.join(',');
  if (s.createTopics) {
    const admin = kafka.admin();
    try {
      await admin.connect();
      const existing = new Set(await admin.listTopics());
      const missing = [s.topic, s.deadLetterTopic].filter((t) => !existing.has(t));
      if (missing.length > 0) {
        await admin.createTopics({
          waitForLeaders: true,
          topics: missing.map((topic) => ({ topic, numPartitions: s.partitions, replicationFactor: s.replicationFactor })),
        });
      }
    } catch (err) {
      throw new EventLogUnavailableError(`Kafka at ${where}: could not create the topics (${message(err)}); start it or set KAFKA_BROKERS`, { cause: err });
    } finally {
      await admin.disconnect().catch(() => {});
    }
  }
  const producer = kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: false,
    // Order within a partition survives retries; duplicates are possible, as everywhere here.
    maxInFlightRequests: 1,
    idempotent: false,
  });
  try {
    await producer.connect();
  } catch (err) {
    throw new EventLogUnavailableError(`Kafka at ${where} is unreachable (${message(err)}); start it or set KAFKA_BROKERS`, { cause: err });
  }
  return new KafkaEventLog(kafka, producer, s, options.kafka === undefined);
}

export class KafkaEventLog implements EventLog {
  readonly topic: string;
  readonly deadLetterTopic: string;
  private readonly stopAll = new AbortController();
  private readonly running = new Set<Promise<void>>();
  private closed = false;

  /** Use openKafkaLog, which connects and creates the topics. */
  constructor(
    private readonly kafka: Kafka,
    private readonly producer: Producer,
    private readonly s: Settings,
    /** Whether consumers get a Kafka client of their own (named after them). */
    private readonly ownsKafka: boolean,
  ) {
    this.topic = s.topic;
    this.deadLetterTopic = s.deadLetterTopic;
  }

  /** The group's lag: each partition's high watermark less its committed offset (or low watermark
   * when nothing is committed yet), summed. */
  async backlog(group: string): Promise<number | null> {
    const admin = this.kafka.admin();
    try {
      await admin.connect();
      const [ends, committed] = await Promise.all([
        admin.fetchTopicOffsets(this.topic),
        admin.fetchOffsets({ groupId: group, topics: [this.topic] }),
      ]);
      const done = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
      let total = 0n;
      for (const p of ends) {
        const high = BigInt(p.high);
        const c = done.get(p.partition) ?? -1n;
        const from = c < 0n ? BigInt(p.low) : c;
        if (high > from) total += high - from;
      }
      return Number(total);
    } catch (err) {
      throw new EventLogUnavailableError(`Kafka at ${this.s.brokers.join(',')}: could not read the lag of ${group} (${message(err)})`, { cause: err });
    } finally {
      await admin.disconnect().catch(() => {});
    }
  }

  async publish(events: readonly PostEvent[]): Promise<void> {
    if (this.closed) throw new EventLogInputError('the event log is closed');
    checkPostEvents(events);
    if (events.length === 0) return;
    try {
      await this.producer.send({
        topic: this.s.topic,
        acks: -1,
        messages: events.map((e) => ({ key: String(e.authorId), value: encodePostEvent(e) })),
      });
    } catch (err) {
      throw new EventLogUnavailableError(`could not append ${events.length} events: Kafka at ${this.s.brokers.join(',')}: ${message(err)}`, { cause: err });
    }
  }

  async consume(options: ConsumeOptions): Promise<void> {
    const group = checkName('group', options.group);
    const consumerName = checkName('consumer', options.consumer);
    if (this.closed) throw new EventLogInputError('the event log is closed');
    const run = this.runConsumer(group, consumerName, options);
    this.running.add(run);
    try {
      await run;
    } finally {
      this.running.delete(run);
    }
  }

  private async runConsumer(group: string, consumerName: string, o: ConsumeOptions): Promise<void> {
    const stop = new AbortController();
    const onStop = () => stop.abort();
    for (const signal of [o.signal, this.stopAll.signal]) {
      if (signal.aborted) stop.abort();
      else signal.addEventListener('abort', onStop, { once: true });
    }
    if (stop.signal.aborted) return;
    const kafka = this.ownsKafka ? newKafka(this.s, `${this.s.clientId}-${consumerName}`) : this.kafka;
    const consumer = kafka.consumer({
      groupId: group,
      sessionTimeout: this.s.sessionTimeoutMs,
      heartbeatInterval: heartbeatIntervalMs(this.s.sessionTimeoutMs),
      allowAutoTopicCreation: false,
    });
    const report = (err: unknown) => {
      try {
        o.onError?.(err);
      } catch {
        // A reporting callback must not stop the consumer.
      }
    };
    // A crash kafkajs does not restart from ends the consumer with an error.
    let crashed: (err: unknown) => void = () => {};
    const crash = new Promise<never>((_, reject) => {
      crashed = reject;
    });
    crash.catch(() => {});
    consumer.on(consumer.events.CRASH, (e) => {
      const error = e.payload.error;
      if (e.payload.restart) report(error);
      else crashed(new EventLogUnavailableError(`Kafka consumer ${consumerName} of ${group} stopped: ${message(error)}`, { cause: error }));
    });
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [this.s.topic], fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        eachBatch: (payload) =>
          handleKafkaBatch(payload, {
            handler: o.handler,
            signal: stop.signal,
            maxAttempts: this.s.maxAttempts,
            retry: this.s.retry,
            report,
            deadLetter: (letter) => this.deadLetter(letter, o),
            heartbeatEveryMs: heartbeatIntervalMs(this.s.sessionTimeoutMs),
          }),
      });
    } catch (err) {
      await consumer.disconnect().catch(() => {});
      if (stop.signal.aborted) return;
      throw new EventLogUnavailableError(`Kafka at ${this.s.brokers.join(',')}: consumer ${consumerName} of ${group} could not start (${message(err)})`, { cause: err });
    }
    const stopped = new Promise<void>((resolve) => {
      if (stop.signal.aborted) resolve();
      else stop.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    try {
      await Promise.race([stopped, crash]);
    } finally {
      // Waits for the batch in hand; its handler sees the abort. Nothing unhandled is committed.
      await consumer.disconnect().catch(() => {});
      for (const signal of [o.signal, this.stopAll.signal]) signal.removeEventListener('abort', onStop);
    }
  }

  /** Sends a message to the dead-letter topic (headers say where it was from and why). */
  private async deadLetter(l: KafkaDeadLetter, o: ConsumeOptions): Promise<void> {
    const at = Date.now();
    try {
      await this.producer.send({
        topic: this.s.deadLetterTopic,
        acks: -1,
        messages: [{
          key: l.message.key ?? null,
          value: l.raw,
          headers: {
            partition: String(l.partition),
            position: l.message.offset,
            group: o.group,
            consumer: o.consumer,
            deliveries: String(l.deliveries),
            reason: l.reason,
            at: String(at),
          },
        }],
      });
    } catch (err) {
      throw new EventLogUnavailableError(`could not dead-letter message ${l.partition}/${l.message.offset}: ${message(err)}`, { cause: err });
    }
    const letter: DeadLetter = {
      partition: l.partition, position: l.message.offset, raw: l.raw, ...(l.event ? { event: l.event } : {}),
      group: o.group, consumer: o.consumer, deliveries: l.deliveries, reason: l.reason, at,
    };
    try {
      o.onDeadLetter?.(letter);
    } catch {
      // A reporting callback must not stop the consumer.
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopAll.abort();
    await Promise.allSettled([...this.running]);
    await this.producer.disconnect().catch(() => {});
  }
}

/** A message to move to the dead-letter topic. */
export interface KafkaDeadLetter {
  readonly partition: number;
  readonly message: KafkaMessage;
  readonly raw: string;
  readonly deliveries: number;
  readonly reason: string;
  readonly event?: PostEvent;
}

/** What handleKafkaBatch needs besides the batch. */
export interface KafkaBatchContext {
  readonly handler: BatchHandler;
  /** Aborts when the consumer stops: waits end, nothing more is handled or committed. */
  readonly signal: AbortSignal;
  readonly maxAttempts: number;
  readonly retry: BackoffOptions;
  readonly report: (err: unknown) => void;
  readonly deadLetter: (letter: KafkaDeadLetter) => Promise<void>;
  /** Heartbeat this often while the handler runs (default 3 s). */
  readonly heartbeatEveryMs?: number;
}

/** kafkajs heartbeats only when eachBatch calls heartbeat(); a tenth of the session timeout leaves room. */
export function heartbeatIntervalMs(sessionTimeoutMs: number): number {
  return Math.max(100, Math.floor(sessionTimeoutMs / 10));
}

/**
 * Run a handler call while heartbeating: the fan-out handler may wait out a Redis or Postgres
 * outage or write a large fan-out for longer than the session timeout, and a silent consumer loses
 * its partitions to a rebalance (the batch is then handled twice). A failed heartbeat (a rebalance
 * under way) is reported; the batch's commit then fails as stale and the new owner redoes it.
 */
async function withHeartbeat<T>(run: () => Promise<T>, heartbeat: () => Promise<void>, everyMs: number, report: (err: unknown) => void): Promise<T> {
  let beating = false;
  const timer = setInterval(() => {
    if (beating) return;
    beating = true;
    heartbeat().then(
      () => (beating = false),
      (err) => {
        beating = false;
        report(err);
      },
    );
  }, everyMs);
  try {
    return await run();
  } finally {
    clearInterval(timer);
  }
}

/** The part of kafkajs's eachBatch payload handleKafkaBatch uses. */
export interface KafkaBatchPayload {
  readonly batch: Pick<Batch, 'topic' | 'partition' | 'messages'>;
  resolveOffset: EachBatchPayload['resolveOffset'];
  heartbeat: EachBatchPayload['heartbeat'];
  commitOffsetsIfNecessary: EachBatchPayload['commitOffsetsIfNecessary'];
  isRunning: EachBatchPayload['isRunning'];
  isStale: EachBatchPayload['isStale'];
}

/**
 * One eachBatch call (one partition's batch): the whole batch to the handler; when it throws, each
 * message on its own, in order, with backoff, dead-lettered after maxAttempts failed handler calls.
 * The offset is committed (explicitly, past the message) only after the handler resolved for every
 * message up to it. When the consumer stops or loses the partition mid-way, it returns with the rest
 * uncommitted, so the partition's next owner starts at the first unhandled message.
 */
export async function handleKafkaBatch(payload: KafkaBatchPayload, ctx: KafkaBatchContext): Promise<void> {
  const { batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale } = payload;
  const partition = batch.partition;
  const messages = batch.messages;
  if (messages.length === 0) return;
  const commitThrough = async (m: KafkaMessage) => {
    resolveOffset(m.offset);
    await commitOffsetsIfNecessary({
      topics: [{ topic: batch.topic, partitions: [{ partition, offset: (BigInt(m.offset) + 1n).toString() }] }],
    });
  };
  const goOn = () => !ctx.signal.aborted && isRunning() && !isStale();
  const beatMs = ctx.heartbeatEveryMs ?? 3_000;

  type Item = { m: KafkaMessage; raw: string; event?: PostEvent; error: string };
  const items: Item[] = messages.map((m) => {
    const raw = m.value?.toString('utf8') ?? '';
    try {
      return { m, raw, event: decodePostEvent(raw), error: '' };
    } catch (err) {
      return { m, raw, error: message(err) };
    }
  });
  const delivered = (i: Item, deliveries: number): DeliveredEvent => ({
    event: i.event as PostEvent,
    partition,
    position: i.m.offset,
    deliveries,
    ...(Number(i.m.timestamp) > 0 ? { loggedAt: Number(i.m.timestamp) } : {}),
  });
  const malformed = (i: Item) =>
    ctx.deadLetter({ partition, message: i.m, raw: i.raw, deliveries: 1, reason: `malformed: ${i.error}` });

  // The whole batch at once: the common case. Malformed messages are dead-lettered, not handled.
  const deliverable = items.filter((i) => i.event !== undefined);
  let handled = deliverable.length === 0;
  if (!handled) {
    try {
      await withHeartbeat(() => ctx.handler(deliverable.map((i) => delivered(i, 1)), ctx.signal), heartbeat, beatMs, ctx.report);
      handled = true;
    } catch (err) {
      ctx.report(err);
    }
  }
  if (handled) {
    for (const i of items) if (i.event === undefined) await malformed(i);
    await commitThrough(messages[messages.length - 1]);
    return;
  }

  // It failed: one message at a time, in order, each with its own attempts (the batch was the first).
  for (const i of items) {
    if (!goOn()) return;
    if (i.event === undefined) {
      await malformed(i);
      await commitThrough(i.m);
      continue;
    }
    let failures = 1;
    let lastError = '';
    for (;;) {
      if (failures >= ctx.maxAttempts) {
        const reason = `handler failed ${failures} times; last: ${lastError || 'failed in its batch'}`;
        await ctx.deadLetter({ partition, message: i.m, raw: i.raw, deliveries: failures, reason, event: i.event });
        await commitThrough(i.m);
        break;
      }
      await sleep(backoffDelay(failures, ctx.retry), ctx.signal);
      if (!goOn()) return;
      await heartbeat();
      try {
        await withHeartbeat(() => ctx.handler([delivered(i, failures + 1)], ctx.signal), heartbeat, beatMs, ctx.report);
        await commitThrough(i.m);
        break;
      } catch (err) {
        failures++;
        lastError = message(err);
        ctx.report(err);
      }
    }
  }
}
