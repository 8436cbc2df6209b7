// feedlab token USER: mint a bearer token for the reference server (load tests, curl).
import { DEFAULT_TOKEN_TTL_SECONDS, parseUserId, signToken, TOKEN_SECRET_ENV, TokenConfigError, tokenSecretFromEnv, checkTokenSecret } from '../../server/auth/token.js';
import { InputError } from '../../sim/errors.js';
import { parseCommandArgs } from '../args.js';
import { EXIT_OK } from '../errors.js';

export const summary = 'mint an HS256 bearer token for a user of the reference server (load tests)';

const USAGE = 'feedlab token USER [--ttl 1h] [--secret S] [--json]';

const HELP = `${USAGE}

Prints a bearer token whose subject is USER (a user id), signed HS256 with the server's secret:
  curl -H "Authorization: Bearer $(feedlab token 42)" localhost:8080/v1/feed

  --ttl D       lifetime: seconds, or a number with s, m, h or d (default 1h, at most 365d)
  --secret S    the signing secret, at least 32 bytes (default $${TOKEN_SECRET_ENV}; prefer the
                variable: a flag shows in the process list)
  --json        print a feedlab.token/1 document: {schema, token, userId, expiresAt}
`;

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

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    'token',
    argv,
    { ttl: { type: 'string' }, secret: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(HELP);
    return EXIT_OK;
  }
  if (positionals.length === 0) throw new InputError(`token: USER is required (usage: ${USAGE})`);
  if (positionals.length > 1) throw new InputError(`token: unexpected argument "${positionals[1]}" (usage: ${USAGE})`);
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
