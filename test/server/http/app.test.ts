// The HTTP API against an in-memory FeedService (fastify.inject, no network): every client mistake
// is its 4xx with one line, the auth matrix holds, an outage is a quick 503 with Retry-After, the
// metrics show the feed latency, and cursors page through a feed without repeating or skipping.
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { compareNewestFirst, encodeCursor, isOlderThan, type FeedPosition } from '../../../core/cursor.js';
import { PostIdGenerator, postIdTime, type PostId } from '../../../core/post-id.js';
import { signToken } from '../../../server/auth/token.js';
import { InfrastructureError } from '../../../server/cache/redis.js';
import { EventLogUnavailableError } from '../../../server/events/errors.js';
import { buildApp, type AppOptions } from '../../../server/http/app.js';
import { MetricsRegistry } from '../../../server/http/metrics.js';
import {
  BadRequestError,
  ForbiddenError,
  IdempotencyKeyReuseError,
  NotFoundError,
  OutcomeUnknownError,
  type FeedPage,
  type FeedService,
  type PageRequest,
  type PostView,
  type Readiness,
  type UserId,
} from '../../../server/http/service.js';
import { DatabaseUnavailableError } from '../../../server/store/errors.js';

const TOKEN_SECRET = 'test-token-secret-0123456789abcdef-0123456789';
const OTHER_SECRET = 'another-secret-0123456789abcdef-0123456789abc';
const CURSOR_SECRET = 'test-cursor-secret';

// ---- the fake ----

interface StoredPost extends PostView {
  deleted: boolean;
}

type Method = keyof FeedService;

/** An in-memory FeedService with the same contract as the real one. */
class FakeFeedService implements FeedService {
  readonly users = new Set<UserId>();
  readonly posts = new Map<PostId, StoredPost>();
  readonly follows = new Map<UserId, Set<UserId>>();
  readiness: Readiness = { redis: true, postgres: true };
  /** Thrown by the named methods (or every method with '*'). */
  failures = new Map<Method | '*', Error>();
  /** Methods that never answer. */
  hanging = new Set<Method>();
  readonly calls: { method: Method; args: unknown[] }[] = [];
  clockMs = Date.UTC(2025, 0, 1);
  private readonly ids = new PostIdGenerator(7, () => this.clockMs);

  constructor(userIds: number[]) {
    for (const id of userIds) this.users.add(id);
  }

  private async enter(method: Method, args: unknown[]): Promise<void> {
    this.calls.push({ method, args });
    const failure = this.failures.get(method) ?? this.failures.get('*');
    if (failure) throw failure;
    if (this.hanging.has(method)) await new Promise(() => {});
  }

  private checkUser(id: UserId): void {
    if (!this.users.has(id)) throw new NotFoundError(`user ${id} does not exist`);
  }

  private page(candidates: StoredPost[], { limit, cursor }: PageRequest): FeedPage {
    const live = candidates.filter((p) => !p.deleted && (cursor === null || isOlderThan(p, cursor))).sort(compareNewestFirst);
    const posts = live.slice(0, limit).map(({ id, authorId, text, createdAt }) => ({ id, authorId, text, createdAt }));
    const last = posts[posts.length - 1];
    return { posts, nextCursor: live.length > limit && last ? { createdAt: last.createdAt, id: last.id } : null };
  }

  async createPost(userId: UserId, text: string) {
    await this.enter('createPost', [userId, text]);
    this.checkUser(userId);
    const id = this.ids.next();
    const post = { id, authorId: userId, text, createdAt: postIdTime(id), deleted: false };
    this.posts.set(id, post);
    return { id, createdAt: post.createdAt };
  }

  async deletePost(userId: UserId, postId: PostId) {
    await this.enter('deletePost', [userId, postId]);
    const post = this.posts.get(postId);
    if (!post || post.deleted) throw new NotFoundError(`post ${postId} does not exist`);
    if (post.authorId !== userId) throw new ForbiddenError(`post ${postId} is not yours`);
    post.deleted = true;
    return { id: postId };
  }

  async follow(userId: UserId, followeeId: UserId) {
    await this.enter('follow', [userId, followeeId]);
    this.checkUser(userId);
    this.checkUser(followeeId);
    if (userId === followeeId) throw new BadRequestError('a user cannot follow themself');
    const set = this.follows.get(userId) ?? new Set<UserId>();
    this.follows.set(userId, set);
    const changed = !set.has(followeeId);
    set.add(followeeId);
    return { changed };
  }

  async unfollow(userId: UserId, followeeId: UserId) {
    await this.enter('unfollow', [userId, followeeId]);
    this.checkUser(followeeId);
    return { changed: this.follows.get(userId)?.delete(followeeId) ?? false };
  }

  async homeFeed(userId: UserId, page: PageRequest) {
    await this.enter('homeFeed', [userId, page]);
    this.checkUser(userId);
    const authors = new Set([userId, ...(this.follows.get(userId) ?? [])]);
    return this.page([...this.posts.values()].filter((p) => authors.has(p.authorId)), page);
  }

  async userPosts(authorId: UserId, page: PageRequest) {
    await this.enter('userPosts', [authorId, page]);
    this.checkUser(authorId);
    return this.page([...this.posts.values()].filter((p) => p.authorId === authorId), page);
  }

  async ready() {
    await this.enter('ready', []);
    return this.readiness;
  }
}

// ---- helpers ----

let service: FakeFeedService;
let app: FastifyInstance;
let logs: string[];

function makeApp(overrides: Partial<AppOptions> = {}): FastifyInstance {
  return buildApp({
    service,
    tokenSecret: TOKEN_SECRET,
    cursorSecret: CURSOR_SECRET,
    logger: { level: 'warn', stream: { write: (line: string) => void logs.push(line) } },
    ...overrides,
  });
}

