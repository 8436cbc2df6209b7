// The one place an error becomes an HTTP answer. Every client mistake is a 4xx with one line
// (`{"error": "..."}`), a known outage is a 503 with Retry-After, and anything else is a 500
// with a generic message (the detail goes to the log, never to the client).
import { STATUS_CODES } from 'node:http';
import { CursorError } from '../../core/cursor.js';
import { TokenError } from '../auth/token.js';
import { InfrastructureError } from '../cache/redis.js';
import { EventLogUnavailableError } from '../events/errors.js';
import { DatabaseUnavailableError } from '../store/errors.js';
import { OutcomeUnknownError } from '../domain-errors.js';

export interface HttpFailure {
  status: number;
  /** One line, safe to show the client. */
  message: string;
  /** How the server should log it: a bug is an error, an outage a warning, a client gone mid-request a note, a client mistake nothing. */
  log?: 'info' | 'warn' | 'error';
  headers?: Record<string, string>;
}

/** A JSON body in a charset other than UTF-8 (RFC 8259 8.1: JSON is UTF-8): a 415, never decoded as UTF-8. */
export class UnsupportedCharsetError extends Error {
  override readonly name = 'UnsupportedCharsetError';
  constructor(readonly charset: string) {
    super(`charset ${shown(charset)} is not supported (send UTF-8)`);
  }
}

export interface FailureContext {
  bodyLimit: number;
  maxParamLength: number;
  retryAfterSeconds: number;
  /** The request is a POST /v1/posts without an Idempotency-Key: a timeout's outcome is unknown to it. */
  unkeyedPost?: boolean;
}

/**
 * The answer to a request node:http could not parse (fastify's clientErrorHandler): a request that
 * took too long to arrive (408), headers over node's limit (431), anything else malformed (400).
 */
export function clientErrorFailure(err: { code?: unknown }): HttpFailure {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: 'the request did not arrive in time' };
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, message: 'the request headers are larger than the server accepts' };
    default:
      return { status: 400, message: 'malformed HTTP request' };
  }
}

/** The one shape of every error answer's body. */
export function errorBody(message: string): string {
  return JSON.stringify({ error: oneLine(message) });
}

/** The bytes of a whole answer in the one shape, written straight to a socket (the connection then closes). */
export function rawAnswer(f: HttpFailure): string {
  const body = errorBody(f.message);
  const extra = Object.entries(f.headers ?? {}).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return `HTTP/1.1 ${f.status} ${STATUS_CODES[f.status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`;
}

/** Domain errors by name, so the store's classes of the same names (server/store/repository.ts)
 * map like ours (server/http/service.ts) without this module importing the store. */
const DOMAIN_STATUS: Readonly<Record<string, number>> = {
  BadRequestError: 400,
  ForbiddenError: 403,
  NotFoundError: 404,
  IdempotencyKeyReuseError: 422,
};

/** What a post without an Idempotency-Key is answered when its handler timed out mid-commit. */
const UNKEYED_POST_TIMEOUT =
  'the post did not finish within the time limit: it may or may not exist, and a retry could post it twice (send an Idempotency-Key header to make a retry safe)';

const MAX_MESSAGE = 300;

/** Whitespace runs (newlines included) collapsed, trimmed and capped: always one line. */
export function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MAX_MESSAGE ? `${line.slice(0, MAX_MESSAGE - 3)}...` : line;
}

/** A client-supplied value for a message: JSON-quoted (so one line) and truncated. */
export function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return String(value);
}

/** Which service an outage error is of, as a client may be told it (no address), or undefined. */
export function unavailableWhat(err: unknown): string | undefined {
  if (err instanceof DatabaseUnavailableError) return 'the database';
  if (err instanceof InfrastructureError) return 'the cache';
  if (err instanceof EventLogUnavailableError) return 'the event log';
  return undefined;
}

interface FastifyLikeError {
  code?: unknown;
  statusCode?: unknown;
  validation?: unknown;
  validationContext?: unknown;
}

