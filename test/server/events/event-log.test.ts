import { describe, expect, it } from 'vitest';
import { backoffDelay, sleep } from '../../../server/events/backoff.js';
import { EventLogInputError, MalformedEventError } from '../../../server/events/errors.js';
import {
  checkPartitionCount,
  checkPostEvents,
  decodePostEvent,
  encodePostEvent,
  partitionOf,
  postEventProblem,
  type PostEvent,
} from '../../../server/events/event-log.js';

describe('post events on the wire', () => {
  it('round-trips both kinds, with and without a body length, fields in a fixed order', () => {
    const events: PostEvent[] = [
      { kind: 'PostCreated', postId: '7255397406270541824', authorId: 42, createdAt: 1_780_000_000_123, bodyLength: 140 },
      { kind: 'PostCreated', postId: '1', authorId: 0, createdAt: 0 },
      { kind: 'PostDeleted', postId: '9223372036854775807', authorId: 9, createdAt: 1_780_000_000_000 },
      // relayed from the outbox: the row it came from
      { kind: 'PostCreated', postId: '3', authorId: 1, createdAt: 5, bodyLength: 2, outboxId: '9223372036854775807' },
      { kind: 'PostDeleted', postId: '3', authorId: 1, createdAt: 5, outboxId: '17' },
    ];
    for (const e of events) expect(decodePostEvent(encodePostEvent(e))).toEqual(e);
    expect(encodePostEvent(events[0])).toBe(
      '{"kind":"PostCreated","postId":"7255397406270541824","authorId":42,"createdAt":1780000000123,"bodyLength":140}',
    );
  });

  it('keeps only the known fields when decoding', () => {
    const e = decodePostEvent('{"createdAt":5,"authorId":1,"postId":"2","kind":"PostDeleted","extra":true}');
    expect(e).toEqual({ kind: 'PostDeleted', postId: '2', authorId: 1, createdAt: 5 });
    expect(Object.keys(e)).toEqual(['kind', 'postId', 'authorId', 'createdAt']);
    const relayed = decodePostEvent('{"outboxId":"8","bodyLength":1,"createdAt":5,"authorId":1,"postId":"2","kind":"PostCreated"}');
    expect(Object.keys(relayed)).toEqual(['kind', 'postId', 'authorId', 'createdAt', 'bodyLength', 'outboxId']);
  });

  it('refuses malformed entries with one line naming the problem', () => {
    expect(() => decodePostEvent('not json')).toThrow(MalformedEventError);
    expect(() => decodePostEvent('{"kind":"PostLiked","postId":"1","authorId":1,"createdAt":1}')).toThrow(/kind "PostLiked"/);
    expect(() => decodePostEvent('{"kind":"PostCreated","postId":1,"authorId":1,"createdAt":1}')).toThrow(/postId 1 is not a post id/);
    expect(() => decodePostEvent('{"kind":"PostCreated","postId":"01","authorId":1,"createdAt":1}')).toThrow(/postId/);
    expect(() => decodePostEvent('{"kind":"PostCreated","postId":"1","authorId":-1,"createdAt":1}')).toThrow(/authorId/);
    expect(() => decodePostEvent('{"kind":"PostCreated","postId":"1","authorId":1,"createdAt":1.5}')).toThrow(/createdAt/);
    expect(() => decodePostEvent('{"kind":"PostDeleted","postId":"1","authorId":1,"createdAt":1,"bodyLength":3}')).toThrow(/bodyLength/);
    for (const bad of ['17', '"0"', '"017"', '"1; DROP TABLE outbox"', '"12345678901234567890"']) {
      expect(() => decodePostEvent(`{"kind":"PostDeleted","postId":"1","authorId":1,"createdAt":1,"outboxId":${bad}}`)).toThrow(/outboxId .* is not an outbox id/);
    }
    expect(postEventProblem(null)).toMatch(/object/);
  });

  it('publishing validates every event and names the bad one', () => {
    const good: PostEvent = { kind: 'PostCreated', postId: '5', authorId: 1, createdAt: 1 };
    expect(() => checkPostEvents([good, { ...good, postId: '9223372036854775808' }])).toThrow(EventLogInputError);
    expect(() => checkPostEvents([good, { ...good, postId: '9223372036854775808' }])).toThrow(/^event 1: postId/);
    expect(() => checkPostEvents([good])).not.toThrow();
  });
});

describe('partitions', () => {
  it('puts an author always in the same partition and spreads dense ids evenly', () => {
    const counts = new Array(16).fill(0);
    for (let a = 0; a < 1600; a++) counts[partitionOf(a, 16)]++;
    expect(counts).toEqual(new Array(16).fill(100));
    expect(partitionOf(12345, 16)).toBe(partitionOf(12345, 16));
  });

  it('refuses a partition count that is not a small positive integer', () => {
    for (const bad of [0, -1, 1.5, 5000, Number.NaN]) expect(() => checkPartitionCount(bad)).toThrow(EventLogInputError);
    expect(checkPartitionCount(16)).toBe(16);
  });
});

describe('backoff', () => {
  it('doubles from the initial delay and stays at the cap, even after very many failures', () => {
    const o = { initialMs: 100, maxMs: 5_000 };
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffDelay(n, o))).toEqual([100, 200, 400, 800, 1600, 3200, 5000, 5000]);
    expect(backoffDelay(10_000, o)).toBe(5_000);
    expect(backoffDelay(3, { initialMs: 10, maxMs: 1_000, factor: 3 })).toBe(90);
  });

  it('sleep ends at once when its signal aborts', async () => {
    const ac = new AbortController();
    const t0 = Date.now();
    const slept = sleep(10_000, ac.signal);
    setTimeout(() => ac.abort(), 20);
    await slept;
    expect(Date.now() - t0).toBeLessThan(1_000);
  });
});
