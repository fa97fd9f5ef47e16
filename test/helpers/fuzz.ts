import { channel } from 'node:diagnostics_channel'
import { existsSync, readdirSync } from 'node:fs'
import { STATUS_CODES } from 'node:http'
import { join } from 'node:path'
import type { FastifyInstance, InjectOptions, RouteOptions } from 'fastify'
import fc from 'fast-check'
import type { Test } from 'tap'
import { loadConfig } from '../../src/config.js'
import { defaultWebDir } from '../../src/http/routes/web.js'
import { assertionMessage } from './assertion-message.js'
import { CHEAP_CLIENT_SECRET_COST, openTestApp } from './app.js'
import { echoFlow } from './flows.js'
import { pgliteBackend } from './storage.js'
import { fuzzCases } from './test-scope.js'

// Property-based fuzzing of every route the app registers: path, query, body, content type and
// credentials are generated; whatever arrives, the answer is never a 5xx, every error is in the
// spec's shape (§7) and the process keeps serving. test/faults/fuzz-*.test.ts each fuzz one group
// of routes (FUZZ_GROUPS), so that tap's jobs share the work.
//
// On PGlite alone: this fuzzes the HTTP layer (routing, parsing, validation, handlers' own checks);
// the storage adapters are held to one contract by the suites under test/eventstore and
// test/projections, and fuzzing on both would double the run for no new finding. PGlite rather
// than the other files' Postgres: `GET /readyz` on Postgres takes a few hundred ms a request.
//
// What it costs: a few ms of CPU a case and route, mostly PGlite answering the handlers'
// queries. Hence `fuzzCases` (test/helpers/test-scope.ts): 100 cases a route in an
// ordinary run, each run with a new seed, and as many as `FUZZ_RUNS` asks for (fewer or more).
//
// Replaying: every file prints `FUZZ_SEED=…` and the number of cases; route i (in the order the app
// registers its routes, whichever file fuzzes it) runs with seed FUZZ_SEED + i, so `FUZZ_SEED=n`
// with the same `FUZZ_RUNS` replays a run and `FUZZ_ROUTES='^PATCH /v1/flows/:id$'` (a regular
// expression over `METHOD url`) narrows it to the routes that failed.

const RUNS = fuzzCases
/** Route i runs with seed SEED + i; the run prints SEED, and `FUZZ_SEED=…` replays it. */
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31))
const ONLY = process.env.FUZZ_ROUTES ? new RegExp(process.env.FUZZ_ROUTES) : undefined

/**
 * Which file fuzzes a route: the first group whose test matches `METHOD url`. The last takes every
 * other route, so a new route is fuzzed without touching this list. Groups by resource, of about
 * the same CPU each (the comment of each route's subtest prints its CPU time).
 */
export const FUZZ_GROUPS = {
  'health, editor, auth and embed demo': (name: string) => !name.includes(' /v1/'),
  'workspaces, clients, API keys and sectors': (name: string) => /^\S+ \/v1\/(workspaces|clients|api-keys|sectors)(\/|$)/.test(name),
  'flows and variables': (name: string) => /^\S+ \/v1\/(flows|variables)(\/|$)/.test(name),
  'sessions, kanban, webhooks and any other': () => true,
} as const satisfies Record<string, (name: string) => boolean>

export type FuzzGroup = keyof typeof FUZZ_GROUPS

const groupOf = (name: string) => (Object.keys(FUZZ_GROUPS) as FuzzGroup[]).find((group) => FUZZ_GROUPS[group](name))!

/**
 * Routes known to break a property, each with the reason and where it is reported. The test
 * asserts they still fail, so a fix must take them off this list. Keys are `METHOD url`.
 */
const KNOWN_ISSUES = new Map<string, string>([])

/**
 * Routes no request part reaches, left out: Swagger UI's YAML copy of the OpenAPI document is
 * rendered afresh on each call (tens of ms, minutes for a thousand cases) and takes no input;
 * `/openapi.json` and `/docs/json` serve the same document and are fuzzed.
 */
const NOT_FUZZED = new Set(['GET /docs/yaml'])

