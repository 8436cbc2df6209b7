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

/** An Idempotency-Key sent again with another request body: 422 with the message. */
export class IdempotencyKeyReuseError extends Error {
  readonly status = 422;
  constructor(message: string) {
    super(message);
    this.name = 'IdempotencyKeyReuseError';
  }
}

/**
 * Postgres was lost after a post's statement went out, and the request carried no Idempotency-Key:
 * the post may or may not exist, and a retry could post it twice. A 500 naming the post id it would
 * have, never a 503 "retry shortly".
 */
export class OutcomeUnknownError extends Error {
  constructor(readonly postId: string) {
    super(`Postgres stopped answering while post ${postId} was being committed: it may or may not exist, and a retry could post it twice (send an Idempotency-Key header to make a retry safe)`);
    this.name = 'OutcomeUnknownError';
  }
}
