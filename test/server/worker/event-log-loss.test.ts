// The outbox stays the source of truth when the event log loses its entries (server/store/
// fanout-ledger.ts): posts acknowledged and relayed while no worker ran, the log's keys then deleted
// (a Redis flushed or failed over, the timelines kept), and a worker started again: every post
// reaches every follower's timeline, exactly once, and a post deleted meanwhile is not put back.
// And a loss found by a running worker (its reads find the group gone) republishes too. Against this
// machine's Redis and Postgres, in a schema and key prefix of its own, removed afterwards.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostIdGenerator } from '../../../core/post-id.js';
import { EMPTY_SENTINEL } from '../../../server/cache/post-list.js';
import { connectRedis, keyspace, redisUrlFromEnv } from '../../../server/cache/redis.js';
import { TimelineCache } from '../../../server/cache/timelines.js';
import { openRedisStreamsLog, type RedisStreamsLog } from '../../../server/events/redis-streams.js';
import { OutboxRelay } from '../../../server/events/relay.js';
import { migrate } from '../../../server/store/migrate.js';
import { PostgresOutbox } from '../../../server/store/outbox.js';
import { createStore, type Store } from '../../../server/store/pool.js';
import { FeedRepository } from '../../../server/store/repository.js';
import { loadWorkerConfig } from '../../../server/worker/config.js';
import { runWorker, type WorkerRunSummary } from '../../../server/worker/process.js';
import { makeAudience } from './audience.js';
import { waitFor } from '../e2e/helpers.js';
import { dropPostgresState, dropRedisState, skipWithoutServices } from '../services.js';

const SKIP = await skipWithoutServices('test/server/worker/event-log-loss.test.ts');

const tag = `${process.pid}_${randomBytes(3).toString('hex')}`;
const schema = `fl_test_logloss_${tag}`;
const keys = keyspace(`feedlab:test:logloss:${tag}:`);
const streamPrefix = `${keys.prefix}events`;
const FOLLOWERS = 20;

let store: Store;
let repo: FeedRepository;
let redis: Redis;
let timelines: TimelineCache;
let log: RedisStreamsLog;
const ids = new PostIdGenerator(12);
let nextUser = 1;


/** An author with FOLLOWERS followers, each with an existing (empty) timeline. */
async function audience(): Promise<{ author: number; followers: number[] }> {
  const author = nextUser;
  nextUser += FOLLOWERS + 1;
  return makeAudience(store, redis, timelines, author, FOLLOWERS);
}

/** Each follower's timeline, without the sentinel. */
async function held(followers: number[]): Promise<string[][]> {
  const p = redis.pipeline();
  for (const f of followers) p.zrange(timelines.key(f), 0, -1);
  return ((await p.exec()) ?? []).map(([, m]) => (m as string[]).filter((x) => x !== EMPTY_SENTINEL));
}

/** A worker in this process (no relay: the test's relay stands for the API's), until stopped. */
function worker(group: string): { lines: string[]; stop: () => Promise<WorkerRunSummary>; ready: Promise<void> } {
  const config = loadWorkerConfig({ schema, 'key-prefix': keys.prefix, 'stream-prefix': streamPrefix, policy: 'push' }, { ...process.env, FEED_STATUS_MS: '0', FEED_GROUP: group });
  const abort = new AbortController();
  const lines: string[] = [];
  let isReady!: () => void;
  const ready = new Promise<void>((r) => (isReady = r));
  const running = runWorker(config, { signal: abort.signal, log: (l) => lines.push(l), onReady: isReady });
  running.catch(() => isReady());
  return {
    lines,
    ready,
    stop: async () => {
      abort.abort();
      return running;
    },
  };
}

/** The event log's keys, as a flush or a failover to a replica without them would leave it: gone. */
async function loseTheLog(): Promise<number> {
  const gone = await redis.keys(`${streamPrefix}*`);
  if (gone.length > 0) await redis.del(...gone);
  return gone.length;
}

const unpublished = async () => Number((await store.pool.query<{ n: string }>('SELECT count(*)::text AS n FROM outbox WHERE published_at IS NULL')).rows[0].n);
const unfinished = async () => Number((await store.pool.query<{ n: string }>('SELECT count(*)::text AS n FROM outbox WHERE fanned_out_at IS NULL')).rows[0].n);

beforeAll(async () => {
  if (SKIP) return;
  store = createStore({ schema, max: 4 });
  await migrate(store);
  repo = new FeedRepository(store);
  redis = await connectRedis({ url: redisUrlFromEnv() });
  timelines = new TimelineCache(redis, keys);
  log = await openRedisStreamsLog({ url: redisUrlFromEnv(), prefix: streamPrefix });
}, 60_000);

