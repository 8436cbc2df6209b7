// The Kafka event log against the brokers in KAFKA_BROKERS. No Kafka broker runs on the
// development machine, so these tests run only when KAFKA_BROKERS is set (docker compose, CI with a
// broker); otherwise they are skipped with one line. Each run uses topics of its own and deletes them.
// The refusal of an unreachable broker needs no broker and always runs.
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EventLogInputError, EventLogUnavailableError } from '../../../server/events/errors.js';
import type { DeadLetter, DeliveredEvent, PostEvent } from '../../../server/events/event-log.js';
import {
  handleKafkaBatch,
  kafkaBrokersFromEnv,
  openKafkaLog,
  type KafkaBatchContext,
  type KafkaBatchPayload,
  type KafkaDeadLetter,
  type KafkaEventLog,
  type KafkaLogOptions,
} from '../../../server/events/kafka.js';
import type { KafkaMessage } from 'kafkajs';
import { encodePostEvent } from '../../../server/events/event-log.js';

const BROKERS = process.env.KAFKA_BROKERS?.trim();
const RUN = `feedlab_test_${process.pid}_${randomBytes(3).toString('hex')}`;

if (!BROKERS) {
  console.warn('\n!!! SKIPPED test/server/events/kafka.test.ts (Kafka event log): KAFKA_BROKERS is not set (no broker runs on this machine) !!!\n');
}

function created(authorId: number, seq: number): PostEvent {
  return { kind: 'PostCreated', postId: String(1_000_000_000_000 + authorId * 100_000 + seq), authorId, createdAt: 1_780_000_000_000 + seq };
}

