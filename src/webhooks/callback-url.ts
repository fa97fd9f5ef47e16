import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/** Resolves a host name to every address it has (both families). Injected by tests. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses)))
  })

/** How long a key create or update waits for a host name to resolve. */
export const CALLBACK_RESOLVE_TIMEOUT_MS = 2_000

export type ParsedCidr = [ipaddr.IPv4 | ipaddr.IPv6, number]

export const parseCidrs = (cidrs: readonly string[]): ParsedCidr[] => cidrs.map((cidr) => ipaddr.parseCIDR(cidr))

/**
 * Whether webhook delivery may connect to this address: only public unicast, unless an operator
 * allowed a private range. `ipaddr.process` unmaps IPv4-mapped IPv6 first, so `::ffff:127.0.0.1`
 * counts as loopback.
 */
export function isAllowedAddress(address: string, allowed: readonly ParsedCidr[]): boolean {
  if (!ipaddr.isValid(address)) return false
  const ip = ipaddr.process(address)
  if (ip.range() === 'unicast') return true
  return allowed.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits))
}

/**
 * Why a callback URL is refused, or undefined when it is acceptable. `new URL` canonicalises
 * numeric host spellings (`2130706433`, `0x7f.1`, `127.1`) to dotted form before the check.
 * Host names are checked by `resolvedCallbackProblem`, and again at every delivery.
 */
export function callbackUrlProblem(raw: string, allowed: readonly ParsedCidr[]): string | undefined {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'callbackUrl is not a valid URL'
  }
  if (url.protocol !== 'https:') return 'callbackUrl must use https'
  if (url.username || url.password) return 'callbackUrl must not carry a user name or password'
  // `localhost.` (a fully qualified name) is localhost too.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase()
  if (host === 'localhost' || host.endsWith('.localhost')) return 'callbackUrl must not point to localhost'
  if (ipaddr.isValid(host) && !isAllowedAddress(host, allowed)) {
    return `callbackUrl must not point to a loopback, private, link-local or otherwise non-public address (${host})`
  }
  return undefined
}

/**
 * Why the host name of a callback URL that passed `callbackUrlProblem` is refused: some address it
 * resolves to now is not allowed. A name that does not resolve within the timeout, or at all, is
 * accepted: DNS may not be set up yet, and delivery resolves and checks the name again before
 * every connection anyway. IP literals need no resolution.
 */
export async function resolvedCallbackProblem(
  raw: string,
  allowed: readonly ParsedCidr[],
  resolve: Resolver = systemResolver,
  timeoutMs = CALLBACK_RESOLVE_TIMEOUT_MS,
): Promise<string | undefined> {
  const host = new URL(raw).hostname
  if (isIP(host.replace(/^\[(.*)\]$/, '$1')) !== 0) return undefined
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<undefined>((done) => {
    timer = setTimeout(() => done(undefined), timeoutMs)
  })
  const addresses = await Promise.race([resolve(host), timeout])
    .catch(() => undefined)
    .finally(() => clearTimeout(timer))
  const blocked = (addresses ?? []).filter((a) => !isAllowedAddress(a.address, allowed)).map((a) => a.address)
  if (blocked.length === 0) return undefined
  return `callbackUrl host ${host} resolves to a loopback, private, link-local or otherwise non-public address (${blocked.join(', ')})`
}
