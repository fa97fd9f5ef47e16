import { existsSync } from 'node:fs'
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
  sessionTtlSeconds: number
  /** Where the embedded editor is served; undefined: the service's own address plus /editor. */
  editorUrl: string | undefined
  /** Serve the embed demo host page at /embed-demo (on by default in the embedded setup only). */
  embedDemo: boolean
  /** Signs the editor's access tokens (at least 32 bytes); undefined: a secret generated once in `dataDir`. */
  editorTokenSecret: string | undefined
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError'
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`)
  }
}

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
export const DEFAULT_RETRY_SCHEDULE = [0, 5, 300, 1800, 7200, 18000, 36000, 36000]

type Env = Record<string, string | undefined>

/** Reads the configuration from environment variables; every bad value is reported, one line each. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = []
  const value = (name: string) => {
    const raw = env[name]?.trim()
    return raw === '' ? undefined : raw
  }
  const integer = (name: string, fallback: number, min: number, max: number): number => {
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

  const webhookCaFile = value('WEBHOOK_CA_FILE')
  if (webhookCaFile !== undefined && !existsSync(webhookCaFile)) problems.push(`WEBHOOK_CA_FILE: no file at ${webhookCaFile}`)

  let webhookRetrySchedule = DEFAULT_RETRY_SCHEDULE
  const schedule = value('WEBHOOK_RETRY_SCHEDULE')
  if (schedule !== undefined) {
    const entries = schedule.split(',').map((s) => s.trim())
    const delays = entries.map(Number)
    if (entries.some((e) => e === '') || delays.some((d) => !Number.isFinite(d) || d < 0)) {
      problems.push(`WEBHOOK_RETRY_SCHEDULE=${schedule}: expected comma-separated seconds such as 0,5,300`)
    } else {
      webhookRetrySchedule = delays
    }
  }

  const eventStore = oneOf('EVENT_STORE', ['postgres', 'esdb'] as const, 'postgres')
  const eventstoreConnectionString = url('EVENTSTORE_CONNECTION_STRING', ['esdb:', 'esdb+discover:', 'kurrentdb:', 'kurrentdb+discover:'])
  if (eventStore === 'esdb' && !eventstoreConnectionString) problems.push('EVENTSTORE_CONNECTION_STRING: required when EVENT_STORE=esdb')
  const databaseUrl = url('DATABASE_URL', ['postgres:', 'postgresql:'])
  if (eventStore === 'esdb' && !databaseUrl) problems.push('DATABASE_URL: required when EVENT_STORE=esdb (the read models live in Postgres)')

  const editorTokenSecret = value('EDITOR_TOKEN_SECRET')
  if (editorTokenSecret !== undefined && Buffer.byteLength(editorTokenSecret, 'utf8') < 32) {
    // The secret itself is never echoed.
    problems.push(`EDITOR_TOKEN_SECRET: must be at least 32 bytes, got ${Buffer.byteLength(editorTokenSecret, 'utf8')} (e.g. openssl rand -base64 48)`)
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
    sessionTtlSeconds: integer('SESSION_TTL_SECONDS', 1800, 1, 30 * 24 * 3600),
    editorUrl: url('EDITOR_URL', ['http:', 'https:']),
    embedDemo: oneOf('EMBED_DEMO', ['true', 'false'] as const, databaseUrl ? 'false' : 'true') === 'true',
    editorTokenSecret,
  }
  if (problems.length) throw new ConfigError(problems)
  return config
}
