import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  compareNewestFirst,
  CURSOR_LENGTH,
  CURSOR_MAC_LABEL,
  CursorError,
  decodeCursor,
  encodeCursor,
  isOlderThan,
  type FeedPosition,
} from '../../core/cursor.js';
import { makePostId, MAX_POST_ID } from '../../core/post-id.js';

const SECRET = 'test-secret-0123456789abcdef';
const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
const POS: FeedPosition = { createdAt: T0, id: makePostId(T0, 5, 17) };

/** A cursor built by hand to the documented layout, signed with the real secret. */
function forge(version: number, createdAt: bigint, id: bigint, secret = SECRET): string {
  const payload = Buffer.alloc(17);
  payload[0] = version;
  payload.writeBigUInt64BE(createdAt, 1);
  payload.writeBigUInt64BE(id, 9);
  const tag = createHmac('sha256', secret).update(CURSOR_MAC_LABEL).update(payload).digest().subarray(0, 16);
  return Buffer.concat([payload, tag]).toString('base64url');
}

function decodeError(text: string, secret = SECRET): CursorError {
  try {
    decodeCursor(text, secret);
  } catch (e) {
    expect(e).toBeInstanceOf(CursorError);
    const err = e as CursorError;
    expect(err.message).not.toContain('\n');
    expect(err.message.startsWith('invalid cursor: ')).toBe(true);
    return err;
  }
  throw new Error(`cursor ${text} was accepted`);
}

