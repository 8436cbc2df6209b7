// The outbox relay against an in-memory outbox and scripted publishers: every row reaches the log
// at least once, in order, and no row is marked published before its publish resolved.
import { describe, expect, it } from 'vitest';
import type { PostEvent } from '../../../server/events/event-log.js';
import { MemoryOutbox, OutboxRelay, PublishTimeoutError, type OutboxRow } from '../../../server/events/relay.js';

function created(authorId: number, seq: number): PostEvent {
  return { kind: 'PostCreated', postId: String(1_000_000_000 + seq), authorId, createdAt: 1_780_000_000_000 + seq };
}

async function waitFor(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A publisher that fails the calls `failOn` says, takes `latencyMs`, and records what it appended
 * (only once the publish is about to resolve). */
function scriptedPublisher(failOn: (call: number) => boolean, latencyMs = 1) {
  const appended: string[] = [];
  const resolved = new Set<string>();
  const callTimes: number[] = [];
  let calls = 0;
  return {
    appended,
    resolved,
    callTimes,
    get calls() {
      return calls;
    },
    async publish(events: readonly PostEvent[]): Promise<void> {
      const call = ++calls;
      callTimes.push(Date.now());
      await new Promise((r) => setTimeout(r, latencyMs));
      if (failOn(call)) throw new Error(`log down (call ${call})`);
      for (const e of events) {
        appended.push(e.postId);
        resolved.add(e.postId);
      }
    },
  };
}

/** An outbox that checks, when rows are marked, that their publish already resolved. */
function checkedOutbox(resolved: Set<string>, n: number) {
  const outbox = new MemoryOutbox();
  const rows: OutboxRow[] = [];
  for (let i = 0; i < n; i++) rows.push(outbox.append(created(i % 7, i)));
  const byId = new Map(rows.map((r) => [r.id, r]));
  const premature: string[] = [];
  const source = {
    claim: (limit: number) => outbox.claim(limit),
    markPublished: async (ids: readonly string[]) => {
      for (const id of ids) if (!resolved.has(byId.get(id)!.event.postId)) premature.push(id);
      await outbox.markPublished(ids);
    },
  };
  return { outbox, rows, source, premature };
}

describe('outbox relay', () => {
  it('with a flaky log publishes every row exactly once, in order, and marks none before its publish resolved', async () => {
    // Fails the first 3 calls, then every 4th.
    const log = scriptedPublisher((call) => call <= 3 || call % 4 === 0);
    const { outbox, rows, source, premature } = checkedOutbox(log.resolved, 250);
    const errors: unknown[] = [];
    const relay = new OutboxRelay({ source, log, batchSize: 40, idleMs: 5, retry: { initialMs: 1, maxMs: 8 }, onError: (e) => errors.push(e) });
    const ac = new AbortController();
    const running = relay.run(ac.signal);
    await waitFor('every row marked', () => outbox.unpublished().length === 0);
    ac.abort();
    const stats = await running;

    expect(log.appended).toEqual(rows.map((r) => r.event.postId));
    expect(outbox.markedOrder).toEqual(rows.map((r) => r.id));
    expect(premature).toEqual([]);
    expect(stats.published).toBe(250);
    expect(stats.batches).toBe(7);
    expect(stats.failures).toBe(errors.length);
    expect(stats.failures).toBeGreaterThanOrEqual(3 + 1);
  });

  it('backs off exponentially up to the cap while the log is down, and resumes when it returns', async () => {
    let down = true;
    const log = scriptedPublisher(() => down, 0);
    const { outbox, source, premature } = checkedOutbox(log.resolved, 5);
    const relay = new OutboxRelay({ source, log, idleMs: 5, retry: { initialMs: 20, maxMs: 80 } });
    const ac = new AbortController();
    const running = relay.run(ac.signal);
    await waitFor('seven attempts', () => log.calls >= 7);
    expect(outbox.markedOrder).toEqual([]);
    const gaps = log.callTimes.slice(1, 7).map((t, i) => t - log.callTimes[i]);
    const expected = [20, 40, 80, 80, 80, 80];
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(expected[i] - 2);
      expect(gap).toBeLessThan(expected[i] + 60);
    });
    down = false;
    await waitFor('rows marked after recovery', () => outbox.unpublished().length === 0);
    ac.abort();
    await running;
    expect(premature).toEqual([]);
  });

  it('retries a failed mark without publishing again', async () => {
    const log = scriptedPublisher(() => false);
    const { outbox, rows, source } = checkedOutbox(log.resolved, 30);
    let markCalls = 0;
    const flakySource = {
      claim: source.claim,
      markPublished: async (ids: readonly string[]) => {
        if (++markCalls <= 2) throw new Error('database away');
        await source.markPublished(ids);
      },
    };
    const relay = new OutboxRelay({ source: flakySource, log, batchSize: 10, idleMs: 5, retry: { initialMs: 1, maxMs: 4 } });
    const ac = new AbortController();
    const running = relay.run(ac.signal);
    await waitFor('every row marked', () => outbox.unpublished().length === 0);
    ac.abort();
    await running;
    expect(log.calls).toBe(3);
    expect(log.appended).toEqual(rows.map((r) => r.event.postId));
  });

  it('treats a publish that hangs past the timeout as failed and publishes again', async () => {
    let calls = 0;
    const appended: string[] = [];
    const log = {
      async publish(events: readonly PostEvent[]): Promise<void> {
        if (++calls === 1) return new Promise<void>(() => {}); // never settles
        for (const e of events) appended.push(e.postId);
      },
    };
    const outbox = new MemoryOutbox();
    for (let i = 0; i < 3; i++) outbox.append(created(1, i));
    const errors: unknown[] = [];
    const relay = new OutboxRelay({ source: outbox, log, publishTimeoutMs: 50, idleMs: 5, retry: { initialMs: 1, maxMs: 1 }, onError: (e) => errors.push(e) });
    const ac = new AbortController();
    const running = relay.run(ac.signal);
    await waitFor('rows marked', () => outbox.unpublished().length === 0);
    ac.abort();
    await running;
    expect(errors[0]).toBeInstanceOf(PublishTimeoutError);
    expect(appended).toHaveLength(3);
  });

  it('stops at once when aborted while backing off, marking nothing', async () => {
    const log = scriptedPublisher(() => true, 0);
    const { outbox, source } = checkedOutbox(log.resolved, 3);
    const relay = new OutboxRelay({ source, log, retry: { initialMs: 60_000, maxMs: 60_000 } });
    const ac = new AbortController();
    const running = relay.run(ac.signal);
    await waitFor('first failure', () => log.calls === 1 && relay.stats.failures === 1);
    const t0 = Date.now();
    ac.abort();
    await running;
    expect(Date.now() - t0).toBeLessThan(100);
    expect(outbox.markedOrder).toEqual([]);
  });

  it('stops at once when aborted while idle, and a nudge ends an idle wait', async () => {
    const outbox = new MemoryOutbox();
    const published: string[] = [];
    const log = { publish: async (events: readonly PostEvent[]) => void published.push(...events.map((e) => e.postId)) };
    const relay = new OutboxRelay({ source: outbox, log, idleMs: 60_000 });
    const ac = new AbortController();
    const running = relay.run(ac.signal);
    await new Promise((r) => setTimeout(r, 20));
    outbox.append(created(3, 1));
    const t1 = Date.now();
    relay.nudge();
    await waitFor('the nudged row', () => published.length === 1);
    expect(Date.now() - t1).toBeLessThan(200);

    await new Promise((r) => setTimeout(r, 20));
    const t0 = Date.now();
    ac.abort();
    await running;
    expect(Date.now() - t0).toBeLessThan(100);
  });

  it('finishes and marks a publish in flight when aborted, so nothing is published twice', async () => {
    const log = scriptedPublisher(() => false, 80);
    const { outbox, rows, source, premature } = checkedOutbox(log.resolved, 5);
    const relay = new OutboxRelay({ source, log, idleMs: 5 });
    const ac = new AbortController();
    const running = relay.run(ac.signal);
    await waitFor('the publish to start', () => log.calls === 1);
    ac.abort();
    const stats = await running;
    expect(stats.published).toBe(5);
    expect(outbox.markedOrder).toEqual(rows.map((r) => r.id));
    expect(premature).toEqual([]);
    expect(log.calls).toBe(1);
  });

  it('refuses to run twice at once', async () => {
    const relay = new OutboxRelay({ source: new MemoryOutbox(), log: { publish: async () => {} }, idleMs: 5 });
    const ac = new AbortController();
    const first = relay.run(ac.signal);
    await expect(relay.run(ac.signal)).rejects.toThrow(/already running/);
    ac.abort();
    await first;
  });
});
