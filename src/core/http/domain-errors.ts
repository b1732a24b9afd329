/**
 * Typed errors that domain code throws; the one exception filter maps them to HTTP.
 * Messages are for developers: they name the field or the rule, never stored personal data.
 */
export abstract class DomainError extends Error {
  abstract readonly status: number;
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationError extends DomainError {
  readonly status = 400;
}
export class UnauthorizedError extends DomainError {
  readonly status = 401;
}
export class ForbiddenError extends DomainError {
  readonly status = 403;
}
export class NotFoundError extends DomainError {
  readonly status = 404;
}
export class ConflictError extends DomainError {
  readonly status = 409;
}
/** A conditional request (If-Match) whose condition no longer holds. */
export class PreconditionFailedError extends DomainError {
  readonly status = 412;
}
export class TooManyRequestsError extends DomainError {
  readonly status = 429;
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}
/** A body in a format the route does not read (only JSON is read). */
export class UnsupportedMediaTypeError extends DomainError {
  readonly status = 415;
}
/** A body larger than the route accepts (an upload over its size limit). */
export class PayloadTooLargeError extends DomainError {
  readonly status = 413;
}
