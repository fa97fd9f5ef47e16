import type { InjectOptions } from 'fastify'
import t from 'tap'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { DATABASE_RETRY_AFTER_SECONDS } from '../../src/http/errors.js'
import { openStorage } from '../../src/store/connect.js'
import { isDatabaseUnavailable } from '../../src/store/unavailable.js'
import { appOver, openTestApp } from '../helpers/app.js'
import { freePort } from '../helpers/cli.js'
import { pgliteBackend } from '../helpers/storage.js'

const errorShape = (body: Record<string, unknown>) => Object.keys(body).sort()

t.test('every error answers in the spec shape and the process keeps serving', async (t) => {
  const { app, admin, storage } = await openTestApp(t, pgliteBackend)
  const key = { 'x-api-key': admin.apiKey }

  const cases: { name: string; request: InjectOptions; status: number; message: RegExp }[] = [
    { name: 'unknown route', request: { method: 'GET', url: '/v1/nothing-here', headers: key }, status: 404, message: /Route GET \/v1\/nothing-here not found/ },
    { name: 'unknown route without a key', request: { method: 'GET', url: '/nowhere' }, status: 404, message: /not found/ },
    { name: 'missing key', request: { method: 'GET', url: '/v1/workspaces' }, status: 401, message: /Missing X-Api-Key/ },
    { name: 'wrong key', request: { method: 'GET', url: '/v1/workspaces', headers: { 'x-api-key': 'wh_not-a-real-key' } }, status: 401, message: /Invalid API key/ },
    { name: 'key without the wh_ prefix', request: { method: 'GET', url: '/v1/workspaces', headers: { 'x-api-key': 'sk_123' } }, status: 401, message: /Invalid API key/ },
    {
      name: 'malformed JSON',
      request: { method: 'POST', url: '/v1/workspaces', headers: { ...key, 'content-type': 'application/json' }, payload: '{"name": ' },
      status: 400,
      message: /not valid JSON/,
    },
    {
      name: 'non-JSON body',
      request: { method: 'POST', url: '/v1/workspaces', headers: { ...key, 'content-type': 'text/plain' }, payload: 'name=x' },
      status: 415,
      message: /Unsupported Media Type/i,
    },
    {
      name: 'form body',
      request: { method: 'POST', url: '/v1/workspaces', headers: { ...key, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'name=x' },
      status: 415,
      message: /Unsupported Media Type/i,
    },
    {
      name: 'oversized body',
      request: { method: 'POST', url: '/v1/workspaces', headers: { ...key, 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 1) }) },
      status: 413,
      message: /too large/,
    },
    {
      name: 'failed validation',
      request: { method: 'POST', url: '/v1/workspaces', headers: key, payload: { name: '' } },
      status: 400,
      message: /body\/name must NOT have fewer than 1 characters/,
    },
    { name: 'size out of bounds', request: { method: 'GET', url: '/v1/workspaces?size=101', headers: key }, status: 400, message: /querystring\/size must be <= 100/ },
    { name: 'negative page', request: { method: 'GET', url: '/v1/workspaces?page=-1', headers: key }, status: 400, message: /querystring\/page must be >= 0/ },
    { name: 'page past an integer', request: { method: 'GET', url: '/v1/workspaces?page=922337203685477600', headers: key }, status: 400, message: /querystring\/page must be <= 2147483647/ },
    {
      name: 'version past an integer',
      request: { method: 'GET', url: '/v1/flows/0190a0b0-0000-7000-8000-00000000dead/versions/99999999999', headers: key },
      status: 400,
      message: /params\/version must be <= 2147483647/,
    },
    { name: 'path that does not decode', request: { method: 'GET', url: '/v1/flows/%zz', headers: key }, status: 400, message: /not a valid url component/ },
    { name: 'path parameter over 100 characters', request: { method: 'GET', url: `/v1/flows/${'a'.repeat(101)}`, headers: key }, status: 414, message: /exceeding the max param length/ },
    {
      name: 'NUL in a body',
      request: { method: 'POST', url: '/v1/workspaces', headers: { ...key, 'content-type': 'application/json' }, payload: '{"name": "a\\u0000b"}' },
      status: 400,
      message: /body\/name must not contain U\+0000 or a lone surrogate/,
    },
    {
      name: 'lone surrogate in a body',
      request: { method: 'POST', url: '/v1/sectors', headers: { ...key, 'content-type': 'application/json' }, payload: '{"name": "a\\ud800"}' },
      status: 400,
      message: /body\/name must not contain U\+0000 or a lone surrogate/,
    },
    { name: 'NUL in a query', request: { method: 'GET', url: '/v1/flows?workspaceName=%00', headers: key }, status: 400, message: /querystring\/workspaceName must not contain U\+0000/ },
    { name: 'size not a number', request: { method: 'GET', url: '/v1/workspaces?size=ten', headers: key }, status: 400, message: /querystring\/size must be integer/ },
    {
      name: 'a JSON content type with no body where one is needed',
      request: { method: 'POST', url: '/v1/workspaces', headers: { ...key, 'content-type': 'application/json' } },
      status: 400,
      message: /^body must be object$/,
    },
  ]
  for (const c of cases) {
    const response = await app.inject(c.request)
    const body = response.json()
    t.equal(response.statusCode, c.status, `${c.name}: status`)
    t.same(errorShape(body), ['error', 'message', 'statusCode'], `${c.name}: exactly the spec's fields`)
    t.equal(body.statusCode, c.status, `${c.name}: statusCode in the body`)
    t.match(body.message, c.message, `${c.name}: message`)
    t.ok(response.headers['x-request-id'], `${c.name}: carries a request id`)
  }
  t.equal((await app.inject({ method: 'GET', url: '/v1/workspaces', headers: key })).statusCode, 200, 'still serving after every error')
  const flow = (await app.inject({ method: 'POST', url: '/v1/flows', headers: key, payload: { name: 'Optional bodies' } })).json()
  const published = await app.inject({ method: 'POST', url: `/v1/flows/${flow.id}/publish`, headers: { ...key, 'content-type': 'application/json' } })
  t.equal(published.statusCode, 200, 'a JSON content type with no body where the body is optional is no body, as curl sends it')

  await t.test('a failure inside answers 500 without internals', async (t) => {
    await storage.close()
    const response = await app.inject({ method: 'GET', url: '/v1/workspaces', headers: { 'x-api-key': 'wh_uncached-so-it-hits-the-database' } })
    t.equal(response.statusCode, 500)
    t.same(response.json(), { statusCode: 500, message: 'Internal Server Error', error: 'Internal Server Error' })
  })
})

