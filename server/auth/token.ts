// Bearer tokens of the reference server: compact JWS (RFC 7515) JWTs (RFC 7519) signed with
// HMAC-SHA256, made and verified by fast-jwt (the token format, the HMAC and its constant-time
// comparison, the algorithm allowlist, `crit`), with this module's stricter rules around it.
//
//   header  {"alg":"HS256","typ":"JWT"}
//   claims  {"sub":"<user id>","iat":<s>,"exp":<s>}
//
// The subject is the user id as a decimal string (RFC 7519 makes `sub` a string). Verification
// refuses, each with its own one-line reason: anything but three base64url parts, a header that is
// not HS256 (so "none", RS256 and friends never get as far as a signature check), a `crit` header
// (extensions we do not understand must be refused), a `typ` other than JWT, a signature that is
// not ours or not spelled canonically (fast-jwt compares the decoded bytes, which a second spelling
// of the same MAC in base64url's unused trailing bits also decodes to: refused here), claims without
// a numeric `exp`, an expired or not-yet-valid token (checked here, on or after exp as RFC 7519
// says, where fast-jwt would still take a token in its exp millisecond), and a subject that is not
// a user id.
//
// The secret comes from FEED_TOKEN_SECRET (or an option) and must be at least 32 bytes: RFC 7518
// section 3.2 requires an HS256 key at least as long as the hash output.
import { createDecoder, createSigner, createVerifier, TokenError as JwtError } from 'fast-jwt';

export const TOKEN_ALGORITHM = 'HS256';
export const TOKEN_SECRET_ENV = 'FEED_TOKEN_SECRET';
/** RFC 7518 3.2: a key of the same size as the hash output (256 bits) or larger. */
export const MIN_TOKEN_SECRET_BYTES = 32;
export const DEFAULT_TOKEN_TTL_SECONDS = 3600;
/** Longer tokens are refused unread: ours are ~150 characters. */
export const MAX_TOKEN_LENGTH = 2048;

export type TokenSecret = string | Uint8Array;
export type UserId = number;

export type TokenErrorReason = 'missing' | 'malformed' | 'algorithm' | 'signature' | 'expired' | 'not-yet-valid' | 'subject';

/** The client's token is missing or unacceptable: answer 401 with the message (one line). */
export class TokenError extends Error {
  constructor(
    readonly reason: TokenErrorReason,
    message: string,
  ) {
    super(message);
    this.name = 'TokenError';
  }
}

/** The server's own configuration is wrong (no secret, a short one): not the client's fault. */
export class TokenConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenConfigError';
  }
}

export interface TokenClaims {
  /** The user id, decimal. */
  sub: string;
  /** Issued at, Unix seconds. */
  iat: number;
  /** Expires at, Unix seconds: the token is refused from this second on. */
  exp: number;
  /** Not before, Unix seconds, when the token carries it. */
  nbf?: number;
}

export interface VerifiedToken {
  userId: UserId;
  claims: TokenClaims;
}

export interface SignOptions {
  /** Lifetime in seconds (default one hour). */
  ttlSeconds?: number;
  /** The signing time, Unix ms (default Date.now()). */
  now?: number;
}

export interface VerifyOptions {
  /** The verification time, Unix ms (default Date.now()). */
  now?: number;
  /** Clock skew tolerated on exp and nbf, in seconds (default 0). */
  leewaySeconds?: number;
}

const USER_ID_TEXT = /^(?:0|[1-9][0-9]{0,15})$/;

/** A user id: a non-negative safe integer (the store's ids). */
export function isUserId(id: unknown): id is UserId {
  return typeof id === 'number' && Number.isSafeInteger(id) && id >= 0;
}

/** The user id a canonical decimal string stands for, or undefined ("007", "-1", "1e3" are not ids). */
export function parseUserId(text: string): UserId | undefined {
  if (!USER_ID_TEXT.test(text)) return undefined;
  const id = Number(text);
  return Number.isSafeInteger(id) ? id : undefined;
}

/** Throws TokenConfigError unless the secret is usable for HS256. */
export function checkTokenSecret(secret: TokenSecret, source = 'the token secret'): void {
  const bytes = typeof secret === 'string' ? Buffer.byteLength(secret) : secret.byteLength;
  if (bytes === 0) throw new TokenConfigError(`${source} is empty`);
  if (bytes < MIN_TOKEN_SECRET_BYTES) {
    throw new TokenConfigError(
      `${source} is ${bytes} bytes; HS256 needs at least ${MIN_TOKEN_SECRET_BYTES} (RFC 7518 3.2), e.g. from "openssl rand -base64 32"`,
    );
  }
}

