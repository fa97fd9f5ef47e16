import { createRequire } from 'node:module'

interface ParseError extends Error {
  /** Where the string stops making sense: [start, end) of the unexpected part. */
  location?: [number, number]
  /** What the client expected there. */
  expected?: string
}

type Parse = (connectionString: string) => unknown

// The client's own parser, so the service takes exactly the strings the client does. Loaded only
// when a connection string is given: the client pulls in gRPC.
const loadParser = (): Parse =>
  (createRequire(import.meta.url)('@eventstore/db-client/dist/Client/parseConnectionString.js') as { parseConnectionString: Parse }).parseConnectionString

/**
 * Why `@eventstore/db-client` would refuse `connectionString`, or undefined when it takes it. The
 * reason names the position and what was expected there, never the string itself (it may hold a password).
 */
export function esdbConnectionStringProblem(connectionString: string, parse: Parse = loadParser()): string | undefined {
  if (/^kurrentdb(\+discover)?:\/\//i.test(connectionString.trim())) {
    return 'kurrentdb:// is for @kurrent/kurrentdb-client; the EventStoreDB client used here (6.2) takes esdb:// or esdb+discover://'
  }
  try {
    parse(connectionString)
    return undefined
  } catch (error) {
    const { location, expected } = error as ParseError
    if (!location || !expected) return 'not a connection string the EventStoreDB client takes'
    return `not a connection string the EventStoreDB client takes: at position ${location[0]}, expected ${expected}`
  }
}