t.test('connection failures, and only those, count as the database being unavailable', async (t) => {
  const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code })
  const unavailable: [string, unknown][] = [
    ['connection refused', coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['connection reset', coded('ECONNRESET', 'read ECONNRESET')],
    ['every address refused', new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')])],
    ['admin shutdown', coded('57P01', 'terminating connection due to administrator command')],
    ['crash shutdown', coded('57P02')],
    ['starting up', coded('57P03', 'the database system is starting up')],
    ['too many connections', coded('53300')],
    ['connection exception class 08', coded('08006')],
    ['connection does not exist', coded('08003')],
    ['lost mid-query', new Error('Connection terminated unexpectedly')],
    ['a client that lost its connection', new Error('Client has encountered a connection error and is not queryable')],
    ['pool connect timeout', new Error('timeout exceeded when trying to connect')],
    ['wrapped', new Error('transaction failed', { cause: coded('57P01') })],
  ]
  const available: [string, unknown][] = [
    ['unique violation', coded('23505')],
    ['syntax error', coded('42601')],
    ['query canceled', coded('57014')],
    ['a plain error', new Error('PGlite is closed')],
    ['a DNS failure', coded('ENOTFOUND')],
    ['not an error', 'ECONNREFUSED'],
    ['nothing', undefined],
  ]
  for (const [name, error] of unavailable) t.ok(isDatabaseUnavailable(error), `${name}: unavailable`)
  for (const [name, error] of available) t.notOk(isDatabaseUnavailable(error), `${name}: not unavailable`)
})

t.test('with the database unreachable, requests answer 503 with Retry-After in the spec shape and no internals', async (t) => {
  // Nothing listens on a port just freed: every connection attempt is refused.
  const storage = await openStorage({ kind: 'postgres', url: `postgres://flowd@127.0.0.1:${await freePort()}/flowd` })
  t.teardown(() => storage.close())
  const app = await appOver(t, storage.db, new PostgresEventStore({ db: storage.db }))
  const key = { 'x-api-key': 'wh_any-key-so-it-hits-the-database' }
  const requests: InjectOptions[] = [
    { method: 'GET', url: '/v1/workspaces', headers: key },
    { method: 'POST', url: '/v1/sessions/0190a0b0-0000-7000-8000-00000000dead/message', headers: { ...key, 'idempotency-key': 'k1' }, payload: { type: 'text', text: { body: 'hi' } } },
  ]
  for (const request of requests) {
    const response = await app.inject(request)
    const name = `${request.method} ${request.url}`
    t.equal(response.statusCode, 503, `${name}: 503`)
    t.same(response.json(), { statusCode: 503, message: 'The database is unavailable; try again shortly', error: 'Service Unavailable' }, `${name}: the spec's fields, a clear message`)
    t.equal(response.headers['retry-after'], String(DATABASE_RETRY_AFTER_SECONDS), `${name}: Retry-After`)
    t.notMatch(response.body, /ECONN|127\.0\.0\.1|postgres/i, `${name}: no internals`)
    t.ok(response.headers['x-request-id'], `${name}: carries a request id`)
  }
  t.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503, '/readyz says not ready')
  t.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, '/healthz: the process is up')
})
