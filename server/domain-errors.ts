// The request errors of the feed domain, shared by the Postgres repository (which finds them) and
// the HTTP layer (which answers them): one class each, whatever layer throws it.

/** The request is wrong in a way only the service can tell: 400 with the message. */
export class BadRequestError extends Error {
  readonly status = 400;
  constructor(message: string) {
    super(message);
    this.name = 'BadRequestError';
  }
}

/** The user may not do this to someone else's resource: 403 with the message. */
export class ForbiddenError extends Error {
  readonly status = 403;
  constructor(message: string) {
    super(message);
    this.name = 'ForbiddenError';
  }
}

/** An unknown user or post: 404 with the message. */
export class NotFoundError extends Error {
  readonly status = 404;
  constructor(message: string) {
    super(message);
    this.name = 'NotFoundError';
  }
}
