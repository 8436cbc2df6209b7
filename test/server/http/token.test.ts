// HS256 bearer tokens (server/auth/token.ts) and `feedlab token` (cli/commands/token.ts).
import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseTtl } from '../../../cli/commands/token.js';
import { runCli } from '../../../cli/program.js';
import { inProcess } from '../../cli/cli-helpers.js';
import {
  bearerToken,
  MAX_TOKEN_LENGTH,
  parseUserId,
  signToken,
  TokenConfigError,
  TokenError,
  tokenSecretFromEnv,
  TokenVerifier,
  verifyToken,
  type TokenErrorReason,
} from '../../../server/auth/token.js';
import { InputError } from '../../../sim/errors.js';

const SECRET = 'token-test-secret-0123456789abcdef-0123456789';
const NOW = Date.UTC(2025, 5, 1, 12, 0, 0);

function b64(value: unknown): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
}

function signed(header: unknown, claims: unknown, secret = SECRET): string {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

function reason(fn: () => unknown): TokenErrorReason {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(TokenError);
    expect((err as Error).message).not.toMatch(/\n/);
    return (err as TokenError).reason;
  }
  throw new Error('expected a TokenError');
}

const HS = { alg: 'HS256', typ: 'JWT' };
const exp = NOW / 1000 + 60;