/** FEED_TOKEN_SECRET, checked; TokenConfigError when it is missing or too short. */
export function tokenSecretFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const secret = env[TOKEN_SECRET_ENV];
  if (secret === undefined || secret === '') throw new TokenConfigError(`${TOKEN_SECRET_ENV} is not set (the HS256 secret tokens are signed with)`);
  checkTokenSecret(secret, TOKEN_SECRET_ENV);
  return secret;
}

type Signer = (payload: TokenClaims) => string;
type Verifier = (token: string) => { header: Record<string, unknown>; payload: Record<string, unknown>; signature: string };

/** A signer and a verifier per secret: fast-jwt checks its options when it makes them, once. */
const bySecret = new Map<TokenSecret, { sign: Signer; verify: Verifier }>();

function jwt(secret: TokenSecret): { sign: Signer; verify: Verifier } {
  let made = bySecret.get(secret);
  if (!made) {
    const key = typeof secret === 'string' ? secret : Buffer.from(secret);
    made = {
      // iat and exp are the payload's own (fast-jwt keeps a given iat): the signing time is the caller's
      sign: createSigner({ key, algorithm: TOKEN_ALGORITHM }) as Signer,
      // the times are checked here (checkTokenTime), for this verification and the remembered ones alike
      verify: createVerifier({ key, algorithms: [TOKEN_ALGORITHM], complete: true, requiredClaims: ['exp'], ignoreExpiration: true, ignoreNotBefore: true }) as unknown as Verifier,
    };
    if (bySecret.size >= 16) bySecret.clear();
    bySecret.set(secret, made);
  }
  return made;
}

/** A signed token for the user. Throws RangeError for an id or lifetime no token can carry. */
export function signToken(userId: UserId | string, secret: TokenSecret, options: SignOptions = {}): string {
  checkTokenSecret(secret);
  const id = typeof userId === 'string' ? parseUserId(userId) : isUserId(userId) ? userId : undefined;
  if (id === undefined) throw new RangeError(`"${String(userId).slice(0, 40)}" is not a user id (a non-negative integer)`);
  const ttl = options.ttlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS;
  if (!Number.isSafeInteger(ttl) || ttl <= 0) throw new RangeError(`token lifetime ${ttl} must be a positive whole number of seconds`);
  const iat = Math.floor((options.now ?? Date.now()) / 1000);
  return jwt(secret).sign({ sub: String(id), iat, exp: iat + ttl });
}

function quoted(value: unknown): string {
  return JSON.stringify(typeof value === 'string' ? value.slice(0, 20) : value ?? null) ?? 'null';
}

const headerOf = createDecoder({ complete: true }) as unknown as (token: string) => { header: Record<string, unknown> };

const algorithmRefused = (alg: unknown) => new TokenError('algorithm', `token algorithm ${quoted(alg)} is not accepted (HS256 only)`);

/** fast-jwt's refusal as ours: the reason, and a line that names what was wrong. */
function refusal(err: unknown, token: string): TokenError {
  if (!(err instanceof JwtError)) throw err;
  const { codes } = JwtError;
  switch (err.code) {
    case codes.invalidAlgorithm:
      return algorithmRefused(headerOf(token).header.alg);
    case codes.missingSignature: {
      // an unsigned token: "alg": "none" is refused as an algorithm, a stripped HS256 one as a signature
      const alg = headerOf(token).header.alg;
      return alg !== TOKEN_ALGORITHM ? algorithmRefused(alg) : new TokenError('signature', 'token signature is missing');
    }
    case codes.invalidSignature:
      return new TokenError('signature', 'token signature is invalid (altered, or signed with another secret)');
    case codes.invalidCritHeader:
      return new TokenError('malformed', 'malformed token: critical header extensions are not supported');
    case codes.missingRequiredClaim:
      return new TokenError('malformed', 'malformed token: no numeric exp claim');
    default:
      return new TokenError('malformed', `malformed token: ${err.message.replace(/^The (token )?/, '').replace(/\.$/, '')}`);
  }
}

