import { readFileSync } from 'node:fs'
import { Ajv2020 } from 'ajv/dist/2020.js'
import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { serviceAddress } from '../../src/http/openapi.js'
import { openTestApp } from '../helpers/app.js'
import { withRoutes } from '../helpers/routes.js'
import { apiBackends } from '../helpers/storage.js'

const COMMITTED = new URL('../../openapi.json', import.meta.url)
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const
const isApi = (url: string) => /^\/(v1|auth)\//.test(url) || url === '/healthz' || url === '/readyz'
const SOME_ID = '0190a0b0-0000-7000-8000-0000000000f9'

/**
 * The structure OpenAPI 3.1 requires of the objects this document uses (the REQUIRED fields and
 * fixed values of §4.8 of the specification). The official schema is not a dependency of this
 * project; together with the checks below (every `$ref` resolves, every schema is JSON Schema
 * 2020-12, which is what 3.1's Schema Object is) this catches what a generator can get wrong.
 */
const OPENAPI_31_STRUCTURE = {
  type: 'object',
  required: ['openapi', 'info', 'paths'],
  properties: {
    openapi: { type: 'string', pattern: '^3\\.1\\.\\d+$' },
    info: { type: 'object', required: ['title', 'version'], properties: { title: { type: 'string' }, version: { type: 'string' } } },
    servers: { type: 'array', items: { type: 'object', required: ['url'], properties: { url: { type: 'string' } } } },
    tags: { type: 'array', items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } },
    paths: {
      type: 'object',
      propertyNames: { pattern: '^/' },
      additionalProperties: {
        type: 'object',
        propertyNames: { enum: [...METHODS, 'summary', 'description', 'servers', 'parameters'] },
        additionalProperties: { $ref: '#/$defs/operation' },
      },
    },
    components: {
      type: 'object',
      properties: {
        schemas: { type: 'object', additionalProperties: { type: ['object', 'boolean'] } },
        securitySchemes: { type: 'object', additionalProperties: { $ref: '#/$defs/securityScheme' } },
      },
    },
  },
  $defs: {
    operation: {
      type: 'object',
      required: ['responses'],
      properties: {
        tags: { type: 'array', items: { type: 'string' } },
        summary: { type: 'string' },
        parameters: { type: 'array', items: { $ref: '#/$defs/parameter' } },
        requestBody: { type: 'object', required: ['content'], properties: { content: { $ref: '#/$defs/content' } } },
        responses: {
          type: 'object',
          minProperties: 1,
          propertyNames: { pattern: '^([1-5](\\d\\d|XX)|default)$' },
          additionalProperties: { type: 'object', required: ['description'], properties: { description: { type: 'string' }, content: { $ref: '#/$defs/content' } } },
        },
        security: { type: 'array', items: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } } },
      },
    },
    parameter: {
      type: 'object',
      required: ['name', 'in'],
      properties: { name: { type: 'string' }, in: { enum: ['query', 'header', 'path', 'cookie'] }, required: { type: 'boolean' } },
      // A path parameter is always required; a parameter has a schema or a content map.
      if: { properties: { in: { const: 'path' } } },
      then: { required: ['required'], properties: { required: { const: true } } },
      oneOf: [{ required: ['schema'] }, { required: ['content'] }],
    },
    content: { type: 'object', additionalProperties: { type: 'object', properties: { schema: { type: ['object', 'boolean'] } } } },
    securityScheme: {
      type: 'object',
      required: ['type'],
      properties: { type: { enum: ['apiKey', 'http', 'mutualTLS', 'oauth2', 'openIdConnect'] } },
      allOf: [
        { if: { properties: { type: { const: 'apiKey' } } }, then: { required: ['name', 'in'], properties: { in: { enum: ['query', 'header', 'cookie'] } } } },
        { if: { properties: { type: { const: 'http' } } }, then: { required: ['scheme'] } },
      ],
    },
  },
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
interface Operation {
  tags?: string[]
  summary?: string
  security?: Record<string, string[]>[]
  parameters?: { name: string; in: string; required?: boolean }[]
  requestBody?: { content: Record<string, { schema?: Json; example?: Json; examples?: Json }> }
  responses: Record<string, { description: string; content?: Record<string, { schema?: { $ref?: string; properties?: Record<string, Json>; required?: string[] } }> }>
}
interface Document {
  openapi: string
  servers: { url: string }[]
  tags: { name: string }[]
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, Json>; securitySchemes: Record<string, Json> }
}

const operationsOf = (document: Document) =>
  Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ path, method, operation })))

