import type { LookupAddress } from 'node:dns'
import type { Resolver } from '../../src/webhooks/callback-url.js'

// The one table of callback URLs the service must refuse, shared by the agent test, the key API
// test and the delivery test, and the fake DNS that answers for the host names in it.

/** Public addresses the fake DNS hands out. No test may connect to them. */
export const PUBLIC_V4 = '93.184.215.14'
export const PUBLIC_V6 = '2606:4700:4700::1111'

/** Resolves to public addresses only: an acceptable callback host. Delivery must never be given it. */
export const PUBLIC_NAME = 'hooks.public.test'
export const PUBLIC_NAMES: Readonly<Record<string, readonly string[]>> = { [PUBLIC_NAME]: [PUBLIC_V4, PUBLIC_V6] }

/**
 * Names resolving to at least one non-public address. Each mixed answer also holds 127.0.0.1 (or
 * its IPv4-mapped form) before its other non-public addresses, so a delivery that let one through
 * would connect to the local receiver first and stop there, never trying the public addresses.
 */
export const BLOCKED_NAMES: Readonly<Record<string, readonly string[]>> = {
  // A public address comes first, so checking only the first answer would let these through.
  'mixed.webhooks.test': [PUBLIC_V4, '127.0.0.1'],
  'mixed-private.webhooks.test': [PUBLIC_V4, '127.0.0.1', '10.0.0.7'],
  'mixed-v6.webhooks.test': [PUBLIC_V6, '::ffff:127.0.0.1', 'fd00::7'],
  'mixed-family.webhooks.test': [PUBLIC_V4, PUBLIC_V6, '127.0.0.1', 'fe80::1'],
  'private.webhooks.test': ['127.0.0.1', '10.0.0.7'],
  'loopback-v6.webhooks.test': ['::1'],
  'metadata.webhooks.test': ['169.254.169.254'],
  '127.0.0.1.nip.io': ['127.0.0.1'],
  localhost: ['127.0.0.1', '::1'],
  'api.localhost': ['127.0.0.1', '::1'],
}

const PUBLIC = new Set([PUBLIC_V4, PUBLIC_V6])

/**
 * A resolver answering from fixed tables, like `dns.lookup(all)`: an absolute name (`x.`) is the
 * same as `x`, any other name fails with ENOTFOUND. With `publicLast`, public addresses are
 * answered after the others, so a delivery that skipped the check would land on the local
 * receiver (or fail locally), never on the internet.
 */
export function fakeDns(table: Readonly<Record<string, readonly string[]>>, options: { publicLast?: boolean } = {}): Resolver {
  return async (hostname) => {
    const name = hostname.replace(/\.$/, '')
    const addresses = Object.hasOwn(table, name) ? table[name] : undefined
    if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    const ordered = options.publicLast ? [...addresses].sort((a, b) => Number(PUBLIC.has(a)) - Number(PUBLIC.has(b))) : addresses
    return ordered.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }))
  }
}