/** The token's user and claims, or a TokenError naming what is wrong with it. */
export function verifyToken(token: string, secret: TokenSecret, options: VerifyOptions = {}): VerifiedToken {
  checkTokenSecret(secret);
  if (typeof token !== 'string' || token.length === 0) throw new TokenError('missing', 'missing bearer token');
  if (token.length > MAX_TOKEN_LENGTH) throw new TokenError('malformed', `malformed token: longer than ${MAX_TOKEN_LENGTH} characters`);
  const parts = token.split('.');
  if (parts.length !== 3) throw new TokenError('malformed', `malformed token: ${parts.length} parts, a JWT has 3 (header.claims.signature)`);

  let verified: ReturnType<Verifier>;
  try {
    verified = jwt(secret).verify(token);
  } catch (err) {
    throw refusal(err, token);
  }
  const { header, payload: claims, signature } = verified;
  if (Buffer.from(signature, 'base64url').toString('base64url') !== signature) {
    throw new TokenError('signature', 'token signature is invalid (not spelled canonically)');
  }
  if (header.typ !== undefined && (typeof header.typ !== 'string' || header.typ.toUpperCase() !== 'JWT')) {
    throw new TokenError('malformed', `malformed token: type ${quoted(header.typ)} is not JWT`);
  }

  const nowSeconds = (options.now ?? Date.now()) / 1000;
  const { sub, iat, exp, nbf } = claims;
  if (typeof exp !== 'number' || !Number.isFinite(exp)) throw new TokenError('malformed', 'malformed token: no numeric exp claim');
  if (iat !== undefined && (typeof iat !== 'number' || !Number.isFinite(iat))) throw new TokenError('malformed', 'malformed token: iat is not a number');
  if (nbf !== undefined && (typeof nbf !== 'number' || !Number.isFinite(nbf))) throw new TokenError('malformed', 'malformed token: nbf is not a number');
  checkTokenTime(exp, typeof nbf === 'number' ? nbf : undefined, options);
  const userId = typeof sub === 'string' ? parseUserId(sub) : undefined;
  if (userId === undefined) throw new TokenError('subject', `token subject ${quoted(sub)} is not a user id`);
  const out: TokenClaims = { sub: sub as string, iat: typeof iat === 'number' ? iat : Math.floor(nowSeconds), exp };
  if (typeof nbf === 'number') out.nbf = nbf;
  return { userId, claims: out };
}

/** TokenError('expired' | 'not-yet-valid') unless the time is within [nbf, exp) give or take the leeway. */
function checkTokenTime(exp: number, nbf: number | undefined, options: VerifyOptions): void {
  const nowSeconds = (options.now ?? Date.now()) / 1000;
  const leeway = options.leewaySeconds ?? 0;
  if (nowSeconds >= exp + leeway) {
    throw new TokenError('expired', `token expired at ${new Date(exp * 1000).toISOString()}`);
  }
  if (nbf !== undefined && nowSeconds < nbf - leeway) {
    throw new TokenError('not-yet-valid', `token is not valid before ${new Date(nbf * 1000).toISOString()}`);
  }
}

/** Tokens already verified in this process at most (the least recently used go first). */
export const VERIFIED_TOKENS_KEPT = 10_000;

/**
 * verifyToken for a server's requests: a client sends the same token with every request, and the
 * HMAC and two JSON parses were ~6% of a feed read's CPU. A token that passed is remembered by its
 * whole text (signature included, so only that exact token is ever answered from here) and only its
 * times are checked again on later uses.
 */
export class TokenVerifier {
  private readonly verified = new Map<string, VerifiedToken>();

  constructor(
    private readonly secret: TokenSecret,
    private readonly kept = VERIFIED_TOKENS_KEPT,
  ) {
    checkTokenSecret(secret);
  }

  verify(token: string, options: VerifyOptions = {}): VerifiedToken {
    const known = this.verified.get(token);
    if (known) {
      try {
        checkTokenTime(known.claims.exp, known.claims.nbf, options);
      } catch (err) {
        this.verified.delete(token);
        throw err;
      }
      // Most recently used last: the tokens of busy clients stay.
      this.verified.delete(token);
      this.verified.set(token, known);
      return known;
    }
    const fresh = verifyToken(token, this.secret, options);
    if (this.verified.size >= this.kept) {
      const oldest = this.verified.keys().next();
      if (!oldest.done) this.verified.delete(oldest.value);
    }
    this.verified.set(token, fresh);
    return fresh;
  }
}

/** The token of an `Authorization: Bearer <token>` header, or TokenError('missing' | 'malformed'). */
export function bearerToken(authorization: string | undefined): string {
  if (authorization === undefined || authorization.trim() === '') {
    throw new TokenError('missing', 'missing bearer token (send "Authorization: Bearer <token>")');
  }
  const match = /^Bearer +([^ ]+) *$/i.exec(authorization);
  if (!match) throw new TokenError('malformed', 'the Authorization header is not "Bearer <token>"');
  return match[1] as string;
}