async function waitFor(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('Kafka event log without a broker', () => {
  it('reads the brokers from KAFKA_BROKERS', () => {
    expect(kafkaBrokersFromEnv({ KAFKA_BROKERS: ' a:1, b:2 ,' })).toEqual(['a:1', 'b:2']);
    expect(kafkaBrokersFromEnv({})).toEqual(['127.0.0.1:9092']);
  });

  it('refuses bad options and an unreachable broker with one line', async () => {
    await expect(openKafkaLog({ topic: 'bad topic' })).rejects.toThrow(EventLogInputError);
    await expect(openKafkaLog({ maxAttempts: 0 })).rejects.toThrow(/maxAttempts 0/);
    const opening = openKafkaLog({ brokers: ['127.0.0.1:1'], connectionTimeoutMs: 500, logLevel: 'nothing' });
    await expect(opening).rejects.toThrow(EventLogUnavailableError);
    await expect(opening).rejects.toThrow(/^Kafka at 127\.0\.0\.1:1: .*KAFKA_BROKERS$/);
  });
});

/** A scripted eachBatch payload for partition 3 of topic t, recording what happens in order. */
function scriptedBatch(values: Array<string>, firstOffset = 10) {
  const steps: string[] = [];
  let running = true;
  const messages = values.map((value, i) => ({
    key: Buffer.from('k'), value: Buffer.from(value), offset: String(firstOffset + i),
    timestamp: '0', attributes: 0, headers: {}, size: 0,
  })) as unknown as KafkaMessage[];
  const payload: KafkaBatchPayload = {
    batch: { topic: 't', partition: 3, messages },
    resolveOffset: (offset) => void steps.push(`resolve ${offset}`),
    heartbeat: async () => {},
    commitOffsetsIfNecessary: async (offsets) => {
      const p = offsets!.topics[0].partitions[0];
      steps.push(`commit ${p.partition}@${p.offset}`);
    },
    isRunning: () => running,
    isStale: () => false,
  };
  return { payload, steps, stopRunning: () => void (running = false) };
}

function batchContext(handler: KafkaBatchContext['handler'], extra: Partial<KafkaBatchContext> = {}) {
  const letters: KafkaDeadLetter[] = [];
  const ctx: KafkaBatchContext = {
    handler,
    signal: new AbortController().signal,
    maxAttempts: 3,
    retry: { initialMs: 1, maxMs: 2 },
    report: () => {},
    deadLetter: async (l) => void letters.push(l),
    ...extra,
  };
  return { ctx, letters };
}

describe('Kafka batch handling (no broker needed)', () => {
  const events = Array.from({ length: 5 }, (_, i) => created(i, i));

  it('heartbeats while a slow handler runs, so the consumer keeps its partitions', async () => {
    const { payload, steps } = scriptedBatch(events.map(encodePostEvent));
    let beats = 0;
    payload.heartbeat = async () => void beats++;
    const { ctx } = batchContext(async () => {
      await new Promise((r) => setTimeout(r, 130));
      steps.push('handled');
    }, { heartbeatEveryMs: 20 });
    await handleKafkaBatch(payload, ctx);
    expect(beats).toBeGreaterThanOrEqual(3);
    const after = beats;
    await new Promise((r) => setTimeout(r, 60));
    expect(beats).toBe(after); // the timer stops with the handler
    expect(steps).toEqual(['handled', 'resolve 14', 'commit 3@15']);
  });

  it('commits past the batch only after its handler resolved', async () => {
    const { payload, steps } = scriptedBatch(events.map(encodePostEvent));
    const { ctx } = batchContext(async (batch) => {
      steps.push(`handle ${batch.map((d) => d.position).join(',')}`);
    });
    await handleKafkaBatch(payload, ctx);
    expect(steps).toEqual(['handle 10,11,12,13,14', 'resolve 14', 'commit 3@15']);
  });

  it('after a failed batch, retries message by message in order and dead-letters the poison after maxAttempts', async () => {
    const { payload, steps } = scriptedBatch(events.map(encodePostEvent));
    let poisonCalls = 0;
    const { ctx, letters } = batchContext(async (batch) => {
      if (batch.some((d) => d.position === '12')) {
        poisonCalls++;
        throw new Error('poison');
      }
      steps.push(`handle ${batch.map((d) => `${d.position}#${d.deliveries}`).join(',')}`);
    });
    await handleKafkaBatch(payload, ctx);
    expect(poisonCalls).toBe(3);
    expect(letters.map((l) => [l.message.offset, l.deliveries, l.reason])).toEqual([['12', 3, 'handler failed 3 times; last: poison']]);
    expect(letters[0].event).toEqual(events[2]);
    expect(steps).toEqual([
      'handle 10#2', 'resolve 10', 'commit 3@11',
      'handle 11#2', 'resolve 11', 'commit 3@12',
      'resolve 12', 'commit 3@13',
      'handle 13#2', 'resolve 13', 'commit 3@14',
      'handle 14#2', 'resolve 14', 'commit 3@15',
    ]);
  });

  it('dead-letters a malformed message without handing it to the handler', async () => {
    const { payload, steps } = scriptedBatch([encodePostEvent(events[0]), 'garbage', encodePostEvent(events[1])]);
    const { ctx, letters } = batchContext(async (batch) => void steps.push(`handle ${batch.map((d) => d.position).join(',')}`));
    await handleKafkaBatch(payload, ctx);
    expect(steps).toEqual(['handle 10,12', 'resolve 12', 'commit 3@13']);
    expect(letters).toHaveLength(1);
    expect(letters[0].message.offset).toBe('11');
    expect(letters[0].reason).toMatch(/^malformed: not JSON/);
  });

  it('stops retrying when the consumer stops, leaving the failing message uncommitted', async () => {
    const { payload, steps } = scriptedBatch(events.map(encodePostEvent));
    const ac = new AbortController();
    const { ctx, letters } = batchContext(
      async (batch) => {
        if (batch.some((d) => d.position === '11')) {
          ac.abort();
          throw new Error('fails as we stop');
        }
        steps.push(`handle ${batch.map((d) => d.position).join(',')}`);
      },
      { signal: ac.signal, maxAttempts: 100, retry: { initialMs: 60_000, maxMs: 60_000 } },
    );
    const t0 = Date.now();
    await handleKafkaBatch(payload, ctx);
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(steps).toEqual([]);
    expect(letters).toEqual([]);
  });
});

describe.skipIf(!BROKERS)('Kafka event log', () => {
  const brokers = kafkaBrokersFromEnv();
  const topics: string[] = [];
  const opened: KafkaEventLog[] = [];
  let serial = 0;
  let admin: ReturnType<Kafka['admin']>;

  async function openLog(options: KafkaLogOptions = {}): Promise<KafkaEventLog> {
    const topic = `${RUN}_${++serial}`;
    topics.push(topic, `${topic}.dead`);
    const log = await openKafkaLog({ brokers, topic, partitions: 4, retry: { initialMs: 10, maxMs: 50 }, sessionTimeoutMs: 10_000, logLevel: 'error', ...options });
    opened.push(log);
    return log;
  }

  function startConsumer(log: KafkaEventLog, group: string, consumer: string, handler: (b: readonly DeliveredEvent[]) => Promise<void>, onDeadLetter?: (d: DeadLetter) => void) {
    const ac = new AbortController();
    const done = log.consume({ group: `${RUN}_${group}`, consumer, handler, signal: ac.signal, onDeadLetter });
    return { stop: () => ac.abort(), done };
  }

  beforeAll(async () => {
    admin = new Kafka({ clientId: 'feedlab-test-admin', brokers, logLevel: logLevel.ERROR }).admin();
    await admin.connect();
  });

  afterEach(async () => {
    for (const log of opened.splice(0)) await log.close();
  });

  afterAll(async () => {
    if (!admin) return;
    const existing = new Set(await admin.listTopics());
    const mine = topics.filter((t) => existing.has(t));
    if (mine.length > 0) await admin.deleteTopics({ topics: mine });
    await admin.disconnect();
  });

  it('delivers every event once, in each author\'s order', async () => {
    const log = await openLog();
    const published: PostEvent[] = [];
    for (let seq = 0; seq < 20; seq++) for (let a = 0; a < 10; a++) published.push(created(a, seq));
    for (let i = 0; i < published.length; i += 50) await log.publish(published.slice(i, i + 50));
    const seen: DeliveredEvent[] = [];
    const c = startConsumer(log, 'order', 'c1', async (batch) => void seen.push(...batch));
    await waitFor('every event', () => seen.length >= published.length);
    c.stop();
    await c.done;
    expect(seen).toHaveLength(published.length);
    for (let a = 0; a < 10; a++) {
      expect(seen.filter((d) => d.event.authorId === a).map((d) => d.event)).toEqual(published.filter((e) => e.authorId === a));
    }
    // Committed: a new consumer of the group starts after them.
    const again: DeliveredEvent[] = [];
    await log.publish([created(3, 99)]);
    const c2 = startConsumer(log, 'order', 'c2', async (batch) => void again.push(...batch));
    await waitFor('the new event', () => again.length >= 1);
    await new Promise((r) => setTimeout(r, 500));
    c2.stop();
    await c2.done;
    expect(again.map((d) => d.event)).toEqual([created(3, 99)]);
  });

  it('delivers a batch whose handler threw again, and dead-letters a poison message after maxAttempts', async () => {
    const log = await openLog({ maxAttempts: 3 });
    const events = Array.from({ length: 8 }, (_, i) => created(i, i));
    const poison = events[5];
    await log.publish(events);
    const ok: string[] = [];
    let poisonCalls = 0;
    let firstCall = true;
    const letters: DeadLetter[] = [];
    const c = startConsumer(
      log,
      'poison',
      'c1',
      async (batch) => {
        if (firstCall) {
          firstCall = false;
          throw new Error('transient');
        }
        if (batch.some((d) => d.event.postId === poison.postId)) {
          poisonCalls++;
          throw new Error('poison');
        }
        ok.push(...batch.map((d) => d.event.postId));
      },
      (d) => letters.push(d),
    );
    await waitFor('the dead letter and the good events', () => letters.length === 1 && ok.length >= 7);
    c.stop();
    await c.done;
    expect(new Set(ok)).toEqual(new Set(events.filter((e) => e !== poison).map((e) => e.postId)));
    expect(letters[0].event).toEqual(poison);
    expect(letters[0].reason).toMatch(/handler failed 3 times/);
    expect(poisonCalls).toBeLessThanOrEqual(3);
  });
});