interface JsonSchema {
  type?: string | string[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  items?: JsonSchema
  patternProperties?: Record<string, JsonSchema>
  enum?: unknown[]
  const?: unknown
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  format?: string
  pattern?: string
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  minItems?: number
  maxItems?: number
}

interface FuzzRoute {
  method: string
  url: string
  schema: { params?: JsonSchema; querystring?: JsonSchema; body?: JsonSchema; headers?: JsonSchema; response?: Record<string, { content?: Record<string, unknown> }> }
}

/** A route whose success is an endless Server-Sent Events stream: inject would wait for its end forever. */
const answersEventStream = (route: FuzzRoute) => route.schema.response?.['200']?.content?.['text/event-stream'] !== undefined

/**
 * Injects a request to an event-stream route: a 200 is let go once its headers are in (its
 * response ends, as a client going away ends it); any other answer is read whole.
 */
async function injectStream(app: FastifyInstance, options: InjectOptions): Promise<{ statusCode: number; headers: Record<string, unknown>; body: string; json(): unknown }> {
  const response = await app.inject({ ...options, payloadAsStream: true })
  const stream = response.stream()
  if (response.statusCode === 200) {
    ;(response.raw.res as { destroy(): void }).destroy()
    stream.destroy()
    return { statusCode: 200, headers: response.headers, body: '', json: () => undefined }
  }
  let body = ''
  for await (const chunk of stream) body += String(chunk)
  return { statusCode: response.statusCode, headers: response.headers, body, json: () => JSON.parse(body) }
}

// Routes are collected from fastify itself, so a new route is fuzzed without touching this file.
// `buildApp` registers its routes before it returns, and an `onRoute` hook only sees routes
// registered after it; fastify publishes every new instance on the `fastify.initialization`
// diagnostics channel before anything is registered (the documented hook for instrumentation),
// so a subscriber adds the hook there. `printRoutes` would lose the schemas and need parsing.
const routes: FuzzRoute[] = []
/** What a request failed with, by request id, so a 5xx is reported with its cause. */
const failures = new Map<string, Error>()
const initialization = channel('fastify.initialization')
const collectRoutes = (message: unknown) => {
  const { fastify } = message as { fastify: FastifyInstance }
  fastify.addHook('onError', async (request, _reply, error) => {
    failures.set(request.id, error)
  })
  fastify.addHook('onRoute', (route: RouteOptions) => {
    for (const method of [route.method].flat()) {
      // HEAD answers carry no body to check; fastify derives them from the GET routes, which are fuzzed.
      if (method === 'HEAD') continue
      routes.push({ method, url: route.url, schema: (route.schema ?? {}) as FuzzRoute['schema'] })
    }
  })
}

const INTERESTING_STRINGS = [
  '', ' ', 'said', 'en', 'pt', 'null', '0', '-1', '1e309', 'NaN', '__proto__', 'constructor', '{{said}}',
  '\u0000', 'a\uD800', '\uDC00b', '\uFEFF', '😀', 'ß\u0301', "'; drop table events; --", '%s%n%x',
  '../../etc/passwd', '#FFFFFF', '#zzz', 'USD', 'BRL', 'America/Sao_Paulo', 'Not/AZone',
  'https://hooks.example.com/flow', 'http://hooks.example.com/flow', 'https://localhost/',
  'https://127.0.0.1/x', 'https://[::1]/', 'https://169.254.169.254/latest', 'https://user:pw@example.com/',
  'javascript:alert(1)', 'image/jpeg', 'text/plain', '2026-03-01T10:00:00Z', '2026-03-01',
  '2026-13-45T99:99:99Z', '00000000-0000-0000-0000-000000000000',
]

/** Path segments sent as they are, not percent-encoded: traversal, bad escapes, odd numbers. */
const RAW_SEGMENTS = ['..', '.', '%2e%2e', '..%2f..', '%2F', '%', '%zz', '%E0%A4%A', '%00', '%20', '%C0%AE', '~', '-1', '0', '1.5', '1e3', '9'.repeat(40), '+', ';', ',', '@']

// Through UTF-8 and back, a lone surrogate (which encodeURIComponent refuses) becomes U+FFFD.
const safeEncode = (value: string) => encodeURIComponent(Buffer.from(value).toString())
const anyJson = fc.jsonValue({ maxDepth: 3 })
const text = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }), fc.constantFrom(...INTERESTING_STRINGS))
const printable = fc.string({ unit: 'grapheme-ascii', maxLength: 60 })

