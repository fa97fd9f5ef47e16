/** Socket errors of a database that cannot be reached or went away. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH'])

/**
 * SQLSTATEs of a server that is shutting down (57P01 admin_shutdown, 57P02 crash_shutdown),
 * starting up or recovering (57P03 cannot_connect_now) or out of connections (53300); class 08
 * (connection exceptions) is matched apart.
 */
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300'])

// node-postgres reports a lost or never-made connection with these messages and no code.
const DRIVER_MESSAGES = [/^Connection terminated/, /connection error and is not queryable/, /^timeout exceeded when trying to connect/]

/**
 * Whether `error` says the database is unreachable for now (down, restarting, recovering), rather
 * than that the request or the data is wrong: a retry later may well succeed.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current = error
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true
    // Several addresses of one host, each refused.
    if (current instanceof AggregateError && current.errors.some(isDatabaseUnavailable)) return true
    const message = current instanceof Error ? current.message : ''
    if (DRIVER_MESSAGES.some((pattern) => pattern.test(message))) return true
    current = (current as { cause?: unknown }).cause
  }
  return false
}
