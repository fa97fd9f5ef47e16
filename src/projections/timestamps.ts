/** Timestamps leave the read models as ISO 8601 UTC with milliseconds. */
export const toIso = (value: Date | string): string => new Date(value).toISOString()