export interface BlockedCallback {
  url: string
  /** What every refusal of it says: the rule it breaks, or the non-public address it reaches. */
  reason: RegExp
  /** Refused by `callbackUrlProblem` alone, without resolving anything. */
  withoutDns: boolean
  /** Refused by the delivery agent on its own (https and userinfo are the URL check's rules). */
  byAgent: boolean
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const nonPublic = (...addresses: string[]) => new RegExp(`non-public address \\(${escape(addresses.join(', '))}\\)`)

/**
 * Every form of callback the service must refuse at key creation, at key update and at delivery.
 * They carry the receiver's port where they reach 127.0.0.1, so a check that let one through
 * would be seen by the receiver.
 */
export function blockedCallbacks(port: number): BlockedCallback[] {
  const literal = (host: string, address: string, path = '/x'): BlockedCallback => ({ url: `https://${host}:${port}${path}`, reason: nonPublic(address), withoutDns: true, byAgent: true })
  const named = (host: string, ...blocked: string[]): BlockedCallback => ({ url: `https://${host}:${port}/x`, reason: nonPublic(...blocked), withoutDns: false, byAgent: true })
  const rule = (url: string, reason: RegExp, byAgent: boolean): BlockedCallback => ({ url, reason, withoutDns: true, byAgent })
  return [
    rule(`http://${PUBLIC_NAME}:${port}/x`, /callbackUrl must use https/, false),
    rule(`https://user:pw@${PUBLIC_NAME}/x`, /must not carry a user name or password/, false),
    rule(`https://user@${PUBLIC_NAME}/x`, /must not carry a user name or password/, false),
    rule(`https://:pw@${PUBLIC_NAME}/x`, /must not carry a user name or password/, false),
    rule(`https://localhost:${port}/x`, /must not point to localhost/, true),
    rule(`https://LOCALHOST:${port}/x`, /must not point to localhost/, true),
    rule(`https://localhost.:${port}/x`, /must not point to localhost/, true),
    rule(`https://api.localhost:${port}/x`, /must not point to localhost/, true),
    literal('127.0.0.1', '127.0.0.1'),
    literal('127.1', '127.0.0.1'),
    literal('2130706433', '127.0.0.1'),
    literal('0x7f.1', '127.0.0.1'),
    literal('0x7f000001', '127.0.0.1'),
    literal('017700000001', '127.0.0.1'),
    literal('0177.0.0.1', '127.0.0.1'),
    literal('127.000.000.001', '127.0.0.1'),
    literal('127.0.0.1.', '127.0.0.1'),
    literal('0', '0.0.0.0'),
    literal('0.0.0.0', '0.0.0.0'),
    literal('[::1]', '::1'),
    literal('[::]', '::'),
    literal('[::ffff:127.0.0.1]', '::ffff:7f00:1'),
    literal('[::ffff:7f00:1]', '::ffff:7f00:1'),
    literal('[::ffff:10.0.0.1]', '::ffff:a00:1'),
    literal('[0:0:0:0:0:ffff:a9fe:a9fe]', '::ffff:a9fe:a9fe'),
    literal('169.254.169.254', '169.254.169.254', '/latest/meta-data'),
    literal('100.64.0.1', '100.64.0.1'),
    literal('10.0.0.1', '10.0.0.1'),
    literal('10.255.255.254', '10.255.255.254'),
    literal('172.16.0.1', '172.16.0.1'),
    literal('172.31.255.1', '172.31.255.1'),
    literal('192.168.1.1', '192.168.1.1'),
    literal('224.0.0.1', '224.0.0.1'),
    literal('255.255.255.255', '255.255.255.255'),
    literal('240.0.0.1', '240.0.0.1'),
    literal('198.18.0.1', '198.18.0.1'),
    literal('192.0.2.1', '192.0.2.1'),
    literal('203.0.113.9', '203.0.113.9'),
    literal('[fd00::1]', 'fd00::1'),
    literal('[fe80::1]', 'fe80::1'),
    literal('[ff02::1]', 'ff02::1'),
    literal('[2001:db8::1]', '2001:db8::1'),
    literal('[::127.0.0.1]', '::7f00:1'),
    literal('[64:ff9b::7f00:1]', '64:ff9b::7f00:1'),
    literal('[2002:7f00:1::]', '2002:7f00:1::'),
    named('mixed.webhooks.test', '127.0.0.1'),
    named('mixed-private.webhooks.test', '127.0.0.1', '10.0.0.7'),
    named('mixed-v6.webhooks.test', '::ffff:127.0.0.1', 'fd00::7'),
    named('mixed-family.webhooks.test', '127.0.0.1', 'fe80::1'),
    named('private.webhooks.test', '127.0.0.1', '10.0.0.7'),
    named('private.webhooks.test.', '127.0.0.1', '10.0.0.7'),
    named('loopback-v6.webhooks.test', '::1'),
    named('metadata.webhooks.test', '169.254.169.254'),
    named('127.0.0.1.nip.io', '127.0.0.1'),
  ]
}
