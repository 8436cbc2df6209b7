// The reference server's HTTP API on fastify: schema-first routes over a FeedService.
//
//   POST   /v1/posts               {text}           201 {id, authorId, createdAt}
//   DELETE /v1/posts/:id                            204 (the author only: 403 otherwise)
//   PUT    /v1/follows/:userId                      200 {followeeId, following: true, changed}
//   DELETE /v1/follows/:userId                      200 {followeeId, following: false, changed}
//   GET    /v1/feed?limit=&cursor=                  200 {posts, nextCursor}: the caller's home feed
//   GET    /v1/users/:id/posts?limit=&cursor=       200 {posts, nextCursor}: one author's posts
//   GET    /healthz   /readyz   /metrics            no token needed
//
// Every /v1 route takes `Authorization: Bearer <HS256 token>`; the token's subject is the only
// user a request acts as: no route takes a user id for "me" (posts and the home feed are the
// caller's, an unknown field or query parameter is a 400), so nobody posts as, reads the home
// feed of, or deletes for someone else.
//
// Validation is fastify's Ajv with coercion and additional-property removal turned off (a number
// is not a string of text, an unknown field is an error, not silently dropped); `limit` alone is
// converted from its query-string digits before validation. Cursors are core/cursor.ts's signed
// (createdAt, id) positions: a mangled, tampered or foreign cursor is a 400, never page one.
// Errors become answers in server/http/errors.ts.
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { fastify, LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { decodeCursor, encodeCursor, type CursorSecret, type FeedPosition } from '../../core/cursor.js';
import { isPostId } from '../../core/post-id.js';
import { LISTED_TIMING, serverTiming } from '../../core/server-timing.js';
import { bearerToken, checkTokenSecret, parseUserId, TokenVerifier, type TokenSecret } from '../auth/token.js';
import { clientErrorFailure, errorBody, httpFailure, oneLine, rawAnswer, UnsupportedCharsetError } from './errors.js';
import { Histogram, LATENCY_BUCKETS_SECONDS, MetricsRegistry, PROMETHEUS_CONTENT_TYPE, type Counter } from './metrics.js';
import { BadRequestError, type FeedPage, type FeedService, type Readiness, type UserId } from './service.js';
import { JSON_UTF8, splicedPage } from './spliced-page.js';
import { withTimeout } from '../timeout.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated user (the token's subject); -1 on routes without a token. */
    userId: number;
  }
}

export const DEFAULT_BODY_LIMIT = 16 * 1024;
export const DEFAULT_PAGE_LIMIT = 20;
export const MAX_PAGE_LIMIT = 100;
/** Code points, as Postgres's char_length and the store count them. */
export const MAX_POST_CHARS = 280;
export const DEFAULT_RETRY_AFTER_SECONDS = 1;
export const DEFAULT_HANDLER_TIMEOUT_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 5_000;
/** node:http looks for requests past their time every requestTimeoutMs / this (its own default: every 30 s). */
const REQUEST_TIMEOUT_CHECKS = 5;
export const DEFAULT_READY_TIMEOUT_MS = 2_000;
/** Longest path parameter routed (ids are at most 19 digits); longer is a 414. */
export const MAX_PARAM_LENGTH = 200;

export const METRIC_HTTP_REQUESTS = 'feedlab_http_requests_total';
export const METRIC_HTTP_DURATION = 'feedlab_http_request_duration_seconds';
export const METRIC_FEED_LATENCY = 'feedlab_feed_latency_seconds';