describe('signToken / verifyToken', () => {
  it('round-trips a user id, with the standard header and claims', () => {
    const token = signToken(42, SECRET, { ttlSeconds: 600, now: NOW });
    const [h, c] = token.split('.');
    expect(JSON.parse(Buffer.from(h as string, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(JSON.parse(Buffer.from(c as string, 'base64url').toString())).toEqual({ sub: '42', iat: NOW / 1000, exp: NOW / 1000 + 600 });
    expect(verifyToken(token, SECRET, { now: NOW })).toEqual({ userId: 42, claims: { sub: '42', iat: NOW / 1000, exp: NOW / 1000 + 600 } });
    expect(verifyToken(signToken('0', SECRET, { now: NOW }), SECRET, { now: NOW }).userId).toBe(0);
    // Interoperates with any HS256 implementation: a token made by hand verifies.
    expect(verifyToken(signed(HS, { sub: '7', iat: 1, exp }), SECRET, { now: NOW }).userId).toBe(7);
    expect(verifyToken(signed({ alg: 'HS256' }, { sub: '7', exp }), SECRET, { now: NOW }).userId).toBe(7);
  });

  it('refuses expired tokens at exp, honouring a leeway, and tokens not yet valid', () => {
    const token = signToken(1, SECRET, { ttlSeconds: 60, now: NOW });
    expect(verifyToken(token, SECRET, { now: NOW + 59_999 }).userId).toBe(1);
    expect(reason(() => verifyToken(token, SECRET, { now: NOW + 60_000 }))).toBe('expired');
    expect(verifyToken(token, SECRET, { now: NOW + 60_000, leewaySeconds: 5 }).userId).toBe(1);
    expect(reason(() => verifyToken(signed(HS, { sub: '1', exp, nbf: exp - 10 }), SECRET, { now: NOW }))).toBe('not-yet-valid');
    expect(reason(() => verifyToken(signed(HS, { sub: '1' }), SECRET, { now: NOW }))).toBe('malformed');
    expect(reason(() => verifyToken(signed(HS, { sub: '1', exp: '9999999999' }), SECRET, { now: NOW }))).toBe('malformed');
  });

  it('refuses alg none and every algorithm but HS256, before looking at the signature', () => {
    const claims = b64({ sub: '1', iat: 1, exp });
    expect(reason(() => verifyToken(`${b64({ alg: 'none', typ: 'JWT' })}.${claims}.`, SECRET, { now: NOW }))).toBe('algorithm');
    expect(reason(() => verifyToken(`${b64({ alg: 'none' })}.${claims}.x`, SECRET, { now: NOW }))).toBe('algorithm');
    for (const alg of ['NONE', 'HS512', 'RS256', 'hs256', '', null, 256]) {
      expect(reason(() => verifyToken(signed({ alg, typ: 'JWT' }, { sub: '1', exp }), SECRET, { now: NOW }))).toBe('algorithm');
    }
    expect(reason(() => verifyToken(signed({ typ: 'JWT' }, { sub: '1', exp }), SECRET, { now: NOW }))).toBe('algorithm');
    expect(reason(() => verifyToken(signed({ ...HS, crit: ['exp'] }, { sub: '1', exp }), SECRET, { now: NOW }))).toBe('malformed');
    expect(reason(() => verifyToken(signed({ ...HS, typ: 'JWE' }, { sub: '1', exp }), SECRET, { now: NOW }))).toBe('malformed');
  });

  it('refuses a wrong secret, altered claims, a stripped or re-spelled signature', () => {
    const token = signToken(1, SECRET, { now: NOW });
    const [h, c, s] = token.split('.') as [string, string, string];
    expect(reason(() => verifyToken(token, `${SECRET}!`, { now: NOW }))).toBe('signature');
    expect(reason(() => verifyToken(`${h}.${b64({ sub: '2', iat: NOW / 1000, exp })}.${s}`, SECRET, { now: NOW }))).toBe('signature');
    expect(reason(() => verifyToken(`${h}.${c}.`, SECRET, { now: NOW }))).toBe('signature');
    expect(reason(() => verifyToken(`${h}.${c}.${s.slice(0, -1)}`, SECRET, { now: NOW }))).toBe('signature');
    // The last base64url character of a 32-byte MAC carries 2 unused bits: another spelling of the
    // same bytes must not pass either.
    const bytes = Buffer.from(s, 'base64url');
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const twin = [...alphabet].map((ch) => s.slice(0, -1) + ch).find((t) => t !== s && Buffer.from(t, 'base64url').equals(bytes));
    expect(twin).toBeDefined();
    expect(reason(() => verifyToken(`${h}.${c}.${twin}`, SECRET, { now: NOW }))).toBe('signature');
  });

  it('refuses malformed tokens', () => {
    const token = signToken(1, SECRET, { now: NOW });
    for (const bad of ['abc', 'a.b', `${token}.x`, 'a.b.c.d', '..', `!!.${token.split('.')[1]}.x`, `${b64('not json')}.${b64({})}.x`, `${b64([1])}.${b64({})}.x`]) {
      expect(reason(() => verifyToken(bad, SECRET, { now: NOW }))).toBe('malformed');
    }
    expect(reason(() => verifyToken('x'.repeat(MAX_TOKEN_LENGTH + 1), SECRET, { now: NOW }))).toBe('malformed');
    expect(reason(() => verifyToken('', SECRET, { now: NOW }))).toBe('missing');
    // Claims that are not an object, correctly signed.
    expect(reason(() => verifyToken(signed(HS, 'x'), SECRET, { now: NOW }))).toBe('malformed');
  });

  it('refuses subjects that are not user ids', () => {
    for (const sub of ['bob', '', '01', '-1', '1.5', '1e3', ' 1', '9007199254740993', 5, null, undefined, ['1']]) {
      expect(reason(() => verifyToken(signed(HS, { sub, exp }), SECRET, { now: NOW }))).toBe('subject');
    }
  });

  it('needs a secret of at least 32 bytes, from the option or FEED_TOKEN_SECRET', () => {
    expect(() => signToken(1, 'short')).toThrow(TokenConfigError);
    expect(() => verifyToken('a.b.c', '')).toThrow(TokenConfigError);
    expect(() => tokenSecretFromEnv({})).toThrow(/FEED_TOKEN_SECRET is not set/);
    expect(() => tokenSecretFromEnv({ FEED_TOKEN_SECRET: 'x'.repeat(31) })).toThrow(/31 bytes; HS256 needs at least 32/);
    expect(tokenSecretFromEnv({ FEED_TOKEN_SECRET: SECRET })).toBe(SECRET);
    expect(() => signToken(-1, SECRET)).toThrow(RangeError);
    expect(() => signToken('abc', SECRET)).toThrow(RangeError);
    expect(() => signToken(1, SECRET, { ttlSeconds: 0 })).toThrow(RangeError);
  });

  it('parses Authorization headers and user ids', () => {
    expect(bearerToken('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerToken('bearer  abc')).toBe('abc');
    expect(() => bearerToken(undefined)).toThrow(/missing bearer token/);
    expect(() => bearerToken('')).toThrow(TokenError);
    expect(() => bearerToken('Basic dTpw')).toThrow(/not "Bearer <token>"/);
    expect(() => bearerToken('Bearer a b')).toThrow(TokenError);
    expect(parseUserId('0')).toBe(0);
    expect(parseUserId('9007199254740991')).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseUserId('9007199254740992')).toBeUndefined();
    expect(parseUserId('007')).toBeUndefined();
  });
});

describe('TokenVerifier (the server\'s verifyToken, remembering tokens that passed)', () => {
  it('answers a token it verified from memory, but still refuses it once expired, and never remembers a refused one', () => {
    const v = new TokenVerifier(SECRET);
    const token = signToken(7, SECRET, { ttlSeconds: 60, now: NOW });
    const hmac = vi.spyOn(Buffer, 'from');
    expect(v.verify(token, { now: NOW }).userId).toBe(7);
    const calls = hmac.mock.calls.length;
    expect(v.verify(token, { now: NOW + 59_999 }).userId).toBe(7);
    expect(hmac.mock.calls.length).toBe(calls); // no decoding or signature check the second time
    hmac.mockRestore();
    expect(reason(() => v.verify(token, { now: NOW + 60_000 }))).toBe('expired');
    expect(v.verify(token, { now: NOW + 60_000, leewaySeconds: 5 }).userId).toBe(7);

    // A token not yet valid is refused each time, and a valid one from its nbf on.
    const later = signed(HS, { sub: '8', exp, nbf: NOW / 1000 + 10 });
    expect(reason(() => v.verify(later, { now: NOW }))).toBe('not-yet-valid');
    expect(v.verify(later, { now: NOW + 10_000 }).userId).toBe(8);
    expect(reason(() => v.verify(later, { now: NOW + 9_000 }))).toBe('not-yet-valid');

    // The same claims with another signature are verified on their own (and refused).
    const forged = `${token.slice(0, token.lastIndexOf('.'))}.${signToken(7, 'another-secret-0123456789abcdef-0123456789', { now: NOW }).split('.')[2]}`;
    expect(reason(() => v.verify(forged, { now: NOW }))).toBe('signature');
    expect(reason(() => v.verify(forged, { now: NOW }))).toBe('signature');
  });

  it('keeps at most the given number of tokens, the least recently used going first', () => {
    const v = new TokenVerifier(SECRET, 2);
    const [a, b, c] = [1, 2, 3].map((u) => signToken(u, SECRET, { now: NOW }));
    v.verify(a, { now: NOW });
    v.verify(b, { now: NOW });
    v.verify(a, { now: NOW }); // a used again: b is now the least recent
    v.verify(c, { now: NOW });
    const verify = vi.spyOn(Buffer, 'from');
    v.verify(a, { now: NOW });
    v.verify(c, { now: NOW });
    expect(verify.mock.calls.length).toBe(0);
    v.verify(b, { now: NOW }); // forgotten: verified again
    expect(verify.mock.calls.length).toBeGreaterThan(0);
    verify.mockRestore();
  });
});

describe('feedlab token', () => {
  const saved = process.env.FEED_TOKEN_SECRET;
  afterEach(() => {
    vi.restoreAllMocks();
    if (saved === undefined) delete process.env.FEED_TOKEN_SECRET;
    else process.env.FEED_TOKEN_SECRET = saved;
  });

  // `feedlab token ARGV`, in this process
  const tokenCommand = (argv: string[]) => runCli(['token', ...argv]);
  const capture = (argv: string[]) => inProcess(['token', ...argv]);

  /** A line commander refuses: exit 2 and one line on stderr, which is returned. */
  async function usageError(argv: string[]): Promise<string> {
    const { code, err } = await capture(argv);
    expect(code, argv.join(' ')).toBe(2);
    expect(err.trimEnd().split('\n'), argv.join(' ')).toHaveLength(1);
    return err;
  }

  it('prints a token for the user that the server accepts, with --secret or FEED_TOKEN_SECRET', async () => {
    const before = Date.now();
    const { code, out } = await capture(['42', '--ttl', '15m', '--secret', SECRET]);
    expect(code).toBe(0);
    expect(out).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const { userId, claims } = verifyToken(out.trim(), SECRET);
    expect(userId).toBe(42);
    expect(claims.exp - claims.iat).toBe(900);
    expect(claims.iat).toBeGreaterThanOrEqual(Math.floor(before / 1000));

    process.env.FEED_TOKEN_SECRET = SECRET;
    const fromEnv = await capture(['7']);
    expect(verifyToken(fromEnv.out.trim(), SECRET).claims).toMatchObject({ sub: '7' });
    const { claims: c } = verifyToken(fromEnv.out.trim(), SECRET);
    expect(c.exp - c.iat).toBe(3600);

    const json = await capture(['7', '--json', '--ttl', '2h']);
    const doc = JSON.parse(json.out) as { schema: string; token: string; userId: number; expiresAt: string };
    expect(doc.schema).toBe('feedlab.token/1');
    expect(doc.userId).toBe(7);
    expect(verifyToken(doc.token, SECRET).claims.exp * 1000).toBe(Date.parse(doc.expiresAt));
  });

  it('refuses bad usage in one line: exit 2, or an InputError', async () => {
    delete process.env.FEED_TOKEN_SECRET;
    expect(await usageError([])).toMatch(/^feedlab: token: missing required argument 'user' \(feedlab token --help for its usage\)$/m);
    expect(await usageError(['1', '2', '--secret', SECRET])).toMatch(/^feedlab: token: too many arguments for 'token'\. Expected 1 argument but got 2\./);
    expect(await usageError(['1', '--bogus'])).toMatch(/^feedlab: token: unknown option '--bogus'/);
    expect(await usageError(['1', '--tll', '1h'])).toMatch(/unknown option '--tll' \(did you mean --ttl\?\)/);
    await expect(tokenCommand(['bob', '--secret', SECRET])).rejects.toThrow(/USER "bob" is not a user id/);
    await expect(tokenCommand(['1'])).rejects.toThrow(/FEED_TOKEN_SECRET is not set.*\(or pass --secret\)/);
    await expect(tokenCommand(['1', '--secret', 'short'])).rejects.toThrow(/--secret is 5 bytes/);
    await expect(tokenCommand(['1', '--secret', SECRET, '--ttl', 'soon'])).rejects.toBeInstanceOf(InputError);
  });

  it('parses lifetimes', () => {
    expect(parseTtl('90')).toBe(90);
    expect(parseTtl('90s')).toBe(90);
    expect(parseTtl('15m')).toBe(900);
    expect(parseTtl('1h')).toBe(3600);
    expect(parseTtl('7d')).toBe(604_800);
    for (const bad of ['0', '0h', '-1h', '1.5h', '1w', '', 'h', '366d']) expect(() => parseTtl(bad)).toThrow(InputError);
  });
});