beforeEach(() => {
  service = new FakeFeedService([1, 2, 3, 4]);
  logs = [];
  app = makeApp();
});

afterEach(async () => {
  await app.close();
});

const tokens = new Map<number, string>();
function tokenFor(user: number): string {
  let t = tokens.get(user);
  if (!t) tokens.set(user, (t = signToken(user, TOKEN_SECRET, { ttlSeconds: 3600 })));
  return t;
}

interface Call {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  /** Authenticate as this user (default 1); null sends no Authorization header. */
  as?: number | null;
  token?: string;
  json?: unknown;
  payload?: string;
  headers?: Record<string, string>;
  target?: FastifyInstance;
}

function call({ method = 'GET', url, as = 1, token, json, payload, headers = {}, target = app }: Call): Promise<LightMyRequestResponse> {
  const h: Record<string, string> = { ...headers };
  if (token !== undefined) h.authorization = `Bearer ${token}`;
  else if (as !== null) h.authorization = `Bearer ${tokenFor(as)}`;
  if (json !== undefined || payload !== undefined) h['content-type'] ??= 'application/json';
  return target.inject({ method, url, headers: h, payload: json !== undefined ? JSON.stringify(json) : payload });
}

/** The status, and a body of exactly {"error": "<one line>"}; returns the line. */
function expectError(res: LightMyRequestResponse, status: number, pattern?: RegExp): string {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json() as Record<string, unknown>;
  expect(Object.keys(body)).toEqual(['error']);
  const line = body.error as string;
  expect(typeof line).toBe('string');
  expect(line.length).toBeGreaterThan(0);
  expect(line).not.toMatch(/[\r\n]/);
  expect(line).not.toMatch(/\bat .*\.(js|ts):\d+/);
  if (pattern) expect(line).toMatch(pattern);
  return line;
}

async function post(as: number, text: string): Promise<string> {
  const res = await call({ method: 'POST', url: '/v1/posts', as, json: { text } });
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { id: string }).id;
}

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

// ---- the routes ----

describe('routes', () => {
  it('posts, follows, reads the home feed and an author\'s posts, deletes, unfollows', async () => {
    const res = await call({ method: 'POST', url: '/v1/posts', as: 2, json: { text: 'hello 🌍' } });
    expect(res.statusCode).toBe(201);
    const created = res.json() as { id: unknown; authorId: unknown; createdAt: unknown };
    expect(typeof created.id).toBe('string');
    expect(created.authorId).toBe(2);
    expect(created.createdAt).toBe(postIdTime(created.id as string));

    const follow = await call({ method: 'PUT', url: '/v1/follows/2', as: 1 });
    expect(follow.statusCode).toBe(200);
    expect(follow.json()).toEqual({ followeeId: 2, following: true, changed: true });
    // Idempotent.
    expect((await call({ method: 'PUT', url: '/v1/follows/2', as: 1 })).json()).toEqual({ followeeId: 2, following: true, changed: false });

    const feed = await call({ url: '/v1/feed', as: 1 });
    expect(feed.statusCode).toBe(200);
    expect(feed.json()).toEqual({ posts: [{ id: created.id, authorId: 2, text: 'hello 🌍', createdAt: created.createdAt }], nextCursor: null });
    expect(service.calls.find((c) => c.method === 'homeFeed')?.args).toEqual([1, { limit: 20, cursor: null }]);

    const byAuthor = await call({ url: '/v1/users/2/posts?limit=5', as: 3 });
    expect(byAuthor.statusCode).toBe(200);
    expect((byAuthor.json() as FeedPage).posts.map((p) => p.id)).toEqual([created.id]);

    expect((await call({ method: 'DELETE', url: `/v1/posts/${created.id}`, as: 2 })).statusCode).toBe(204);
    expect((await call({ url: '/v1/feed', as: 1 })).json()).toEqual({ posts: [], nextCursor: null });

    expect((await call({ method: 'DELETE', url: '/v1/follows/2', as: 1 })).json()).toEqual({ followeeId: 2, following: false, changed: true });
    expect((await call({ method: 'DELETE', url: '/v1/follows/2', as: 1 })).json()).toEqual({ followeeId: 2, following: false, changed: false });
  });

  it('accepts 280 code points of astral characters, and 280 ASCII characters', async () => {
    expect((await call({ method: 'POST', url: '/v1/posts', json: { text: '😀'.repeat(280) } })).statusCode).toBe(201);
    expect((await call({ method: 'POST', url: '/v1/posts', json: { text: 'x'.repeat(280) } })).statusCode).toBe(201);
  });

  it('serves /healthz and /readyz without a token, and answers unknown routes with one line', async () => {
    const health = await call({ url: '/healthz', as: null });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: 'ok' });
    const ready = await call({ url: '/readyz', as: null });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', redis: true, postgres: true });
    expectError(await call({ url: '/v1/nothing' }), 404, /no route GET "\/v1\/nothing"/);
  });
});

// ---- bad input: the issue's list ----

