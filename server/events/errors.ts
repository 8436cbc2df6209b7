// Errors of the event log. The server imports nothing of the simulator (code flows cli -> server
// -> core), so, like server/store/errors.ts, the event log has its own error classes; the CLI maps
// them onto exit codes (bad input or configuration 2, an unreachable service 3).

/** The log's service (Redis, Kafka) is unreachable, refuses us, or went away mid-operation. One line,
 * any password redacted. */
export class EventLogUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EventLogUnavailableError';
  }
}

/** A bad argument or configuration: an invalid event, partition count, key prefix, group name, or
 * a partition count that disagrees with the one the log was created with. */
export class EventLogInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EventLogInputError';
  }
}

/** An entry in the log that does not decode to a post event. It is dead-lettered, never retried. */
export class MalformedEventError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedEventError';
  }
}
