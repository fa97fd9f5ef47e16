import { randomBytes } from 'node:crypto'
import { createServer, type AddressInfo } from 'node:net'
import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { BlockedAddressError, checkedLookup, createDeliveryAgent, postWebhook, WEBHOOK_RESPONSE_LIMIT, type Resolver } from '../../src/webhooks/agent.js'
import { callbackUrlProblem, parseCidrs } from '../../src/webhooks/callback-url.js'
import { signWebhook, webhookHeaders } from '../../src/webhooks/signature.js'
import { BLOCKED_NAMES, blockedCallbacks, fakeDns } from '../helpers/blocked-callbacks.js'
import { startHttpsReceiver } from '../helpers/https-receiver.js'

const receiver = await startHttpsReceiver()
t.teardown(() => receiver.close())

const secret = `whsec_${randomBytes(24).toString('base64')}`
const LOOPBACK_ONLY = ['127.0.0.1/32']

const agentFor = (t: { teardown(fn: () => unknown): void }, options: Parameters<typeof createDeliveryAgent>[0]) => {
  const agent = createDeliveryAgent(options)
  t.teardown(() => agent.close())
  return agent
}

// One subtest around the rest, so that the hook clearing the receiver is this file's alone when
// its folder's files share a process.
t.test('the delivery agent', async (t) => {
  t.beforeEach(() => {
    receiver.requests.length = 0
    receiver.respondWith([])
  })

  t.test('delivers a signed POST with body and headers intact', async (t) => {
    const agent = agentFor(t, { allowedPrivateCidrs: LOOPBACK_ONLY, caFile: receiver.caFile })
    const body = JSON.stringify({ sessionId: 's-1', messageId: 'm-1', changes: [{ type: 'messages', text: 'héllo ✓' }] })
    const headers = webhookHeaders(secret, 'msg_2abc', Math.floor(Date.now() / 1000), body)
    receiver.respondWith([{ status: 202, body: 'accepted' }])

    const res = await postWebhook(agent, `${receiver.url}/hooks/flow?x=1`, body, headers)

    t.equal(res.status, 202)
    t.equal(res.body, 'accepted')
    t.equal(res.truncated, false)
    t.type(res.durationMs, 'number')
    t.equal(receiver.requests.length, 1)
    const got = receiver.requests[0]!
    t.equal(got.method, 'POST')
    t.equal(got.path, '/hooks/flow?x=1')
    t.equal(got.body, body)
    t.equal(got.headers['content-type'], 'application/json')
    t.equal(got.headers['user-agent'], 'flowd-webhooks/1')
    t.equal(got.headers['webhook-id'], 'msg_2abc')
    t.equal(got.headers['webhook-timestamp'], headers['webhook-timestamp'])
    t.match(got.headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/)

    const received = Object.fromEntries(Object.entries(got.headers).map(([k, v]) => [k, String(v)]))
    t.same(new Webhook(secret).verify(got.body, received), JSON.parse(body), 'standardwebhooks verifies the signature')
    t.throws(() => new Webhook(secret).verify(`${got.body} `, received), 'a changed body fails verification')
    t.throws(() => new Webhook(`whsec_${randomBytes(24).toString('base64')}`).verify(got.body, received), 'another secret fails verification')
  })

  t.test('without the allowed CIDR the receiver gets zero requests', async (t) => {
    const agent = agentFor(t, { allowedPrivateCidrs: [], caFile: receiver.caFile })
    await t.rejects(postWebhook(agent, `${receiver.url}/hook`, '{}', webhookHeaders(secret, 'a', 1, '{}')), BlockedAddressError)
    // The same through a host name that resolves to the receiver.
    const named = agentFor(t, { allowedPrivateCidrs: [], caFile: receiver.caFile, lookup: fakeDns({ [receiver.dnsName]: ['127.0.0.1'] }) })
    await t.rejects(postWebhook(named, `https://${receiver.dnsName}:${receiver.port}/hook`, '{}', {}), BlockedAddressError)
    t.equal(receiver.requests.length, 0)
  })

  t.test('a name resolving to a mix of allowed and refused addresses is blocked', async (t) => {
    // Public answers come last, so a check that missed the refused ones would reach the receiver,
    // not the internet; each name answers an allowed loopback address before a refused one, so
    // checking only the first answer would let it through.
    const lookup = fakeDns(BLOCKED_NAMES, { publicLast: true })
    const agent = agentFor(t, { allowedPrivateCidrs: LOOPBACK_ONLY, caFile: receiver.caFile, lookup })
    for (const name of ['private.webhooks.test', 'mixed-private.webhooks.test', 'mixed-v6.webhooks.test']) {
      const err = await postWebhook(agent, `https://${name}:${receiver.port}/hook`, '{}', {}).then(
        () => undefined,
        (e: unknown) => e,
      )
      t.type(err, BlockedAddressError, name)
      t.equal((err as BlockedAddressError).hostname, name)
    }
    t.match(
      await postWebhook(agent, `https://private.webhooks.test:${receiver.port}/hook`, '{}', {}).catch((e: Error) => e.message),
      /\(10\.0\.0\.7\)$/,
      'the error names the refused address only',
    )
    t.equal(receiver.requests.length, 0)
  })

  t.test('a name resolving only to an allowed address connects, pinned to the checked address', async (t) => {
    let calls = 0
    const table = fakeDns({ [receiver.dnsName]: ['127.0.0.1'] })
    const lookup: Resolver = (name) => {
      calls++
      return table(name)
    }
    const agent = agentFor(t, { allowedPrivateCidrs: LOOPBACK_ONLY, caFile: receiver.caFile, lookup })
    const res = await postWebhook(agent, `https://${receiver.dnsName}:${receiver.port}/named`, '{"a":1}', { 'content-type': 'application/json' })
    t.equal(res.status, 200)
    t.equal(receiver.requests.length, 1)
    t.equal(receiver.requests[0]!.path, '/named')
    t.equal(receiver.requests[0]!.headers.host, `${receiver.dnsName}:${receiver.port}`)
    t.ok(calls >= 1, 'the injected resolver was used, not the system one')
  })

  t.test('a name that rebinds between lookups is connected to only where its checked answer points', async (t) => {
    // A rebinding DNS server answers a public address to the check and a private one to the
    // connection. Here 127.0.0.1 (allowed) stands for the public answer, and 127.0.0.2 (refused,
    // with a listener of its own on the receiver's port) for the private one, so a socket that went
    // anywhere but the checked address would be seen, without any test reaching the internet.
    const trap = createServer((socket) => {
      trapped++
      socket.destroy()
    })
    let trapped = 0
    await new Promise<void>((resolve, reject) => trap.once('error', reject).listen(receiver.port, '127.0.0.2', resolve))
    t.teardown(() => new Promise((resolve) => trap.close(resolve)))
    t.equal((trap.address() as AddressInfo).port, receiver.port)

    const answers: readonly (readonly string[])[] = [['127.0.0.1'], ['127.0.0.2'], ['127.0.0.1', '127.0.0.2']]
    let calls = 0
    const lookup: Resolver = async () => (answers[calls++] ?? ['127.0.0.2']).map((address) => ({ address, family: 4 }))
    const agent = agentFor(t, { allowedPrivateCidrs: LOOPBACK_ONLY, caFile: receiver.caFile, lookup })
    const url = (path: string) => `https://${receiver.dnsName}:${receiver.port}${path}`
    // Each answer closes its connection, so every delivery opens a socket and resolves anew.
    receiver.respondWith([{ status: 200, body: 'first', headers: { connection: 'close' } }])

    const first = await postWebhook(agent, url('/first'), '{}', {})
    t.equal(first.status, 200, 'the first answer is checked and connected to')
    t.equal(calls, 1, 'one connection, one resolution: the answer checked is the answer used')
    await t.rejects(postWebhook(agent, url('/second'), '{}', {}), BlockedAddressError, 'the rebound answer is refused')
    t.equal(calls, 2)
    await t.rejects(postWebhook(agent, url('/third'), '{}', {}), BlockedAddressError, 'an answer holding both is refused')
    t.equal(calls, 3)
    t.same(receiver.requests.map((r) => r.path), ['/first'])
    t.equal(trapped, 0, 'no socket reached the rebound address')
  })

  t.test('the CA is trusted by this agent only', async (t) => {
    const agent = agentFor(t, { allowedPrivateCidrs: LOOPBACK_ONLY })
    await t.rejects(postWebhook(agent, `${receiver.url}/hook`, '{}', {}), /certificate/i)
    t.equal(receiver.requests.length, 0)
  })

  t.test('a 3xx is returned as it is, not followed', async (t) => {
    const agent = agentFor(t, { allowedPrivateCidrs: LOOPBACK_ONLY, caFile: receiver.caFile })
    receiver.respondWith([{ status: 302, headers: { location: `${receiver.url}/elsewhere` }, body: 'moved' }])
    const res = await postWebhook(agent, `${receiver.url}/hook`, '{}', {})
    t.equal(res.status, 302)
    t.equal(res.body, 'moved')
    t.same(receiver.requests.map((r) => r.path), ['/hook'])
  })

  t.test('a response body over 64 KiB is truncated', async (t) => {
    const agent = agentFor(t, { allowedPrivateCidrs: LOOPBACK_ONLY, caFile: receiver.caFile })
    receiver.respondWith([{ status: 500, body: 'x'.repeat(200 * 1024) }, { status: 200, body: 'y'.repeat(WEBHOOK_RESPONSE_LIMIT) }])
    const big = await postWebhook(agent, `${receiver.url}/big`, '{}', {})
    t.equal(big.status, 500)
    t.equal(big.body.length, WEBHOOK_RESPONSE_LIMIT)
    t.equal(big.truncated, true)
    t.match(big.body, /^x+$/)
    const exact = await postWebhook(agent, `${receiver.url}/exact`, '{}', {})
    t.equal(exact.body.length, WEBHOOK_RESPONSE_LIMIT)
    t.equal(exact.truncated, false, 'exactly 64 KiB is not truncated')
    t.equal(receiver.requests.length, 2, 'the agent still works after a truncated response')
  })

  t.test('every form of a non-public callback is refused', async (t) => {
    const table = blockedCallbacks(receiver.port)
    t.ok(table.length >= 25)
    const agent = agentFor(t, { allowedPrivateCidrs: [], caFile: receiver.caFile, lookup: fakeDns(BLOCKED_NAMES, { publicLast: true }) })
    for (const { url, reason, withoutDns, byAgent } of table) {
      if (withoutDns) t.match(callbackUrlProblem(url, []), reason, `callbackUrlProblem refuses ${url}`)
      else t.equal(callbackUrlProblem(url, []), undefined, `only DNS tells what ${url} reaches`)
      const refusal = withoutDns ? BlockedAddressError : { name: 'BlockedAddressError', message: reason }
      if (byAgent) await t.rejects(postWebhook(agent, url, '{}', {}), refusal, `the agent refuses ${url}`)
    }
    t.equal(receiver.requests.length, 0)
  })

  t.test('checkedLookup answers both lookup shapes and honours the family', async (t) => {
    const lookup = checkedLookup(parseCidrs([]), fakeDns({ 'dual.test': ['93.184.215.14', '2606:4700:4700::1111'], 'v4.test': ['93.184.215.14'] }))
    const call = (host: string, options: { all?: boolean; family?: number }) =>
      new Promise<{ err: Error | null; address: unknown; family: unknown }>((resolve) =>
        lookup(host, options, (err, address, family) => resolve({ err, address, family })),
      )
    t.same(await call('dual.test', { all: true }), {
      err: null,
      address: [
        { address: '93.184.215.14', family: 4 },
        { address: '2606:4700:4700::1111', family: 6 },
      ],
      family: undefined,
    })
    t.same(await call('dual.test', {}), { err: null, address: '93.184.215.14', family: 4 })
    t.same(await call('dual.test', { family: 6 }), { err: null, address: '2606:4700:4700::1111', family: 6 })
    t.match((await call('v4.test', { family: 6 })).err, { code: 'ENOTFOUND' })
    t.match((await call('nowhere.test', { all: true })).err, { code: 'ENOTFOUND' })
    const empty = checkedLookup([], async () => [])
    const none = await new Promise<Error | null>((resolve) => empty('empty.test', { all: true }, (err) => resolve(err)))
    t.type(none, BlockedAddressError)
  })

  t.test('signWebhook follows the Standard Webhooks scheme', async (t) => {
    const body = '{"hello":"world"}'
    const ts = 1_700_000_000
    const expected = new Webhook(secret).sign('msg_1', new Date(ts * 1000), body)
    t.equal(signWebhook(secret, 'msg_1', ts, body), expected)
    t.not(signWebhook(secret, 'msg_2', ts, body), expected)
    t.not(signWebhook(secret, 'msg_1', ts + 1, body), expected)
    t.throws(() => signWebhook('not-a-secret', 'msg_1', ts, body), /whsec_/)
    t.throws(() => signWebhook('whsec_', 'msg_1', ts, body), /whsec_/)
  })
})