describe('cursor codec', () => {
  it('round-trips positions, including the extremes, as 44 base64url characters', () => {
    const positions: FeedPosition[] = [
      POS,
      { createdAt: 0, id: '0' },
      { createdAt: Number.MAX_SAFE_INTEGER, id: MAX_POST_ID },
      { createdAt: T0, id: '9' },
      { createdAt: T0, id: '10' },
    ];
    for (const p of positions) {
      const text = encodeCursor(p, SECRET);
      expect(text).toMatch(/^[A-Za-z0-9_-]{44}$/);
      expect(text).toHaveLength(CURSOR_LENGTH);
      expect(decodeCursor(text, SECRET)).toEqual(p);
    }
    // The documented layout is the wire format.
    expect(encodeCursor(POS, SECRET)).toBe(forge(1, BigInt(POS.createdAt), BigInt(POS.id)));
  });

  it('accepts the secret as bytes the same as as text', () => {
    const bytes = new TextEncoder().encode(SECRET);
    expect(encodeCursor(POS, bytes)).toBe(encodeCursor(POS, SECRET));
    expect(decodeCursor(encodeCursor(POS, SECRET), bytes)).toEqual(POS);
  });

  it('rejects text that is not base64url', () => {
    const good = encodeCursor(POS, SECRET);
    for (const bad of [good.slice(0, 43) + '+', good.slice(0, 43) + '/', good.slice(0, 42) + '==', ` ${good.slice(1)}`, good.slice(0, 20) + '.' + good.slice(21), 'é'.repeat(44)]) {
      const err = decodeError(bad);
      expect(err.reason).toBe('encoding');
      expect(err.message).toBe('invalid cursor: not base64url text');
    }
    expect(decodeError(42 as unknown as string).reason).toBe('encoding');
    expect(decodeError(['a'] as unknown as string).reason).toBe('encoding');
  });

  it('rejects the wrong length', () => {
    const good = encodeCursor(POS, SECRET);
    for (const bad of ['', good.slice(0, 43), good + 'A', good + good, 'abc']) {
      const err = decodeError(bad);
      expect(err.reason).toBe('length');
      expect(err.message).toBe(`invalid cursor: ${bad.length} characters, expected 44`);
    }
  });

  it('rejects an unknown version', () => {
    for (const v of [0, 2, 255]) {
      const err = decodeError(forge(v, BigInt(T0), 1n));
      expect(err.reason).toBe('version');
      expect(err.message).toBe(`invalid cursor: unknown version ${v} (this server issues version 1)`);
    }
  });

  it('rejects any altered byte of the payload or the tag', () => {
    const good = Buffer.from(encodeCursor(POS, SECRET), 'base64url');
    for (let i = 1; i < good.length; i++) {
      for (const bit of [0x01, 0x80]) {
        const bad = Buffer.from(good);
        bad[i] ^= bit;
        const err = decodeError(bad.toString('base64url'));
        expect(err.reason).toBe('mac');
        expect(err.message).toBe('invalid cursor: signature mismatch (altered, or issued under another secret)');
      }
    }
    // A hand-made cursor for a chosen position, without the secret.
    const payload = Buffer.from(good);
    payload.writeBigUInt64BE(BigInt(T0 + 1), 1);
    expect(decodeError(payload.toString('base64url')).reason).toBe('mac');
  });

  it('rejects a cursor issued under another secret', () => {
    const other = encodeCursor(POS, 'another-secret-fedcba9876543210');
    expect(decodeError(other).reason).toBe('mac');
    expect(decodeCursor(other, 'another-secret-fedcba9876543210')).toEqual(POS);
    // The label separates cursor tags from other HMACs under the same secret (e.g. the token signer).
    const payload = Buffer.from(encodeCursor(POS, SECRET), 'base64url').subarray(0, 17);
    const unlabelled = createHmac('sha256', SECRET).update(payload).digest().subarray(0, 16);
    expect(decodeError(Buffer.concat([payload, unlabelled]).toString('base64url')).reason).toBe('mac');
  });

  it('rejects a signed createdAt past 2^53 - 1 and a signed id of 2^63 or more', () => {
    for (const t of [2n ** 53n, 2n ** 64n - 1n]) {
      const err = decodeError(forge(1, t, 1n));
      expect(err.reason).toBe('time');
      expect(err.message).toBe('invalid cursor: createdAt out of range');
    }
    expect(decodeCursor(forge(1, 2n ** 53n - 1n, 1n), SECRET).createdAt).toBe(Number.MAX_SAFE_INTEGER);
    for (const id of [2n ** 63n, 2n ** 64n - 1n]) {
      const err = decodeError(forge(1, BigInt(T0), id));
      expect(err.reason).toBe('id');
      expect(err.message).toBe('invalid cursor: id is not a post id (not below 2^63)');
    }
    expect(decodeCursor(forge(1, BigInt(T0), 2n ** 63n - 1n), SECRET).id).toBe(MAX_POST_ID);
  });

  it('treats a bad position or an empty secret as the server\'s bug, not a CursorError', () => {
    for (const p of [
      { createdAt: -1, id: '1' },
      { createdAt: 1.5, id: '1' },
      { createdAt: NaN, id: '1' },
      { createdAt: 2 ** 53, id: '1' },
      { createdAt: T0, id: '01' },
      { createdAt: T0, id: '9223372036854775808' },
    ]) {
      expect(() => encodeCursor(p, SECRET)).toThrow(RangeError);
    }
    expect(() => encodeCursor(POS, '')).toThrow(TypeError);
    expect(() => decodeCursor(encodeCursor(POS, SECRET), new Uint8Array(0))).toThrow(TypeError);
  });
});

describe('feed order', () => {
  it('is newest first, then by id numerically within a millisecond', () => {
    const a = { createdAt: T0, id: '10' };
    const b = { createdAt: T0, id: '9' };
    const c = { createdAt: T0 - 1, id: '99' };
    expect([c, b, a].sort(compareNewestFirst)).toEqual([a, b, c]);
    expect(compareNewestFirst(a, { ...a })).toBe(0);
  });

  it('"older than the cursor" excludes the cursor itself and everything newer', () => {
    const cursor = { createdAt: T0, id: '10' };
    expect(isOlderThan({ createdAt: T0, id: '9' }, cursor)).toBe(true);
    expect(isOlderThan({ createdAt: T0 - 1, id: '999' }, cursor)).toBe(true);
    expect(isOlderThan({ createdAt: T0, id: '10' }, cursor)).toBe(false);
    expect(isOlderThan({ createdAt: T0, id: '11' }, cursor)).toBe(false);
    expect(isOlderThan({ createdAt: T0 + 1, id: '1' }, cursor)).toBe(false);
  });
});
