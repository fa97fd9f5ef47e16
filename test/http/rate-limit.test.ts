import { STATUS_CODES } from 'node:http'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { issueApiKey } from '../../src/commands/api-keys.js'
import { loadConfig } from '../../src/config.js'
import { openTestApp } from '../helpers/app.js'
import { oneBackend } from '../helpers/storage.js'

// Rate limiting sits in the HTTP layer, before any storage is touched: PGlite is enough here.

const API_LIMIT = 3
const AUTH_LIMIT = 2

function expectLimited(t: Test, response: LightMyRequestResponse, limit: number) {
  t.equal(response.statusCode, 429, 'answered 429')
  t.same(Object.keys(response.json()).sort(), ['error', 'message', 'statusCode'], "in the spec's error shape")
  t.equal(response.json().statusCode, 429)
  t.equal(response.json().error, STATUS_CODES[429])
  t.match(response.json().message, new RegExp(`^Rate limit exceeded: ${limit} requests a minute; retry in `))
  const retryAfter = Number(response.headers['retry-after'])
  t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After in seconds within the minute (${response.headers['retry-after']})`)
  t.equal(response.headers['x-ratelimit-limit'], String(limit))
  t.equal(response.headers['x-ratelimit-remaining'], '0')
  t.ok(response.headers['x-request-id'], 'and its request id')
}

t.test('with small limits', async (t) => {
  const opened = await openTestApp(t, oneBackend, {
    config: { ...loadConfig({}), rateLimitPerMinute: API_LIMIT, authRateLimitPerMinute: AUTH_LIMIT },
  })
  const { app, admin, ctx } = opened
  const newKey = async (name: string) =>
    (await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId: admin.workspaceId, name, role: 'workspace', callbackUrl: null })).apiKey
  const call = (headers: Record<string, string>, options: Partial<InjectOptions> = {}) =>
    app.inject({ method: 'GET', url: '/v1/flows', headers, ...options })

  t.test('an API key over its budget gets 429 with Retry-After and the rate limit headers', async (t) => {
    const key = await newKey('busy')
    for (let i = 1; i <= API_LIMIT; i++) {
      const response = await call({ 'x-api-key': key })
      t.equal(response.statusCode, 200, `request ${i} served`)
      t.equal(response.headers['x-ratelimit-limit'], String(API_LIMIT))
      t.equal(response.headers['x-ratelimit-remaining'], String(API_LIMIT - i), 'counts down')
      t.ok(Number(response.headers['x-ratelimit-reset']) >= 1, 'says when the window resets')
    }
    expectLimited(t, await call({ 'x-api-key': key }), API_LIMIT)
    expectLimited(t, await app.inject({ method: 'POST', url: '/v1/sectors', headers: { 'x-api-key': key }, payload: { name: 'x' } }), API_LIMIT)
  })

  t.test('each API key has a budget of its own, whatever address it calls from', async (t) => {
    const first = await newKey('first')
    const second = await newKey('second')
    for (let i = 0; i < API_LIMIT; i++) await call({ 'x-api-key': first }, { remoteAddress: '10.1.0.1' })
    expectLimited(t, await call({ 'x-api-key': first }, { remoteAddress: '10.1.0.2' }), API_LIMIT)
    const other = await call({ 'x-api-key': second }, { remoteAddress: '10.1.0.1' })
    t.equal(other.statusCode, 200, 'another key from the same address is served')
    t.equal(other.headers['x-ratelimit-remaining'], String(API_LIMIT - 1), 'from its own budget')
  })

  t.test('the editor is limited per OAuth client, apart from the API keys', async (t) => {
    const setupKey = await newKey('setup')
    const client = (await app.inject({ method: 'POST', url: '/v1/clients', headers: { 'x-api-key': setupKey }, payload: { name: 'Portal' } })).json()
    const basic = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`
    // Each token pair from an address of its own, so the /auth budget does not get in the way.
    const accessToken = async (address: string) => {
      const ott = (await app.inject({ method: 'POST', url: '/auth/iframe-token', headers: { authorization: basic }, remoteAddress: address })).json().ott
      return (await app.inject({ method: 'POST', url: '/auth/exchange', payload: { ott }, remoteAddress: address })).json().access_token as string
    }
    const [firstToken, secondToken] = [await accessToken('10.2.0.1'), await accessToken('10.2.0.2')]
    for (let i = 0; i < API_LIMIT; i++) t.equal((await call({ authorization: `Bearer ${firstToken}` })).statusCode, 200)
    expectLimited(t, await call({ authorization: `Bearer ${secondToken}` }), API_LIMIT)
    t.equal((await call({ 'x-api-key': await newKey('beside the editor') })).statusCode, 200, 'a key of the same workspace is served')
  })

  t.test('requests that fail authentication are counted against their address', async (t) => {
    const address = '10.3.0.1'
    for (let i = 0; i < API_LIMIT; i++) {
      t.equal((await call({ 'x-api-key': `wh_made-up-${i}` }, { remoteAddress: address })).statusCode, 401, 'a bad key is 401')
    }
    expectLimited(t, await call({ 'x-api-key': 'wh_made-up' }, { remoteAddress: address }), API_LIMIT)
    expectLimited(t, await call({}, { remoteAddress: address }), API_LIMIT)
    expectLimited(t, await call({ authorization: 'Bearer made-up' }, { remoteAddress: address }), API_LIMIT)
    t.equal((await call({ 'x-api-key': 'wh_made-up' }, { remoteAddress: '10.3.0.2' })).statusCode, 401, 'another address still gets its 401')
    t.equal((await call({ 'x-api-key': await newKey('good') }, { remoteAddress: address })).statusCode, 200, 'a good key from that address is served')
  })

  t.test('/auth/* share one stricter budget per address', async (t) => {
    const address = '10.4.0.1'
    for (let i = 0; i < AUTH_LIMIT; i++) {
      const response = await app.inject({ method: 'POST', url: '/auth/exchange', payload: { ott: 'made-up' }, remoteAddress: address })
      t.equal(response.statusCode, 401, 'a bad one-time token is 401')
      t.equal(response.headers['x-ratelimit-limit'], String(AUTH_LIMIT))
    }
    expectLimited(t, await app.inject({ method: 'POST', url: '/auth/exchange', payload: { ott: 'made-up' }, remoteAddress: address }), AUTH_LIMIT)
    expectLimited(t, await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: 'made-up' }, remoteAddress: address }), AUTH_LIMIT)
    expectLimited(t, await app.inject({ method: 'POST', url: '/auth/iframe-token', headers: { authorization: 'Basic Og==' }, remoteAddress: address }), AUTH_LIMIT)
    t.equal((await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: 'made-up' }, remoteAddress: '10.4.0.2' })).statusCode, 401, 'another address is not limited')
    t.equal((await call({ 'x-api-key': await newKey('api') }, { remoteAddress: address })).statusCode, 200, 'nor is /v1 from that address')
  })

  t.test('health, readiness, metrics, docs and the editor are not limited', async (t) => {
    for (const url of ['/healthz', '/readyz', '/metrics', '/openapi.json', '/docs', '/editor/en/flows/builder/x', '/no-such-page']) {
      const statuses = new Set<number>()
      for (let i = 0; i < API_LIMIT + AUTH_LIMIT + 2; i++) {
        const response = await app.inject({ method: 'GET', url })
        statuses.add(response.statusCode)
        if (response.headers['x-ratelimit-limit'] !== undefined) t.fail(`${url} carries rate limit headers`)
      }
      t.notOk(statuses.has(429), `${url} answered ${[...statuses].join(', ')}, never 429`)
    }
  })
})

