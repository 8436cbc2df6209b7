// The fan-out ledger: what keeps the outbox the source of truth when the event log loses entries
// (a Redis flushed, or failed over to a replica that had not yet received them: the log's keys
// gone, the timelines kept). Two records in Postgres, beside the outbox:
// - each outbox row's fanned_out_at, set once a worker has done the event's fan-out. The marks are
//   buffered and written together, off the fan-out's path; a mark lost to a crash or an outage only
//   makes a later republish larger, never a delivery lost.
// - event_log_groups: the consumer groups workers have created on a log (by its stream prefix). A
//   worker that has to create a group the ledger has seen before (at start, or when its reads find
//   the group gone) knows that the log lost its entries: every row published and not fanned out is
//   set unpublished, and the relay publishes it again, in id order. The consumers are idempotent (a
//   timeline ZADD of the same member and score writes nothing new; a delete removes nothing twice).
//   A PostCreated whose post has since been deleted is marked done instead: there is nothing to add.
import type { PostEvent } from '../events/event-log.js';
import { DEFAULT_QUERY_TIMEOUT_MS, runStatement } from './repository.js';
import type { Store } from './pool.js';

/** How often buffered marks are written, ms. */
export const MARK_FLUSH_MS = 200;
/** Marks held while Postgres does not answer; beyond this the oldest are dropped (a larger republish, not a loss). */
const MAX_BUFFERED_MARKS = 100_000;
/** Ids per UPDATE. */
const MARKS_PER_STATEMENT = 5_000;

/** $1 the outbox ids. */
export const MARK_SQL = `UPDATE outbox SET fanned_out_at = now() WHERE id = ANY ($1::int8[]) AND fanned_out_at IS NULL`;

/** Every row published and not fanned out is published again, but a deleted post's PostCreated. */
export const REPUBLISH_SQL = `
WITH gone AS (
  UPDATE outbox o SET fanned_out_at = now()
  FROM posts p
  WHERE o.published_at IS NOT NULL AND o.fanned_out_at IS NULL AND o.kind = 'PostCreated'
    AND p.id = o.post_id AND p.deleted_at IS NOT NULL
  RETURNING o.id
), again AS (
  UPDATE outbox o SET published_at = NULL, claimed_by = NULL, claimed_until = NULL
  WHERE o.published_at IS NOT NULL AND o.fanned_out_at IS NULL AND o.id NOT IN (SELECT id FROM gone)
  RETURNING o.id
)
SELECT (SELECT count(*) FROM again)::text AS republished, (SELECT count(*) FROM gone)::text AS deleted`;

/** $1 stream prefix, $2 group. The row's losses count how often the group had to be created again. */
const RECORD_GROUP_SQL = `
INSERT INTO event_log_groups (stream_prefix, group_name) VALUES ($1, $2)
ON CONFLICT (stream_prefix, group_name) DO UPDATE SET losses = event_log_groups.losses + CASE WHEN $3 THEN 1 ELSE 0 END
RETURNING (xmax = 0) AS inserted`;

export interface FanoutLedgerOptions {
  /** The event log's stream prefix and the consumer group: what a group record names. */
  streamPrefix: string;
  group: string;
  /** Errors the ledger survives (a mark, a group record or a republish that failed; each retried). */
  onError?: (err: unknown) => void;
  /** A loss found, its rows set to be published again: how many, and deleted posts' PostCreated marked done instead. */
  onRepublished?: (republished: number, deleted: number) => void;
  queryTimeoutMs?: number;
}

export class FanoutLedger {
  private marks: string[] = [];
  /** A group creation not yet recorded: true when the group was created (not found there). */
  private groupDue: boolean | null = null;
  private republishDue = false;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private readonly timeoutMs: number;

  constructor(
    private readonly store: Store,
    private readonly o: FanoutLedgerOptions,
  ) {
    this.timeoutMs = o.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  }

  /** Marks these events' outbox rows fanned out (at the next flush); events without a row are skipped. */
  done(events: readonly PostEvent[]): void {
    for (const e of events) if (e.outboxId !== undefined) this.marks.push(e.outboxId);
    if (this.marks.length > MAX_BUFFERED_MARKS) this.marks.splice(0, this.marks.length - MAX_BUFFERED_MARKS);
  }

  /**
   * The group was just looked for on the log, and `created` where it was not there. The record is
   * written now, and until it has been it is retried at every flush: a group created where the
   * ledger had recorded it means the log lost its entries, and the republish follows (retried the
   * same way). Resolves once this flush is done; pending says what is still due.
   */
  async groupCreated(created: boolean): Promise<void> {
    this.groupDue = created || this.groupDue === true;
    // a flush already under way may have passed the record: then the next one writes it
    await this.flush();
    if (this.groupDue !== null || this.republishDue) await this.flush();
  }

  /** Writes the buffered marks every MARK_FLUSH_MS (and retries a due republish) until close(). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), MARK_FLUSH_MS);
    this.timer.unref();
  }

  /** Writes what is buffered (and a due republish); never rejects: failures go to onError and stay due. */
  flush(): Promise<void> {
    this.flushing ??= this.write().finally(() => (this.flushing = null));
    return this.flushing;
  }

  /** Stops the timer and writes what is left (once). */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flushing;
    await this.flush();
  }

  private async write(): Promise<void> {
    try {
      // marks first: a row fanned out before the loss need not be published again
      while (this.marks.length > 0) {
        const ids = this.marks.slice(0, MARKS_PER_STATEMENT);
        await runStatement(this.store, MARK_SQL, [ids], this.timeoutMs);
        this.marks.splice(0, ids.length);
      }
      if (this.groupDue !== null) {
        const created = this.groupDue;
        const r = await runStatement<{ inserted: boolean }>(this.store, RECORD_GROUP_SQL, [this.o.streamPrefix, this.o.group, created], this.timeoutMs);
        // a creation noted while this one was written stays due (a loss must not be overwritten)
        if (this.groupDue === created) this.groupDue = null;
        if (created && !r.rows[0].inserted) this.republishDue = true;
      }
      if (this.republishDue) {
        const r = await runStatement<{ republished: string; deleted: string }>(this.store, REPUBLISH_SQL, [], this.timeoutMs);
        this.republishDue = false;
        this.o.onRepublished?.(Number(r.rows[0].republished), Number(r.rows[0].deleted));
      }
    } catch (err) {
      try {
        this.o.onError?.(err);
      } catch {
        // a reporting callback must not stop the ledger
      }
    }
  }

  /** Marks buffered and not yet written, and whether a republish is due (for tests and status). */
  get pending(): { marks: number; groupDue: boolean; republishDue: boolean } {
    return { marks: this.marks.length, groupDue: this.groupDue !== null, republishDue: this.republishDue };
  }
}
