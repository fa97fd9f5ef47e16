/**
 * Errors that carry their HTTP status. The HTTP error handler turns them into the spec's
 * `{statusCode, message, error}`; anything else becomes a 500 with no detail.
 */
export class AppError extends Error {
  readonly statusCode: number

  constructor(
    statusCode: number,
    message: string,
  ) {
    super(message)
    this.statusCode = statusCode
    this.name = new.target.name
  }
}

export class BadRequestError extends AppError {
  constructor(message: string) {
    super(400, message)
  }
}

export class UnauthorizedError extends AppError {
  constructor(message: string) {
    super(401, message)
  }
}

export class ForbiddenError extends AppError {
  constructor(message: string) {
    super(403, message)
  }
}

export class NotFoundError extends AppError {
  constructor(message: string) {
    super(404, message)
  }
}

/** The request is valid but the resource's current state does not allow it. */
export class ConflictError extends AppError {
  constructor(message: string) {
    super(409, message)
  }
}

/** A condition the client set (If-Match) does not hold. */
export class PreconditionFailedError extends AppError {
  constructor(message: string) {
    super(412, message)
  }
}