afterAll(async () => {
  if (log) await log.close();
  await dropRedisState(redis, keys);
  await dropPostgresState(store, schema);
});

describe.skipIf(SKIP)('an event log that loses its entries', () => {
  it('loses no acknowledged post: what was relayed while the worker was down and then lost is published again from the outbox', async () => {
    const { author, followers } = await audience();
    const relayStop = new AbortController();
    const relay = new OutboxRelay({ source: new PostgresOutbox(store), log, idleMs: 20 });
    const relaying = relay.run(relayStop.signal);
    try {
      // a worker creates the group (recorded: not a loss) and fans out a first post
      const first = worker('loss');
      await first.ready;
      const p0 = await repo.createPost(author, 'before the loss', ids);
      await waitFor('the first post in every timeline', async () => (await held(followers)).every((m) => m.includes(p0.id)) || false, 10_000);
      const before = await first.stop();
      expect(before.counters.eventLogLosses).toBe(0);
      expect(await unfinished()).toBe(0); // its mark written on the way out

      // the worker down: 30 posts acknowledged and relayed onto the log, one of them then deleted
      const posts = [];
      for (let i = 0; i < 30; i++) posts.push(await repo.createPost(author, `while the worker was down ${i}`, ids));
      await repo.deletePost(posts[7].id, author);
      await waitFor('the relay to publish all 31 rows', async () => (await unpublished()) === 0 || false, 10_000);
      expect(await unfinished()).toBe(31);

      // the log's keys gone, the timelines kept; a worker started again
      expect(await loseTheLog()).toBeGreaterThan(0);
      const second = worker('loss');
      await second.ready;
      const kept = posts.filter((_, i) => i !== 7).map((p) => p.id);
      await waitFor('every post in every timeline', async () => (await held(followers)).every((m) => kept.every((id) => m.includes(id))) || false, 15_000);
      await waitFor('every row fanned out', async () => (await unfinished()) === 0 || false, 10_000);
      const after = await second.stop();

      // every follower: the first post and the 29 live ones, and nothing else (not the deleted one)
      for (const m of await held(followers)) expect([...m].sort()).toEqual([p0.id, ...kept].sort());
      // the deleted post's PostCreated marked done, its PostDeleted and the 29 others published again
      expect(after.counters.eventLogLosses).toBe(1);
      expect(after.counters.eventsRepublished).toBe(30);
      expect(second.lines.some((l) => /event log lost its entries .*: 30 outbox rows .* published again, 1 of deleted posts marked done/.test(l))).toBe(true);
      expect(Number((await store.pool.query<{ losses: number }>(`SELECT losses FROM event_log_groups WHERE stream_prefix = $1 AND group_name = 'loss'`, [streamPrefix])).rows[0].losses)).toBe(1);
    } finally {
      relayStop.abort();
      await relaying;
    }
  });

  it('a running worker that finds its group gone republishes, and goes on delivering', async () => {
    const { author, followers } = await audience();
    const relayStop = new AbortController();
    const relaying = new OutboxRelay({ source: new PostgresOutbox(store), log, idleMs: 20 }).run(relayStop.signal);
    const w = worker('running');
    try {
      await w.ready;
      const p0 = await repo.createPost(author, 'before', ids);
      await waitFor('the first post delivered', async () => (await held(followers)).every((m) => m.includes(p0.id)) || false, 10_000);
      // a row whose fan-out is not known done (as if the worker had died before marking it)
      await waitFor('its mark written', async () => (await unfinished()) === 0 || false, 10_000);
      await store.pool.query('UPDATE outbox SET fanned_out_at = NULL WHERE post_id = $1', [p0.id]);
      await loseTheLog();
      await waitFor('the worker to find the loss', () => w.lines.some((l) => l.startsWith('event log lost its entries')), 15_000);
      const p1 = await repo.createPost(author, 'after', ids);
      await waitFor('the next post delivered', async () => (await held(followers)).every((m) => m.includes(p1.id)) || false, 10_000);
      await waitFor('every row fanned out', async () => (await unfinished()) === 0 || false, 10_000);
    } finally {
      const summary = await w.stop();
      relayStop.abort();
      await relaying;
      expect(summary.counters.eventLogLosses).toBe(1);
      expect(summary.counters.eventsRepublished).toBe(1);
    }
    for (const m of await held(followers)) expect(m.length).toBe(2);
  });
});
