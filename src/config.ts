import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import ipaddr from 'ipaddr.js'

export type EventStoreKind = 'postgres' | 'esdb'
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

export interface Config {
  port: number
  host: string
  /** Embedded PGlite data (used when no DATABASE_URL) and generated keys. */
  dataDir: string
  databaseUrl: string | undefined
  eventStore: EventStoreKind
  eventstoreConnectionString: string | undefined
  logLevel: LogLevel
  /** CIDRs that webhook delivery may reach although they are private (tests, on-premises receivers). */
  webhookAllowedPrivateCidrs: string[]
  /** Extra CA certificate (PEM file) trusted for webhook delivery only. */
  webhookCaFile: string | undefined
  /** Delay before each delivery attempt, in seconds. */
  webhookRetrySchedule: number[]
  /** Webhook deliveries in flight at once (each holds a connection and its request until recorded). */
  webhookMaxInFlight: number
  /** How long a claimed delivery stays with the process that claimed it; must outlast an attempt (10 s). */
  webhookLeaseSeconds: number
  /** Webhook deliveries in flight at once to one destination (a callback URL's origin within a workspace), per process. */
  webhookMaxInFlightPerDestination: number
  /** Failed attempts in a row that make a destination failing (its deliveries then wait behind one probe at a time). */
  webhookFailuresBeforeFailing: number
  /** Seconds before each probe of a failing destination; the last one repeats. */
  webhookProbeSchedule: number[]
  /** Postgres connections for requests in a process with the api role (src/connection-budget.ts). */
  apiPoolSize: number
  /** Postgres connections for turns in a process with the engine role. */
  enginePoolSize: number
  /** Postgres connections applying read models in a process with the projector role; undefined: one per read model and one more. */
  projectorPoolSize: number | undefined
  /** Postgres connections for claims and attempt records in a process with the dispatcher role. */
  dispatcherPoolSize: number
  sessionTtlSeconds: number
  /**
   * Partitions of the sessions among engine processes (a lease and a checkpoint each). Recorded in
   * the database: another number sends sessions to other partitions, whose checkpoints say nothing
   * of them, so an engine with another count refuses to start (`flowd engine repartition` changes it).
   */
  enginePartitions: number
  /** Seconds between the comments that keep an idle session stream (`GET /v1/sessions/{id}/stream`) open through proxies. */
  streamHeartbeatSeconds: number
  /** Session streams one workspace may hold open on one process at once; more answer 429. */
  streamsPerWorkspace: number
  /** Where the embedded editor is served; undefined: the service's own address plus /editor. */
  editorUrl: string | undefined
  /** Serve the embed demo host page at /embed-demo (on by default in the embedded setup only). */
  embedDemo: boolean
  /** Signs the editor's access tokens (at least 32 bytes); undefined: a secret generated once in `dataDir`. */
  editorTokenSecret: string | undefined
  /** Wraps the data keys of workspace secrets: base64 of 32 bytes; undefined: a key generated once in `dataDir`. */
  secretsKey: string | undefined
  /** The master key before a rotation, still unwrapping the data keys `flowd secrets rewrap` has not re-wrapped yet. */
  secretsKeyPrevious: string | undefined
  /** CSP `frame-ancestors` sources of the editor page: who may frame it (`*`: any site). */
  editorFrameAncestors: string[]
  /** Requests a minute to `/v1` per API key, per editor client, and per address for failed authentication; 0: no limit. */
  rateLimitPerMinute: number
  /** Requests a minute to `/auth/*` per client address; 0: no limit. */
  authRateLimitPerMinute: number
  /**
   * Proxies in front of the service, by address, CIDR or range name: when one of them is the TCP peer,
   * `X-Forwarded-For` gives the client address (rate limits by address, logs). False: the peer is the client.
   */
  trustProxy: false | string[]
  /** Serve Prometheus metrics at /metrics (METRICS_ENABLED, on by default). */
  metricsEnabled: boolean
  /** When set, /metrics answers only `Authorization: Bearer <this>`. */
  metricsToken: string | undefined
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError'
  readonly problems: string[]

