// Errors of the Postgres store. The store imports nothing of the simulator, so it has its own
// error classes; the CLI maps them onto exit codes (bad input 2, unreachable service 3).

/** Postgres is unreachable, refuses us, or went away mid-operation. One line, password redacted. */
export class DatabaseUnavailableError extends Error {
  /**
   * The statement had been sent when Postgres was lost (a timeout or a reset while waiting for its
   * answer): a write may have committed. False when it failed before reaching Postgres.
   */
  sentBeforeLost = false;

  constructor(message: string, readonly code?: string) {
    super(message);
    this.name = 'DatabaseUnavailableError';
  }
}

/** The caller asked for something the store refuses: a bad URL or schema name, a graph it cannot load. */
export class StoreInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreInputError';
  }
}

/** The database's schema is not one this code can work with (an applied migration was changed). */
export class SchemaMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SchemaMismatchError';
  }
}
