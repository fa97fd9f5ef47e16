import { readFileSync } from 'node:fs'
import { isIP, type LookupFunction } from 'node:net'
import { performance } from 'node:perf_hooks'
import { createSecureContext, rootCertificates } from 'node:tls'
import { Agent, buildConnector, request, type Dispatcher } from 'undici'
import { isAllowedAddress, parseCidrs, systemResolver, type ParsedCidr, type Resolver } from './callback-url.js'

export type { Resolver } from './callback-url.js'

export interface DeliveryAgentOptions {
  /** CIDRs delivery may reach although they are not public unicast (WEBHOOK_ALLOWED_PRIVATE_CIDRS). */
  allowedPrivateCidrs: readonly string[]
  /** Extra CA certificate (PEM file) trusted by this agent only (WEBHOOK_CA_FILE). */
  caFile?: string | undefined
  /** Replaces the system resolver (tests); the answers are checked exactly like real DNS answers. */
  lookup?: Resolver | undefined
  /** Connect timeout in milliseconds; CONNECT_TIMEOUT_MS by default. */
  connectTimeoutMs?: number | undefined
}

/** The delivery refused to connect because the host is, or resolves to, a non-public address. */
export class BlockedAddressError extends Error {
  override readonly name = 'BlockedAddressError'
  readonly code = 'WEBHOOK_BLOCKED_ADDRESS'
  readonly hostname: string
  readonly addresses: readonly string[]

  constructor(
    hostname: string,
    addresses: readonly string[],
  ) {
    super(
      `webhook delivery to ${hostname} refused: ${addresses.length === 0 ? 'it resolves to no address' : `it resolves to a loopback, private, link-local or otherwise non-public address (${addresses.join(', ')})`}`,
    )
    this.hostname = hostname
    this.addresses = addresses
  }
}

/**
 * A `net`/`tls` lookup that resolves every address of the host, refuses the connection if any of
 * them is not allowed, and hands back only the checked addresses, so the socket connects to
 * exactly what was checked (no second resolution that a rebinding DNS server could answer
 * differently).
 */
export function checkedLookup(allowed: readonly ParsedCidr[], resolve: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (all) => {
        const blocked = all.filter((a) => !isAllowedAddress(a.address, allowed)).map((a) => a.address)
        if (all.length === 0 || blocked.length > 0) {
          callback(new BlockedAddressError(hostname, all.length === 0 ? [] : blocked), '')
          return
        }
        const family = options.family === 4 || options.family === 6 ? options.family : undefined
        const addresses = family === undefined ? all : all.filter((a) => a.family === family)
        const first = addresses[0]
        if (first === undefined) {
          const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname} (no IPv${family} address)`)
          err.code = 'ENOTFOUND'
          callback(err, '')
          return
        }
        if (options.all) callback(null, addresses.map((a) => ({ address: a.address, family: a.family })))
        else callback(null, first.address, first.family)
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    )
  }
}

/**
 * The undici Agent every webhook delivery goes through, in tests and in production alike. Host
 * names are checked by `checkedLookup`; IP literals (for which Node never calls `lookup`) are
 * checked by the wrapping connector before any socket is opened.
 */
export function createDeliveryAgent(options: DeliveryAgentOptions): Agent {
  const allowed = parseCidrs(options.allowedPrivateCidrs)
  const ca = options.caFile === undefined ? undefined : [...rootCertificates, readFileSync(options.caFile, 'utf8')]
  const base = buildConnector({
    lookup: checkedLookup(allowed, options.lookup),
    timeout: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    // One context for every connection: given `ca` instead, each TLS connection would build a
    // context of its own holding every root certificate (about 1 MiB of native memory each).
    secureContext: createSecureContext(ca === undefined ? {} : { ca }),
  })
  const connect: buildConnector.connector = (opts, callback) => {
    const host = opts.hostname.replace(/^\[(.*)\]$/, '$1')
    if (isIP(host) !== 0 && !isAllowedAddress(host, allowed)) {
      callback(new BlockedAddressError(host, [host]), null)
      return
    }
    base(opts, callback)
  }
  return new Agent({ connect })
}

export const WEBHOOK_TIMEOUT_MS = 10_000
/**
 * A receiver that does not even accept the connection within this (TCP and TLS) is down or
 * unreachable: failing fast keeps its attempts from holding the dispatcher's slots for the whole
 * response timeout.
 */
export const CONNECT_TIMEOUT_MS = 3_000
export const WEBHOOK_RESPONSE_LIMIT = 64 * 1024

export interface WebhookResponse {
  status: number
  /** The first 64 KiB of the response body, decoded as UTF-8. */
  body: string
  /** Whether the body was longer than what was read. */
  truncated: boolean
  /** The receiver's `Retry-After`, if it sent one. */
  retryAfter: string | undefined
  durationMs: number
}

/**
 * POSTs one delivery. Redirects are never followed (the agent has no redirect interceptor), so a
 * 3xx comes back as it is. The whole exchange must finish within the timeout; at most 64 KiB of
 * the response is read, the rest is discarded with the connection.
 */
export async function postWebhook(
  agent: Agent,
  url: string,
  body: string,
  headers: Record<string, string>,
  options: { timeoutMs?: number } = {},
): Promise<WebhookResponse> {
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS
  const started = performance.now()
  const response = await request(url, {
    dispatcher: agent,
    method: 'POST',
    body,
    headers,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    signal: AbortSignal.timeout(timeoutMs),
  })
  const { text, truncated } = await readCapped(response.body, WEBHOOK_RESPONSE_LIMIT)
  return {
    status: response.statusCode,
    body: text,
    truncated,
    retryAfter: [response.headers['retry-after']].flat()[0],
    durationMs: Math.round(performance.now() - started),
  }
}

/**
 * Reads at most `limit` bytes of a response body, decoded as UTF-8; a longer body is cut there and
 * the rest discarded with the connection.
 */
export async function readCapped(body: Dispatcher.ResponseData['body'], limit: number): Promise<{ text: string; truncated: boolean }> {
  const chunks: Buffer[] = []
  let size = 0
  let truncated = false
  for await (const chunk of body as AsyncIterable<Buffer>) {
    const room = limit - size
    if (chunk.length > room) {
      chunks.push(chunk.subarray(0, room))
      size += room
      truncated = true
      break
    }
    chunks.push(chunk)
    size += chunk.length
  }
  if (truncated) body.destroy()
  return { text: new TextDecoder('utf-8').decode(Buffer.concat(chunks)), truncated }
}
