// The outbox relay: moves the events that posting committed into the outbox onto the event log.
//
// Posting writes the post and an outbox row in one transaction, so an acknowledged post always has
// its event in the outbox, even when the log is down. The relay claims the oldest unpublished rows,
// publishes them, and marks them published only after the publish resolved. A failed publish is
// retried (the same rows, in the same order) after a bounded exponential backoff, and nothing is
// marked; a relay that dies between publishing and marking publishes those rows again when it
// restarts. So every row reaches the log at least once, possibly twice, and the consumers are
// idempotent.
//
// The relay is written against OutboxSource so that the Postgres outbox plugs in from elsewhere.
// MemoryOutbox is the in-memory one for tests and single-process experiments.
import { backoffDelay, sleep, type BackoffOptions } from './backoff.js';
import { EventLogInputError } from './errors.js';
import type { EventLog, PostEvent } from './event-log.js';

/** One outbox row: its id (a bigint as a decimal string, ascending in insertion order) and event. */
export interface OutboxRow {
  readonly id: string;
  readonly event: PostEvent;
}

/**
 * Where the relay finds the events to publish.
 *
 * For Postgres: `claim` selects the oldest unpublished rows (`WHERE published_at IS NULL ORDER BY id
 * LIMIT $1`), and `markPublished` sets published_at for exactly the given ids. Run one relay at a time
 * per outbox (e.g. under a session advisory lock) to keep the publishing order, or make `claim` lease
 * rows (`FOR UPDATE SKIP LOCKED` with a claimed-until column) when several relays share the work.
 * Note that id order is insertion order, not commit order: a transaction that took a lower id and
 * committed late is published after higher ids; consumers must not depend on a global order.
 */
export interface OutboxSource {
  /** Up to `limit` of the oldest unpublished rows, in ascending id order. The same rows come back
   * from later claims for as long as they are not marked published. */
  claim(limit: number): Promise<OutboxRow[]>;
  /** Marks these rows published. Called only with rows whose publish resolved. */
  markPublished(ids: readonly string[]): Promise<void>;
}

export interface RelayOptions {
  readonly source: OutboxSource;
  readonly log: Pick<EventLog, 'publish'>;
  /** Rows per claim and publish. Default 100. */
  readonly batchSize?: number;
  /** How long to wait before claiming again when the outbox is empty, ms (nudge() ends the wait
   * early). Default 250. */
  readonly idleMs?: number;
  /** Backoff after a failed claim, publish or mark. Default 100 ms doubling to 10 s. */
  readonly retry?: BackoffOptions;
  /** A publish that has not resolved after this long counts as failed and is retried, ms (it may
   * still complete: a duplicate, never a loss). Default 10,000. */
  readonly publishTimeoutMs?: number;
  /** Errors the relay survives and retries after: an unreachable source or log, a timeout. */
  readonly onError?: (err: unknown) => void;
}

export interface RelayStats {
  /** Rows published and marked. */
  published: number;
  /** Batches published and marked. */
  batches: number;
  /** Failed claims, publishes and marks (each retried). */
  failures: number;
}

export class PublishTimeoutError extends Error {
  constructor(ms: number, rows: number) {
    super(`publishing ${rows} events did not finish within ${ms} ms`);
    this.name = 'PublishTimeoutError';
  }
}

export class OutboxRelay {
  readonly stats: RelayStats = { published: 0, batches: 0, failures: 0 };
  private readonly batchSize: number;
  private readonly idleMs: number;
  private readonly retry: BackoffOptions;
  private readonly publishTimeoutMs: number;
  private wake: (() => void) | null = null;
  private nudged = false;
  private running = false;

  constructor(private readonly o: RelayOptions) {
    this.batchSize = positive('batchSize', o.batchSize, 100);
    this.idleMs = positive('idleMs', o.idleMs, 250);
    this.publishTimeoutMs = positive('publishTimeoutMs', o.publishTimeoutMs, 10_000);
    this.retry = o.retry ?? { initialMs: 100, maxMs: 10_000 };
    if (!(this.retry.initialMs >= 0) || !(this.retry.maxMs >= this.retry.initialMs)) {
      throw new EventLogInputError(`retry backoff ${this.retry.initialMs}..${this.retry.maxMs} ms is not a range`);
    }
  }

