import type { LookupAddress } from 'node:dns'
import { setImmediate as turn } from 'node:timers/promises'
import { mock } from 'node:test'
import t from 'tap'
import { CALLBACK_RESOLVE_TIMEOUT_MS, callbackUrlProblem, isAllowedAddress, parseCidrs, resolvedCallbackProblem } from '../../src/webhooks/callback-url.js'
import { fakeDns } from '../helpers/blocked-callbacks.js'

t.test('accepts public https callbacks', async (t) => {
  for (const url of ['https://hooks.example.com/flow', 'https://8.8.8.8/x', 'https://[2001:4860:4860::8888]/x', 'https://[::ffff:8.8.8.8]/x', 'https://example.com:8443/a?b=c']) {
    t.equal(callbackUrlProblem(url, []), undefined, url)
  }
})

t.test('refuses non-https, userinfo, localhost and every spelling of a non-public address', async (t) => {
  const refused: [string, RegExp][] = [
    ['http://hooks.example.com/x', /https/],
    ['ftp://example.com', /https/],
    ['not a url', /not a valid URL/],
    ['https://user:pw@example.com/', /user name or password/],
    ['https://localhost/x', /localhost/],
    ['https://api.localhost/x', /localhost/],
    ['https://localhost./x', /localhost/],
    ['https://127.0.0.1/x', /non-public/],
    ['https://2130706433/x', /non-public/],
    ['https://0x7f.1/x', /non-public/],
    ['https://127.1/x', /non-public/],
    ['https://[::1]/x', /non-public/],
    ['https://[::ffff:127.0.0.1]/x', /non-public/],
    ['https://10.1.2.3/x', /non-public/],
    ['https://192.168.0.10/x', /non-public/],
    ['https://172.16.5.4/x', /non-public/],
    ['https://169.254.169.254/latest/meta-data', /non-public/],
    ['https://0.0.0.0/x', /non-public/],
    ['https://[fd00::1]/x', /non-public/],
    ['https://[fe80::1]/x', /non-public/],
    ['https://100.64.0.1/x', /non-public/],
    ['https://[::127.0.0.1]/', /non-public address \(::7f00:1\)/],
    ['https://[::7f00:1]/x', /non-public/],
    ['https://[::10.0.0.1]/x', /non-public/],
    ['https://[::8.8.8.8]/x', /non-public/],
    ['https://[::ffff:10.0.0.1]/x', /non-public/],
    ['https://[64:ff9b::10.0.0.1]/x', /non-public/],
    ['https://[64:ff9b::8.8.8.8]/x', /non-public/],
    ['https://[64:ff9b:1::a00:1]/x', /non-public/],
    ['https://[2002:a00:1::1]/x', /non-public/],
    ['https://[2002:c0a8:101::1]/x', /non-public/],
    ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/x', /non-public/],
  ]
  for (const [url, reason] of refused) t.match(callbackUrlProblem(url, []), reason, url)
})

t.test('an allowed private range opens exactly that range', async (t) => {
  const allowed = parseCidrs(['127.0.0.1/32'])
  t.equal(callbackUrlProblem('https://127.0.0.1:9443/hook', allowed), undefined)
  t.match(callbackUrlProblem('https://127.0.0.2/hook', allowed), /non-public/)
  t.match(callbackUrlProblem('https://10.0.0.1/hook', allowed), /non-public/)
})

t.test('an IPv6 address that carries an IPv4 one is refused however the resolver spells it', async (t) => {
  // `dns.lookup` writes an IPv4-compatible address with a dotted tail, an IPv4-mapped one likewise.
  for (const address of ['::127.0.0.1', '::8.8.8.8', '::7f00:1', '::ffff:127.0.0.1', '64:ff9b::10.0.0.1', '2002:a00:1::1', 'fe80::1%eth0']) {
    t.equal(isAllowedAddress(address, []), false, address)
  }
  t.equal(isAllowedAddress('::ffff:8.8.8.8', []), true, 'IPv4-mapped is its IPv4 address: ::ffff:8.8.8.8')
  const dns = fakeDns({ 'compat.webhooks.test': ['::8.8.8.8'] })
  t.match(await resolvedCallbackProblem('https://compat.webhooks.test/x', [], dns), /resolves to .* non-public address \(::8\.8\.8\.8\)/)
})

t.test('a resolution is waited for 2 s, then given up and the name accepted', async (t) => {
  // Mocked timers: the clock moves only when the test says so.
  mock.timers.enable({ apis: ['setTimeout'] })
  t.teardown(() => mock.timers.reset())
  t.equal(CALLBACK_RESOLVE_TIMEOUT_MS, 2_000)

  let answer: (addresses: LookupAddress[]) => void = () => {}
  const late = resolvedCallbackProblem('https://slow.webhooks.test/x', [], () => new Promise((resolve) => (answer = resolve)))
  mock.timers.tick(CALLBACK_RESOLVE_TIMEOUT_MS - 1)
  answer([{ address: '10.0.0.7', family: 4 }])
  t.match(await late, /non-public address \(10\.0\.0\.7\)/, 'an answer 1 ms before the time is up counts')

  let settled = false
  const never = resolvedCallbackProblem('https://slow.webhooks.test/x', [], () => new Promise(() => {})).finally(() => (settled = true))
  mock.timers.tick(CALLBACK_RESOLVE_TIMEOUT_MS - 1)
  await turn()
  t.equal(settled, false, 'still waiting 1 ms before the time is up')
  mock.timers.tick(1)
  t.equal(await never, undefined, 'given up at 2 s: accepted')
})
