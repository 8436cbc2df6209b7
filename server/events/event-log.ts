// The post-event log between the outbox relay and the fan-out workers: the events, their wire
// codec, the partition of an author, and the interface both adapters (Redis Streams, Kafka)
// implement.
//
// Delivery is at-least-once. `publish` resolves once the log has appended every event; a consumer's
// batch is acknowledged only after its handler resolved, so a handler that throws, or a consumer
// that dies before the acknowledgement, gets the batch delivered again (to itself or, after a
// while, to another consumer of the group). Handlers must therefore be idempotent, as the fan-out
// worker is (ZADD of the same member and score writes nothing new).
//
// Events are partitioned by author, so one author's events are appended, and delivered within a
// partition, in the order they were published.
import { DEFAULT_PARTITIONS } from '../../core/fanout-worker.js';
import { authorPartition } from '../../core/partition.js';
import { isPostId, type PostId } from '../../core/post-id.js';
import { EventLogInputError, MalformedEventError } from './errors.js';

/** A post was committed. `createdAt` is its creation time in ms (the timeline score). */
export interface PostCreated {
  readonly kind: 'PostCreated';
  readonly postId: PostId;
  readonly authorId: number;
  readonly createdAt: number;
  /** Length of the body in characters, when the producer knows it (for memory accounting). */
  readonly bodyLength?: number;
  /** The outbox row it was relayed from: the worker marks that row fanned out once it is done. */
  readonly outboxId?: string;
}

/** A post was deleted. `createdAt` is the deleted post's creation time in ms (its timeline score). */
export interface PostDeleted {
  readonly kind: 'PostDeleted';
  readonly postId: PostId;
  readonly authorId: number;
  readonly createdAt: number;
  /** As PostCreated's. */
  readonly outboxId?: string;
}

export type PostEvent = PostCreated | PostDeleted;

/** One event as a consumer receives it. */
export interface DeliveredEvent {
  readonly event: PostEvent;
  /** The partition it was read from (the author's partition). */
  readonly partition: number;
  /** Its position in the partition: a stream entry id ("1700000000000-0") or a Kafka offset. */
  readonly position: string;
  /** 1 on the first delivery; more when an earlier delivery failed or its consumer died. */
  readonly deliveries: number;
  /** When the log took it, ms since the epoch (a stream entry id's ms, a Kafka message's timestamp); absent when unknown. */
  readonly loggedAt?: number;
  /**
   * When the read that delivered it began, ms since the epoch: an event the log took at or after
   * it found its consumer waiting for it, not busy; absent when unknown (Kafka, redeliveries).
   */
  readonly readSince?: number;
}

/** Handles one batch. Resolving acknowledges the whole batch; throwing leaves it unacknowledged,
 * to be delivered again. The signal aborts when the consumer is asked to stop. */
export type BatchHandler = (batch: readonly DeliveredEvent[], signal: AbortSignal) => Promise<void>;

/** An event that failed too often (or did not decode) and was moved aside, acknowledged. */
export interface DeadLetter {
  readonly partition: number;
  /** Where it was in its partition. */
  readonly position: string;
  /** The raw entry as it was in the log (JSON of a PostEvent, unless it was malformed). */
  readonly raw: string;
  /** The decoded event; absent when the entry was malformed. */
  readonly event?: PostEvent;
  readonly group: string;
  readonly consumer: string;
  readonly deliveries: number;
  readonly reason: string;
  /** When it was dead-lettered, ms since the epoch. */
  readonly at: number;
}

export interface ConsumeOptions {
  /** The consumer group: every event is handled by one consumer of the group. */
  readonly group: string;
  /** This consumer's name within the group, unique among the live consumers (e.g. host-pid-n).
   * A consumer restarted under the same name first gets back what it held unacknowledged. */
  readonly consumer: string;
  readonly handler: BatchHandler;
  /** Aborting stops the consumer: the batch in hand finishes (and is acknowledged if its handler
   * resolves), then `consume` resolves. */
  readonly signal: AbortSignal;
  /** Called with errors the consumer survives (the log unreachable for a while, a handler that
   * threw) and dead-lettered events. Defaults to nothing: count or log them here. */
  readonly onError?: (err: unknown) => void;
  readonly onDeadLetter?: (letter: DeadLetter) => void;
  /** Called when the consumer had to create its group on these partitions (Redis Streams: at its
   * first read of a log nobody consumed yet, or after the log lost its keys: fanout-ledger.ts). */
  readonly onGroupCreated?: (partitions: readonly number[]) => void;
}

