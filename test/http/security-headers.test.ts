import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Fastify from 'fastify'
import t from 'tap'
import { ConfigError, loadConfig } from '../../src/config.js'
import { registerErrorHandling } from '../../src/http/errors.js'
import { webRoutes } from '../../src/http/routes/web.js'
import { openTestApp } from '../helpers/app.js'
import { tempDir } from '../helpers/cli.js'
import { oneBackend } from '../helpers/storage.js'

// Headers only: one backend is enough (nothing here reaches the database but one list call).

const FLOW = '0190a0b0-0000-7000-8000-0000000000f1'

/** A CSP header as a map of directive → sources. */
const directives = (header: unknown) =>
  Object.fromEntries(
    String(header ?? '')
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...sources]) => [name!, sources]),
  )

/** The headers helmet adds to a page, none of which the JSON API sends. */
const PAGE_ONLY = ['content-security-policy', 'x-frame-options', 'strict-transport-security', 'cross-origin-opener-policy', 'cross-origin-resource-policy', 'origin-agent-cluster', 'x-dns-prefetch-control', 'x-permitted-cross-domain-policies']

t.test('the app: the editor may be framed where EDITOR_FRAME_ANCESTORS says, the docs page by itself only, and the JSON API answers as before', async (t) => {
  const config = loadConfig({ EDITOR_FRAME_ANCESTORS: "'self' https://app.example.com, https://*.example.org" })
  const { app, admin } = await openTestApp(t, oneBackend, { config })

  // Built or not (503 then), the page carries its headers.
  const editor = await app.inject({ method: 'GET', url: `/editor/en/flows/builder/${FLOW}?theme=dark` })
  const editorPolicy = directives(editor.headers['content-security-policy'])
  t.same(editorPolicy['frame-ancestors'], ["'self'", 'https://app.example.com', 'https://*.example.org'], 'the configured sites may frame the editor')
  t.same(editorPolicy['script-src'], ["'self'"], 'only its own scripts')
  t.same(editorPolicy['connect-src'], ["'self'"], 'only its own API')
  t.same(editorPolicy['form-action'], ["'none'"])
  t.notOk(editor.headers['x-frame-options'], 'no X-Frame-Options: it cannot name several sites, and would forbid the framing')
  t.equal(editor.headers['x-content-type-options'], 'nosniff')
  t.equal(editor.headers['referrer-policy'], 'no-referrer')
  t.equal(editor.headers['cross-origin-resource-policy'], 'cross-origin', 'a host page that isolates itself may still frame it')
  t.notOk(editor.headers['x-powered-by'])
  const asset = await app.inject({ method: 'GET', url: '/assets/missing.js' })
  t.equal(asset.statusCode, 404)
  t.equal(asset.headers['x-content-type-options'], 'nosniff', 'the assets are covered too, even when missing')

  const docs = await app.inject({ method: 'GET', url: '/docs' })
  t.equal(docs.statusCode, 200)
  const docsPolicy = directives(docs.headers['content-security-policy'])
  t.same(docsPolicy['script-src'], ["'self'"], 'Swagger UI runs its own files only')
  t.same(docsPolicy['connect-src'], ["'self'"], '"Try it out" calls this service only')
  t.same(docsPolicy['frame-ancestors'], ["'self'"])
  t.notOk('upgrade-insecure-requests' in docsPolicy, 'a service on plain http keeps its own address')
  t.equal(docs.headers['x-frame-options'], 'SAMEORIGIN')
  t.equal(docs.headers['x-content-type-options'], 'nosniff')
  const docsAsset = await app.inject({ method: 'GET', url: '/docs/static/swagger-ui.css' })
  t.equal(docsAsset.statusCode, 200)
  t.ok(docsAsset.headers['content-security-policy'], 'its files too')

  const demo = await app.inject({ method: 'GET', url: '/embed-demo' })
  const demoPolicy = directives(demo.headers['content-security-policy'])
  t.same(demoPolicy['frame-src'], ['*'], 'the demo frames the editor wherever EDITOR_URL puts it')
  t.same(demoPolicy['default-src'], ["'self'"])

  for (const request of [
    { method: 'GET' as const, url: '/v1/workspaces', headers: { 'x-api-key': admin.apiKey } },
    { method: 'GET' as const, url: '/v1/workspaces' },
    { method: 'POST' as const, url: '/auth/exchange', payload: { ott: 'nope' } },
    { method: 'GET' as const, url: '/healthz' },
    { method: 'GET' as const, url: '/openapi.json' },
    { method: 'GET' as const, url: '/no/such/route' },
  ]) {
    const response = await app.inject(request)
    t.same(PAGE_ONLY.filter((header) => header in response.headers), [], `${request.method} ${request.url} (${response.statusCode}): no page headers`)
    t.match(response.headers['content-type'], /^application\/json/)
  }
})

t.test('the editor alone (as the tests of its build serve it) is framed by any site by default', async (t) => {
  const dir = tempDir(t)
  mkdirSync(join(dir, 'assets'), { recursive: true })
  writeFileSync(join(dir, 'editor.html'), '<!doctype html><div id="root"></div>')
  const app = Fastify()
  registerErrorHandling(app)
  await app.register(webRoutes({ dir }))
  t.teardown(() => app.close())
  const page = await app.inject({ method: 'GET', url: `/editor/pt/flows/builder/${FLOW}` })
  t.equal(page.statusCode, 200)
  t.same(directives(page.headers['content-security-policy'])['frame-ancestors'], ['*'])
  t.equal(page.headers['cache-control'], 'no-cache')
})

t.test('EDITOR_FRAME_ANCESTORS takes CSP sources and nothing that could change the policy', async (t) => {
  t.same(loadConfig({}).editorFrameAncestors, ['*'], 'any site by default, as before')
  t.same(loadConfig({ EDITOR_FRAME_ANCESTORS: "'none'" }).editorFrameAncestors, ["'none'"])
  t.same(loadConfig({ EDITOR_FRAME_ANCESTORS: ' https: http://localhost:5173 ' }).editorFrameAncestors, ['https:', 'http://localhost:5173'])
  for (const bad of ["https://a.example.com; script-src 'unsafe-inline'", "'unsafe-inline'", 'https://a.example.com/"x', "'none' https://a.example.com", 'https://exa mple.com%']) {
    const problems = (() => {
      try {
        loadConfig({ EDITOR_FRAME_ANCESTORS: bad })
        return []
      } catch (error) {
        return error instanceof ConfigError ? error.problems : [String(error)]
      }
    })()
    t.match(problems, [/^EDITOR_FRAME_ANCESTORS: /], `refused: ${bad}`)
  }
})