interface Fixtures {
  /** Existing ids by the resource a path names them with (`flows`, `sessions`, …). */
  ids: Record<string, string[]>
  /** Every fixture id, for uuid fields of bodies and queries, and routes of unknown resources. */
  all: string[]
  /** Fresh records for routes that remove what they name, so fixtures survive. */
  disposable: Record<string, () => Promise<string>>
  /** Keys of card values and similar maps. */
  mapKeys: string[]
  /** Credentials as strings: one-time and refresh tokens (some good for one use), keys, secrets. */
  tokens: string[]
}

/** The values of a JSON schema, at and beyond its edges, and now and then anything at all. */
function guided(schema: JsonSchema | undefined, fixtures: Fixtures, depth = 0): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 8, arbitrary: shaped(schema, fixtures, depth) }, { weight: 1, arbitrary: anyJson })
}

function shaped(schema: JsonSchema | undefined, fixtures: Fixtures, depth: number): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return anyJson
  if (schema.const !== undefined) return fc.constant(schema.const)
  if (schema.enum) {
    const near = schema.enum.filter((v): v is string => typeof v === 'string').map((v) => v.toUpperCase())
    return fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...schema.enum) }, { weight: 1, arbitrary: fc.constantFrom('', ...near) })
  }
  const union = schema.anyOf ?? schema.oneOf
  if (union) return fc.oneof(...union.map((s) => guided(s, fixtures, depth + 1)))
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  switch (type) {
    case 'string':
      return stringFor(schema, fixtures)
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? -1000
      const max = schema.maximum ?? 1000
      return fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: Math.ceil(min), max: Math.max(Math.ceil(min), Math.floor(Math.min(max, min + 10_000))) }) },
        { weight: 2, arbitrary: fc.constantFrom(min - 1, max + 1, 0, -1, 1.5, -0, 2 ** 31, 2 ** 53 + 2, Number.MAX_VALUE) },
        { weight: 1, arbitrary: fc.double() },
      )
    }
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'array': {
      const maxItems = schema.maxItems ?? 5
      return fc.oneof(
        { weight: 8, arbitrary: fc.array(guided(schema.items, fixtures, depth + 1), { minLength: schema.minItems ?? 0, maxLength: Math.min(maxItems, 5) }) },
        { weight: 1, arbitrary: fc.array(shaped(schema.items, fixtures, depth + 1), { minLength: maxItems + 1, maxLength: maxItems + 1 }) },
      )
    }
    case 'object': {
      if (schema.patternProperties) {
        const [value] = Object.values(schema.patternProperties)
        return fc.dictionary(fc.oneof(text, fc.constantFrom(...fixtures.mapKeys)), guided(value, fixtures, depth + 1), { maxKeys: 4 })
      }
      const properties = Object.entries(schema.properties ?? {})
      const required = new Set(schema.required ?? [])
      const absent = Symbol('absent')
      const fields = properties.map(([name, property]) => fc.option(guided(property, fixtures, depth + 1), { nil: absent, freq: required.has(name) ? 12 : 2 }))
      return fc
        .tuple(fc.tuple(...fields), fc.option(fc.dictionary(text, anyJson, { maxKeys: 2 }), { freq: 6 }))
        .map(([values, extra]) => ({
          ...(extra ?? {}),
          ...Object.fromEntries(properties.flatMap(([name], i) => (values[i] === absent ? [] : [[name, values[i]]]))),
        }))
    }
    default:
      // `Type.Unknown`: a flow definition or a card value; a mutated echo flow goes deep into the validator.
      return fc.oneof(anyJson, mutated(echoFlow))
  }
}

