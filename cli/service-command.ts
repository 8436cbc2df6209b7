// Shared by `feedlab serve` and `feedlab worker`: the flags that point both at the same services and
// timeline rules, and how the server's errors become the CLI's (bad configuration exits 2, an
// unusable service 3).
import { CacheConfigError, InfrastructureError as CacheUnavailableError } from '../server/cache/redis.js';
import { EventLogInputError, EventLogUnavailableError } from '../server/events/errors.js';
import { DatabaseUnavailableError, SchemaMismatchError, StoreInputError } from '../server/store/errors.js';
import { InfrastructureError, InputError } from './errors.js';

export const SERVICE_OPTIONS = {
  policy: { type: 'string' },
  threshold: { type: 'string' },
  'timeline-cap': { type: 'string' },
  'lease-days': { type: 'string' },
  'dormant-days': { type: 'string' },
  bus: { type: 'string' },
  'redis-url': { type: 'string' },
  'redis-cluster': { type: 'string' },
  'database-url': { type: 'string' },
  schema: { type: 'string' },
  'key-prefix': { type: 'string' },
  'stream-prefix': { type: 'string' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** `err` as an InputError or InfrastructureError prefixed with the command, or itself. */
export function serviceCliError(command: string, err: unknown, isConfigError: (err: unknown) => boolean): unknown {
  if (isConfigError(err) || err instanceof CacheConfigError || err instanceof EventLogInputError || err instanceof StoreInputError) {
    return new InputError(`${command}: ${(err as Error).message}`);
  }
  if (err instanceof CacheUnavailableError || err instanceof DatabaseUnavailableError || err instanceof EventLogUnavailableError || err instanceof SchemaMismatchError) {
    return new InfrastructureError(`${command}: ${err.message}`);
  }
  return err;
}
