import ipaddr from 'ipaddr.js'

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
 * Host names are resolved and checked again at every delivery.
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
