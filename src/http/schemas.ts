import { Type, type TSchema } from '@sinclair/typebox'

/** The spec's error body, for every error status. */
export const ErrorResponse = Type.Object(
  {
    statusCode: Type.Integer({ examples: [400] }),
    message: Type.String({ examples: ['body/name must NOT have fewer than 1 characters'] }),
    error: Type.String({ examples: ['Bad Request'] }),
  },
  { $id: 'ErrorResponse', title: 'Error' },
)

export const errorResponses = (...statuses: number[]) => Object.fromEntries(statuses.map((status) => [status, ErrorResponse]))

export const Uuid = Type.String({ format: 'uuid', examples: ['0190a0b0-0000-7000-8000-0000000000f1'] })
export const Timestamp = Type.String({ format: 'date-time', examples: ['2026-11-22T10:15:30.123Z'] })

export const EmptyBody = Type.Unsafe<undefined>({ type: 'null', description: 'No body' })

/** The spec's page envelope around `item`. */
export const Page = <T extends TSchema>(item: T) =>
  Type.Object({
    content: Type.Array(item),
    totalElements: Type.Integer(),
    totalPages: Type.Integer(),
    number: Type.Integer({ description: 'zero-based page index' }),
    size: Type.Integer(),
    first: Type.Boolean(),
    last: Type.Boolean(),
  })

/**
 * The largest number a query or path takes for a page or a version: Postgres's `integer`. Without
 * it a huge one reaches SQL (`offset` = page × size out of range, a version over the column) and fails.
 */
export const MAX_INT32 = 2_147_483_647

/** `page` and `size` with a list's own default and maximum for `size`. */
export const pageQuery = (size: { default: number; maximum: number }) => ({
  page: Type.Integer({ minimum: 0, maximum: MAX_INT32, default: 0, description: 'zero-based page index' }),
  size: Type.Integer({ minimum: 1, maximum: size.maximum, default: size.default }),
})

export function toPage<T>(content: T[], totalElements: number, page: number, size: number) {
  const totalPages = Math.ceil(totalElements / size)
  return { content, totalElements, totalPages, number: page, size, first: page === 0, last: page >= totalPages - 1 }
}

/** A string restricted to `values`; a wrong value is answered 400 naming the allowed ones. */
export const OneOf = <const T extends readonly string[]>(values: T, options: { default?: T[number]; description?: string } = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })

export const Direction = OneOf(['ASC', 'DESC'] as const, { default: 'ASC' })

export const DateRangeParam = OneOf(['today', 'last7days', 'last15days', 'last30days'] as const, {
  description: "created within: today, or today and the previous 6, 14 or 29 days, in the workspace's time zone when one workspace is in scope, else UTC",
})

/**
 * The description of a body the request may leave out (its route's preValidation takes none as
 * `{}`): the OpenAPI document marks such a body as not required.
 */
export const OPTIONAL_BODY = 'optional: the request may have no body'
