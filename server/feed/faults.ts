// Which failures mean "Redis cannot be used right now" (the read path then answers from Postgres
// alone), as opposed to a Postgres outage (503), a client mistake (4xx) or a bug (500).
//
// The server's Redis client runs without an offline queue and with a command timeout
// (server/cache/redis.ts), so while Redis is down or hung a command fails at once or after the
// timeout, with ioredis's own words for it. An error Redis itself answered (a ReplyError) is a bug
// in our commands, except the few replies that mean the server is not serving yet.
import { InfrastructureError } from '../cache/redis.js';
import type { RedisLike } from '../cache/redis-like.js';
import { RebuildTimeoutError } from '../cache/single-flight.js';
import { DatabaseUnavailableError } from '../store/errors.js';

/**
 * Redis answered, but is not serving writes or reads right now: loading its data set, a replica
 * without its primary, a busy script, out of memory under noeviction, or a demoted primary after a
 * failover (READONLY) that the client has not left yet.
 */
const NOT_SERVING_REPLY = /^(LOADING|MASTERDOWN|BUSY|TRYAGAIN|CLUSTERDOWN|NOREPLICAS|OOM|READONLY)\b/;
/** ioredis's messages for a connection that is down, closed or silent (the last four: a cluster client's). */
const CONNECTION_TROUBLE =
  /Connection is closed|Stream isn't writeable|Command timed out|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|write after end|Cluster isn't ready|None of startup nodes is available|Failed to refresh slots cache|Too many Cluster redirections/;
/** Our own errors: never a Redis outage, whatever the connection's state. */
const DOMAIN_ERRORS = new Set(['BadRequestError', 'NotFoundError', 'ForbiddenError', 'CursorError', 'TokenError']);

/** Does this error mean Redis is unavailable (down, unreachable, hung, or not serving)? */
export function isCacheUnavailable(err: unknown, redis?: RedisLike): boolean {
  if (err instanceof InfrastructureError || err instanceof RebuildTimeoutError) return true;
  if (!(err instanceof Error)) return false;
  if (err instanceof DatabaseUnavailableError || DOMAIN_ERRORS.has(err.name)) return false;
  // A wrapper (a pipeline's failed replies) keeps the Redis error as its cause.
  if (err.cause instanceof Error && isCacheUnavailable(err.cause, redis)) return true;
  if (err.name === 'ReplyError') return NOT_SERVING_REPLY.test(err.message);
  if (err.name === 'MaxRetriesPerRequestError') return true;
  if (CONNECTION_TROUBLE.test(err.message)) return true;
  // Anything else thrown by a Redis call while the connection is not ready.
  return redis !== undefined && redis.status !== 'ready' && err.name !== 'RangeError' && err.name !== 'TypeError';
}

/** Whether commands can be sent at all: false while disconnected or reconnecting (they would fail at once). */
export function cacheReady(redis: RedisLike): boolean {
  return redis.status === 'ready';
}

/** A read found a list missing again right after rebuilding it (evicted under memory pressure?): answer from Postgres. */
export class CacheInconsistentError extends InfrastructureError {
  constructor(message: string) {
    super(message);
    this.name = 'CacheInconsistentError';
  }
}