export interface EventLog {
  /** Appends the events, each to its author's partition, in order. Resolves when every one of
   * them has been appended; rejects (EventLogUnavailableError) when that is not known, in which
   * case some may have been appended: a retry may append duplicates, never lose one. */
  publish(events: readonly PostEvent[]): Promise<void>;
  /** Consumes as `options.consumer` of `options.group` until the signal aborts. Resolves once the
   * consumer has stopped; rejects only on a bad argument or when it cannot go on at all. */
  consume(options: ConsumeOptions): Promise<void>;
  /** Events appended and not yet handled by `group` (waiting or in a consumer's hands), over all
   * partitions; null when the log cannot tell. The fan-out backlog, in events. */
  backlog(group: string): Promise<number | null>;
  /** Stops every consumer of this log, waits for them, and releases connections it owns. */
  close(): Promise<void>;
}

/** The default number of partitions. */
export { DEFAULT_PARTITIONS };

/** The partition an author's events go to: core/partition.ts's rule, which the simulator uses too. */
export const partitionOf = authorPartition;

/** Throws EventLogInputError unless n is a usable partition count. */
export function checkPartitionCount(n: number): number {
  if (!Number.isSafeInteger(n) || n < 1 || n > 4096) {
    throw new EventLogInputError(`partition count ${n} is not an integer from 1 to 4096`);
  }
  return n;
}

/** Why `e` is not a valid post event, or null when it is. */
export function postEventProblem(e: unknown): string | null {
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return 'an event must be an object';
  const o = e as Record<string, unknown>;
  if (o.kind !== 'PostCreated' && o.kind !== 'PostDeleted') {
    return `kind ${JSON.stringify(o.kind)} is not PostCreated or PostDeleted`;
  }
  if (!isPostId(o.postId)) return `postId ${JSON.stringify(o.postId)} is not a post id (a decimal string below 2^63)`;
  if (typeof o.authorId !== 'number' || !Number.isSafeInteger(o.authorId) || o.authorId < 0) {
    return `authorId ${JSON.stringify(o.authorId)} is not a non-negative integer`;
  }
  if (typeof o.createdAt !== 'number' || !Number.isSafeInteger(o.createdAt) || o.createdAt < 0) {
    return `createdAt ${JSON.stringify(o.createdAt)} is not a time in ms`;
  }
  if (o.bodyLength !== undefined) {
    if (o.kind !== 'PostCreated') return 'bodyLength belongs to PostCreated only';
    if (typeof o.bodyLength !== 'number' || !Number.isSafeInteger(o.bodyLength) || o.bodyLength < 0) {
      return `bodyLength ${JSON.stringify(o.bodyLength)} is not a non-negative integer`;
    }
  }
  if (o.outboxId !== undefined && (typeof o.outboxId !== 'string' || !OUTBOX_ID.test(o.outboxId))) {
    return `outboxId ${JSON.stringify(o.outboxId).slice(0, 40)} is not an outbox id (a positive decimal bigint)`;
  }
  return null;
}

/** An outbox row's id: a bigserial as a decimal string. */
export const OUTBOX_ID = /^[1-9][0-9]{0,18}$/;

/** Throws EventLogInputError naming the first invalid event. */
export function checkPostEvents(events: readonly PostEvent[]): void {
  for (let i = 0; i < events.length; i++) {
    const problem = postEventProblem(events[i]);
    if (problem) throw new EventLogInputError(`event ${i}: ${problem}`);
  }
}

/** The event as the log stores it: JSON with the fields in a fixed order. */
export function encodePostEvent(e: PostEvent): string {
  return JSON.stringify(knownFields(e));
}

/** Decodes a stored event, keeping only the known fields. Throws MalformedEventError. */
export function decodePostEvent(raw: string): PostEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new MalformedEventError(`not JSON: ${raw.slice(0, 80)}`);
  }
  const problem = postEventProblem(parsed);
  if (problem) throw new MalformedEventError(problem);
  return knownFields(parsed as PostEvent);
}

/** The event's known fields in their fixed order, the optional ones only when present. */
function knownFields(e: PostEvent): PostEvent {
  const base = { kind: e.kind, postId: e.postId, authorId: e.authorId, createdAt: e.createdAt };
  const withLength = e.kind === 'PostCreated' && e.bodyLength !== undefined ? { ...base, bodyLength: e.bodyLength } : base;
  return (e.outboxId !== undefined ? { ...withLength, outboxId: e.outboxId } : withLength) as PostEvent;
}

/** Throws EventLogInputError unless the name is usable as a group or consumer name. */
export function checkName(what: string, name: string): string {
  if (typeof name !== 'string' || !/^[A-Za-z0-9._:@-]{1,200}$/.test(name)) {
    throw new EventLogInputError(`${what} name ${JSON.stringify(name)} must be 1-200 characters of letters, digits and . _ : @ -`);
  }
  return name;
}