  constructor(problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`)
    this.problems = problems
  }
}

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
function esdbConnectionStringProblem(connectionString: string, parse: Parse = loadParser()): string | undefined {
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

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
/**
 * 16: engine processes share them evenly up to 16 (and at 2, 4 or 8), and a process that joins or
 * dies moves a sixteenth of the sessions at a time. More cost a lease and a checkpoint row each,
 * not reads: a process follows the log once for all the partitions it holds.
 */
export const DEFAULT_ENGINE_PARTITIONS = 16
export const MAX_ENGINE_PARTITIONS = 256
export const DEFAULT_RETRY_SCHEDULE = [0, 5, 300, 1800, 7200, 18000, 36000, 36000]
export const DEFAULT_PROBE_SCHEDULE = [5, 15, 30, 60, 120, 300]
export const DEFAULT_FAILURES_BEFORE_FAILING = 5
export const DEFAULT_MAX_IN_FLIGHT_PER_DESTINATION = 16

type Env = Record<string, string | undefined>

/** A CSP ancestor source (CSP 3, `frame-ancestors`): 'self', 'none', a scheme (`https:`) or a host with optional scheme, port and path. */
const FRAME_ANCESTOR_SOURCE = /^(?:'self'|'none'|[a-z][a-z0-9+.-]*:|(?:[a-z][a-z0-9+.-]*:\/\/)?(?:\*|(?:\*\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*)(?::(?:\d{1,5}|\*))?(?:\/[\w\-.~!$&()*+=:@%/]*)?)$/i

/** Reads the configuration from environment variables; every bad value is reported, one line each. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = []
  const value = (name: string) => {
    const raw = env[name]?.trim()
    return raw === '' ? undefined : raw
  }
  function integer(name: string, fallback: number, min: number, max: number): number
  function integer(name: string, fallback: undefined, min: number, max: number): number | undefined
  function integer(name: string, fallback: number | undefined, min: number, max: number): number | undefined {
    const raw = value(name)
    if (raw === undefined) return fallback
    const n = Number(raw)
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name}=${raw}: expected a whole number from ${min} to ${max}`)
      return fallback
    }
    return n
  }
  const url = (name: string, protocols: string[]): string | undefined => {
    const raw = value(name)
    if (raw === undefined) return undefined
    try {
      const parsed = new URL(raw)
      if (!protocols.includes(parsed.protocol)) problems.push(`${name}: expected a ${protocols.join(' or ')} URL, got ${parsed.protocol}`)
    } catch {
      problems.push(`${name}: not a valid URL`)
    }
    return raw
  }
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const raw = value(name)
    if (raw === undefined) return fallback
    if (!allowed.includes(raw as T)) {
      problems.push(`${name}=${raw}: expected one of ${allowed.join(', ')}`)
      return fallback
    }
    return raw as T
  }

  const cidrs = (value('WEBHOOK_ALLOWED_PRIVATE_CIDRS') ?? '').split(',').map((c) => c.trim()).filter(Boolean)
  for (const cidr of cidrs) {
    try {
      ipaddr.parseCIDR(cidr)
    } catch {
      problems.push(`WEBHOOK_ALLOWED_PRIVATE_CIDRS: ${cidr} is not a CIDR such as 127.0.0.1/32 or ::1/128`)
    }
  }

  const trustProxy = trustedProxies(value('TRUST_PROXY'), problems)

  const webhookCaFile = value('WEBHOOK_CA_FILE')
  if (webhookCaFile !== undefined && !existsSync(webhookCaFile)) problems.push(`WEBHOOK_CA_FILE: no file at ${webhookCaFile}`)

  const secondsList = (name: string, fallback: number[]): number[] => {
    const raw = value(name)
    if (raw === undefined) return fallback
    const entries = raw.split(',').map((s) => s.trim())
    const delays = entries.map(Number)
    if (entries.some((e) => e === '') || delays.some((d) => !Number.isFinite(d) || d < 0)) {
      problems.push(`${name}=${raw}: expected comma-separated seconds such as 0,5,300`)
      return fallback
    }
    return delays
  }
  const webhookRetrySchedule = secondsList('WEBHOOK_RETRY_SCHEDULE', DEFAULT_RETRY_SCHEDULE)
  const webhookProbeSchedule = secondsList('WEBHOOK_PROBE_SCHEDULE', DEFAULT_PROBE_SCHEDULE)

  const eventStore = oneOf('EVENT_STORE', ['postgres', 'esdb'] as const, 'postgres')
  const eventstoreConnectionString = value('EVENTSTORE_CONNECTION_STRING')
  const connectionStringProblem = eventstoreConnectionString === undefined ? undefined : esdbConnectionStringProblem(eventstoreConnectionString)
  if (connectionStringProblem) problems.push(`EVENTSTORE_CONNECTION_STRING: ${connectionStringProblem}`)
  if (eventStore === 'esdb' && !eventstoreConnectionString) problems.push('EVENTSTORE_CONNECTION_STRING: required when EVENT_STORE=esdb')
  const databaseUrl = url('DATABASE_URL', ['postgres:', 'postgresql:'])
  if (eventStore === 'esdb' && !databaseUrl) problems.push('DATABASE_URL: required when EVENT_STORE=esdb (the read models live in Postgres)')

  const editorTokenSecret = value('EDITOR_TOKEN_SECRET')
  if (editorTokenSecret !== undefined && Buffer.byteLength(editorTokenSecret, 'utf8') < 32) {
    // The secret itself is never echoed.
    problems.push(`EDITOR_TOKEN_SECRET: must be at least 32 bytes, got ${Buffer.byteLength(editorTokenSecret, 'utf8')} (e.g. openssl rand -base64 48)`)
  }

  const secretsKey = value('SECRETS_KEY')
  const secretsKeyPrevious = value('SECRETS_KEY_PREVIOUS')
  for (const [name, key] of [['SECRETS_KEY', secretsKey], ['SECRETS_KEY_PREVIOUS', secretsKeyPrevious]] as const) {
    // The key itself is never echoed.
    if (key !== undefined && !decodeSecretsKey(key)) problems.push(`${name}: must be the base64 of exactly 32 bytes (e.g. openssl rand -base64 32)`)
  }
  if (secretsKey !== undefined && secretsKey === secretsKeyPrevious) problems.push('SECRETS_KEY_PREVIOUS: the same key as SECRETS_KEY; it names the key before a rotation')

  const editorFrameAncestors = (value('EDITOR_FRAME_ANCESTORS') ?? '*').split(/[\s,]+/).filter(Boolean)
  const badAncestors = editorFrameAncestors.filter((source) => !FRAME_ANCESTOR_SOURCE.test(source))
  if (badAncestors.length) {
    problems.push(`EDITOR_FRAME_ANCESTORS: ${badAncestors.join(' ')} not a CSP source such as https://app.example.com, https://*.example.com, https: or 'self'`)
  } else if (editorFrameAncestors.includes("'none'") && editorFrameAncestors.length > 1) {
    problems.push("EDITOR_FRAME_ANCESTORS: 'none' cannot be combined with other sources")
  }

  const metricsToken = value('METRICS_TOKEN')
  if (metricsToken !== undefined && Buffer.byteLength(metricsToken, 'utf8') < 16) {
    // The token itself is never echoed.
    problems.push(`METRICS_TOKEN: must be at least 16 bytes, got ${Buffer.byteLength(metricsToken, 'utf8')} (e.g. openssl rand -hex 24)`)
  }

  const config: Config = {
    port: integer('PORT', 3000, 0, 65535),
    host: value('HOST') ?? '127.0.0.1',
    dataDir: resolve(value('DATA_DIR') ?? './.data'),
    databaseUrl,
    eventStore,
    eventstoreConnectionString,
    logLevel: oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    webhookAllowedPrivateCidrs: cidrs,
    webhookCaFile,
    webhookRetrySchedule,
    webhookMaxInFlight: integer('WEBHOOK_MAX_IN_FLIGHT', 128, 1, 1024),
    webhookLeaseSeconds: integer('WEBHOOK_LEASE_SECONDS', 2, 1, 3600),
    webhookMaxInFlightPerDestination: integer('WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION', DEFAULT_MAX_IN_FLIGHT_PER_DESTINATION, 1, 1024),
    webhookFailuresBeforeFailing: integer('WEBHOOK_FAILURES_BEFORE_FAILING', DEFAULT_FAILURES_BEFORE_FAILING, 1, 1000),
    webhookProbeSchedule,
    apiPoolSize: integer('API_POOL_SIZE', 10, 1, 1000),
    enginePoolSize: integer('ENGINE_POOL_SIZE', 10, 1, 1000),
    projectorPoolSize: integer('PROJECTOR_POOL_SIZE', undefined, 1, 1000),
    dispatcherPoolSize: integer('DISPATCHER_POOL_SIZE', 10, 1, 1000),
    sessionTtlSeconds: integer('SESSION_TTL_SECONDS', 1800, 1, 30 * 24 * 3600),
    enginePartitions: integer('ENGINE_PARTITIONS', DEFAULT_ENGINE_PARTITIONS, 1, MAX_ENGINE_PARTITIONS),
    streamHeartbeatSeconds: integer('STREAM_HEARTBEAT_SECONDS', 15, 1, 3600),
    streamsPerWorkspace: integer('STREAMS_PER_WORKSPACE', 1000, 1, 1_000_000),
    editorUrl: url('EDITOR_URL', ['http:', 'https:']),
    embedDemo: oneOf('EMBED_DEMO', ['true', 'false'] as const, databaseUrl ? 'false' : 'true') === 'true',
    editorTokenSecret,
    secretsKey,
    secretsKeyPrevious,
    editorFrameAncestors,
    rateLimitPerMinute: integer('RATE_LIMIT_PER_MINUTE', 1200, 0, 1_000_000),
    authRateLimitPerMinute: integer('AUTH_RATE_LIMIT_PER_MINUTE', 30, 0, 1_000_000),
    trustProxy,
    metricsEnabled: oneOf('METRICS_ENABLED', ['true', 'false'] as const, 'true') === 'true',
    metricsToken,
  }
  if (problems.length) throw new ConfigError(problems)
  return config
}

