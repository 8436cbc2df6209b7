// feedlab token USER: mint a bearer token for the reference server (load tests, curl).
import { DEFAULT_TOKEN_TTL_SECONDS, parseUserId, signToken, TokenConfigError, tokenSecretFromEnv, checkTokenSecret } from '../../server/auth/token.js';
import { InputError } from '../../sim/errors.js';
import type { Values } from '../spec/options.js';
import type { TOKEN_OPTIONS } from '../spec/service.js';
import { EXIT_OK } from '../errors.js';

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };
const MAX_TTL_SECONDS = 365 * 86_400;

/** Seconds in "90", "90s", "15m", "1h", "7d"; InputError otherwise. */
export function parseTtl(text: string): number {
  const match = /^([0-9]{1,9})([smhd]?)$/.exec(text.trim());
  const seconds = match ? Number(match[1]) * (UNIT_SECONDS[match[2] || 's'] as number) : NaN;
  if (!match || seconds <= 0) throw new InputError(`--ttl must be a positive duration like 90s, 15m, 1h or 7d, got "${text}"`);
  if (seconds > MAX_TTL_SECONDS) throw new InputError(`--ttl must be at most 365d, got "${text}"`);
  return seconds;
}

export async function run(values: Values<typeof TOKEN_OPTIONS>, positionals: string[]): Promise<number> {
  const raw = positionals[0] as string;
  const userId = parseUserId(raw);
  if (userId === undefined) throw new InputError(`token: USER "${raw.slice(0, 40)}" is not a user id (a non-negative integer like 42)`);
  const ttlSeconds = values.ttl === undefined ? DEFAULT_TOKEN_TTL_SECONDS : parseTtl(values.ttl);

  let secret: string;
  try {
    if (values.secret !== undefined) {
      checkTokenSecret(values.secret, '--secret');
      secret = values.secret;
    } else {
      secret = tokenSecretFromEnv();
    }
  } catch (err) {
    if (err instanceof TokenConfigError) throw new InputError(`token: ${err.message}${values.secret === undefined ? ' (or pass --secret)' : ''}`);
    throw err;
  }

  const now = Date.now();
  const token = signToken(userId, secret, { ttlSeconds, now });
  if (values.json) {
    const expiresAt = new Date((Math.floor(now / 1000) + ttlSeconds) * 1000).toISOString();
    process.stdout.write(JSON.stringify({ schema: 'feedlab.token/1', token, userId, expiresAt }) + '\n');
  } else {
    process.stdout.write(token + '\n');
  }
  return EXIT_OK;
}