describe('bad input: one line and the right 4xx, never a 500', () => {
  it('refuses a malformed cursor, a tampered one, and one signed with another secret', async () => {
    expectError(await call({ url: '/v1/feed?cursor=not-a-cursor!' }), 400, /^invalid cursor: not base64url text$/);
    expectError(await call({ url: '/v1/feed?cursor=abc' }), 400, /^invalid cursor: 3 characters, expected 44$/);
    expectError(await call({ url: '/v1/feed?cursor=' }), 400, /^invalid cursor: 0 characters/);

    const good = encodeCursor({ createdAt: Date.UTC(2025, 0, 1), id: '1234567890123456789' }, CURSOR_SECRET);
    expect((await call({ url: `/v1/feed?cursor=${good}` })).statusCode).toBe(200);
    // Flip a bit in the payload (the createdAt): the MAC no longer matches.
    const bytes = Buffer.from(good, 'base64url');
    bytes[5] = (bytes[5] as number) ^ 0x01;
    expectError(await call({ url: `/v1/feed?cursor=${bytes.toString('base64url')}` }), 400, /^invalid cursor: signature mismatch/);
    const foreign = encodeCursor({ createdAt: Date.UTC(2025, 0, 1), id: '1234567890123456789' }, 'some other secret');
    expectError(await call({ url: `/v1/feed?cursor=${foreign}` }), 400, /^invalid cursor: signature mismatch/);
    expectError(await call({ url: `/v1/users/2/posts?cursor=${foreign}` }), 400, /^invalid cursor: signature mismatch/);
    // No request reached the service with a cursor it did not issue.
    expect(service.calls.filter((c) => c.method === 'homeFeed')).toHaveLength(1);
  });

  it('refuses limit 0, 101, abc, empty, fractional, negative and repeated', async () => {
    for (const limit of ['0', '101', '999999999']) {
      expectError(await call({ url: `/v1/feed?limit=${limit}` }), 400, new RegExp(`^limit must be an integer from 1 to 100, got ${limit}$`));
    }
    for (const limit of ['abc', '', '1.5', '-1', '1e2', '10000000000000']) {
      expectError(await call({ url: `/v1/feed?limit=${encodeURIComponent(limit)}` }), 400, /^limit must be an integer from 1 to 100, got "/);
    }
    expectError(await call({ url: '/v1/users/2/posts?limit=101' }), 400, /^limit must be an integer from 1 to 100/);
    expectError(await call({ url: '/v1/feed?limit=1&limit=2' }), 400, /^limit must be an integer/);
    expect((await call({ url: '/v1/feed?limit=100' })).statusCode).toBe(200);
    expect((await call({ url: '/v1/feed?limit=1' })).statusCode).toBe(200);
    expect(service.calls.filter((c) => c.method === 'homeFeed').map((c) => (c.args[1] as PageRequest).limit)).toEqual([100, 1]);
  });

  it('refuses empty, too long and non-string text, unknown fields and a missing text', async () => {
    const bad = (json: unknown) => call({ method: 'POST', url: '/v1/posts', json });
    expectError(await bad({ text: '' }), 400, /^text is empty \(1 to 280 characters\)$/);
    expectError(await bad({ text: '😀'.repeat(281) }), 400, /^text is longer than 280 characters$/);
    expectError(await bad({ text: 'x'.repeat(281) }), 400, /^text is longer than 280 characters$/);
    expectError(await bad({ text: 5 }), 400, /^text must be a string, got a number$/);
    expectError(await bad({ text: null }), 400, /^text must be a string, got null$/);
    expectError(await bad({ text: ['a'] }), 400, /^text must be a string, got an array$/);
    expectError(await bad({ text: true }), 400, /^text must be a string/);
    expectError(await bad({ text: 'hi', mood: 'happy' }), 400, /^unknown field "mood" \(allowed: text\)$/);
    expectError(await bad({}), 400, /^the body is missing the field "text"$/);
    expectError(await bad(['hi']), 400, /^the body must be a JSON object$/);
    expectError(await bad('hi'), 400, /^the body must be a JSON object$/);
    expectError(await bad({ text: 'a\u0000b' }), 400, /NUL characters or unpaired surrogates/);
    expectError(await call({ method: 'POST', url: '/v1/posts', payload: '{"text":"\\ud800"}' }), 400, /unpaired surrogates/);
    expect(service.calls.filter((c) => c.method === 'createPost')).toHaveLength(0);
  });

  it('refuses a query parameter on the routes that take none, and a body on a GET', async () => {
    for (const [method, url] of [['POST', '/v1/posts?authorId=101'], ['DELETE', '/v1/posts/123?as=2'], ['PUT', '/v1/follows/2?x=1'], ['DELETE', '/v1/follows/2?notify=no']] as const) {
      const json = method === 'POST' ? { text: 'hi' } : undefined;
      expectError(await call({ method, url, json }), 400, /^unknown query parameter "(authorId|as|x|notify)"$/);
    }
    for (const url of ['/v1/feed', '/v1/users/2/posts']) {
      const route = url === '/v1/feed' ? '/v1/feed' : '/v1/users/:id/posts';
      expectError(await call({ url, json: { limit: 5 } }), 400, new RegExp(`^GET ${route.replace(/[/:]/g, (c) => `\\${c}`)} takes no body$`));
      expectError(await call({ url, payload: 'x', headers: { 'content-type': 'text/plain' } }), 400, /takes no body$/);
    }
    expect(service.calls.filter((c) => c.method !== 'ready')).toHaveLength(0);
    // without them, the same requests pass
    expect((await call({ url: '/v1/feed' })).statusCode).toBe(200);
    expect((await call({ method: 'PUT', url: '/v1/follows/2' })).statusCode).toBe(200);
  });

  it('refuses two Authorization headers (node keeps the first) with 400, over a real socket', async () => {
    // (afterEach closes the app)
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const send = (headers: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port }, () => socket.end(`GET /v1/feed HTTP/1.1\r\nHost: x\r\n${headers}Connection: close\r\n\r\n`));
        let got = '';
        socket.on('data', (c: Buffer) => (got += c.toString('utf8')));
        socket.on('end', () => resolve(got));
        socket.on('error', reject);
      });
    const two = await send(`Authorization: Bearer ${tokenFor(1)}\r\nauthorization: Bearer ${tokenFor(2)}\r\n`);
    expect(two).toMatch(/^HTTP\/1\.1 400 /);
    expect(two).toContain('{"error":"2 Authorization headers: send one"}');
    const one = await send(`Authorization: Bearer ${tokenFor(1)}\r\n`);
    expect(one).toMatch(/^HTTP\/1\.1 200 /);
    expect(service.calls.filter((c) => c.method === 'homeFeed').map((c) => c.args[0])).toEqual([1]);
  });

  it('answers what node:http could not parse in the one shape too: malformed, huge headers (431), an Expect (417), no Host', async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const send = (request: string) =>
      new Promise<{ status: number; body: unknown }>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port }, () => socket.write(request));
        let got = '';
        socket.on('data', (c: Buffer) => (got += c.toString('latin1')));
        socket.on('close', () => {
          const [head, body] = got.split('\r\n\r\n');
          expect(head, got).toMatch(/\r\ncontent-type: application\/json/i);
          resolve({ status: Number(head.slice(9, 12)), body: JSON.parse(body) });
        });
        socket.on('error', reject);
      });
    expect(await send('GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n')).toEqual({ status: 400, body: { error: 'malformed HTTP request' } });
    expect(await send(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)).toEqual({ status: 431, body: { error: 'the request headers are larger than the server accepts' } });
    expect(await send('GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nConnection: close\r\n\r\n')).toEqual({ status: 417, body: { error: 'Expect: 200-ok is not supported (only 100-continue)' } });
    expect(await send('GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n')).toEqual({ status: 400, body: { error: 'the Host header is missing' } });
    // HTTP/1.0 has no Host requirement; a whole request still passes
    expect(await send('GET /healthz HTTP/1.0\r\n\r\n')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await send('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('refuses a body with fields on the routes that take none', async () => {
    for (const [method, url] of [['DELETE', '/v1/posts/123'], ['PUT', '/v1/follows/2'], ['DELETE', '/v1/follows/2']] as const) {
      expectError(await call({ method, url, json: { a: 1 } }), 400, new RegExp(`^${method} /v1/(posts/:id|follows/:userId) takes no body$`));
      expectError(await call({ method, url, json: ['x'] }), 400, /takes no body$/);
    }
    expect(service.calls.filter((c) => ['deletePost', 'follow', 'unfollow'].includes(c.method))).toHaveLength(0);
    expect((await call({ method: 'PUT', url: '/v1/follows/2', json: {} })).statusCode).toBe(200);
    expect((await call({ method: 'DELETE', url: '/v1/follows/2' })).statusCode).toBe(200);
  });

  it('refuses raw invalid UTF-8 as it does an escaped lone surrogate, and a charset other than UTF-8 (415)', async () => {
    const raw = (bytes: Buffer, contentType = 'application/json') => app.inject({ method: 'POST', url: '/v1/posts', headers: { authorization: `Bearer ${tokenFor(1)}`, 'content-type': contentType }, payload: bytes });
    // a lone continuation byte, an overlong "/", a UTF-16 surrogate encoded in UTF-8
    for (const bad of [[0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80]]) {
      expectError(await raw(Buffer.concat([Buffer.from('{"text":"a'), Buffer.from(bad), Buffer.from('b"}')])), 400, /^the body is not valid UTF-8$/);
    }
    expectError(await raw(Buffer.from('{"text":"caf\xe9"}', 'latin1'), 'application/json; charset=ISO-8859-1'), 415, /^charset "ISO-8859-1" is not supported \(send UTF-8\)$/);
    expectError(await raw(Buffer.from('{"text":"hi"}'), 'application/json; charset=utf-16'), 415, /charset "utf-16"/);
    expect(service.calls.filter((c) => c.method === 'createPost')).toHaveLength(0);
    // UTF-8, said or not, passes, its characters intact
    for (const type of ['application/json', 'application/json; charset=utf-8', 'application/json;charset="UTF-8"']) {
      const res = await raw(Buffer.from('{"text":"café 😀"}'), type);
      expect(res.statusCode, res.body).toBe(201);
    }
    expect(service.calls.filter((c) => c.method === 'createPost').map((c) => c.args[1])).toEqual(['café 😀', 'café 😀', 'café 😀']);
  });

  it('refuses invalid JSON, an empty JSON body, a body over the limit (413) and other media types', async () => {
    expectError(await call({ method: 'POST', url: '/v1/posts', payload: '{"text": "hi"' }), 400, /^the body is not valid JSON$/);
    expectError(await call({ method: 'POST', url: '/v1/posts', payload: '{"text": "hi", "__proto__": {"x": 1}}' }), 400, /not valid JSON/);
    expectError(await call({ method: 'POST', url: '/v1/posts', payload: '' }), 400, /^the body is empty/);
    expectError(await call({ method: 'POST', url: '/v1/posts' }), 400, /^the body must be a JSON object$/);
    const big = JSON.stringify({ text: 'x'.repeat(20_000) });
    expectError(await call({ method: 'POST', url: '/v1/posts', payload: big }), 413, /^the request body is larger than 16384 bytes$/);
    expectError(
      await call({ method: 'POST', url: '/v1/posts', payload: '<text>hi</text>', headers: { 'content-type': 'application/xml' } }),
      415,
      /Content-Type/,
    );
    expectError(await call({ method: 'POST', url: '/v1/posts', payload: 'hi', headers: { 'content-type': 'text/plain' } }), 400, /JSON object/);
    const small = makeApp({ bodyLimit: 64 });
    try {
      expectError(await call({ target: small, method: 'POST', url: '/v1/posts', json: { text: 'y'.repeat(100) } }), 413, /larger than 64 bytes/);
    } finally {
      await small.close();
    }
  });

  it('refuses path ids that are not ids', async () => {
    expectError(await call({ method: 'DELETE', url: '/v1/posts/abc' }), 400, /^id "abc" is not a post id$/);
    expectError(await call({ method: 'DELETE', url: '/v1/posts/9223372036854775808' }), 400, /is not a post id/);
    expectError(await call({ method: 'DELETE', url: '/v1/posts/0123' }), 400, /is not a post id/);
    expectError(await call({ method: 'PUT', url: '/v1/follows/-1' }), 400, /^userId "-1" is not a user id$/);
    expectError(await call({ method: 'PUT', url: '/v1/follows/9007199254740993' }), 400, /is not a user id/);
    expectError(await call({ url: '/v1/users/bob/posts' }), 400, /^id "bob" is not a user id$/);
    expectError(await call({ url: '/v1/users/%ZZ/posts' }), 400, /^the URL is not valid/);
    expectError(await call({ method: 'DELETE', url: `/v1/posts/${'1'.repeat(300)}` }), 414, /^a path parameter is longer than 200 characters$/);
  });

  it('answers 404 for an unknown user or post, and 400 for following oneself', async () => {
    expectError(await call({ method: 'PUT', url: '/v1/follows/999' }), 404, /^user 999 does not exist$/);
    expectError(await call({ method: 'DELETE', url: '/v1/follows/999' }), 404, /^user 999 does not exist$/);
    expectError(await call({ url: '/v1/users/999/posts' }), 404, /^user 999 does not exist$/);
    expectError(await call({ method: 'DELETE', url: '/v1/posts/1234567890123456789' }), 404, /does not exist/);
    expectError(await call({ method: 'PUT', url: '/v1/follows/1', as: 1 }), 400, /^you cannot follow yourself$/);
    expectError(await call({ method: 'DELETE', url: '/v1/follows/1', as: 1 }), 400, /^you cannot unfollow yourself$/);
    // A token for a user the store does not know.
    expectError(await call({ method: 'POST', url: '/v1/posts', as: 77, json: { text: 'hi' } }), 404, /^user 77 does not exist$/);
  });

  it('maps the store\'s own error classes by name, so the repository\'s errors need no translation', async () => {
    class RepoError extends Error {
      constructor(name: string, message: string) {
        super(message);
        this.name = name;
      }
    }
    service.failures.set('follow', new RepoError('NotFoundError', 'user 3 does not exist'));
    expectError(await call({ method: 'PUT', url: '/v1/follows/3' }), 404, /^user 3 does not exist$/);
    service.failures.set('follow', new RepoError('BadRequestError', 'bad\nthing'));
    expectError(await call({ method: 'PUT', url: '/v1/follows/3' }), 400, /^bad thing$/);
    service.failures.set('deletePost', new RepoError('ForbiddenError', 'not yours'));
    expectError(await call({ method: 'DELETE', url: '/v1/posts/1234567890123456789' }), 403, /^not yours$/);
  });

  it('answers 401 for no token, a bad signature, an expired token, alg none, a bad subject or a bad header', async () => {
    const feed = (h: Partial<Call>) => call({ url: '/v1/feed', ...h });
    const missing = await feed({ as: null });
    expectError(missing, 401, /^missing bearer token/);
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="feedlab"');

    const foreign = await feed({ token: signToken(1, OTHER_SECRET) });
    expectError(foreign, 401, /^token signature is invalid/);
    expect(foreign.headers['www-authenticate']).toBe('Bearer realm="feedlab", error="invalid_token"');

    const [h, c] = tokenFor(1).split('.');
    const asTwo = b64({ ...JSON.parse(Buffer.from(c as string, 'base64url').toString()), sub: '2' });
    expectError(await feed({ token: `${h}.${asTwo}.${tokenFor(1).split('.')[2]}` }), 401, /^token signature is invalid/);

    const expired = signToken(1, TOKEN_SECRET, { ttlSeconds: 3600, now: Date.now() - 2 * 3600_000 });
    expectError(await feed({ token: expired }), 401, /^token expired at \d{4}-/);

    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: '1', iat: 1, exp: 4e9 })}.`;
    expectError(await feed({ token: none }), 401, /^token algorithm "none" is not accepted \(HS256 only\)$/);
    const hs512 = `${b64({ alg: 'HS512', typ: 'JWT' })}.${b64({ sub: '1', iat: 1, exp: 4e9 })}.AAAA`;
    expectError(await feed({ token: hs512 }), 401, /algorithm "HS512" is not accepted/);

    expectError(await feed({ token: 'abc' }), 401, /^malformed token/);
    expectError(await feed({ headers: { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` }, as: null }), 401, /not "Bearer <token>"/);
    expectError(await feed({ headers: { authorization: 'Bearer' }, as: null }), 401, /not "Bearer <token>"/);

    // Properly signed, but the subject is not a user id.
    for (const sub of ['bob', '01', -1, 5]) {
      const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub, iat: 1, exp: 4e9 })}`;
      const { createHmac } = await import('node:crypto');
      const sig = createHmac('sha256', TOKEN_SECRET).update(input).digest('base64url');
      expectError(await feed({ token: `${input}.${sig}` }), 401, /^token subject .* is not a user id$/);
    }

    // Auth comes before the body: a bad token with a bad body is a 401, not a 400.
    expectError(await call({ method: 'POST', url: '/v1/posts', as: null, payload: '{nope' }), 401, /missing bearer token/);
    expect(service.calls).toHaveLength(0);
  });
});

// ---- the auth matrix ----

describe('auth matrix: nobody posts as, reads the home feed of, or deletes for someone else', () => {
  it('posts only as the token\'s subject', async () => {
    expectError(await call({ method: 'POST', url: '/v1/posts', as: 1, json: { text: 'hi', authorId: 2 } }), 400, /unknown field "authorId"/);
    expectError(await call({ method: 'POST', url: '/v1/posts', as: 1, json: { text: 'hi', userId: 2 } }), 400, /unknown field "userId"/);
    // a query parameter is refused, not ignored (it posted as the token's user before)
    expectError(await call({ method: 'POST', url: '/v1/posts?userId=2', as: 1, json: { text: 'hi' } }), 400, /^unknown query parameter "userId"$/);
    const res = await call({ method: 'POST', url: '/v1/posts', as: 1, json: { text: 'hi' }, headers: { 'x-user-id': '2' } });
    expect(res.statusCode).toBe(201);
    expect(service.posts.get((res.json() as { id: string }).id)?.authorId).toBe(1);
    expect(service.calls.filter((c) => c.method === 'createPost').map((c) => c.args[0])).toEqual([1]);
  });

  it('reads only the caller\'s own home feed', async () => {
    await call({ method: 'PUT', url: '/v1/follows/3', as: 2 });
    const secret = await post(3, 'only user 2 follows me');
    await post(1, 'mine');
    for (const url of ['/v1/feed?userId=2', '/v1/feed?user=2', '/v1/feed?as=2']) {
      expectError(await call({ url, as: 1 }), 400, /^unknown query parameter/);
    }
    const mine = await call({ url: '/v1/feed', as: 1, headers: { 'x-user-id': '2' } });
    expect((mine.json() as FeedPage).posts.map((p) => p.text)).toEqual(['mine']);
    const theirs = await call({ url: '/v1/feed', as: 2 });
    expect((theirs.json() as FeedPage).posts.map((p) => p.id)).toEqual([secret]);
    expect(service.calls.filter((c) => c.method === 'homeFeed').map((c) => c.args[0])).toEqual([1, 2]);
  });

  it('deletes only the caller\'s own posts, and follows only as the caller', async () => {
    const twos = await post(2, 'by two');
    expectError(await call({ method: 'DELETE', url: `/v1/posts/${twos}`, as: 1 }), 403, /is not yours/);
    expect(service.posts.get(twos)?.deleted).toBe(false);
    expect((await call({ method: 'DELETE', url: `/v1/posts/${twos}`, as: 2 })).statusCode).toBe(204);
    expect(service.posts.get(twos)?.deleted).toBe(true);

    await call({ method: 'PUT', url: '/v1/follows/3', as: 1 });
    expect(service.follows.get(1)?.has(3)).toBe(true);
    expect(service.follows.get(2)?.has(3)).toBeFalsy();
    expect(service.calls.filter((c) => c.method === 'follow').map((c) => c.args)).toEqual([[1, 3]]);
  });

  it('never lets a forged token through, for any route', async () => {
    const forged = signToken(2, OTHER_SECRET);
    const routes: Call[] = [
      { method: 'POST', url: '/v1/posts', json: { text: 'x' } },
      { method: 'DELETE', url: '/v1/posts/1234567890123456789' },
      { method: 'PUT', url: '/v1/follows/3' },
      { method: 'DELETE', url: '/v1/follows/3' },
      { method: 'GET', url: '/v1/feed' },
      { method: 'GET', url: '/v1/users/2/posts' },
    ];
    for (const r of routes) {
      expectError(await call({ ...r, token: forged }), 401, /signature is invalid/);
      expectError(await call({ ...r, as: null }), 401, /missing bearer token/);
    }
    expect(service.calls).toHaveLength(0);
  });
});

// ---- outages ----

describe('outages', () => {
  it('answers 503 with Retry-After for a database, cache or event-log outage, without the internals', async () => {
    service.failures.set('createPost', new DatabaseUnavailableError('Postgres at postgres://root:***@db:5432/feed is unreachable', 'ECONNREFUSED'));
    const down = await call({ method: 'POST', url: '/v1/posts', json: { text: 'hi' } });
    expectError(down, 503, /^the database is unavailable; retry shortly$/);
    expect(down.headers['retry-after']).toBe('1');
    expect(down.body).not.toContain('postgres://');

    service.failures.set('homeFeed', new InfrastructureError('Redis at redis://cache:6379 is unreachable'));
    const noCache = await call({ url: '/v1/feed' });
    expectError(noCache, 503, /^the cache is unavailable/);
    expect(noCache.headers['retry-after']).toBe('1');

    service.failures.set('follow', new EventLogUnavailableError('Kafka is down'));
    expectError(await call({ method: 'PUT', url: '/v1/follows/2' }), 503, /^the event log is unavailable/);
    expect(logs.join('')).toContain('answered 503');
  });

  it('answers a body that trickles in with 408 and closes the connection, and a whole body in time as usual', async () => {
    const slow = makeApp({ requestTimeoutMs: 200, handlerTimeoutMs: 2_000 });
    try {
      await slow.listen({ port: 0, host: '127.0.0.1' });
      const { port } = slow.server.address() as AddressInfo;
      const head = (length: number) => `POST /v1/posts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tokenFor(1)}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
      // 9 of the 40 bytes promised, then nothing: the answer, then the server closes the socket
      const started = Date.now();
      const answer = await new Promise<{ text: string; closedAfterMs: number }>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port }, () => socket.write(`${head(40)}{"text":"`));
        let text = '';
        socket.on('data', (c: Buffer) => (text += c.toString('utf8')));
        socket.on('close', () => resolve({ text, closedAfterMs: Date.now() - started }));
        socket.on('error', reject);
        setTimeout(() => reject(new Error(`still open after 3 s: ${text}`)), 3_000).unref();
      });
      expect(answer.text).toMatch(/^HTTP\/1\.1 408 /);
      expect(answer.text.toLowerCase()).toContain('connection: close');
      expect(answer.text).toContain('{"error":"the request did not arrive in time"}');
      expect(answer.closedAfterMs).toBeGreaterThanOrEqual(190);
      expect(answer.closedAfterMs).toBeLessThan(1_500);
      // a client mistake: no server error logged
      expect(logs.join('')).not.toMatch(/internal error/);
      expect(service.calls.filter((c) => c.method === 'createPost')).toHaveLength(0);
      // a body sent whole is not held to it
      expect((await call({ target: slow, method: 'POST', url: '/v1/posts', json: { text: 'in time' } })).statusCode).toBe(201);
      // bodies no route reads (a GET's, an unknown route's, an unknown media type's) are answered,
      // and the server is still there after the timeout has passed for each
      const unread = [
        `GET /v1/feed HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tokenFor(1)}\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx`,
        'POST /nope HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-foo\r\nContent-Length: 2\r\nConnection: close\r\n\r\nab',
        `POST /v1/posts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tokenFor(1)}\r\nContent-Type: application/x-foo\r\nContent-Length: 2\r\nConnection: close\r\n\r\nab`,
      ];
      const statuses: number[] = [];
      for (const request of unread) {
        statuses.push(
          await new Promise<number>((resolve, reject) => {
            const socket = connect({ host: '127.0.0.1', port }, () => socket.write(request));
            let text = '';
            socket.on('data', (c: Buffer) => (text += c.toString('utf8')));
            socket.on('close', () => resolve(Number(text.slice(9, 12))));
            socket.on('error', reject);
          }),
        );
      }
      expect(statuses).toEqual([400, 404, 415]);
      await new Promise((r) => setTimeout(r, 400));
      expect((await call({ target: slow, url: '/healthz', as: null })).statusCode).toBe(200);
    } finally {
      await slow.close();
    }
  });

  it('notes a client gone mid-body as such, not as an internal error with a stack', async () => {
    const noted = makeApp({ logger: { level: 'info', stream: { write: (line: string) => void logs.push(line) } } });
    try {
      await noted.listen({ port: 0, host: '127.0.0.1' });
      const { port } = noted.server.address() as AddressInfo;
      await new Promise<void>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port }, () => {
          socket.write(`POST /v1/posts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tokenFor(1)}\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"text":"`);
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 50);
        });
        socket.on('error', reject);
      });
      await new Promise((r) => setTimeout(r, 200));
      const text = logs.join('');
      expect(text).toContain('POST /v1/posts: the client closed the connection mid-request');
      expect(text).not.toMatch(/internal error|"stack"/);
      expect(service.calls.filter((c) => c.method === 'createPost')).toHaveLength(0);
    } finally {
      await noted.close();
    }
  });

  it('answers 503 when a store hangs past the handler timeout', async () => {
    const quick = makeApp({ handlerTimeoutMs: 50, retryAfterSeconds: 3 });
    try {
      service.hanging.add('homeFeed');
      const started = Date.now();
      const res = await call({ target: quick, url: '/v1/feed' });
      expectError(res, 503, /timed out/);
      expect(res.headers['retry-after']).toBe('3');
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await quick.close();
    }
  });

  it('answers a post without an Idempotency-Key that hangs or loses Postgres mid-commit with a 500, not "retry shortly"; a keyed one with 503', async () => {
    const quick = makeApp({ handlerTimeoutMs: 50, retryAfterSeconds: 3 });
    try {
      service.hanging.add('createPost');
      const unkeyed = await call({ target: quick, method: 'POST', url: '/v1/posts', json: { text: 'hi' } });
      expectError(unkeyed, 500, /^the post did not finish within the time limit: it may or may not exist, and a retry could post it twice \(send an Idempotency-Key header to make a retry safe\)$/);
      expect(unkeyed.headers['retry-after']).toBeUndefined();
      const keyed = await call({ target: quick, method: 'POST', url: '/v1/posts', json: { text: 'hi' }, headers: { 'idempotency-key': 'k1' } });
      expectError(keyed, 503, /timed out; retry shortly/);
      expect(keyed.headers['retry-after']).toBe('3');
      // other routes keep their 503
      service.hanging.add('deletePost');
      expectError(await call({ target: quick, method: 'DELETE', url: `/v1/posts/1` }), 503, /timed out/);
    } finally {
      service.hanging.clear();
      await quick.close();
    }
    // the repository's verdict on a statement lost after it went out, and a key reused with another text
    service.failures.set('createPost', new OutcomeUnknownError('1578391655952678912'));
    const unknown = await call({ method: 'POST', url: '/v1/posts', json: { text: 'hi' } });
    expectError(unknown, 500, /^Postgres stopped answering while post 1578391655952678912 was being committed: it may or may not exist/);
    expect(unknown.headers['retry-after']).toBeUndefined();
    service.failures.set('createPost', new IdempotencyKeyReuseError('Idempotency-Key "k1" was used for post 5 with another text'));
    expectError(await call({ method: 'POST', url: '/v1/posts', json: { text: 'hi' }, headers: { 'idempotency-key': 'k1' } }), 422, /^Idempotency-Key "k1" was used for post 5 with another text$/);
    service.failures.clear();
  });

  it('reports readiness: 503 with Retry-After when a store is down, throws or hangs', async () => {
    service.readiness = { redis: true, postgres: false };
    let res = await call({ url: '/readyz', as: null });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json()).toEqual({ error: 'not ready: Postgres unreachable', redis: true, postgres: false });

    service.failures.set('ready', new Error('boom'));
    res = await call({ url: '/readyz', as: null });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: 'not ready: Postgres and Redis unreachable' });

    service.failures.clear();
    service.hanging.add('ready');
    const quick = makeApp({ readyTimeoutMs: 30 });
    try {
      res = await call({ target: quick, url: '/readyz', as: null });
      expect(res.statusCode).toBe(503);
    } finally {
      await quick.close();
    }
  });

  it('answers an unexpected error with a generic 500 and logs it', async () => {
    service.failures.set('homeFeed', new TypeError('cannot read properties of undefined (secret detail)'));
    const res = await call({ url: '/v1/feed' });
    expectError(res, 500, /^internal error$/);
    expect(res.body).not.toContain('secret detail');
    const logged = logs.map((l) => JSON.parse(l) as { level: number; msg: string; err?: { message: string } });
    const entry = logged.find((l) => l.level === 50);
    expect(entry?.msg).toContain('internal error answering GET /v1/feed');
    expect(entry?.err?.message).toContain('secret detail');
  });
});

