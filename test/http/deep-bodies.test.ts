import { randomUUID } from 'node:crypto'
import t from 'tap'
import { MAX_BODY_DEPTH, validatorCompiler } from '../../src/http/validation.js'
import { openTestApp } from '../helpers/app.js'
import { withRoutes } from '../helpers/routes.js'
import { oneBackend } from '../helpers/storage.js'

/** `{"name":"x","junk":[[…]]}` whose deepest array is `depth` levels below the top object. */
const nestedBody = (depth: number) => `{"name":"x","junk":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`

const parsed = (text: string): Record<string, unknown> | undefined => {
  try {
    return JSON.parse(text) as Record<string, unknown>
  } catch {
    return undefined
  }
}

t.test('a body nested deeper than the limit is a 400 on every route that takes a body', async (t) => {
  const { app, admin, routes } = await withRoutes(() => openTestApp(t, oneBackend))
  const client = await app.inject({ method: 'POST', url: '/v1/clients', headers: { 'x-api-key': admin.apiKey }, payload: { name: 'Portal' } })
  t.equal(client.statusCode, 201, 'an OAuth client for /auth/iframe-token')
  const { clientId, clientSecret } = client.json() as { clientId: string; clientSecret: string }
  const signedIn = await app.inject({ method: 'POST', url: '/auth/session', payload: { apiKey: admin.apiKey } })
  const dashboardSession = {
    cookie: String(signedIn.headers['set-cookie']).split(';')[0]!,
    'x-csrf-token': (signedIn.json() as { csrfToken: string }).csrfToken,
  }
  const credentialsFor = (url: string): Record<string, string> =>
    url.startsWith('/v1/')
      ? { 'x-api-key': admin.apiKey }
      : url === '/auth/iframe-token'
        ? { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` }
        : url === '/auth/session/editor-token'
          ? dashboardSession
          : {}

  const withBody = routes.filter((route) => route.schema.body !== undefined)
  const names = withBody.map(({ method, url }) => `${method} ${url}`)
  t.ok(names.includes('POST /auth/iframe-token') && names.includes('PUT /v1/flows/:id/definition') && names.length > 20, `${names.length} routes take a body`)

  const deep = nestedBody(100_000)
  t.ok(Buffer.byteLength(deep) < 1024 * 1024, 'the body is within the size limit')
  for (const { method, url } of withBody) {
    const response = await app.inject({
      method: method as 'POST',
      url: url.replace(/:\w+/g, () => randomUUID()),
      headers: { ...credentialsFor(url), 'content-type': 'application/json' },
      payload: deep,
    })
    const name = `${method} ${url}`
    t.equal(response.statusCode, 400, `${name}: 400`)
    const body = parsed(response.body)
    t.same(Object.keys(body ?? {}).sort(), ['error', 'message', 'statusCode'], `${name}: the spec error shape`)
    t.equal(body?.message, `body must not nest deeper than ${MAX_BODY_DEPTH} levels`, `${name}: the message names the nesting`)
  }
})

t.test('a body nested as deep as the limit is taken', async (t) => {
  const { app, admin } = await openTestApp(t, oneBackend)
  const key = { 'x-api-key': admin.apiKey, 'content-type': 'application/json' }
  const atLimit = await app.inject({ method: 'POST', url: '/v1/workspaces', headers: key, payload: nestedBody(MAX_BODY_DEPTH) })
  t.equal(atLimit.statusCode, 201, `${MAX_BODY_DEPTH} levels: created`)
  const overLimit = await app.inject({ method: 'POST', url: '/v1/workspaces', headers: key, payload: nestedBody(MAX_BODY_DEPTH + 1) })
  t.equal(overLimit.statusCode, 400, `${MAX_BODY_DEPTH + 1} levels: 400`)
})

t.test('the check for unstorable text walks a value of any depth', async (t) => {
  const validate = validatorCompiler({ schema: {}, method: 'POST', url: '/', httpPart: 'body' }) as ((data: unknown) => boolean) & { errors: { instancePath: string }[] | null }
  const depth = 100_000
  let deepest: unknown = { text: 'a\u0000b' }
  for (let level = 0; level < depth; level++) deepest = [deepest]
  t.notOk(validate({ junk: deepest }), 'U+0000 at the bottom is found')
  t.equal(validate.errors?.[0]?.instancePath, `/junk${'/0'.repeat(depth)}/text`, 'at its path')
})

t.test('a route schema is checked when the route is made, and compiled when first used', async (t) => {
  t.throws(() => validatorCompiler({ schema: { type: 'object', properties: { name: { type: 'text' } } }, method: 'POST', url: '/', httpPart: 'body' }), /invalid body schema/, 'a malformed schema fails at once')
  const validate = validatorCompiler({ schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } }, method: 'POST', url: '/', httpPart: 'body' }) as ((data: unknown) => boolean) & { errors: { message?: string }[] | null }
  t.equal(validate.errors, null, 'no errors before any call')
  t.notOk(validate({}), 'a body without the required property is refused')
  t.match(validate.errors, [{ message: "must have required property 'name'" }], "with Ajv's words")
  t.ok(validate({ name: 'Ana' }), 'a body with it is taken')
  t.equal(validate.errors, null, 'and the errors of the call before are gone')
})