t.test('behind a trusted proxy, addresses come from X-Forwarded-For', async (t) => {
  const proxy = '10.9.0.1'
  const { app } = await openTestApp(t, oneBackend, {
    config: { ...loadConfig({ TRUST_PROXY: `${proxy}, fd00::/8` }), rateLimitPerMinute: API_LIMIT, authRateLimitPerMinute: AUTH_LIMIT },
  })
  const exchange = (remoteAddress: string, forwardedFor?: string) =>
    app.inject({ method: 'POST', url: '/auth/exchange', payload: { ott: 'made-up' }, remoteAddress, headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {} })

  for (let i = 0; i < AUTH_LIMIT; i++) t.equal((await exchange(proxy, '203.0.113.7')).statusCode, 401, 'a client behind the proxy is served')
  expectLimited(t, await exchange(proxy, '203.0.113.7'), AUTH_LIMIT)
  t.equal((await exchange(proxy, '203.0.113.8')).statusCode, 401, 'another client behind the same proxy has a budget of its own')
  t.equal((await exchange('fd00::5', '203.0.113.9')).statusCode, 401, 'a proxy in a trusted CIDR')
  expectLimited(t, await exchange('fd00::6', '10.1.1.1, 203.0.113.7'), AUTH_LIMIT)

  // A caller that reaches the service directly cannot choose its address with the header.
  const direct = '198.51.100.4'
  for (let i = 0; i < AUTH_LIMIT; i++) t.equal((await exchange(direct, `192.0.2.${i}`)).statusCode, 401)
  expectLimited(t, await exchange(direct, '192.0.2.99'), AUTH_LIMIT)
})

