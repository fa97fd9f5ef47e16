import { v7, validate } from 'uuid'

/** Time-ordered UUIDs (v7): new rows land at the end of their indexes. */
export const newId = (): string => v7()

/** Any UUID, as the API's ids are written. */
export const isUuid = (value: unknown): value is string => typeof value === 'string' && validate(value)