/** The answer for an error thrown anywhere in a request. */
export function httpFailure(err: unknown, ctx: FailureContext): HttpFailure {
  const retry = { 'retry-after': String(ctx.retryAfterSeconds) };
  if (err instanceof TokenError) {
    // RFC 6750 3.1: no error code when the request carried no credentials at all.
    const challenge = err.reason === 'missing' ? 'Bearer realm="feedlab"' : 'Bearer realm="feedlab", error="invalid_token"';
    return { status: 401, message: oneLine(err.message), headers: { 'www-authenticate': challenge } };
  }
  if (err instanceof CursorError) return { status: 400, message: oneLine(err.message) };
  if (!(err instanceof Error)) return { status: 500, message: 'internal error', log: 'error' };

  const f = err as Error & FastifyLikeError;
  if (Array.isArray(f.validation) && f.validation.length > 0) {
    return { status: 400, message: oneLine(describeValidation(f.validation[0] as AjvError, String(f.validationContext ?? 'request'))) };
  }
  const domain = DOMAIN_STATUS[err.name];
  if (domain !== undefined) return { status: domain, message: oneLine(err.message) };

  if (err instanceof UnsupportedCharsetError) return { status: 415, message: oneLine(err.message) };
  if (err instanceof OutcomeUnknownError) return { status: 500, message: oneLine(err.message), log: 'warn' };
  const down = unavailableWhat(err);
  if (down) return { status: 503, message: `${down} is unavailable; retry shortly`, log: 'warn', headers: retry };
  // the client closed its connection before its request was whole (its body cut off): nobody to
  // answer. After the outages: a store's reset connection is theirs (DatabaseUnavailableError).
  if (f.code === 'ECONNRESET' || f.code === 'ERR_STREAM_PREMATURE_CLOSE') return { status: 400, message: 'the client closed the connection mid-request', log: 'info' };

  switch (f.code) {
    case 'FST_ERR_HANDLER_TIMEOUT':
      if (ctx.unkeyedPost) return { status: 500, message: UNKEYED_POST_TIMEOUT, log: 'warn' };
      return { status: 503, message: 'the request timed out; retry shortly', log: 'warn', headers: retry };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, message: `the request body is larger than ${ctx.bodyLimit} bytes` };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { status: 400, message: 'the body is not valid JSON' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, message: 'the body is empty (expected a JSON object)' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, message: 'unsupported Content-Type (send application/json)' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, message: 'the body size does not match Content-Length' };
    case 'FST_ERR_BAD_URL':
      return { status: 400, message: 'the URL is not valid (bad percent-encoding)' };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { status: 414, message: `a path parameter is longer than ${ctx.maxParamLength} characters` };
  }
  // Fastify's own client errors (a bad Content-Length, a malformed URL): their status, one line.
  const status = f.statusCode;
  if (typeof f.code === 'string' && f.code.startsWith('FST_') && typeof status === 'number' && status >= 400 && status < 500) {
    return { status, message: oneLine(err.message) };
  }
  return { status: 500, message: 'internal error', log: 'error' };
}

/** The part of an Ajv error object the messages use (ajv runs with verbose: true). */
export interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  parentSchema?: Record<string, unknown>;
  data?: unknown;
}

const PART_NAMES: Readonly<Record<string, string>> = { body: 'the body', querystring: 'the query', params: 'the path', headers: 'the headers' };
const FIELD_NOUNS: Readonly<Record<string, string>> = { body: 'field', querystring: 'query parameter', params: 'path parameter', headers: 'header' };
const FORMAT_NOUNS: Readonly<Record<string, string>> = { 'post-id': 'a post id', 'user-id': 'a user id' };

function withArticle(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function describeData(data: unknown): string {
  if (data === undefined) return 'nothing';
  if (data === null) return 'null';
  if (typeof data === 'string') return shown(data);
  if (Array.isArray(data)) return 'an array';
  return withArticle(typeof data);
}

function range(schema: Record<string, unknown> | undefined): string | undefined {
  if (schema === undefined) return undefined;
  const { minimum, maximum } = schema;
  if (typeof minimum === 'number' && typeof maximum === 'number') return `from ${minimum} to ${maximum}`;
  return undefined;
}

/** One line for the first schema violation of a request part (body, querystring, params). */
export function describeValidation(e: AjvError, part: string): string {
  const segments = e.instancePath.split('/').filter(Boolean);
  const field = segments.length > 0 ? segments.join('.') : PART_NAMES[part] ?? part;
  const schema = e.parentSchema;
  const p = e.params;
  switch (e.keyword) {
    case 'type': {
      const type = Array.isArray(p.type) ? p.type.join(' or ') : String(p.type);
      if (segments.length === 0 && part === 'body') return `the body must be a JSON ${type}`;
      const r = range(schema);
      if (type === 'integer' && r) return `${field} must be an integer ${r}, got ${shown(e.data)}`;
      return `${field} must be ${withArticle(type)}, got ${describeData(e.data)}`;
    }
    case 'minimum':
    case 'maximum': {
      const r = range(schema);
      return r ? `${field} must be ${schema?.type === 'integer' ? 'an integer ' : ''}${r}, got ${shown(e.data)}` : `${field} ${e.message ?? 'is out of range'}`;
    }
    case 'minLength': {
      const min = Number(p.limit);
      if (min === 1 && typeof e.data === 'string' && e.data.length === 0) {
        const max = schema?.maxLength;
        return typeof max === 'number' ? `${field} is empty (1 to ${max} characters)` : `${field} is empty`;
      }
      return `${field} is shorter than ${min} characters`;
    }
    case 'maxLength':
      return `${field} is longer than ${String(p.limit)} characters`;
    case 'pattern':
      return typeof schema?.description === 'string' ? schema.description : `${field} does not have the expected form`;
    case 'format': {
      const noun = FORMAT_NOUNS[String(p.format)] ?? `a ${String(p.format)}`;
      return `${field} ${shown(e.data)} is not ${noun}`;
    }
    case 'additionalProperties': {
      const allowed = schema && typeof schema.properties === 'object' && schema.properties !== null ? Object.keys(schema.properties) : [];
      const where = segments.length > 0 ? ` in ${field}` : '';
      return `unknown ${FIELD_NOUNS[part] ?? 'field'} ${shown(p.additionalProperty)}${where}${allowed.length > 0 ? ` (allowed: ${allowed.join(', ')})` : ''}`;
    }
    case 'required':
      return `${field} is missing the ${FIELD_NOUNS[part] ?? 'field'} ${shown(p.missingProperty)}`;
    default:
      return `${field} ${e.message ?? 'is not valid'}`;
  }
}