function stringFor(schema: JsonSchema, fixtures: Fixtures): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0
  const max = schema.maxLength ?? 64
  const lengths = fc.constantFrom(...[min, max, max + 1, min - 1].filter((n) => n >= 0 && n < 1_000_000)).map((n) => 'x'.repeat(n))
  const formatted =
    schema.format === 'uuid'
      ? fc.oneof(fc.constantFrom(...fixtures.all), fc.uuid(), fc.constantFrom(...fixtures.all).map((id) => id.toUpperCase()))
      : schema.format === 'date-time'
        ? fc.oneof(fc.date({ noInvalidDate: true, min: new Date(-8.64e15), max: new Date(8.64e15) }).map((d) => d.toISOString()), fc.constantFrom('2026-03-01T10:00:00+14:00', '2026-03-01T10:00:00', '2026-03-01'))
        : schema.format === 'uri' || schema.pattern?.startsWith('^https?')
          ? fc.oneof(fc.webUrl(), fc.constantFrom('https://cdn.example.com/a.jpg', 'ftp://x/y', 'http://', 'https://[zz]/'))
          : schema.pattern
            ? fc.stringMatching(new RegExp(schema.pattern))
            : fc.oneof({ weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: min, maxLength: Math.min(max, 64) }) }, { weight: 1, arbitrary: fc.webUrl() })
  return fc.oneof({ weight: 6, arbitrary: formatted }, { weight: 2, arbitrary: text }, { weight: 1, arbitrary: lengths }, { weight: 1, arbitrary: fc.constantFrom(...fixtures.tokens) })
}

/** `seed` with one node replaced by any JSON value, or removed. */
function mutated(seed: unknown): fc.Arbitrary<unknown> {
  const paths: (string | number)[][] = []
  const walk = (node: unknown, path: (string | number)[]) => {
    paths.push(path)
    if (node && typeof node === 'object') for (const [key, value] of Object.entries(node)) walk(value, [...path, Array.isArray(node) ? Number(key) : key])
  }
  walk(seed, [])
  return fc.tuple(fc.constantFrom(...paths), anyJson, fc.boolean()).map(([path, replacement, remove]) => {
    const copy = structuredClone(seed) as Record<string | number, unknown>
    if (path.length === 0) return replacement
    let parent: Record<string | number, unknown> = copy
    for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>
    const last = path.at(-1)!
    if (remove && !Array.isArray(parent)) delete parent[last]
    else parent[last] = replacement
    return copy
  })
}

/** A path value: `existing` stands for a fixture id, chosen (or made fresh) when the case runs. */
type Segment = { kind: 'existing'; index: number } | { kind: 'encoded'; value: string } | { kind: 'raw'; value: string }

const segment = (existingWeight: number): fc.Arbitrary<Segment> => fc.oneof(
  { weight: existingWeight, arbitrary: fc.nat().map((index) => ({ kind: 'existing' as const, index })) },
  { weight: 2, arbitrary: fc.uuid().map((value) => ({ kind: 'encoded' as const, value })) },
  { weight: 2, arbitrary: text.map((value) => ({ kind: 'encoded' as const, value })) },
  { weight: 1, arbitrary: fc.constantFrom(...RAW_SEGMENTS).map((value) => ({ kind: 'raw' as const, value })) },
  { weight: 1, arbitrary: fc.integer({ min: 101, max: 20_000 }).map((n) => ({ kind: 'encoded' as const, value: 'a'.repeat(n) })) },
)

const queryValue = (schema: JsonSchema | undefined, fixtures: Fixtures) =>
  fc.oneof(
    { weight: 6, arbitrary: shaped(schema, fixtures, 0).map((v) => (typeof v === 'string' ? v : JSON.stringify(v) ?? '')) },
    { weight: 1, arbitrary: text },
  )

function queryString(schema: JsonSchema | undefined, fixtures: Fixtures): fc.Arbitrary<string> {
  const known = Object.entries(schema?.properties ?? {})
  const pair = fc.oneof(
    ...(known.length ? [{ weight: 6, arbitrary: fc.constantFrom(...known).chain(([name, property]) => queryValue(property, fixtures).map((value) => `${safeEncode(name)}=${safeEncode(value)}`)) }] : []),
    ...(known.length ? [{ weight: 1, arbitrary: fc.tuple(fc.constantFrom(...known.map(([name]) => name)), fc.constantFrom('[]', '[0]', '[a]', '.x')).map(([name, suffix]) => `${name}${suffix}=1`) }] : []),
    { weight: 1, arbitrary: fc.tuple(text, text).map(([k, v]) => `${safeEncode(k)}=${safeEncode(v)}`) },
    { weight: 1, arbitrary: fc.constantFrom('=', '&', '==', 'a', 'page', 'size=', '%zz=%zz', '%', 'size=1&size=2', 'page=-0', 'size=0x10', 'page=1e2') },
  )
  return fc.oneof({ weight: 1, arbitrary: fc.constant('') }, { weight: 4, arbitrary: fc.array(pair, { minLength: 1, maxLength: 4 }).map((pairs) => `?${pairs.join('&')}`) })
}

