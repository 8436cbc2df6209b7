// The fan-out worker's handler during an outage (server/worker/fanout.ts): a batch that fails
// because Postgres or Redis is unavailable is handled again in place, after a backoff, instead of
// being thrown back to the event log, which counts a delivery per failure and dead-letters the
// event after maxAttempts (a post acknowledged before the outage would then never reach its
// followers; server.e2e.test.ts shows it over real processes). Any other failure is thrown at once,
// and a consumer stopping during an outage gives the batch back. No services needed.
import { describe, expect, it } from 'vitest';
import type { FanoutPolicy } from '../../../core/fanout-policy.js';
import type { DeliveredEvent } from '../../../server/events/event-log.js';
import { DatabaseUnavailableError } from '../../../server/store/errors.js';
import { NotFoundError, type FeedRepository } from '../../../server/store/repository.js';
import { FanoutWorker, isOutage, type FanoutWorkerOptions } from '../../../server/worker/fanout.js';

const POLICY: FanoutPolicy = { kind: 'threshold', threshold: 100, skipDormant: true, readerCap: 1000, backlogBound: 1_000_000, minThreshold: 1_000 };

/** A worker whose repository answers followerCount with the given failures, then "no such author" (a skip: nothing else is touched). */
function workerFailing(failures: unknown[]): { worker: FanoutWorker; calls: () => number; outages: unknown[] } {
  let calls = 0;
  const outages: unknown[] = [];
  const repo = {
    followerCount: async () => {
      const failure = failures[calls++];
      throw failure ?? new NotFoundError('user 7 not found');
    },
  } as unknown as FeedRepository;
  const options = { repo, timelines: {}, authorPosts: {}, policy: POLICY, dormantDays: 14, onOutage: (err: unknown) => outages.push(err) } as unknown as FanoutWorkerOptions;
  return { worker: new FanoutWorker(options), calls: () => calls, outages };
}

const batch: DeliveredEvent[] = [{ event: { kind: 'PostCreated', postId: '123456789', authorId: 7, createdAt: Date.now() }, partition: 0, position: '1-0', deliveries: 1 }];
const pgDown = () => new DatabaseUnavailableError('Postgres at postgres://root@127.0.0.1:5432/postgres closed the connection (ECONNRESET)', 'ECONNRESET');

describe('FanoutWorker.handler during an outage', () => {
  it('tells outages from other failures', () => {
    expect(isOutage(pgDown())).toBe(true);
    expect(isOutage(new Error('Connection is closed.'))).toBe(true);
    expect(isOutage(new Error('Command timed out'))).toBe(true);
    expect(isOutage(new Error('post id 1 is not a post id'))).toBe(false);
    expect(isOutage(new NotFoundError('user 7 not found'))).toBe(false);
    expect(isOutage(new TypeError('x is undefined'))).toBe(false);
    // Redis answering that it cannot serve: out of memory, a demoted primary, loading.
    const reply = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });
    for (const m of ['OOM command not allowed when used memory > \'maxmemory\'.', "READONLY You can't write against a read only replica.", 'LOADING Redis is loading the dataset in memory']) {
      expect(isOutage(reply(m)), m).toBe(true);
      expect(isOutage(new Error('push of post 1: 3 of 1000 timeline writes failed', { cause: reply(m) })), `wrapped ${m}`).toBe(true);
    }
    expect(isOutage(reply('ERR wrong number of arguments for \'zadd\' command'))).toBe(false);
    expect(isOutage(new Error('push failed', { cause: reply('ERR syntax error') }))).toBe(false);
  });

  it('handles a batch again while Postgres or Redis is unavailable, and resolves once it is back', async () => {
    const { worker, calls, outages } = workerFailing([pgDown(), new Error('Connection is closed.'), pgDown()]);
    const began = Date.now();
    await expect(worker.handler()(batch, new AbortController().signal)).resolves.toBeUndefined();
    expect(calls()).toBe(4);
    expect(outages).toHaveLength(3);
    expect(Date.now() - began).toBeGreaterThanOrEqual(100 + 200 + 400 - 20); // backing off
  });

  it('throws any other failure at once (the log redelivers it, and dead-letters it if it persists)', async () => {
    const { worker, calls, outages } = workerFailing([new Error('a bug')]);
    await expect(worker.handler()(batch, new AbortController().signal)).rejects.toThrow('a bug');
    expect(calls()).toBe(1);
    expect(outages).toEqual([]);
  });

  it('gives the batch back when the consumer stops during an outage', async () => {
    const { worker, calls } = workerFailing(Array.from({ length: 100 }, pgDown));
    const stop = new AbortController();
    const handling = worker.handler()(batch, stop.signal);
    setTimeout(() => stop.abort(), 250);
    const began = Date.now();
    await expect(handling).rejects.toThrow(DatabaseUnavailableError);
    expect(Date.now() - began).toBeLessThan(1_000);
    expect(calls()).toBeGreaterThanOrEqual(2);
  });
});