export interface AppOptions {
  service: FeedService;
  /** HS256 secret of the bearer tokens (at least 32 bytes). */
  tokenSecret: TokenSecret;
  /** Secret of the feed cursors' MAC (may equal tokenSecret: the MACs are domain-separated). */
  cursorSecret: CursorSecret;
  /** Largest request body in bytes (default 16 KiB); larger is a 413. */
  bodyLimit?: number;
  /** The process's registry, shared with the worker and read path (default: a new one). */
  metrics?: MetricsRegistry;
  /** fastify/pino logger options (default info level, no per-request lines); false for none. */
  logger?: FastifyServerOptions['logger'];
  /** Retry-After on a 503 (default 1 s). */
  retryAfterSeconds?: number;
  /** A handler still running after this long answers 503 (default 10 s); 0 turns it off. */
  handlerTimeoutMs?: number;
  /**
   * A request (headers and body) still arriving after this long is answered 408 and its connection
   * closed (default 5 s, under the handler's timeout, so a trickling body is not taken for a slow
   * handler); 0 turns it off.
   */
  requestTimeoutMs?: number;
  /** /readyz waits this long for service.ready() (default 2 s). */
  readyTimeoutMs?: number;
  /** Clock for token expiry, Unix ms (tests). */
  now?: () => number;
  /** Clock skew tolerated on token expiry, seconds (default 0). */
  tokenLeewaySeconds?: number;
}

// ---- schemas ----

const postView = {
  type: 'object',
  required: ['id', 'authorId', 'text', 'createdAt'],
  properties: {
    id: { type: 'string' },
    authorId: { type: 'integer' },
    text: { type: 'string' },
    createdAt: { type: 'integer' },
  },
} as const;

/** A page of posts as the feed routes answer it. */
export const feedPageResponse = {
  type: 'object',
  required: ['posts', 'nextCursor'],
  properties: {
    posts: { type: 'array', items: postView },
    nextCursor: { type: ['string', 'null'] },
  },
} as const;

const followResponse = {
  type: 'object',
  required: ['followeeId', 'following', 'changed'],
  properties: {
    followeeId: { type: 'integer' },
    following: { type: 'boolean' },
    changed: { type: 'boolean' },
  },
} as const;

const pageQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT },
    cursor: { type: 'string' },
  },
} as const;

/** The routes without query parameters: any is an unknown one, a 400 (never ignored). */
const noQuery = { type: 'object', additionalProperties: false, properties: {} } as const;

const createPostBody = {
  type: 'object',
  additionalProperties: false,
  required: ['text'],
  properties: {
    text: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_POST_CHARS,
      // Postgres text cannot hold NUL, and an unpaired surrogate would be stored as U+FFFD.
      pattern: '^[^\\u0000\\p{Cs}]*$',
      description: 'text must not contain NUL characters or unpaired surrogates',
    },
  },
} as const;

function idParams(name: string, format: 'post-id' | 'user-id') {
  return {
    type: 'object',
    additionalProperties: false,
    required: [name],
    properties: { [name]: { type: 'string', format } },
  } as const;
}

type AjvPlugin = Extract<NonNullable<NonNullable<FastifyServerOptions['ajv']>['plugins']>[number], (...args: never[]) => unknown>;

/** The routes' Ajv: the id formats the path parameters use. */
const idFormats: AjvPlugin = (ajv) => {
  ajv.addFormat('post-id', { type: 'string', validate: (s: string) => isPostId(s) });
  ajv.addFormat('user-id', { type: 'string', validate: (s: string) => parseUserId(s) !== undefined });
  return ajv;
};

interface PageQuery {
  limit: number;
  cursor?: string;
}

/**
 * A page request's checks before validation, in one synchronous hook (it runs on every read): a GET
 * takes no body (one sent, any Content-Length above 0 or chunked, is refused, not ignored); the
 * query string's `limit` digits become a number, so the schema checks its range (anything else is
 * left for the schema to refuse as "not an integer").
 */
