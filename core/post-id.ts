// Post ids: 64-bit, time-sortable, unique without coordination (the Snowflake layout).
//
//   0 | 41 bits: ms since POST_ID_EPOCH_MS | 10 bits: worker id | 12 bits: sequence
//
// The top bit stays 0, so an id fits Postgres bigint and Java's long. Ids travel as decimal
// strings: JSON numbers lose precision past 2^53, and Redis stores the members as strings anyway.

/** 2015-01-01T00:00:00Z. Ids minted from 2022-07-22 until the 41 bits run out in 2084 all have 19
 * digits, so Redis's tie order within a score (members compared as strings) is numeric order. */
export const POST_ID_EPOCH_MS = 1_420_070_400_000;
export const POST_ID_TIME_BITS = 41;
export const POST_ID_WORKER_BITS = 10;
export const POST_ID_SEQUENCE_BITS = 12;

export const MAX_WORKER_ID = 2 ** POST_ID_WORKER_BITS - 1;
export const MAX_SEQUENCE = 2 ** POST_ID_SEQUENCE_BITS - 1;
/** The last millisecond (Unix time) an id can carry. */
export const MAX_POST_ID_TIME_MS = POST_ID_EPOCH_MS + 2 ** POST_ID_TIME_BITS - 1;
/** 2^63 - 1: the largest post id. */
export const MAX_POST_ID = '9223372036854775807';

/** A post id as a canonical decimal string (see isPostId). */
export type PostId = string;

const WORKER_SHIFT = BigInt(POST_ID_SEQUENCE_BITS);
const TIME_SHIFT = BigInt(POST_ID_WORKER_BITS + POST_ID_SEQUENCE_BITS);
const CANONICAL_DECIMAL = /^(?:0|[1-9][0-9]{0,18})$/;

/** A canonical decimal string (no sign, no leading zeros) below 2^63. */
export function isPostId(s: unknown): s is PostId {
  if (typeof s !== 'string' || !CANONICAL_DECIMAL.test(s)) return false;
  // Equal-length canonical decimals compare as strings.
  return s.length < MAX_POST_ID.length || s <= MAX_POST_ID;
}

/** Numeric order of two post ids ("9" < "10"): negative, zero or positive. */
export function comparePostIds(a: PostId, b: PostId): number {
  // Canonical decimals: more digits is larger; equal lengths compare as strings.
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

function checkTime(timeMs: number): void {
  if (!Number.isInteger(timeMs) || timeMs < POST_ID_EPOCH_MS || timeMs > MAX_POST_ID_TIME_MS) {
    throw new RangeError(
      `post id time ${timeMs} is outside ${new Date(POST_ID_EPOCH_MS).toISOString()} .. ${new Date(MAX_POST_ID_TIME_MS).toISOString()}`,
    );
  }
}

function checkWorker(workerId: number): void {
  if (!Number.isInteger(workerId) || workerId < 0 || workerId > MAX_WORKER_ID) {
    throw new RangeError(`worker id ${workerId} must be an integer in 0..${MAX_WORKER_ID}`);
  }
}

/** The id for a (Unix ms, worker, sequence) triple: for seeded simulations and for id range bounds. */
export function makePostId(timeMs: number, workerId = 0, sequence = 0): PostId {
  checkTime(timeMs);
  checkWorker(workerId);
  if (!Number.isInteger(sequence) || sequence < 0 || sequence > MAX_SEQUENCE) {
    throw new RangeError(`sequence ${sequence} must be an integer in 0..${MAX_SEQUENCE}`);
  }
  return ((BigInt(timeMs - POST_ID_EPOCH_MS) << TIME_SHIFT) | (BigInt(workerId) << WORKER_SHIFT) | BigInt(sequence)).toString();
}

/** The Unix millisecond an id was minted in (the generator may have borrowed ahead of its clock). */
export function postIdTime(id: PostId): number {
  if (!isPostId(id)) throw new RangeError(`"${String(id).slice(0, 40)}" is not a post id`);
  return Number(BigInt(id) >> TIME_SHIFT) + POST_ID_EPOCH_MS;
}

/**
 * Mints ids for one worker. Every id is larger than the one before, even when the clock steps
 * backwards (NTP): the generator keeps its last millisecond and advances the sequence, and when the
 * 4,096 sequence numbers of a millisecond run out it borrows the next millisecond rather than wait.
 * Ids therefore run slightly ahead of the clock until it catches up. Uniqueness across processes
 * needs a distinct worker id per live generator.
 */
export class PostIdGenerator {
  private readonly workerBits: bigint;
  /** Milliseconds since the epoch of the last id; -1 before the first. */
  private lastMs = -1;
  private sequence = 0;

  constructor(
    readonly workerId: number,
    private readonly clock: () => number = Date.now,
  ) {
    checkWorker(workerId);
    this.workerBits = BigInt(workerId) << WORKER_SHIFT;
  }

  next(): PostId {
    const now = Math.floor(this.clock());
    checkTime(now);
    let ms = now - POST_ID_EPOCH_MS;
    if (ms > this.lastMs) {
      this.sequence = 0;
    } else {
      // Same millisecond, or the clock went backwards: stay on the last millisecond.
      ms = this.lastMs;
      this.sequence++;
      if (this.sequence > MAX_SEQUENCE) {
        ms++;
        this.sequence = 0;
        checkTime(ms + POST_ID_EPOCH_MS);
      }
    }
    this.lastMs = ms;
    return ((BigInt(ms) << TIME_SHIFT) | this.workerBits | BigInt(this.sequence)).toString();
  }
}