/** A secrets master key from its base64 (or base64url) text; undefined unless it is exactly 32 bytes. */
export function decodeSecretsKey(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return undefined
  const bytes = Buffer.from(text, 'base64')
  return bytes.length === 32 ? bytes : undefined
}

/** proxy-addr's names for address ranges, accepted in TRUST_PROXY beside addresses and CIDRs. */
const NAMED_PROXY_RANGES = ['loopback', 'linklocal', 'uniquelocal']

/**
 * TRUST_PROXY: the proxies' addresses, CIDRs or range names, comma-separated. Neither `true` nor a
 * hop count: either would let a caller that reaches the service directly choose the address its
 * requests are counted against (fastify ignores hop counts for that reason).
 */
function trustedProxies(raw: string | undefined, problems: string[]): string[] | false {
  if (raw === undefined || raw === 'false') return false
  const entries = raw.split(',').map((entry) => entry.trim()).filter(Boolean)
  // Four-part IPv4 only: ipaddr.js would also read `1` or `10.1` as addresses.
  const address = (entry: string) => ipaddr.IPv4.isValidFourPartDecimal(entry) || ipaddr.IPv6.isValid(entry)
  const cidr = (entry: string) => ipaddr.IPv4.isValidCIDRFourPartDecimal(entry) || ipaddr.IPv6.isValidCIDR(entry)
  const invalid = entries.filter((entry) => !(NAMED_PROXY_RANGES.includes(entry) || address(entry) || cidr(entry)))
  if (invalid.length) {
    problems.push(`TRUST_PROXY: ${invalid.join(', ')} not a proxy address, CIDR or ${NAMED_PROXY_RANGES.join('/')}, such as 10.0.0.5 or 10.0.0.0/8`)
    return false
  }
  return entries
}