  /** Ends an idle wait at once: call it after committing a post, or on a Postgres NOTIFY. */
  nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  /** Relays until the signal aborts, then resolves with the totals. An abort ends a wait (idle or
   * backoff) at once; a publish in flight is finished (and marked, if it succeeded) first. */
  async run(signal: AbortSignal): Promise<RelayStats> {
    if (this.running) throw new EventLogInputError('this relay is already running');
    this.running = true;
    try {
      let failures = 0;
      while (!signal.aborted) {
        let rows: OutboxRow[];
        try {
          rows = await this.o.source.claim(this.batchSize);
        } catch (err) {
          failures = await this.failed(err, failures, signal);
          continue;
        }
        if (rows.length === 0) {
          failures = 0;
          await this.idle(signal);
          continue;
        }

        // Publish these rows, retrying the same rows until it resolves (or we are stopped: then
        // nothing was marked and they are published by the next run).
        let published = false;
        while (!published) {
          try {
            await this.publish(rows);
            published = true;
          } catch (err) {
            if (signal.aborted) return this.stats;
            failures = await this.failed(err, failures, signal);
            if (signal.aborted) return this.stats;
          }
        }

        // Mark them, retrying only the marking: publishing again would merely duplicate them.
        const ids = rows.map((r) => r.id);
        let marked = false;
        while (!marked) {
          try {
            await this.o.source.markPublished(ids);
            marked = true;
          } catch (err) {
            failures = await this.failed(err, failures, signal);
            if (signal.aborted) return this.stats; // republished next run: a duplicate, not a loss
          }
        }
        failures = 0;
        this.stats.published += rows.length;
        this.stats.batches++;
      }
      return this.stats;
    } finally {
      this.running = false;
    }
  }

  private async publish(rows: OutboxRow[]): Promise<void> {
    const attempt = this.o.log.publish(rows.map((r) => r.event));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new PublishTimeoutError(this.publishTimeoutMs, rows.length)), this.publishTimeoutMs);
    });
    // A publish that loses the race may still reject later; that is already handled by the retry.
    attempt.catch(() => {});
    try {
      await Promise.race([attempt, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async failed(err: unknown, failures: number, signal: AbortSignal): Promise<number> {
    this.stats.failures++;
    try {
      this.o.onError?.(err);
    } catch {
      // A reporting callback must not stop the relay.
    }
    const n = failures + 1;
    await sleep(backoffDelay(n, this.retry), signal);
    return n;
  }

  private async idle(signal: AbortSignal): Promise<void> {
    if (this.nudged) {
      this.nudged = false;
      return;
    }
    const waker = new AbortController();
    this.wake = () => waker.abort();
    const stop = () => waker.abort();
    signal.addEventListener('abort', stop, { once: true });
    try {
      await sleep(this.idleMs, waker.signal);
    } finally {
      signal.removeEventListener('abort', stop);
      this.wake = null;
      this.nudged = false;
    }
  }
}

function positive(what: string, v: number | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  if (!Number.isFinite(v) || v < 1) throw new EventLogInputError(`${what} ${v} must be at least 1`);
  return Math.floor(v);
}

/** An outbox in memory, for tests and single-process experiments. Ids are 1, 2, 3, ... */
export class MemoryOutbox implements OutboxSource {
  private readonly rows: Array<{ row: OutboxRow; published: boolean }> = [];
  private readonly index = new Map<string, number>();
  /** Ids in the order they were marked published. */
  readonly markedOrder: string[] = [];

  /** What the posting transaction does: appends a row and returns it. */
  append(event: PostEvent): OutboxRow {
    const row: OutboxRow = { id: String(this.rows.length + 1), event };
    this.index.set(row.id, this.rows.length);
    this.rows.push({ row, published: false });
    return row;
  }

  async claim(limit: number): Promise<OutboxRow[]> {
    const out: OutboxRow[] = [];
    for (const r of this.rows) {
      if (out.length >= limit) break;
      if (!r.published) out.push(r.row);
    }
    return out;
  }

  async markPublished(ids: readonly string[]): Promise<void> {
    const found = ids.map((id) => {
      const i = this.index.get(id);
      if (i === undefined) throw new Error(`outbox row ${id} does not exist`);
      return i;
    });
    for (const i of found) {
      if (!this.rows[i].published) {
        this.rows[i].published = true;
        this.markedOrder.push(this.rows[i].row.id);
      }
    }
  }

  /** Rows not yet published, in id order. */
  unpublished(): OutboxRow[] {
    return this.rows.filter((r) => !r.published).map((r) => r.row);
  }

  get size(): number {
    return this.rows.length;
  }
}