// ---- metrics ----

describe('/metrics', () => {
  it('exposes the feed latency histogram and request counts after a feed read, on a shared registry', async () => {
    const registry = new MetricsRegistry();
    const lag = registry.histogram('feedlab_fanout_lag_seconds', 'Fan-out lag', { buckets: [0.1, 1] });
    lag.observe(0.5);
    const withMetrics = makeApp({ metrics: registry });
    try {
      expect((await call({ target: withMetrics, url: '/v1/feed' })).statusCode).toBe(200);
      expect((await call({ target: withMetrics, url: '/v1/feed?limit=0' })).statusCode).toBe(400);
      const res = await call({ target: withMetrics, url: '/metrics', as: null });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
      const text = res.body;
      expect(text).toContain('# TYPE feedlab_feed_latency_seconds histogram');
      expect(text).toMatch(/^feedlab_feed_latency_seconds_bucket\{le="\+Inf"\} 1$/m);
      // Only the successful read counts as feed latency.
      expect(text).toMatch(/^feedlab_feed_latency_seconds_count 1$/m);
      expect(text).toMatch(/^feedlab_feed_latency_seconds_sum \d/m);
      expect(text).toMatch(/^feedlab_http_requests_total\{method="GET",route="\/v1\/feed",status="200"\} 1$/m);
      expect(text).toMatch(/^feedlab_http_requests_total\{method="GET",route="\/v1\/feed",status="400"\} 1$/m);
      expect(text).toMatch(/^feedlab_fanout_lag_seconds_bucket\{le="1"\} 1$/m);
    } finally {
      await withMetrics.close();
    }
  });

  it('renders only the metrics named by ?name=, and refuses a name it does not have or one no metric could have', async () => {
    const registry = new MetricsRegistry();
    registry.counter('feedlab_test_a_total', 'A').inc(undefined, 2);
    registry.gauge('feedlab_test_b', 'B').set(7);
    const withMetrics = makeApp({ metrics: registry });
    try {
      const one = await call({ target: withMetrics, url: '/metrics?name=feedlab_test_b', as: null });
      expect(one.statusCode).toBe(200);
      expect(one.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(one.body).toBe('# HELP feedlab_test_b B\n# TYPE feedlab_test_b gauge\nfeedlab_test_b 7\n');
      const two = await call({ target: withMetrics, url: '/metrics?name=feedlab_test_b&name=feedlab_test_a_total', as: null });
      expect(two.body.split('\n').filter((l) => !l.startsWith('#'))).toEqual(['feedlab_test_b 7', 'feedlab_test_a_total 2', '']);
      expect(two.body).not.toContain('feedlab_http_requests_total');
      const unknown = await call({ target: withMetrics, url: '/metrics?name=feedlab_test_b&name=feedlab_nope', as: null });
      expect(unknown.statusCode).toBe(400);
      expect(unknown.json()).toEqual({ error: 'no such metric: feedlab_nope' });
      expect((await call({ target: withMetrics, url: '/metrics?name=1bad', as: null })).statusCode).toBe(400);
      expect((await call({ target: withMetrics, url: '/metrics?other=1', as: null })).statusCode).toBe(400);
    } finally {
      await withMetrics.close();
    }
  });
});

// ---- paging ----

describe('paging with the returned cursors', () => {
  async function pageAll(url: string, limit: number, as = 1): Promise<PostView[]> {
    const seen: PostView[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 1000; pages++) {
      const q: string = cursor === null ? `limit=${limit}` : `limit=${limit}&cursor=${cursor}`;
      const res = await call({ url: `${url}?${q}`, as });
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json() as { posts: PostView[]; nextCursor: string | null };
      expect(page.posts.length).toBeLessThanOrEqual(limit);
      seen.push(...page.posts);
      if (page.nextCursor === null) return seen;
      cursor = page.nextCursor;
    }
    throw new Error('paging did not end');
  }

  it('yields every post exactly once, in order, including 30 posts in one millisecond', async () => {
    await call({ method: 'PUT', url: '/v1/follows/2', as: 1 });
    await call({ method: 'PUT', url: '/v1/follows/3', as: 1 });
    // 15 posts each from two authors, all in the same millisecond; then a few spread out.
    for (let i = 0; i < 15; i++) {
      await post(2, `two ${i}`);
      await post(3, `three ${i}`);
    }
    for (let i = 0; i < 7; i++) {
      service.clockMs += 1 + i;
      await post(i % 2 === 0 ? 2 : 1, `later ${i}`);
    }
    const all = await pageAll('/v1/feed', 100);
    expect(all).toHaveLength(37);
    for (const limit of [1, 3, 10]) {
      const paged = await pageAll('/v1/feed', limit);
      expect(paged.map((p) => p.id)).toEqual(all.map((p) => p.id));
    }
    expect(new Set(all.map((p) => p.id)).size).toBe(37);
    const positions: FeedPosition[] = all.map((p) => ({ createdAt: p.createdAt, id: p.id }));
    for (let i = 1; i < positions.length; i++) expect(compareNewestFirst(positions[i - 1]!, positions[i]!)).toBeLessThan(0);

    const author = await pageAll('/v1/users/2/posts', 4, 3);
    expect(author.map((p) => p.id)).toEqual(all.filter((p) => p.authorId === 2).map((p) => p.id));
  });
});
