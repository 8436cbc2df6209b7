// Connections to Postgres: a pg Pool found through DATABASE_URL, with a short connect timeout, a
// schema (search_path) per pool, and connection failures turned into one line naming the URL with
// its password redacted.
import pg from 'pg';
import { DatabaseUnavailableError, StoreInputError } from './errors.js';
import { redactUrl } from '../../core/service-url.js';

import { DEFAULT_DATABASE_URL } from '../../core/service-url.js';

export { DEFAULT_DATABASE_URL };
export const DEFAULT_SCHEMA = 'public';
export const DEFAULT_CONNECT_TIMEOUT_MS = 3000;

export interface PoolOptions {
  /** Defaults to $DATABASE_URL, then DEFAULT_DATABASE_URL. */
  databaseUrl?: string;
  /** Schema every connection of the pool works in (its search_path). Defaults to public. */
  schema?: string;
  /** Largest number of connections (pg default 10). */
  max?: number;
  connectTimeoutMs?: number;
  applicationName?: string;
}

/** A pool and what it was made from, for error messages. */
export interface Store {
  readonly pool: pg.Pool;
  /** The URL with its password replaced by "***". */
  readonly url: string;
  readonly schema: string;
}

/** The URL to use: the explicit one, else $DATABASE_URL, else the local default. Refuses a non-postgres URL. */
export function resolveDatabaseUrl(explicit?: string): string {
  const url = explicit ?? (process.env.DATABASE_URL || DEFAULT_DATABASE_URL);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StoreInputError(`database URL "${redactUrl(url)}" is not a URL (expected postgres://user[:password]@host[:port]/database)`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new StoreInputError(`database URL "${redactUrl(url)}" must start with postgres:// or postgresql://`);
  }
  return url;
}

export { redactUrl } from '../../core/service-url.js';

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** A schema name usable unquoted in SQL and in search_path: lower-case letters, digits, underscores. */
export function checkSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new StoreInputError(`schema name "${schema}" is not valid (lower-case letters, digits and _, starting with a letter or _, at most 63)`);
  }
  if (schema.startsWith('pg_') || schema === 'information_schema') throw new StoreInputError(`schema name "${schema}" is reserved by Postgres`);
  return schema;
}

/** A pool in the given schema. Connecting is lazy: the first query (or connectClient) connects. */
export function createStore(opts: PoolOptions = {}): Store {
  const connectionString = resolveDatabaseUrl(opts.databaseUrl);
  const schema = checkSchemaName(opts.schema ?? DEFAULT_SCHEMA);
  const pool = new pg.Pool({
    connectionString,
    max: opts.max,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    application_name: opts.applicationName ?? 'feedlab',
    options: `-c search_path=${schema}`,
  });
  // An idle connection that dies (server restart) must not crash the process; the next checkout
  // makes a new one, and its failure is reported there.
  pool.on('error', () => {});
  // pg-pool listens for a client's errors only while the client is idle; a checked-out client whose
  // connection dies (Postgres stopped, the network cut) emits 'error' too, and an 'error' event
  // with no listener crashes the process. The query in flight fails on its own (and is reported as
  // DatabaseUnavailableError), later queries on the dead client fail at once, and the pool discards
  // the client when it is released: nothing else is needed here.
  pool.on('connect', (client) => client.on('error', () => {}));
  return { pool, url: redactUrl(connectionString), schema };
}

/** Check a connection out of the store's pool, with connection failures as DatabaseUnavailableError. */
export async function connectClient(store: Store): Promise<pg.PoolClient> {
  try {
    return await store.pool.connect();
  } catch (err) {
    throw unavailable(err, store.url) ?? err;
  }
}

/**
 * The one-line DatabaseUnavailableError for an error that means Postgres cannot be used (refused,
 * timed out, unknown host, authentication, missing database, shut down, connection lost), else
 * undefined (a bug or a constraint: the caller's business).
 */
export function unavailable(err: unknown, redactedUrl: string): DatabaseUnavailableError | undefined {
  if (err instanceof DatabaseUnavailableError) return err;
  if (!(err instanceof Error)) return undefined;
  const code = (err as { code?: string }).code;
  const msg = err.message;
  const at = `Postgres at ${redactedUrl}`;
  switch (code) {
    case 'ECONNREFUSED':
      return new DatabaseUnavailableError(`${at} refused the connection (is it running?)`, code);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new DatabaseUnavailableError(`${at}: unknown host`, code);
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new DatabaseUnavailableError(`${at} is unreachable (${code})`, code);
    case 'ECONNRESET':
    case 'EPIPE':
      return new DatabaseUnavailableError(`${at} closed the connection (${code})`, code);
    case '3D000': // invalid_catalog_name
    case '28000': // invalid_authorization_specification
    case '28P01': // invalid_password
    case '53300': // too_many_connections
    case '57P01': // admin_shutdown
    case '57P02': // crash_shutdown
    case '57P03': // cannot_connect_now
      return new DatabaseUnavailableError(`${at}: ${msg}`, code);
  }
  if (code?.startsWith('08')) return new DatabaseUnavailableError(`${at}: ${msg}`, code); // connection_exception
  if (/timeout/i.test(msg) && /connect/i.test(msg)) {
    return new DatabaseUnavailableError(`${at} did not answer within the connect timeout`, 'ETIMEDOUT');
  }
  if (/Connection terminated|Client has encountered a connection error/i.test(msg)) {
    return new DatabaseUnavailableError(`${at}: connection lost (${msg})`, code);
  }
  return undefined;
}

/** Whether Postgres answers at the URL: undefined when it does, else the one-line reason. */
export async function probeDatabase(databaseUrl?: string, connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS): Promise<string | undefined> {
  const store = createStore({ databaseUrl, max: 1, connectTimeoutMs });
  try {
    const client = await connectClient(store);
    try {
      await client.query('SELECT 1');
    } finally {
      client.release();
    }
    return undefined;
  } catch (err) {
    const down = unavailable(err, store.url);
    if (down) return down.message;
    throw err;
  } finally {
    await store.pool.end();
  }
}
