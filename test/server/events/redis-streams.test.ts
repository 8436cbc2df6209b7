// The Redis Streams event log against this machine's Redis (REDIS_URL, default 127.0.0.1:6379):
// delivery once with per-author order, redelivery after a handler failure, a dead consumer's
// entries claimed by the living after min-idle, poison and malformed entries dead-lettered, prompt
// stops, and the outbox relay feeding it. Every test works under its own key prefix and deletes it.
// Without a reachable Redis these tests are skipped with one loud line, except under CI=true.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { keySlot } from '../../../core/keys.js';
import { EventLogInputError, EventLogUnavailableError } from '../../../server/events/errors.js';
import type { DeadLetter, DeliveredEvent, PostEvent } from '../../../server/events/event-log.js';
import { openRedisStreamsLog, type RedisStreamsLog, type RedisStreamsOptions } from '../../../server/events/redis-streams.js';
import { MemoryOutbox, OutboxRelay } from '../../../server/events/relay.js';

const REDIS_URL = process.env.REDIS_URL?.trim() || 'redis://127.0.0.1:6379';
const CI = process.env.CI === 'true';
const RUN = `feedlab:test:events:${process.pid}-${randomBytes(3).toString('hex')}`;

async function probe(url: string): Promise<string | null> {
  try {
    const log = await openRedisStreamsLog({ url, prefix: `${RUN}:probe`, timeoutMs: 2_000 });
    await log.destroy();
    await log.close();
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

const unreachable = await probe(REDIS_URL);
if (unreachable && !CI) {
  console.warn(`\n!!! SKIPPED test/server/events/redis-streams.test.ts (Redis event log): ${unreachable} (under CI=true this fails) !!!\n`);
}

function created(authorId: number, seq: number): PostEvent {
  return {
    kind: 'PostCreated',
    postId: String(1_000_000_000_000 + authorId * 100_000 + seq),
    authorId,
    createdAt: 1_780_000_000_000 + seq,
    bodyLength: 10 + (seq % 200),
  };
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

let admin: Redis;
const opened: RedisStreamsLog[] = [];
let serial = 0;

/** A log under a prefix of its own, deleted after the test. */
async function openLog(options: RedisStreamsOptions = {}): Promise<RedisStreamsLog> {
  const log = await openRedisStreamsLog({
    url: REDIS_URL,
    prefix: `${RUN}:${++serial}`,
    blockMs: 100,
    retry: { initialMs: 5, maxMs: 20 },
    ...options,
  });
  opened.push(log);
  return log;
}

/** Runs a consumer; returns its stop function and the promise of its end. */
function startConsumer(
  log: RedisStreamsLog,
  group: string,
  consumer: string,
  handler: (batch: readonly DeliveredEvent[], signal: AbortSignal) => Promise<void>,
  extra: { onError?: (e: unknown) => void; onDeadLetter?: (d: DeadLetter) => void } = {},
) {
  const ac = new AbortController();
  const done = log.consume({ group, consumer, handler, signal: ac.signal, ...extra });
  return { stop: () => ac.abort(), done };
}

/** Keys under a prefix, by SCAN. */
async function keysUnder(prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found;
}

describe.skipIf(unreachable !== null && !CI)('Redis Streams event log', () => {
  beforeAll(async () => {
    if (unreachable) throw new Error(`CI=true and ${unreachable}`);
    admin = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  });

  afterEach(async () => {
    for (const log of opened.splice(0)) {
      await log.close();
      await admin.del(...log.keys());
    }
  });

  afterAll(async () => {
    if (!admin) return;
    const left = await keysUnder(RUN);
    if (left.length > 0) await admin.del(...left);
    admin.disconnect();
    expect(left).toEqual([]);
  });

  it('keeps each partition\'s stream and dead letters on one slot, and refuses another partition count', async () => {
    const log = await openLog({ partitions: 16 });
    expect(log.keys()).toHaveLength(1 + 2 * 16);
    for (let p = 0; p < 16; p++) {
      expect(log.streamKey(p)).toMatch(new RegExp(`^${RUN}:\\d+:\\{p${p}\\}:log$`));
      expect(keySlot(log.deadLetterKey(p))).toBe(keySlot(log.streamKey(p)));
    }
    const again = openRedisStreamsLog({ url: REDIS_URL, prefix: log.prefix, partitions: 8 });
    await expect(again).rejects.toThrow(EventLogInputError);
    await expect(again).rejects.toThrow(/has 16 partitions, not 8/);
    await expect(log.publish([{ ...created(1, 1), postId: 'x' }])).rejects.toThrow(EventLogInputError);
  });

  it('delivers every event once, in each author\'s order, to one consumer and to a group of two', async () => {
    const log = await openLog({ partitions: 8, batchSize: 64 });
    const authors = 40;
    const perAuthor = 25;
    const published: PostEvent[] = [];
    for (let seq = 0; seq < perAuthor; seq++) for (let a = 0; a < authors; a++) published.push(created(a, seq));
    for (let i = 0; i < published.length; i += 100) await log.publish(published.slice(i, i + 100));
    const total = published.length;

    // One consumer: each author's events in publishing order, each once.
    const seen: DeliveredEvent[] = [];
    const one = startConsumer(log, 'solo', 'c1', async (batch) => void seen.push(...batch));
    await waitFor('all events', () => seen.length >= total);
    await delay(150);
    one.stop();
    await one.done;
    expect(seen).toHaveLength(total);
    expect(new Set(seen.map((d) => d.event.postId)).size).toBe(total);
    for (let a = 0; a < authors; a++) {
      const got = seen.filter((d) => d.event.authorId === a).map((d) => d.event.postId);
      expect(got).toEqual(published.filter((e) => e.authorId === a).map((e) => e.postId));
    }
    expect(seen.every((d) => d.deliveries === 1 && d.partition === d.event.authorId % 8)).toBe(true);
    expect(await log.pending('solo')).toBe(0);

    // Another group on the same streams, two consumers: every event to exactly one of them, each
    // consumer seeing each author's events in order.
    const byConsumer = new Map<string, DeliveredEvent[]>([['a', []], ['b', []]]);
    const slow = async (name: string, batch: readonly DeliveredEvent[]) => {
      byConsumer.get(name)!.push(...batch);
      await delay(2);
    };
    const a = startConsumer(log, 'pair', 'a', (b) => slow('a', b));
    const b = startConsumer(log, 'pair', 'b', (bb) => slow('b', bb));
    const count = () => byConsumer.get('a')!.length + byConsumer.get('b')!.length;
    await waitFor('all events in the pair', () => count() >= total);
    await delay(150);
    a.stop();
    b.stop();
    await Promise.all([a.done, b.done]);
    const all = [...byConsumer.get('a')!, ...byConsumer.get('b')!].map((d) => d.event.postId);
    expect(all).toHaveLength(total);
    expect(new Set(all).size).toBe(total);
    for (const got of byConsumer.values()) {
      for (let au = 0; au < authors; au++) {
        const ids = got.filter((d) => d.event.authorId === au).map((d) => BigInt(d.event.postId));
        for (let i = 1; i < ids.length; i++) expect(ids[i] > ids[i - 1]).toBe(true);
      }
    }
    expect(await log.pending('pair')).toBe(0);
    expect(await log.lag('pair')).toBe(0);
  });

  it('says whether an event found its consumer waiting: the read that delivered it began before the log took it', async () => {
    const log = await openLog({ partitions: 2, batchSize: 64 });
    // one event waiting in the log before the consumer reads, one published while it waits
    await log.publish([created(1, 0)]);
    await delay(5);
    const seen: DeliveredEvent[] = [];
    const c = startConsumer(log, 'idle', 'c1', async (batch) => void seen.push(...batch));
    await waitFor('the waiting event', () => seen.length >= 1);
    await delay(50);
    await log.publish([created(2, 0)]);
    await waitFor('the new event', () => seen.length >= 2);
    c.stop();
    await c.done;
    const [waited, found] = seen;
    expect(waited.loggedAt! < waited.readSince!).toBe(true);
    expect(found.loggedAt! >= found.readSince!).toBe(true);
    // the read that took it had waited about 50 ms by then: stamped when it began, not when it returned
    expect(found.loggedAt! - found.readSince!).toBeGreaterThanOrEqual(40);
  });

  it('counts the fan-out backlog: events no consumer has read (also before the group exists) plus those in hand', async () => {
    const log = await openLog({ partitions: 4 });
    await log.publish(Array.from({ length: 10 }, (_, i) => created(i % 3, i)));
    expect(await log.backlog('bk')).toBe(10); // no group yet: every event waits
    // created on every partition the first time, found there the second
    expect(await log.ensureGroup('bk')).toEqual([0, 1, 2, 3]);
    expect(await log.ensureGroup('bk')).toEqual([]);
    expect(await log.backlog('bk')).toBe(10);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let got = 0;
    const c = startConsumer(log, 'bk', 'c1', async (batch) => {
      got += batch.length;
      await gate;
    });
    await waitFor('delivered', () => got >= 1);
    expect(await log.backlog('bk')).toBe(10); // in hand or still waiting, none handled
    release();
    await waitFor('all handled', async () => (await log.backlog('bk')) === 0);
    c.stop();
    await c.done;
    expect(got).toBe(10);
  });

  it('leaves the entries of a batch whose handler threw pending, and delivers them again', async () => {
    const log = await openLog({ partitions: 4 });
    const events = [created(1, 1), created(2, 1), created(1, 2)];
    await log.publish(events);
    let calls = 0;
    const handled: DeliveredEvent[] = [];
    const pendingSeen: Array<[string, string, number, number]> = [];
    const errors: unknown[] = [];
    const c = startConsumer(
      log,
      'g',
      'c1',
      async (batch) => {
        if (++calls === 1) throw new Error('fan-out failed');
        // Redelivered: still pending (unacknowledged) with this consumer while its handler runs.
        for (const d of batch) {
          const info = (await admin.xpending(log.streamKey(d.partition), 'g', d.position, d.position, 1)) as Array<[string, string, number, number]>;
          pendingSeen.push(...info);
        }
        handled.push(...batch);
      },
      { onError: (e) => errors.push(e) },
    );
    await waitFor('three handled', () => handled.length >= 3);
    await waitFor('acknowledged', async () => (await log.pending('g')) === 0);
    c.stop();
    await c.done;
    expect(handled.map((d) => d.event.postId).sort()).toEqual(events.map((e) => e.postId).sort());
    expect(handled.every((d) => d.deliveries === 2)).toBe(true);
    expect(pendingSeen).toHaveLength(3);
    for (const [, consumer, , deliveries] of pendingSeen) {
      expect(consumer).toBe('c1');
      expect(Number(deliveries)).toBe(2);
    }
    // Author 1's events, both in partition 1, were retried in their order.
    expect(handled.filter((d) => d.event.authorId === 1).map((d) => d.event.postId)).toEqual([events[0].postId, events[2].postId]);
    expect((errors[0] as Error).message).toBe('fan-out failed');
  });

  it('has a dead consumer\'s pending entries claimed after min-idle and handled once by the survivor', async () => {
    const minIdleMs = 400;
    const log = await openLog({ partitions: 4, minIdleMs, claimIntervalMs: 50 });
    const events = Array.from({ length: 20 }, (_, i) => created(i % 5, i));
    await log.publish(events);

    // The doomed consumer takes everything and dies before acknowledging any of it.
    let doomedGot = 0;
    let deliveredAt = 0;
    const doomed = startConsumer(log, 'g', 'doomed', async (batch, signal) => {
      doomedGot += batch.length;
      deliveredAt = Date.now();
      await new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('killed'))));
    });
    await waitFor('the doomed consumer to hold everything', () => doomedGot === 20);
    doomed.stop();
    await doomed.done;
    const held = (await admin.xpending(log.streamKey(0), 'g')) as [number, string, string, Array<[string, string]>];
    expect(held[3]).toEqual([['doomed', String(events.filter((e) => e.authorId % 4 === 0).length)]]);
    expect(await log.pending('g')).toBe(20);

    const survivor: Array<{ d: DeliveredEvent; at: number }> = [];
    const s = startConsumer(log, 'g', 'survivor', async (batch) => {
      for (const d of batch) survivor.push({ d, at: Date.now() });
    });
    await waitFor('the survivor to handle everything', () => survivor.length >= 20);
    await waitFor('acknowledged', async () => (await log.pending('g')) === 0);
    await delay(100);
    // the dead consumer, holding nothing once its entries were claimed, is gone from every
    // partition's group; the living one stays (restarts under new names do not pile up)
    const consumers = async () => {
      const names = new Set<string>();
      for (let p = 0; p < 4; p++) {
        for (const c of (await admin.xinfo('CONSUMERS', log.streamKey(p), 'g')) as unknown[][]) names.add(String(c[c.indexOf('name') + 1]));
      }
      return [...names].sort();
    };
    await waitFor('the dead consumer removed', async () => !(await consumers()).includes('doomed'));
    expect(await consumers()).toEqual(['survivor']);
    s.stop();
    await s.done;

    expect(survivor).toHaveLength(20);
    expect(new Set(survivor.map((x) => x.d.event.postId)).size).toBe(20);
    expect(survivor.every((x) => x.d.deliveries === 2)).toBe(true);
    // Not claimed before they had been idle for min-idle.
    const first = Math.min(...survivor.map((x) => x.at));
    expect(first - deliveredAt).toBeGreaterThanOrEqual(minIdleMs - 20);
    // Each author's events in order.
    for (let a = 0; a < 5; a++) {
      const ids = survivor.filter((x) => x.d.event.authorId === a).map((x) => x.d.event.postId);
      expect(ids).toEqual(events.filter((e) => e.authorId === a).map((e) => e.postId));
    }
  });

  it('gives a consumer restarted under its old name its pending entries back at once', async () => {
    const log = await openLog({ partitions: 2, minIdleMs: 60_000 });
    await log.publish([created(1, 1), created(2, 2)]);
    let got = 0;
    const first = startConsumer(log, 'g', 'worker-1', async (batch, signal) => {
      got += batch.length;
      await new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('killed'))));
    });
    await waitFor('the first run to hold both', () => got === 2);
    first.stop();
    await first.done;
    const again: DeliveredEvent[] = [];
    const t0 = Date.now();
    const second = startConsumer(log, 'g', 'worker-1', async (batch) => void again.push(...batch));
    await waitFor('the restarted consumer to handle both', () => again.length === 2, 2_000);
    expect(Date.now() - t0).toBeLessThan(1_000);
    second.stop();
    await second.done;
    expect(await log.pending('g')).toBe(0);
  });

  it('moves a poison entry to the dead-letter stream after the configured attempts, and a malformed one at once', async () => {
    const log = await openLog({ partitions: 4, maxAttempts: 3 });
    const events = Array.from({ length: 10 }, (_, i) => created(i, i));
    const poison = events[6];
    await log.publish(events);
    await admin.xadd(log.streamKey(2), '*', 'event', '{"kind":"PostCreated","postId":"oops"}');

    const ok: string[] = [];
    let poisonCalls = 0;
    const letters: DeadLetter[] = [];
    const c = startConsumer(
      log,
      'g',
      'c1',
      async (batch) => {
        if (batch.some((d) => d.event.postId === poison.postId)) {
          poisonCalls++;
          throw new Error(`cannot fan out ${poison.postId}`);
        }
        ok.push(...batch.map((d) => d.event.postId));
      },
      { onDeadLetter: (d) => letters.push(d) },
    );
    await waitFor('two dead letters', () => letters.length === 2);
    await waitFor('the good events', () => ok.length >= 9);
    await waitFor('acknowledged', async () => (await log.pending('g')) === 0);
    c.stop();
    await c.done;

    expect(ok.sort()).toEqual(events.filter((e) => e !== poison).map((e) => e.postId).sort());
    expect(poisonCalls).toBe(3);
    const stored = await log.readDeadLetters();
    expect(stored).toHaveLength(2);
    const malformed = stored.find((d) => d.event === undefined)!;
    expect(malformed.partition).toBe(2);
    expect(malformed.reason).toMatch(/^malformed: postId "oops"/);
    const dead = stored.find((d) => d.event !== undefined)!;
    expect(dead.event).toEqual(poison);
    expect(dead.partition).toBe(poison.authorId % 4);
    expect(dead.deliveries).toBe(4);
    expect(dead.reason).toBe(`handler failed 3 times; last: cannot fan out ${poison.postId}`);
    expect(dead.group).toBe('g');
    expect(dead.consumer).toBe('c1');
    expect(letters.map((l) => l.position).sort()).toEqual(stored.map((l) => l.position).sort());
    // The partition goes on: a later event of the poison's author is handled.
    const c2 = startConsumer(log, 'g', 'c1', async (batch) => void ok.push(...batch.map((d) => d.event.postId)));
    await log.publish([created(poison.authorId, 99)]);
    await waitFor('the later event', () => ok.includes(created(poison.authorId, 99).postId));
    c2.stop();
    await c2.done;
  });

  it('stops promptly when aborted during a blocking read, and close() stops every consumer', async () => {
    const log = await openLog({ blockMs: 5_000 });
    const c = startConsumer(log, 'g', 'c1', async () => {});
    await delay(300);
    let t0 = Date.now();
    c.stop();
    await c.done;
    expect(Date.now() - t0).toBeLessThan(300);

    const d = startConsumer(log, 'g', 'c2', async () => {});
    const e = startConsumer(log, 'g', 'c3', async () => {});
    await delay(300);
    t0 = Date.now();
    await log.close();
    await Promise.all([d.done, e.done]);
    expect(Date.now() - t0).toBeLessThan(500);
    await expect(log.publish([created(1, 1)])).rejects.toThrow(/closed/);
  });

  it('carries outbox rows through the relay to a consumer, each once, in order', async () => {
    const log = await openLog({ partitions: 4 });
    const outbox = new MemoryOutbox();
    const events = Array.from({ length: 300 }, (_, i) => created(i % 9, i));
    for (const e of events.slice(0, 150)) outbox.append(e);
    const got: PostEvent[] = [];
    const consumer = startConsumer(log, 'fanout', 'w1', async (batch) => void got.push(...batch.map((d) => d.event)));
    const relay = new OutboxRelay({ source: outbox, log, batchSize: 50, idleMs: 10 });
    const ac = new AbortController();
    const relaying = relay.run(ac.signal);
    for (const e of events.slice(150)) outbox.append(e);
    relay.nudge();
    await waitFor('every event consumed', () => got.length >= 300);
    ac.abort();
    await relaying;
    await delay(100);
    consumer.stop();
    await consumer.done;
    expect(outbox.unpublished()).toEqual([]);
    expect(got).toHaveLength(300);
    for (let a = 0; a < 9; a++) {
      expect(got.filter((e) => e.authorId === a)).toEqual(events.filter((e) => e.authorId === a));
    }
  });
});

describe('Redis Streams event log without Redis', () => {
  it('refuses an unreachable Redis with one line naming it, password redacted', async () => {
    const t0 = Date.now();
    const opening = openRedisStreamsLog({ url: 'redis://:secret@127.0.0.1:1', timeoutMs: 1_000 });
    await expect(opening).rejects.toThrow(EventLogUnavailableError);
    await expect(opening).rejects.toThrow(/^Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1\/? is unreachable \(.+\); start it or set REDIS_URL$/);
    expect(Date.now() - t0).toBeLessThan(3_000);
  });

  it('refuses bad options before connecting', async () => {
    await expect(openRedisStreamsLog({ prefix: 'bad{prefix}' })).rejects.toThrow(EventLogInputError);
    await expect(openRedisStreamsLog({ partitions: 0 })).rejects.toThrow(/partition count 0/);
    await expect(openRedisStreamsLog({ url: 'http://127.0.0.1' })).rejects.toThrow(/must start with redis:\/\//);
  });
});
