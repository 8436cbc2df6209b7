// The Postgres side of the transactional outbox: what the relay (server/events/relay.ts) claims and
// marks published. createPost and deletePost (repository.ts) write the rows in the transaction of
// the post itself.
//
// Claiming is a lease, not a held transaction: claim() marks up to `limit` of the oldest unpublished
// rows as claimed by this outbox's owner until now() + leaseMs, in one statement that picks them
// with FOR UPDATE SKIP LOCKED. So:
// - two relays (two PostgresOutbox objects, distinct owners) never get the same row: a row locked
//   by one claim is skipped by the other, and once that claim commits the row is leased and its
//   lease is re-checked on the newest row version by any claim that waited or raced;
// - a relay's own later claims return its leased, still unpublished rows again (the relay retries
//   the same rows), oldest first, so one relay publishes in id order;
// - a relay that dies leaves its rows leased until the lease runs out; then anyone claims them, so
//   every row is published at least once (and possibly twice: the consumers are idempotent);
// - no transaction stays open while the relay talks to the event log.
// With several relays, one author's events can reach the log out of outbox order (relay A holds
// rows 1..100 while B publishes 101..200). Consumers must not rely on it: a PostDeleted that
// overtakes its PostCreated leaves a pushed entry that the read path drops (hydration reports the
// post deleted). Run one relay to keep the order.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { comparePostIds, isPostId, postIdTime, type PostId } from '../../core/post-id.js';
import { OUTBOX_ID, type PostEvent } from '../events/event-log.js';
import { BadRequestError, DEFAULT_QUERY_TIMEOUT_MS, runStatement } from './repository.js';
import type { Store } from './pool.js';

/** One outbox row: the flat fields and the same as an event-log PostEvent (what the relay publishes). */
export interface OutboxRow {
  /** The outbox id (bigserial) as a decimal string, ascending in insertion order. */
  readonly id: string;
  readonly postId: PostId;
  readonly authorId: number;
  readonly kind: 'PostCreated' | 'PostDeleted';
  /** The post's creation time in ms (its timeline score), for both kinds. */
  readonly createdAt: number;
  readonly event: PostEvent;
}

/** What the outbox relay needs (structurally the OutboxSource of server/events/relay.ts). */
export interface OutboxSource {
  claim(limit: number): Promise<OutboxRow[]>;
  markPublished(ids: readonly string[]): Promise<void>;
}

export interface PostgresOutboxOptions {
  /** How long a claim holds its rows before others may take them, ms. Default 30,000: longer than
   * the relay's publish timeout, so a live relay's rows are not taken over. */
  leaseMs?: number;
  /** Who claims; distinct per relay. Default host:pid:random. */
  owner?: string;
  /** See RepositoryOptions.queryTimeoutMs. */
  queryTimeoutMs?: number;
}

export const DEFAULT_OUTBOX_LEASE_MS = 30_000;
const MAX_CLAIM = 10_000;

/** $1 limit, $2 owner, $3 lease ms. */
export const CLAIM_SQL = `
WITH c AS (
  SELECT id FROM outbox
  WHERE published_at IS NULL AND (claimed_until IS NULL OR claimed_until <= now() OR claimed_by = $2)
  ORDER BY id
  LIMIT $1
  FOR UPDATE SKIP LOCKED
)
UPDATE outbox o SET claimed_by = $2, claimed_until = now() + $3 * interval '1 millisecond'
FROM c WHERE o.id = c.id
RETURNING o.id::text AS id, o.post_id::text AS post_id, o.author_id::text AS author_id, o.kind, o.payload`;

interface ClaimedRow {
  id: string;
  post_id: string;
  author_id: string;
  kind: 'PostCreated' | 'PostDeleted';
  payload: { createdAt?: unknown; bodyLength?: unknown } | null;
}

