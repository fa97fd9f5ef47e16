import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { brotliCompressSync, gzipSync } from 'node:zlib'
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import { registerErrorHandling } from '../../src/http/errors.js'
import { defaultWebDir, webRoutes } from '../../src/http/routes/web.js'
import { tempDir } from '../helpers/cli.js'

const FLOW = '0190a0b0-0000-7000-8000-0000000000f1'

async function appServing(t: Test, dir: string) {
  const app = Fastify()
  registerErrorHandling(app)
  await app.register(webRoutes({ dir }))
  t.teardown(() => app.close())
  return app
}

function fakeBuild(dir: string) {
  mkdirSync(join(dir, 'assets'), { recursive: true })
  writeFileSync(join(dir, 'editor.html'), '<!doctype html><div id="root"></div><script type="module" src="/assets/editor-abc123.js"></script>')
  writeFileSync(join(dir, 'dashboard.html'), '<!doctype html><div id="root" data-app="dashboard"></div><script type="module" src="/assets/dashboard-abc123.js"></script>')
  writeFileSync(join(dir, 'assets', 'editor-abc123.js'), 'console.log("editor")')
  writeFileSync(join(dir, 'assets', 'editor-abc123.css'), 'body{}')
  writeFileSync(join(dir, 'assets', 'editor-abc123.js.map'), '{"version":3}')
  const script = 'console.log("dashboard")'
  writeFileSync(join(dir, 'assets', 'dashboard-abc123.js'), script)
  writeFileSync(join(dir, 'assets', 'dashboard-abc123.js.gz'), gzipSync(script))
  writeFileSync(join(dir, 'assets', 'dashboard-abc123.js.br'), brotliCompressSync(script))
}

t.test('the editor page answers every address under /editor with its HTML', async (t) => {
  const dir = tempDir(t)
  fakeBuild(dir)
  const app = await appServing(t, dir)

  for (const url of [`/editor/en/flows/builder/${FLOW}?theme=dark`, `/editor/pt/flows/builder/${FLOW}`, '/editor/xx/anything/else', '/editor', '/editor/']) {
    const response = await app.inject({ method: 'GET', url })
    t.equal(response.statusCode, 200, url)
    t.match(response.headers['content-type'], /^text\/html/, `${url} is HTML`)
    t.match(response.body, /editor-abc123\.js/)
    t.equal(response.headers['cache-control'], 'no-cache', 'the page is revalidated, so a new build shows at once')
    t.match(response.headers['content-security-policy'], /frame-ancestors \*/, 'any site may frame it')
    t.match(response.headers['content-security-policy'], /script-src 'self'/)
    t.notOk(response.headers['x-frame-options'], 'no header forbids framing')
  }
})

t.test('the dashboard answers every address under /dashboard, and / and /app lead there', async (t) => {
  const dir = tempDir(t)
  fakeBuild(dir)
  const app = await appServing(t, dir)

  for (const url of ['/dashboard', '/dashboard/', '/dashboard/workspaces', '/dashboard/sign-in']) {
    const response = await app.inject({ method: 'GET', url })
    t.equal(response.statusCode, 200, url)
    t.match(response.body, /dashboard-abc123\.js/)
    const csp = String(response.headers['content-security-policy'])
    t.match(csp, /script-src 'self'(;|$)/, 'only its own scripts: no inline script')
    t.notMatch(csp, /script-src[^;]*unsafe-inline/)
    t.match(csp, /frame-ancestors 'self'/, 'no other site frames it')
    t.equal(response.headers['x-frame-options'], 'SAMEORIGIN')
  }
  for (const url of ['/', '/app']) {
    const response = await app.inject({ method: 'GET', url })
    t.equal(response.statusCode, 302, url)
    t.equal(response.headers.location, '/dashboard/')
  }
})

t.test('built assets are served compressed when the browser takes it, with a year-long immutable cache', async (t) => {
  const dir = tempDir(t)
  fakeBuild(dir)
  const app = await appServing(t, dir)

  const plain = await app.inject({ method: 'GET', url: '/assets/editor-abc123.js' })
  t.equal(plain.statusCode, 200)
  t.equal(plain.body, 'console.log("editor")')
  t.match(plain.headers['content-type'], /^text\/javascript/)
  t.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable')
  t.equal(plain.headers.vary, 'accept-encoding')
  const style = await app.inject({ method: 'GET', url: '/assets/editor-abc123.css' })
  t.match(style.headers['content-type'], /^text\/css/)

  const brotli = await app.inject({ method: 'GET', url: '/assets/dashboard-abc123.js', headers: { 'accept-encoding': 'gzip, deflate, br' } })
  t.equal(brotli.headers['content-encoding'], 'br')
  t.match(brotli.headers['content-type'], /^text\/javascript/)
  const gzip = await app.inject({ method: 'GET', url: '/assets/dashboard-abc123.js', headers: { 'accept-encoding': 'gzip' } })
  t.equal(gzip.headers['content-encoding'], 'gzip')
  t.equal(gzip.rawPayload.length, gzipSync('console.log("dashboard")').length)
  const identity = await app.inject({ method: 'GET', url: '/assets/dashboard-abc123.js', headers: { 'accept-encoding': 'identity' } })
  t.notOk(identity.headers['content-encoding'])
  t.equal(identity.body, 'console.log("dashboard")')

  for (const url of ['/assets/missing.js', '/assets/..%2F..%2Fpackage.json', '/assets/nested/editor-abc123.js', '/assets/editor-abc123.exe', '/assets/editor-abc123.js.map']) {
    const response = await app.inject({ method: 'GET', url })
    t.equal(response.statusCode, 404, `${url}: source maps and unknown files are never served`)
    t.same(Object.keys(response.json()).sort(), ['error', 'message', 'statusCode'], `${url}: the spec's error shape`)
  }
})

t.test('without a build the pages answer 503 with a page that says how to build them', async (t) => {
  const app = await appServing(t, join(tempDir(t), 'nothing-here'))
  for (const url of [`/editor/en/flows/builder/${FLOW}`, '/dashboard/']) {
    const response = await app.inject({ method: 'GET', url })
    t.equal(response.statusCode, 503, url)
    t.match(response.headers['content-type'], /^text\/html/)
    t.match(response.body, /npm run build:web/)
    t.equal(response.headers['cache-control'], 'no-store')
  }
})

t.test('the service looks for the build in dist/web at the package root', async (t) => {
  t.match(defaultWebDir(), /[/\\]dist[/\\]web$/)
  t.notMatch(defaultWebDir(), /[/\\]dist[/\\]dist[/\\]/)
})
