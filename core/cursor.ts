// The feed cursor: an opaque, signed (creation ms, post id) position. Feeds are ordered newest
// first by creation time, then by post id, so positions are total even when many posts share a
// millisecond, and "strictly older than the cursor" neither repeats nor skips a post.
//
// Wire layout, 33 bytes, base64url without padding (exactly 44 characters, so every cursor has a
// single spelling):
//   0      version (CURSOR_VERSION)
//   1..8   createdAt, unsigned 64-bit big-endian
//   9..16  post id, unsigned 64-bit big-endian
//   17..32 HMAC-SHA256(secret, CURSOR_MAC_LABEL || bytes 0..16), first 16 bytes
//
// The MAC does not guard a secret (a forged cursor only reaches positions the reader could page
// to); it keeps cursors opaque so the format can change, and turns a mangled or hand-made cursor
// into a clear 400 instead of a silently wrong page.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { comparePostIds, isPostId, type PostId } from './post-id.js';

export const CURSOR_VERSION = 1;
/** 16 of SHA-256's 32 bytes: RFC 2104 advises keeping at least half the hash. */
export const CURSOR_TAG_BYTES = 16;
const PAYLOAD_BYTES = 1 + 8 + 8;
export const CURSOR_BYTES = PAYLOAD_BYTES + CURSOR_TAG_BYTES;
export const CURSOR_LENGTH = Math.ceil((CURSOR_BYTES * 4) / 3);
/** Prefixed to the MAC input so the secret can be shared with the token signer without a tag of
 * one ever passing for the other. */
export const CURSOR_MAC_LABEL = 'feedlab/cursor\n';

const BASE64URL = /^[A-Za-z0-9_-]*$/;
const MAX_ID = 2n ** 63n;

/** A place in a feed: a post's creation time (Unix ms, the timeline score) and its id. */
export interface FeedPosition {
  createdAt: number;
  id: PostId;
}

export type CursorErrorReason = 'encoding' | 'length' | 'version' | 'mac' | 'time' | 'id';

/** A client sent a cursor we did not issue: answer 400 with the message. */
export class CursorError extends Error {
  constructor(
    readonly reason: CursorErrorReason,
    detail: string,
  ) {
    super(`invalid cursor: ${detail}`);
    this.name = 'CursorError';
  }
}

/** Feed order: negative when a comes first (newer), positive when b does, 0 for the same position. */
export function compareNewestFirst(a: FeedPosition, b: FeedPosition): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  return comparePostIds(b.id, a.id);
}

/** Does the entry belong after the cursor, i.e. on a later page? */
export function isOlderThan(entry: FeedPosition, cursor: FeedPosition): boolean {
  return entry.createdAt < cursor.createdAt || (entry.createdAt === cursor.createdAt && comparePostIds(entry.id, cursor.id) < 0);
}

export type CursorSecret = string | Uint8Array;

function tag(payload: Uint8Array, secret: CursorSecret): Buffer {
  const length = typeof secret === 'string' ? Buffer.byteLength(secret) : secret.byteLength;
  // A configuration bug, not the client's fault: not a CursorError.
  if (length === 0) throw new TypeError('the cursor secret is empty');
  return createHmac('sha256', secret).update(CURSOR_MAC_LABEL).update(payload).digest().subarray(0, CURSOR_TAG_BYTES);
}

/** The opaque cursor for a position. Throws RangeError for a position no post can have. */
export function encodeCursor(position: FeedPosition, secret: CursorSecret): string {
  const { createdAt, id } = position;
  if (!Number.isSafeInteger(createdAt) || createdAt < 0) throw new RangeError(`cursor createdAt ${createdAt} is not a non-negative integer ms`);
  if (!isPostId(id)) throw new RangeError(`cursor id "${String(id).slice(0, 40)}" is not a post id`);
  const bytes = Buffer.alloc(CURSOR_BYTES);
  bytes[0] = CURSOR_VERSION;
  bytes.writeBigUInt64BE(BigInt(createdAt), 1);
  bytes.writeBigUInt64BE(BigInt(id), 9);
  tag(bytes.subarray(0, PAYLOAD_BYTES), secret).copy(bytes, PAYLOAD_BYTES);
  return bytes.toString('base64url');
}

/** The position a cursor stands for, or a CursorError naming what is wrong with it. */
export function decodeCursor(text: string, secret: CursorSecret): FeedPosition {
  if (typeof text !== 'string' || !BASE64URL.test(text)) throw new CursorError('encoding', 'not base64url text');
  if (text.length !== CURSOR_LENGTH) throw new CursorError('length', `${text.length} characters, expected ${CURSOR_LENGTH}`);
  const bytes = Buffer.from(text, 'base64url');
  if (bytes[0] !== CURSOR_VERSION) throw new CursorError('version', `unknown version ${bytes[0]} (this server issues version ${CURSOR_VERSION})`);
  // Check the MAC before trusting any field.
  const expected = tag(bytes.subarray(0, PAYLOAD_BYTES), secret);
  if (!timingSafeEqual(expected, bytes.subarray(PAYLOAD_BYTES))) {
    throw new CursorError('mac', 'signature mismatch (altered, or issued under another secret)');
  }
  const createdAt = bytes.readBigUInt64BE(1);
  if (createdAt > BigInt(Number.MAX_SAFE_INTEGER)) throw new CursorError('time', 'createdAt out of range');
  const id = bytes.readBigUInt64BE(9);
  if (id >= MAX_ID) throw new CursorError('id', 'id is not a post id (not below 2^63)');
  return { createdAt: Number(createdAt), id: id.toString() };
}