interface Body {
  contentType?: string
  payload?: string | Buffer
}

const OVERSIZED = JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) })

function body(schema: JsonSchema | undefined, fixtures: Fixtures): fc.Arbitrary<Body> {
  const value = fc.oneof({ weight: 6, arbitrary: guided(schema, fixtures) }, { weight: 1, arbitrary: anyJson })
  const json = value.map((v) => JSON.stringify(v) ?? 'null')
  return fc.oneof(
    { weight: 20, arbitrary: json.map((payload) => ({ contentType: 'application/json', payload })) },
    { weight: 2, arbitrary: fc.constant({}) },
    { weight: 1, arbitrary: fc.tuple(json, fc.constantFrom('application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json; charset=latin1', 'application/vnd.api+json', 'application/json, text/plain', ' application/json')).map(([payload, contentType]) => ({ contentType, payload })) },
    { weight: 1, arbitrary: json.map((payload) => ({ payload })) },
    { weight: 1, arbitrary: fc.tuple(json, fc.nat()).map(([payload, cut]) => ({ contentType: 'application/json', payload: payload.slice(0, cut % Math.max(payload.length, 1)) + '}' })) },
    { weight: 1, arbitrary: text.map((payload) => ({ contentType: 'application/json', payload })) },
    { weight: 1, arbitrary: fc.constantFrom('', '{', '[', 'nul', '{"a":1,}', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}', '\uFEFF{}', '"\\ud800"', '1'.repeat(400)).map((payload) => ({ contentType: 'application/json', payload })) },
    { weight: 1, arbitrary: fc.tuple(text, fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/octet-stream', '', ';;;')).map(([payload, contentType]) => ({ contentType, payload })) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ contentType: 'application/json', payload: Buffer.from(bytes) })) },
  )
}

// Rare, as each costs a megabyte: over the body limit.
const bodyOrOversized = (schema: JsonSchema | undefined, fixtures: Fixtures): fc.Arbitrary<Body> =>
  fc.oneof({ weight: 200, arbitrary: body(schema, fixtures) }, { weight: 1, arbitrary: fc.constantFrom<Body>({ contentType: 'application/json', payload: OVERSIZED }, { payload: OVERSIZED }) })

/** Fuzzes the routes of `group`: never a 5xx, every error in the spec's shape, the process stays up. */
export async function fuzzRoutes(t: Test, group: FuzzGroup): Promise<void> {
  initialization.subscribe(collectRoutes)
  const opened = await openTestApp(t, pgliteBackend, {
    engine: true,
    clientSecretCost: CHEAP_CLIENT_SECRET_COST,
    // Thousands of cases a route with one key and one address: rate limits off, or nearly every
    // answer would be a 429 (test/http/rate-limit.test.ts covers them).
    config: { ...loadConfig({}), rateLimitPerMinute: 0, authRateLimitPerMinute: 0 },
  }).finally(() => initialization.unsubscribe(collectRoutes))
  const { app, admin } = opened
  t.ok(routes.length > 40, `collected ${routes.length} routes`)
  const mine = routes.filter((route) => groupOf(`${route.method} ${route.url}`) === group)
  t.ok(mine.length > 0, `${mine.length} of them in this group`)

  const api = async (method: InjectOptions['method'], url: string, payload?: object, key = admin.apiKey) => {
    const response = await app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) })
    if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
    return { body: response.body ? response.json() : undefined, location: String(response.headers.location ?? '').split('/').at(-1)! }
  }
  let sequence = 0
  const unique = (prefix: string) => `${prefix}_${sequence++}`

  // Records for the handlers to find, so cases get past the 404s.
  const otherKey = (await api('POST', '/v1/api-keys', { name: 'other', callbackUrl: 'https://hooks.example.com/flow' })).body
  const { location: sectorId } = await api('POST', '/v1/sectors', { name: 'Sales' })
  const variable = (await api('POST', '/v1/variables', { name: 'said', type: 'string' })).body
  const flow = (await api('POST', '/v1/flows', { name: 'Echo', definition: echoFlow })).body
  const pipeline = (await api('POST', '/v1/kanban/pipelines', {
    name: 'Deals',
    stages: [{ name: 'New' }, { name: 'Won' }],
    fields: [{ name: 'Amount', type: 'currency', currency: 'USD' }, { name: 'Kind', type: 'select', options: ['a', 'b'] }, { name: 'Note', type: 'text', required: false }],
  })).body
  const card = (await api('POST', `/v1/kanban/pipelines/${pipeline.id}/cards`, { stageId: pipeline.stages[0].id, values: { [pipeline.fields[0].id]: 12.5 }, tags: ['hot'] })).body
  // Fresh cards for routes that remove them come from a pipeline the fuzzer is never given, so a
  // fuzzed change to its pipeline (a required field) cannot refuse them.
  const sparePipeline = (await api('POST', '/v1/kanban/pipelines', { name: 'Spares', stages: [{ name: 'New' }] })).body
  const client = (await api('POST', '/v1/clients', { name: 'Editor' })).body
  await api('PUT', '/v1/secrets/model_key', { value: 'sk-fuzz' })
  // The test app's DNS knows no names: a check of this connection fails at once, calling nothing.
  const aiConnection = (model: string) => ({ name: unique('ai'), baseUrl: 'https://models.example.com/v1', apiKeySecret: 'model_key', model })
  const { location: aiConnectionId } = await api('POST', '/v1/ai-connections', aiConnection('gpt-4o-mini'))
  const basic = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`
  const ott = (await app.inject({ method: 'POST', url: '/auth/iframe-token', headers: { authorization: basic } })).json().ott
  const tokens = (await app.inject({ method: 'POST', url: '/auth/exchange', payload: { ott } })).json()
  // A token family of its own, so that reusing its refresh token leaves the editor's access token alone.
  const issueOtt = async () => (await app.inject({ method: 'POST', url: '/auth/iframe-token', headers: { authorization: basic } })).json().ott as string
  const spareOtts = [await issueOtt(), await issueOtt(), await issueOtt()]
  const spareRefresh = (await app.inject({ method: 'POST', url: '/auth/exchange', payload: { ott: spareOtts.pop() } })).json().refresh_token as string
  const session = (await api('POST', `/v1/sessions/flows/${flow.id}/create`, { variables: { said: 'hi' }, externalId: 'contact-1' })).body
  // The engine answers the session's first turn: its webhook (skipped: the admin key has no callback) is a delivery to find.
  let deliveryId: string | undefined
  for (let tries = 0; !deliveryId && tries < 100; tries++) {
    deliveryId = (await api('GET', '/v1/webhooks/deliveries')).body.content[0]?.id
    if (!deliveryId) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.ok(deliveryId, 'a webhook delivery exists')
  // Stopped so that sessions the fuzzer starts do not keep two cores busy with turns.
  await opened.conversations?.stop()

  const assets = existsSync(join(defaultWebDir(), 'assets')) ? readdirSync(join(defaultWebDir(), 'assets')) : []
  const webBuilt = existsSync(join(defaultWebDir(), 'editor.html')) && existsSync(join(defaultWebDir(), 'dashboard.html'))
  const ids: Record<string, string[]> = {
    'api-keys': [admin.apiKeyId, otherKey.id],
    sectors: [sectorId],
    variables: [variable.id],
    flows: [flow.id],
    pipelines: [pipeline.id],
    cards: [card.id],
    clients: [client.clientId],
    sessions: [session.sessionId],
    deliveries: [deliveryId!],
    workspaces: [admin.workspaceId],
    'ai-connections': [aiConnectionId],
  }
  const fixtures: Fixtures = {
    ids,
    all: [...Object.values(ids).flat(), ...pipeline.stages.map((s: { id: string }) => s.id), ...pipeline.fields.map((f: { id: string }) => f.id), admin.organizationId],
    mapKeys: [...pipeline.fields.map((f: { id: string }) => f.id), 'said', 'name'],
    tokens: [...spareOtts, spareRefresh, tokens.access_token, admin.apiKey, client.clientSecret],
    disposable: {
      'api-keys': async () => (await api('POST', '/v1/api-keys', { name: unique('k'), callbackUrl: 'https://hooks.example.com/flow' })).body.id,
      sectors: async () => (await api('POST', '/v1/sectors', { name: unique('s') })).location,
      variables: async () => (await api('POST', '/v1/variables', { name: unique('v'), type: 'number' })).body.id,
      cards: async () => (await api('POST', `/v1/kanban/pipelines/${sparePipeline.id}/cards`, { stageId: sparePipeline.stages[0].id })).body.id,
      clients: async () => (await api('POST', '/v1/clients', { name: unique('c') })).body.clientId,
      'ai-connections': async () => (await api('POST', '/v1/ai-connections', aiConnection('m'))).location,
    },
  }
  // Path parameters whose name says what they hold; `:id` takes its resource from the segment before it.
  const byParam: Record<string, string[]> = {
    flowId: ids.flows!,
    sessionId: ids.sessions!,
    pipelineId: ids.pipelines!,
    deliveryId: ids.deliveries!,
    clientId: ids.clients!,
    version: ['1'],
    lang: ['en', 'pt'],
    file: assets.length ? assets : ['index.js'],
    '*': ['', 'flows/builder/x', 'assets/missing.js', 'pt/flows'],
  }

  const credentials: fc.Arbitrary<Record<string, string>> = fc.oneof(
    { weight: 16, arbitrary: fc.constant({ 'x-api-key': admin.apiKey }) },
    { weight: 2, arbitrary: fc.constant({ 'x-api-key': otherKey.apiKey }) },
    { weight: 3, arbitrary: fc.constant({ authorization: `Bearer ${tokens.access_token}` }) },
    { weight: 1, arbitrary: fc.constant({}) },
    { weight: 1, arbitrary: printable.map((key) => ({ 'x-api-key': key })) },
    { weight: 1, arbitrary: printable.map((key) => ({ 'x-api-key': `wh_${key}` })) },
    { weight: 1, arbitrary: printable.map((token) => ({ authorization: `Bearer ${token}` })) },
    { weight: 1, arbitrary: fc.constantFrom(basic, 'Basic', 'Basic Og==', 'Basic !!!', `Basic ${Buffer.from(`${client.clientId}:wrong`).toString('base64')}`).map((authorization) => ({ authorization })) },
    { weight: 1, arbitrary: printable.map((authorization) => ({ authorization })) },
    { weight: 1, arbitrary: fc.constant({ 'x-api-key': '', authorization: `Bearer ${tokens.access_token}` }) },
  )

  const problems: string[] = []
  const onCrash = (error: unknown) => problems.push(String(error))
  process.on('uncaughtException', onCrash).on('unhandledRejection', onCrash)
  t.teardown(() => process.off('uncaughtException', onCrash).off('unhandledRejection', onCrash))

  t.comment(`FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} replays this run`)
  for (const [index, route] of routes.entries()) {
    const name = `${route.method} ${route.url}`
    if (!mine.includes(route) || NOT_FUZZED.has(name) || (ONLY && !ONLY.test(name))) continue
    await t.test(name, async (t) => {
      const cpuBefore = process.cpuUsage()
      const params = [...route.url.matchAll(/:(\w+)|\*/g)].map((m) => m[1] ?? '*')
      const resourceOf = (param: string) => route.url.split('/').at(route.url.split('/').indexOf(`:${param}`) - 1) ?? ''
      const existing = (param: string) => byParam[param] ?? ids[resourceOf(param)] ?? fixtures.all
      // A DELETE names a disposable record, made when needed and kept until a case removes it.
      const disposable = new Map<string, string>()
      const fresh = async (param: string) => {
        const make = route.method === 'DELETE' ? fixtures.disposable[resourceOf(param)] : undefined
        if (!make) return undefined
        if (!disposable.has(param)) disposable.set(param, await make())
        return disposable.get(param)
      }
      const headerSchema = route.schema.headers?.properties ?? {}
      const extraHeaders = fc.record(
        Object.fromEntries(Object.keys(headerSchema).filter((h) => h !== 'authorization').map((h) => [h, printable])),
        { requiredKeys: [] },
      ) as fc.Arbitrary<Record<string, string>>

      const request = fc.record({
        // Each DELETE that succeeds costs a fresh record (an OAuth client's costs a slow hash): fewer cases name one.
        segments: fc.tuple(...params.map(() => segment(route.method === 'DELETE' ? 1 : 8))),
        query: queryString(route.schema.querystring, fixtures),
        body: bodyOrOversized(route.schema.body, fixtures),
        credentials,
        headers: extraHeaders,
      })

      const property = fc.asyncProperty(request, async (c) => {
        let url = route.url
        for (const [i, param] of params.entries()) {
          const s = c.segments[i]!
          let value: string
          if (s.kind === 'existing') {
            const pool = existing(param)
            value = (await fresh(param)) ?? pool[s.index % pool.length]!
          } else value = s.kind === 'raw' ? s.value : safeEncode(s.value)
          url = url.replace(param === '*' ? '*' : `:${param}`, value)
        }
        const headers: Record<string, string> = { ...c.headers, ...c.credentials, ...(c.body.contentType !== undefined ? { 'content-type': c.body.contentType } : {}) }
        const options: InjectOptions = { method: route.method as InjectOptions['method'], url: url + c.query, headers, ...(c.body.payload !== undefined ? { payload: c.body.payload } : {}) }
        const response = answersEventStream(route) ? await injectStream(app, options) : await app.inject(options)
        const status = response.statusCode
        statuses.set(status, (statuses.get(status) ?? 0) + 1)
        if (status === 204) disposable.clear()
        const where = `${route.method} ${url + c.query} answered ${status}: ${response.body.slice(0, 300)}`
        // The web pages say how to build them when there is no build: a state of the install, not of the request.
        if (status === 503 && !webBuilt && /^\/(editor|dashboard)/.test(route.url)) return
        if (status >= 500) {
          const cause = failures.get(String(response.headers['x-request-id']))
          throw new Error(`${where}\n${cause?.stack ?? 'no error recorded'}`)
        }
        // docs/decisions/http-and-tenancy.md: every response carries its request id.
        if (!response.headers['x-request-id']) throw new Error(`no x-request-id: ${where}`)
        if (status < 400) return
        let error: Record<string, unknown>
        try {
          error = response.json() as Record<string, unknown>
        } catch {
          throw new Error(`not JSON: ${where}`)
        }
        // docs/decisions/flows-and-kanban.md: an invalid flow definition also lists its `problems`.
        const allowed = route.url.startsWith('/v1/flows') && status === 400 ? ['problems'] : []
        const extra = Object.keys(error).filter((key) => !['statusCode', 'message', 'error', ...allowed].includes(key))
        if (extra.length || error.statusCode !== status || typeof error.message !== 'string' || error.error !== STATUS_CODES[status]) throw new Error(`not the spec's error shape: ${where}`)
      })

      const statuses = new Map<number, number>()
      const details = await fc.check(property, { numRuns: RUNS, seed: SEED + index })
      const cpu = process.cpuUsage(cpuBefore)
      t.comment(`${[...statuses].sort(([a], [b]) => a - b).map(([status, count]) => `${status}×${count}`).join(' ')}; CPU ${Math.round((cpu.user + cpu.system) / 1000)} ms`)
      const known = KNOWN_ISSUES.get(name)
      if (known) t.ok(details.failed, `known issue still fails (${known}); take it off KNOWN_ISSUES once fixed`)
      else t.notOk(details.failed, details.failed ? assertionMessage(`${String(details.errorInstance)}\n${fc.defaultReportMessage(details)}`, { maxLength: 4000 }) : 'passed')
    })
  }

  t.same(problems, [], 'no uncaught exception or unhandled rejection')
  const health = await app.inject({ method: 'GET', url: '/healthz' })
  t.equal(health.statusCode, 200, 'the process still answers /healthz')
  t.equal((await app.inject({ method: 'GET', url: '/v1/workspaces', headers: { 'x-api-key': admin.apiKey } })).statusCode, 200, 'and still serves the API')
  const unknownKnown = [...KNOWN_ISSUES.keys()].filter((key) => !routes.some((r) => `${r.method} ${r.url}` === key))
  t.same(unknownKnown, [], 'every known issue names a route that exists')
}