/** Every value in `node` with its JSON pointer. */
function* walk(node: Json, pointer = ''): Generator<[string, Json]> {
  yield [pointer, node]
  if (node && typeof node === 'object') for (const [key, value] of Object.entries(node)) yield* walk(value, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`)
}

const resolvePointer = (document: Json, pointer: string): Json | undefined =>
  pointer
    .split('/')
    .slice(1)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<Json | undefined>((node, key) => (node && typeof node === 'object' ? (node as Record<string, Json>)[key] : undefined), document)

for (const backend of apiBackends) {
  t.test(`the OpenAPI document on ${backend.name}`, async (t) => {
    const { app, admin, routes } = await withRoutes(() => openTestApp(t, backend))

    const served = await app.inject({ method: 'GET', url: '/openapi.json' })
    t.equal(served.statusCode, 200, '/openapi.json needs no key')
    t.match(served.headers['content-type'], /^application\/json/)
    const document = served.json() as Document
    const operations = operationsOf(document)

    t.test('openapi.json at the repository root is the document the routes make', async (t) => {
      t.same(document, JSON.parse(readFileSync(COMMITTED, 'utf8')), 'openapi.json is out of date: run `npm run openapi` and commit the file')
    })

    t.test('it is an OpenAPI 3.1 document whose schemas are JSON Schema 2020-12 and whose references resolve', async (t) => {
      const ajv = new Ajv2020({ allErrors: true, strict: false })
      const structure = ajv.compile(OPENAPI_31_STRUCTURE)
      t.ok(structure(document), `the structure OpenAPI 3.1 requires: ${ajv.errorsText(structure.errors)}`)
      t.equal(document.openapi, '3.1.0')

      const schemas = [...walk(document as unknown as Json)].filter(([pointer]) => /\/schema$|^\/components\/schemas\/[^/]+$/.test(pointer))
      t.ok(schemas.length > 100, `${schemas.length} schemas`)
      const invalid = schemas.filter(([, schema]) => !ajv.validateSchema(schema as object)).map(([pointer]) => `${pointer}: ${ajv.errorsText()}`)
      t.same(invalid, [], 'every schema is valid JSON Schema 2020-12')

      const refs = [...walk(document as unknown as Json)].filter(([pointer]) => pointer.endsWith('/$ref'))
      t.ok(refs.length > 0, `${refs.length} references`)
      const dangling = refs.filter(([, ref]) => typeof ref !== 'string' || !ref.startsWith('#/') || resolvePointer(document as unknown as Json, ref.slice(1)) === undefined)
      t.same(dangling, [], 'every $ref points at something in the document')
    })

    t.test('every API route is there with its methods; pages are not', async (t) => {
      const documented = new Set(operations.map(({ path, method }) => `${method.toUpperCase()} ${path}`))
      const api = routes.filter((route) => isApi(route.url)).map(({ method, url }) => `${method} ${url.replace(/:(\w+)/g, '{$1}')}`)
      t.ok(api.length > 45, `${api.length} API routes`)
      t.same(api.filter((route) => !documented.has(route)), [], 'every /v1, /auth and health route is documented')
      t.same([...documented].filter((operation) => !api.includes(operation)), [], 'nothing else is: no editor, docs or demo page')
      t.ok(routes.some((route) => route.url.startsWith('/editor')) && routes.some((route) => route.url.startsWith('/docs')), 'although those pages are served')
    })

    t.test('every operation has a summary, known tags, its path parameters, examples and an ErrorResponse for each error', async (t) => {
      const tags = new Set(document.tags.map((tag) => tag.name))
      for (const { path, method, operation } of operations) {
        const name = `${method.toUpperCase()} ${path}`
        t.ok(operation.summary, `${name} has a summary`)
        t.ok(operation.tags?.length && operation.tags.every((tag) => tags.has(tag)), `${name} has tags described at the top`)
        const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])
        t.same(operation.parameters?.filter((p) => p.in === 'path').map((p) => p.name) ?? [], inPath, `${name} declares its path parameters`)
        t.ok(Object.keys(operation.responses).some((status) => /^2/.test(status)), `${name} has a success response`)
        if (path.startsWith('/v1/')) t.ok(['401', '403', '503'].every((status) => status in operation.responses), `${name} may answer 401, 403 and 503`)
        for (const [status, response] of Object.entries(operation.responses)) {
          if (!/^[45]/.test(status) || !response.content) continue
          const schema = response.content['application/json']?.schema
          const isErrorShape = schema?.$ref === '#/components/schemas/ErrorResponse' || ['statusCode', 'message', 'error'].every((field) => schema?.required?.includes(field))
          t.ok(isErrorShape, `${name} ${status} is the spec's error shape`)
        }
        for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
          const example = media.example ?? media.examples
          t.ok(example !== undefined, `${name} ${type} body has an example`)
        }
      }
    })

    t.test('the security each operation lists is what the service asks for', async (t) => {
      const client = (await app.inject({ method: 'POST', url: '/v1/clients', headers: { 'x-api-key': admin.apiKey }, payload: { name: 'Docs' } })).json()
      const basic = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`
      const ott = (await app.inject({ method: 'POST', url: '/auth/iframe-token', headers: { authorization: basic } })).json().ott
      const editorToken = (await app.inject({ method: 'POST', url: '/auth/exchange', payload: { ott } })).json().access_token
      t.ok(editorToken, 'an editor access token')

      for (const { path, method, operation } of operations) {
        const name = `${method.toUpperCase()} ${path}`
        const url = path.replace(/\{version\}/, '1').replace(/\{\w+\}/g, SOME_ID)
        const call = (headers: Record<string, string>) =>
          app.inject({ method: method.toUpperCase() as 'GET', url, headers, ...(operation.requestBody ? { payload: {} } : {}) })
        const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement))
        const anonymous = await call({})
        if (schemes.length) t.equal(anonymous.statusCode, 401, `${name} lists ${schemes.join(' or ')}: without credentials it is 401`)
        else t.not(anonymous.statusCode, 401, `${name} lists no security: it answers without credentials`)
        if (path.startsWith('/v1/')) {
          const asEditor = await call({ authorization: `Bearer ${editorToken}` })
          if (schemes.includes('editorBearer')) t.notOk([401, 403].includes(asEditor.statusCode), `${name} lists the editor's token, which reaches it (${asEditor.statusCode})`)
          else t.equal(asEditor.statusCode, 403, `${name} does not list the editor's token, which gets 403`)
          t.ok(schemes.includes('apiKey'), `${name} lists the API key`)
        }
      }
      t.same(
        operations.filter(({ path }) => path.startsWith('/auth/')).map(({ path, operation }) => [path, operation.security ?? []]),
        [
          ['/auth/iframe-token', [{ oauthClient: [] }]],
          ['/auth/exchange', []],
          ['/auth/refresh', []],
          ['/auth/session', []],
          ['/auth/session', [{ dashboardSession: [] }]],
          ['/auth/session', [{ dashboardSession: [] }]],
          ['/auth/session/editor-token', [{ dashboardSession: [] }]],
        ],
        'an OAuth client signs /auth/iframe-token; the exchange, the refresh and the dashboard sign-in carry their token in the body; the rest of the dashboard session needs its cookie',
      )
    })

    t.test('the servers entry follows HOST and PORT', async (t) => {
      t.same(document.servers.map((server) => server.url), [serviceAddress(loadConfig({}))])
      t.equal(serviceAddress(loadConfig({})), 'http://127.0.0.1:3000')
      t.equal(serviceAddress(loadConfig({ HOST: '10.1.2.3', PORT: '8080' })), 'http://10.1.2.3:8080')
      t.equal(serviceAddress(loadConfig({ HOST: '0.0.0.0', PORT: '80' })), 'http://localhost:80', 'all interfaces are reached as localhost')
      t.equal(serviceAddress(loadConfig({ HOST: '::1' })), 'http://[::1]:3000')
    })

    t.test('/docs serves Swagger UI on the same document without a key', async (t) => {
      const page = await app.inject({ method: 'GET', url: '/docs' })
      t.equal(page.statusCode, 200)
      t.match(page.headers['content-type'], /^text\/html/)
      t.match(page.body, /swagger-ui/)
      const script = await app.inject({ method: 'GET', url: '/docs/static/swagger-ui-bundle.js' })
      t.equal(script.statusCode, 200, 'its script')
      const json = await app.inject({ method: 'GET', url: '/docs/json' })
      t.equal(json.statusCode, 200)
      const { servers, ...rest } = json.json()
      t.same(servers, [{ url: '/', description: 'this service' }], '"Try it out" calls the address the page came from')
      const { servers: _servers, ...expected } = document
      t.same(rest, expected, 'otherwise the same document')
      const missing = await app.inject({ method: 'GET', url: '/docs/static/nothing.js' })
      t.equal(missing.statusCode, 404)
      t.same(Object.keys(missing.json()).sort(), ['error', 'message', 'statusCode'], "a missing file is 404 in the spec's shape")
    })
  })
}
