// POST /v1/posts with an Idempotency-Key, against this machine's Postgres and Redis through the real
// service and routes: a repeat gets the first post and writes nothing, also when it races the
// first; another text under the same key is refused; another user's key is another key. And the
// defect it fixes: with Postgres hung after receiving a post (its answer never comes back), a keyed
// post is answered 503 and its retry returns the post that did commit, once; an unkeyed one is not
// told "retry shortly" (it did commit). In a schema and key prefix of its own, removed afterwards.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostIdGenerator } from '../../../core/post-id.js';
import { DEFAULT_DATABASE_URL } from '../../../core/service-url.js';
import { signToken } from '../../../server/auth/token.js';
import { connectRedis, keyspace, redisUrlFromEnv } from '../../../server/cache/redis.js';
import { createFeedService } from '../../../server/feed/service.js';
import { buildApp } from '../../../server/http/app.js';
import { MetricsRegistry } from '../../../server/http/metrics.js';
import { migrate } from '../../../server/store/migrate.js';
import { createStore, type Store } from '../../../server/store/pool.js';
import { FeedRepository } from '../../../server/store/repository.js';
import { proxyInFront, type FaultProxy } from '../e2e/helpers.js';
import { dropPostgresState, dropRedisState, skipWithoutServices } from '../services.js';

const SKIP = await skipWithoutServices('test/server/feed/idempotent-posting.test.ts');

const tag = `${process.pid}_${randomBytes(3).toString('hex')}`;
const schema = `fl_test_idem_${tag}`;
const keys = keyspace(`feedlab:test:idem:${tag}:`);
const TOKEN_SECRET = 'idempotency-test-token-secret-0123456789abcdef';
const DAY = 86_400_000;
/** How long the repository waits for Postgres's answer to a statement. */
const QUERY_TIMEOUT_MS = 600;

let direct: Store;
let proxied: Store;
let proxy: FaultProxy;
let redis: Redis;
let app: FastifyInstance;

beforeAll(async () => {
  if (SKIP) return;
  direct = createStore({ schema, max: 2 });
  await migrate(direct);
  await direct.pool.query(`INSERT INTO users (id, handle) SELECT g, 'u' || g FROM generate_series(1, 3) g`);
  let through: string;
  ({ proxy, url: through } = await proxyInFront(process.env.DATABASE_URL || DEFAULT_DATABASE_URL, 5432));
  // two connections, so that both kept warm are the ones the hung posts go out on
  proxied = createStore({ databaseUrl: through, schema, max: 2 });
  redis = await connectRedis({ url: redisUrlFromEnv() });
  const service = createFeedService({
    repo: new FeedRepository(proxied, { queryTimeoutMs: QUERY_TIMEOUT_MS }),
    redis,
    keys,
    ids: new PostIdGenerator(3),
    threshold: 1000,
    timelineCap: 800,
    listLength: 100,
    leaseMs: 7 * DAY,
    dormantMs: 14 * DAY,
    metrics: new MetricsRegistry(),
  });
  app = buildApp({ service, tokenSecret: TOKEN_SECRET, cursorSecret: 'idempotency-cursor', logger: false, handlerTimeoutMs: 5_000 });
});

afterAll(async () => {
  await app?.close();
  await proxied?.pool.end();
  await proxy?.close();
  await dropRedisState(redis, keys);
  await dropPostgresState(direct, schema);
});

async function post(user: number, text: string, key?: string) {
  const headers: Record<string, string> = { authorization: `Bearer ${signToken(user, TOKEN_SECRET)}` };
  if (key !== undefined) headers['idempotency-key'] = key;
  const res = await app.inject({ method: 'POST', url: '/v1/posts', headers, payload: { text } });
  return { status: res.statusCode, body: JSON.parse(res.body) as { id?: string; error?: string }, headers: res.headers };
}

/** The ids of user's posts with this text, as Postgres holds them. */
async function stored(user: number, text: string): Promise<string[]> {
  return (await direct.pool.query<{ id: string }>('SELECT id::text AS id FROM posts WHERE author_id = $1 AND body = $2', [user, text])).rows.map((r) => r.id);
}

const outboxRows = async (ids: string[]) => Number((await direct.pool.query<{ n: string }>('SELECT count(*)::text AS n FROM outbox WHERE post_id = ANY($1::int8[])', [ids])).rows[0].n);

