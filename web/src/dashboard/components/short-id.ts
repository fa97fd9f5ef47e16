/** An id short enough for a table: its end, since ids made in the same moment share their beginning (UUIDv7). */
export const shortId = (id: string): string => id.slice(-8)