t.test('a limit of 0 turns it off', async (t) => {
  const { app, admin } = await openTestApp(t, oneBackend, { config: { ...loadConfig({}), rateLimitPerMinute: 0, authRateLimitPerMinute: 0 } })
  const statuses = new Set<number>()
  for (let i = 0; i < 40; i++) {
    const api = await app.inject({ method: 'GET', url: '/v1/flows', headers: { 'x-api-key': admin.apiKey } })
    const bad = await app.inject({ method: 'GET', url: '/v1/flows', headers: { 'x-api-key': 'wh_made-up' } })
    const auth = await app.inject({ method: 'POST', url: '/auth/exchange', payload: { ott: 'made-up' } })
    for (const response of [api, bad, auth]) {
      statuses.add(response.statusCode)
      if (response.headers['x-ratelimit-limit'] !== undefined) t.fail(`${response.raw.req.url} carries rate limit headers`)
    }
  }
  t.same([...statuses].sort(), [200, 401], 'served or refused for its credentials, never limited')
})

t.test('configuration', async (t) => {
  const defaults = loadConfig({})
  t.equal(defaults.rateLimitPerMinute, 1200, 'RATE_LIMIT_PER_MINUTE defaults to 1200')
  t.equal(defaults.authRateLimitPerMinute, 30, 'AUTH_RATE_LIMIT_PER_MINUTE defaults to 30')
  const set = loadConfig({ RATE_LIMIT_PER_MINUTE: '0', AUTH_RATE_LIMIT_PER_MINUTE: '5' })
  t.same([set.rateLimitPerMinute, set.authRateLimitPerMinute], [0, 5])
  t.equal(defaults.trustProxy, false, 'no proxy is trusted by default')
  t.same(loadConfig({ TRUST_PROXY: ' 10.0.0.5, 10.1.0.0/16,::1, fd00::/8, loopback,uniquelocal ' }).trustProxy, ['10.0.0.5', '10.1.0.0/16', '::1', 'fd00::/8', 'loopback', 'uniquelocal'])
  t.throws(() => loadConfig({ TRUST_PROXY: 'true, 1, 10.1, 10.0.0.256, 10.0.0.0/33, 10.0.0.5' }), {
    name: 'ConfigError',
    problems: ['TRUST_PROXY: true, 1, 10.1, 10.0.0.256, 10.0.0.0/33 not a proxy address, CIDR or loopback/linklocal/uniquelocal, such as 10.0.0.5 or 10.0.0.0/8'],
  })
  t.throws(() => loadConfig({ RATE_LIMIT_PER_MINUTE: '-1', AUTH_RATE_LIMIT_PER_MINUTE: 'many' }), {
    name: 'ConfigError',
    problems: ['RATE_LIMIT_PER_MINUTE=-1: expected a whole number from 0 to 1000000', 'AUTH_RATE_LIMIT_PER_MINUTE=many: expected a whole number from 0 to 1000000'],
  })
})