describe.skipIf(SKIP)('posting with an Idempotency-Key', () => {
  it('answers a repeat with the first post and writes nothing; another text under the key is a 422; keys are per user', async () => {
    const first = await post(1, 'once', 'k-1');
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await post(1, 'once', 'k-1');
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await stored(1, 'once')).toEqual([first.body.id]);
    expect(await outboxRows([first.body.id!])).toBe(1);

    const other = await post(1, 'another text', 'k-1');
    expect(other.status).toBe(422);
    expect(other.body.error).toMatch(new RegExp(`^Idempotency-Key "k-1" was used for post ${first.body.id} with another text$`));
    expect(await stored(1, 'another text')).toEqual([]);

    const theirs = await post(2, 'once', 'k-1');
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(first.body.id);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();

    // without a key, the same text twice is two posts
    expect((await post(3, 'twice')).body.id).not.toBe((await post(3, 'twice')).body.id);
  });

  it('answers a repeat of a post deleted since with its first answer and caches nothing again; a key whose post is gone makes a new one', async () => {
    const first = await post(3, 'soon deleted', 'k-del');
    const del = await app.inject({ method: 'DELETE', url: `/v1/posts/${first.body.id}`, headers: { authorization: `Bearer ${signToken(3, TOKEN_SECRET)}` } });
    expect(del.statusCode).toBe(204);
    // the author's recent list cached (empty): a repeat must not put the deleted post back in it
    await redis.zadd(keys.key(`feed:{u:3}:recent`), -1, 'empty');
    const again = await post(3, 'soon deleted', 'k-del');
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await redis.zscore(keys.key(`feed:{u:3}:recent`), first.body.id!)).toBe(null);
    expect(JSON.parse((await redis.get(keys.key(`post:${first.body.id}`)))!)).toEqual({ deleted: true });
    // the post row gone by hand (a truncation that left the key): the key makes a new post, at once
    const orphan = await post(3, 'orphaned', 'k-orphan');
    await direct.pool.query('DELETE FROM posts WHERE id = $1', [orphan.body.id]);
    const made = await post(3, 'orphaned', 'k-orphan');
    expect(made.status).toBe(201);
    expect(made.body.id).not.toBe(orphan.body.id);
    expect(made.headers['idempotent-replayed']).toBeUndefined();
    expect(await stored(3, 'orphaned')).toEqual([made.body.id]);
  });

  it('makes one post of six racing requests with one key', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(1, 'racing', 'k-race')));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201, 201]);
    const ids = new Set(answers.map((a) => a.body.id));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(5);
    expect(await stored(1, 'racing')).toEqual([...ids]);
  });

  it('refuses a key that is not 1-255 visible ASCII characters without spaces or commas', async () => {
    for (const bad of ['a b', 'a,b', 'x'.repeat(256), 'caf\u00e9']) {
      const res = await post(1, `bad key ${bad.length}`, bad);
      expect(res.status, bad).toBe(400);
      expect(res.body.error).toBe('an Idempotency-Key is 1-255 visible ASCII characters, without spaces or commas');
    }
    expect((await post(1, 'longest key', 'x'.repeat(255))).status).toBe(201);
  });

  it('Postgres hung after taking a post: the keyed one is a 503 whose retry returns the post that committed, the unkeyed one is not told to retry', async () => {
    // both pooled connections open and idle: the hung posts go out on them
    await Promise.all([post(2, 'warm 1'), post(2, 'warm 2')]);
    proxy.hangReplies();
    let keyed: Awaited<ReturnType<typeof post>>;
    let unkeyed: Awaited<ReturnType<typeof post>>;
    try {
      keyed = await post(2, 'hung, keyed', 'k-hung');
      unkeyed = await post(2, 'hung, unkeyed');
    } finally {
      proxy.restore();
    }
    expect(keyed.status).toBe(503);
    expect(keyed.body.error).toBe('the database is unavailable; retry shortly');
    expect(keyed.headers['retry-after']).toBeDefined();
    // both committed, though neither answer came back
    const [committedKeyed] = await stored(2, 'hung, keyed');
    const [committedUnkeyed] = await stored(2, 'hung, unkeyed');
    expect(committedKeyed).toBeDefined();
    expect(committedUnkeyed).toBeDefined();
    // the unkeyed post: a 500 that says so, naming the post, no Retry-After
    expect(unkeyed.status).toBe(500);
    expect(unkeyed.body.error).toBe(
      `Postgres stopped answering while post ${committedUnkeyed} was being committed: it may or may not exist, and a retry could post it twice (send an Idempotency-Key header to make a retry safe)`,
    );
    expect(unkeyed.headers['retry-after']).toBeUndefined();
    // the keyed retry: the post that committed, once
    const retry = await post(2, 'hung, keyed', 'k-hung');
    expect(retry.status).toBe(201);
    expect(retry.body.id).toBe(committedKeyed);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(await stored(2, 'hung, keyed')).toEqual([committedKeyed]);
    expect(await outboxRows([committedKeyed])).toBe(1);
  });
});