function pageRequest(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const length = request.headers['content-length'];
  if ((length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined) {
    done(new BadRequestError(`${request.method} ${request.routeOptions.url} takes no body`));
    return;
  }
  const query = request.query as Record<string, unknown>;
  if (typeof query.limit === 'string' && /^[0-9]{1,9}$/.test(query.limit)) query.limit = Number(query.limit);
  done();
}

/** Routes that take no body refuse one with fields: an unknown field is an error, not ignored. */
async function refuseBody(request: FastifyRequest): Promise<void> {
  const body = request.body as unknown;
  if (body === undefined || body === null) return;
  if (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0) return;
  throw new BadRequestError(`${request.method} ${request.routeOptions.url} takes no body`);
}

/** The fastify instance serving the API. Routes are registered; call listen() or inject(). */
export function buildApp(options: AppOptions): FastifyInstance {
  const { service, tokenSecret, cursorSecret } = options;
  checkTokenSecret(tokenSecret);
  if ((typeof cursorSecret === 'string' ? Buffer.byteLength(cursorSecret) : cursorSecret.byteLength) === 0) {
    throw new TypeError('the cursor secret is empty');
  }
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const retryAfterSeconds = options.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS;
  const readyTimeoutMs = options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  const handlerTimeoutMs = options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS;
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const now = options.now ?? Date.now;
  const leewaySeconds = options.tokenLeewaySeconds ?? 0;
  const tokens = new TokenVerifier(tokenSecret);
  const registry = options.metrics ?? new MetricsRegistry();

  const requests: Counter = registry.counter(METRIC_HTTP_REQUESTS, 'HTTP requests answered, by route pattern and status', {
    labelNames: ['method', 'route', 'status'],
  });
  const durations: Histogram = registry.histogram(METRIC_HTTP_DURATION, 'HTTP request duration in seconds, by route pattern', {
    labelNames: ['method', 'route'],
    buckets: LATENCY_BUCKETS_SECONDS,
  });
  const feedLatency: Histogram = registry.histogram(METRIC_FEED_LATENCY, 'Home feed read latency in seconds (GET /v1/feed answered 2xx)', {
    buckets: LATENCY_BUCKETS_SECONDS,
  });

  const failureContext = { bodyLimit, retryAfterSeconds, maxParamLength: MAX_PARAM_LENGTH };
  function answerError(err: unknown, request: FastifyRequest, reply: FastifyReply): void {
    const route = request.routeOptions?.url ?? request.url?.split('?')[0];
    // a post without an Idempotency-Key is not safe to retry: a timeout is not "retry shortly"
    const unkeyedPost = request.method === 'POST' && route === '/v1/posts' && request.headers?.['idempotency-key'] === undefined;
    const failure = httpFailure(err, { ...failureContext, unkeyedPost });
    if (failure.log === 'error') request.log.error({ err }, 'internal error answering %s %s', request.method, route);
    else if (failure.log === 'warn') request.log.warn('%s %s answered %d: %s', request.method, route, failure.status, oneLineOf(err));
    else if (failure.log === 'info') request.log.info('%s %s: %s', request.method, route, failure.message);
    if (failure.headers) reply.headers(failure.headers);
    reply.code(failure.status).type(JSON_UTF8).send({ error: failure.message });
  }

  const app = fastify({
    logger: options.logger ?? { level: 'info' },
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit,
    ...(handlerTimeoutMs > 0 ? { handlerTimeout: handlerTimeoutMs } : {}),
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // A malformed URL or an overlong path parameter, found before routing: the same one-line answers.
    frameworkErrors: answerError,
    // and a request node:http could not parse at all (fastify's own answer has another shape)
    clientErrorHandler: (err: Error & { code?: unknown }, socket: Duplex) => {
      if (err.code === 'ECONNRESET' || socket.destroyed) return;
      if (socket.writable) socket.write(rawAnswer(clientErrorFailure(err)));
      socket.destroy();
    },
    // A request that trickles in would hold its handler until the handler's timeout (a 503, counted
    // as the server's failure) and its connection for good: node:http answers it 408 (as a client
    // error, above) once requestTimeoutMs has passed. A missing Host is answered below, in the same
    // shape (node's own 400 has no body).
    // (given to node at construction too: set on the server only afterwards, as fastify does, node
    // never times a request out)
    requestTimeout: requestTimeoutMs,
    http: {
      requireHostHeader: false,
      ...(requestTimeoutMs > 0 ? { requestTimeout: requestTimeoutMs, connectionsCheckingInterval: Math.max(1, Math.round(requestTimeoutMs / REQUEST_TIMEOUT_CHECKS)) } : {}),
    },
    ajv: {
      customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: true, allErrors: false, verbose: true },
      plugins: [idFormats],
    },
  });
  app.decorateRequest('userId', -1);

  app.setErrorHandler(answerError);

  // JSON bodies are UTF-8 (RFC 8259 8.1). fastify decodes with replacement characters, so raw invalid
  // bytes were stored as U+FFFD with a 201: they are refused, and so is a body in another charset.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(request.headers['content-type'] ?? '')?.[1];
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) done(new UnsupportedCharsetError(charset), undefined);
    else if (!isUtf8(body)) done(new BadRequestError('the body is not valid UTF-8'), undefined);
    else parseJson(request, body.toString('utf8'), done);
  });

  // HTTP/1.1 requires a Host header (RFC 9112 3.2)
  app.addHook('onRequest', (request, _reply, done) => {
    done(request.headers.host === undefined && request.raw.httpVersion === '1.1' ? new BadRequestError('the Host header is missing') : undefined);
  });
  // An Expect other than 100-continue: node answers 417 itself, without a body
  app.server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const body = errorBody(`Expect: ${String(req.headers.expect)} is not supported (only 100-continue)`);
    res.writeHead(417, { 'content-type': JSON_UTF8, 'content-length': Buffer.byteLength(body), connection: 'close' }).end(body);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    reply.code(404).send({ error: `no route ${request.method} ${JSON.stringify(path.slice(0, 100))}` });
  });

  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const seconds = reply.elapsedTime / 1000;
    requests.inc({ method: request.method, route, status: reply.statusCode });
    durations.observe(seconds, { method: request.method, route });
    if (route === '/v1/feed' && request.method === 'GET' && reply.statusCode < 300) feedLatency.observe(seconds);
    done();
  });

  async function authenticate(request: FastifyRequest): Promise<void> {
    // node:http keeps the first of several Authorization headers and drops the rest: which one a
    // proxy or a client meant is unknown, so two are refused, not resolved
    const raw = request.raw.rawHeaders;
    let given = 0;
    for (let i = 0; i < raw.length; i += 2) if (raw[i].length === 13 && raw[i].toLowerCase() === 'authorization') given++;
    if (given > 1) throw new BadRequestError(`${given} Authorization headers: send one`);
    const token = bearerToken(request.headers.authorization);
    request.userId = tokens.verify(token, { now: now(), leewaySeconds }).userId;
  }

  /** The request's Idempotency-Key (the repository checks its form), or undefined. */
  function idempotencyKeyOf(request: FastifyRequest): string | undefined {
    const key = request.headers['idempotency-key'];
    if (key === undefined) return undefined;
    if (Array.isArray(key)) throw new BadRequestError('send one Idempotency-Key header');
    return key;
  }

  function cursorOf(text: string | undefined): FeedPosition | null {
    return text === undefined ? null : decodeCursor(text, cursorSecret);
  }

  function pageBody(page: FeedPage) {
    return { posts: page.posts, nextCursor: page.nextCursor === null ? null : encodeCursor(page.nextCursor, cursorSecret) };
  }

  /** A page whose posts all came from the body cache, answered as their cached JSON spliced after
   * each id (feedPageResponse's shape, byte for byte what its serializer writes); any other page
   * goes through the serializer. */
  function sendPage(reply: FastifyReply, page: FeedPage) {
    const body = pageBody(page);
    const spliced = splicedPage(body.posts, body.nextCursor);
    return spliced === null ? body : reply.type(JSON_UTF8).send(spliced);
  }

  const authed = { onRequest: authenticate };

  app.post<{ Body: { text: string } }>(
    '/v1/posts',
    {
      ...authed,
      schema: {
        querystring: noQuery,
        body: createPostBody,
        response: { 201: { type: 'object', required: ['id', 'authorId', 'createdAt'], properties: { id: { type: 'string' }, authorId: { type: 'integer' }, createdAt: { type: 'integer' } } } },
      },
    },
    async (request, reply) => {
      const created = await service.createPost(request.userId, request.body.text, idempotencyKeyOf(request));
      reply.code(201);
      if (created.replayed) reply.header('idempotent-replayed', 'true');
      if (created.listedAfterMs !== undefined) reply.header('server-timing', serverTiming(LISTED_TIMING, created.listedAfterMs));
      return { id: created.id, authorId: request.userId, createdAt: created.createdAt };
    },
  );

  app.delete<{ Params: { id: string } }>('/v1/posts/:id', { ...authed, preValidation: refuseBody, schema: { querystring: noQuery, params: idParams('id', 'post-id') } }, async (request, reply) => {
    await service.deletePost(request.userId, request.params.id);
    reply.code(204).send();
  });

  const followRoute = (following: boolean) => async (request: FastifyRequest<{ Params: { userId: string } }>) => {
    const followeeId = Number(request.params.userId) as UserId;
    if (followeeId === request.userId) throw new BadRequestError(following ? 'you cannot follow yourself' : 'you cannot unfollow yourself');
    const { changed } = following ? await service.follow(request.userId, followeeId) : await service.unfollow(request.userId, followeeId);
    return { followeeId, following, changed };
  };
  const followSchema = { querystring: noQuery, params: idParams('userId', 'user-id'), response: { 200: followResponse } };
  app.put<{ Params: { userId: string } }>('/v1/follows/:userId', { ...authed, preValidation: refuseBody, schema: followSchema }, followRoute(true));
  app.delete<{ Params: { userId: string } }>('/v1/follows/:userId', { ...authed, preValidation: refuseBody, schema: followSchema }, followRoute(false));

  app.get<{ Querystring: PageQuery }>(
    '/v1/feed',
    { ...authed, preValidation: pageRequest, schema: { querystring: pageQuery, response: { 200: feedPageResponse } } },
    async (request, reply) => {
      const cursor = cursorOf(request.query.cursor);
      return sendPage(reply, await service.homeFeed(request.userId, { limit: request.query.limit, cursor }));
    },
  );

  app.get<{ Params: { id: string }; Querystring: PageQuery }>(
    '/v1/users/:id/posts',
    { ...authed, preValidation: pageRequest, schema: { params: idParams('id', 'user-id'), querystring: pageQuery, response: { 200: feedPageResponse } } },
    async (request) => {
      const cursor = cursorOf(request.query.cursor);
      return pageBody(await service.userPosts(Number(request.params.id), { limit: request.query.limit, cursor }));
    },
  );

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply: FastifyReply) => {
    let state: Readiness;
    try {
      state = await withTimeout(service.ready(), readyTimeoutMs);
    } catch {
      state = { redis: false, postgres: false };
    }
    const redis = state.redis === true;
    const postgres = state.postgres === true;
    if (redis && postgres) return { status: 'ready', redis, postgres };
    const down = [...(postgres ? [] : ['Postgres']), ...(redis ? [] : ['Redis'])];
    reply.code(503).header('retry-after', String(retryAfterSeconds));
    return { error: `not ready: ${down.join(' and ')} unreachable`, redis, postgres };
  });

  // ?name=A&name=B renders those metrics only: a sampler following one counter every second (replay's
  // series) need not have the whole registry rendered and the workers' histograms read each time.
  app.get<{ Querystring: { name?: string | string[] } }>('/metrics', { schema: { querystring: metricsQuery } }, async (request, reply) => {
    const names = metricNamesOf(request.query);
    const unknown = names?.filter((n) => !registry.get(n)) ?? [];
    if (unknown.length > 0) return reply.code(400).send({ error: `no such metric: ${unknown.join(', ')}` });
    reply.type(PROMETHEUS_CONTENT_TYPE);
    return registry.render(names);
  });

  return app;
}

const METRIC_NAME = '^[a-zA-Z_:][a-zA-Z0-9_:]*$';
const metricsQuery = {
  type: 'object',
  properties: { name: { anyOf: [{ type: 'string', pattern: METRIC_NAME }, { type: 'array', items: { type: 'string', pattern: METRIC_NAME }, minItems: 1, maxItems: 64 }] } },
  additionalProperties: false,
} as const;

/** The metrics a GET /metrics names (undefined: every one). */
export function metricNamesOf(query: { name?: string | string[] }): string[] | undefined {
  const n = query.name;
  return n === undefined ? undefined : Array.isArray(n) ? n : [n];
}

function oneLineOf(err: unknown): string {
  return oneLine(err instanceof Error ? err.message : String(err));
}
