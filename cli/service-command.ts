// Shared by `feedlab serve` and `feedlab worker` (their flags: cli/spec/service.ts): how the server's errors become the CLI's (bad configuration exits 2, an
// unusable service 3).
import { CacheConfigError, InfrastructureError as CacheUnavailableError } from '../server/cache/redis.js';
import { EventLogInputError, EventLogUnavailableError } from '../server/events/errors.js';
import { DatabaseUnavailableError, SchemaMismatchError, StoreInputError } from '../server/store/errors.js';
import { InfrastructureError, InputError } from './errors.js';

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
