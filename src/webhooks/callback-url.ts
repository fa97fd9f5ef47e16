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
 * IPv4-compatible IPv6 (`::/96`, deprecated by RFC 4291), which ipaddr.js calls unicast: a host
 * may still route `::127.0.0.1` to itself.
 */
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96')

/**
 * An IPv6 address as the URL parser writes it, in hexadecimal: ipaddr.js reads a dotted tail such
 * as `::127.0.0.1` (how `dns.lookup` writes IPv4-compatible addresses) as IPv4-mapped. Undefined
 * for what the URL parser refuses (a zone id).
 */
function canonicalIPv6(address: string): string | undefined {
  try {
    return new URL(`https://[${address}]/`).hostname.slice(1, -1)
  } catch {
    return undefined
  }
}

/**
 * Whether webhook delivery may connect to this address: only public unicast, unless an operator
 * allowed a private range. `ipaddr.process` unmaps IPv4-mapped IPv6 first, so `::ffff:127.0.0.1`
 * counts as loopback. Every other IPv6 form of an IPv4 address (IPv4-compatible, NAT64, 6to4,
 * Teredo) is refused whatever address it carries.
 */
export function isAllowedAddress(address: string, allowed: readonly ParsedCidr[]): boolean {
  const canonical = isIP(address) === 6 ? canonicalIPv6(address) : address
  if (canonical === undefined || !ipaddr.isValid(canonical)) return false
  const ip = ipaddr.process(canonical)
  if (ip.range() === 'unicast' && !(ip.kind() === 'ipv6' && ip.match(IPV4_COMPATIBLE))) return true
  return allowed.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits))
}

/**
 * Why a callback URL (or another URL the service calls, named `field` in the message) is refused,
 * or undefined when it is acceptable. `new URL` canonicalises
 * numeric host spellings (`2130706433`, `0x7f.1`, `127.1`) to dotted form before the check.
 * Host names are checked by `resolvedCallbackProblem`, and again at every delivery.
 */
export function callbackUrlProblem(raw: string, allowed: readonly ParsedCidr[], field = 'callbackUrl'): string | undefined {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return `${field} is not a valid URL`
  }
  if (url.protocol !== 'https:') return `${field} must use https`
  if (url.username || url.password) return `${field} must not carry a user name or password`
  // `localhost.` (a fully qualified name) is localhost too.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase()
  if (host === 'localhost' || host.endsWith('.localhost')) return `${field} must not point to localhost`
  if (ipaddr.isValid(host) && !isAllowedAddress(host, allowed)) {
    return `${field} must not point to a loopback, private, link-local or otherwise non-public address (${host})`
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
  field = 'callbackUrl',
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
  return `${field} host ${host} resolves to a loopback, private, link-local or otherwise non-public address (${blocked.join(', ')})`
}