function toRow(r: ClaimedRow): OutboxRow {
  const postId = r.post_id;
  const authorId = Number(r.author_id);
  const p = r.payload ?? {};
  const createdAt = typeof p.createdAt === 'number' && Number.isSafeInteger(p.createdAt) ? p.createdAt : isPostId(postId) ? postIdTime(postId) : 0;
  // the event names its row, so the worker can mark the row fanned out (fanout-ledger.ts)
  const outboxId = r.id;
  const event: PostEvent =
    r.kind === 'PostCreated'
      ? typeof p.bodyLength === 'number' && Number.isSafeInteger(p.bodyLength) && p.bodyLength >= 0
        ? { kind: 'PostCreated', postId, authorId, createdAt, bodyLength: p.bodyLength, outboxId }
        : { kind: 'PostCreated', postId, authorId, createdAt, outboxId }
      : { kind: 'PostDeleted', postId, authorId, createdAt, outboxId };
  return { id: r.id, postId, authorId, kind: r.kind, createdAt, event };
}

function checkIds(ids: readonly string[]): string[] {
  for (const id of ids) if (typeof id !== 'string' || !OUTBOX_ID.test(id)) throw new BadRequestError(`"${String(id).slice(0, 40)}" is not an outbox id`);
  return [...ids];
}

export class PostgresOutbox implements OutboxSource {
  readonly owner: string;
  readonly leaseMs: number;
  private readonly timeoutMs: number;

  constructor(
    readonly store: Store,
    options: PostgresOutboxOptions = {},
  ) {
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
    this.leaseMs = options.leaseMs ?? DEFAULT_OUTBOX_LEASE_MS;
    if (!Number.isSafeInteger(this.leaseMs) || this.leaseMs < 1) throw new BadRequestError(`outbox lease ${this.leaseMs} ms must be a positive integer`);
    this.timeoutMs = options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  }

  /** Up to `limit` of the oldest unpublished rows not leased to another owner, ascending by id,
   * leased to this owner for leaseMs. DatabaseUnavailableError when Postgres cannot be used. */
  async claim(limit: number): Promise<OutboxRow[]> {
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_CLAIM) throw new BadRequestError(`claim limit ${limit} must be an integer in 1..${MAX_CLAIM}`);
    const r = await runStatement<ClaimedRow>(this.store, CLAIM_SQL, [limit, this.owner, this.leaseMs], this.timeoutMs);
    return r.rows.map(toRow).sort((a, b) => comparePostIds(a.id, b.id));
  }

  /** Mark these rows published (whoever holds them: a row published late by a relay whose lease
   * ran out is still published). Unknown or already published ids are ignored. */
  async markPublished(ids: readonly string[]): Promise<void> {
    const list = checkIds(ids);
    if (list.length === 0) return;
    await runStatement(
      this.store,
      `UPDATE outbox SET published_at = now(), claimed_by = NULL, claimed_until = NULL
       WHERE id = ANY ($1::int8[]) AND published_at IS NULL`,
      [list],
      this.timeoutMs,
    );
  }

  /** Give back this owner's lease on these unpublished rows at once (e.g. when stopping without
   * having published them), so another relay need not wait for the lease to run out. */
  async release(ids: readonly string[]): Promise<void> {
    const list = checkIds(ids);
    if (list.length === 0) return;
    await runStatement(
      this.store,
      `UPDATE outbox SET claimed_by = NULL, claimed_until = NULL
       WHERE id = ANY ($1::int8[]) AND claimed_by = $2 AND published_at IS NULL`,
      [list, this.owner],
      this.timeoutMs,
    );
  }

  /** Rows not yet published (the relay backlog, for /metrics). */
  async backlog(): Promise<number> {
    const r = await runStatement<{ n: string }>(this.store, `SELECT count(*)::text AS n FROM outbox WHERE published_at IS NULL`, [], this.timeoutMs);
    return Number(r.rows[0].n);
  }

  /** Delete rows whose fan-out was done before `beforeMs` (a row published but not fanned out is
   * kept: it is what a lost event log is rebuilt from); resolves with how many. */
  async prunePublished(beforeMs: number): Promise<number> {
    if (!Number.isSafeInteger(beforeMs) || beforeMs < 0) throw new BadRequestError(`prune time ${beforeMs} is not a time in ms`);
    const r = await runStatement(this.store, `DELETE FROM outbox WHERE fanned_out_at < $1`, [new Date(beforeMs)], this.timeoutMs);
    return r.rowCount ?? 0;
  }
}
