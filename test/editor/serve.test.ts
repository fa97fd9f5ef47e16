import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import { registerErrorHandling } from '../../src/http/errors.js'
import { defaultEditorDir, editorRoutes } from '../../src/http/routes/editor.js'
import { tempDir } from '../helpers/cli.js'

const FLOW = '0190a0b0-0000-7000-8000-0000000000f1'

async function appServing(t: Test, dir: string) {
  const app = Fastify()
  registerErrorHandling(app)
  await app.register(editorRoutes({ dir }))
  t.teardown(() => app.close())
  return app
}

function fakeBuild(dir: string) {
  mkdirSync(join(dir, 'assets'), { recursive: true })
  writeFileSync(join(dir, 'index.html'), '<!doctype html><div id="root"></div><script type="module" src="/editor/assets/index-abc123.js"></script>')
  writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log("editor")')
  writeFileSync(join(dir, 'assets', 'index-abc123.css'), 'body{}')
}

t.test('the editor page answers every address under /editor with its HTML', async (t) => {
  const dir = tempDir(t)
  fakeBuild(dir)
  const app = await appServing(t, dir)

  for (const url of [`/editor/en/flows/builder/${FLOW}?theme=dark`, `/editor/pt/flows/builder/${FLOW}`, '/editor/xx/anything/else', '/editor', '/editor/']) {
    const response = await app.inject({ method: 'GET', url })
    t.equal(response.statusCode, 200, url)
    t.match(response.headers['content-type'], /^text\/html/, `${url} is HTML`)
    t.match(response.body, /<div id="root">/)
    t.equal(response.headers['cache-control'], 'no-cache', 'the page is revalidated, so a new build shows at once')
    t.match(response.headers['content-security-policy'], /frame-ancestors \*/, 'any site may frame it')
    t.match(response.headers['content-security-policy'], /script-src 'self'/)
    t.notOk(response.headers['x-frame-options'], 'no header forbids framing')
  }
})

t.test('built assets are served with a year-long immutable cache, anything else under assets is 404', async (t) => {
  const dir = tempDir(t)
  fakeBuild(dir)
  const app = await appServing(t, dir)

  const script = await app.inject({ method: 'GET', url: '/editor/assets/index-abc123.js' })
  t.equal(script.statusCode, 200)
  t.equal(script.body, 'console.log("editor")')
  t.match(script.headers['content-type'], /^text\/javascript/)
  t.equal(script.headers['cache-control'], 'public, max-age=31536000, immutable')
  const style = await app.inject({ method: 'GET', url: '/editor/assets/index-abc123.css' })
  t.match(style.headers['content-type'], /^text\/css/)

  for (const url of ['/editor/assets/missing.js', '/editor/assets/..%2F..%2Fpackage.json', '/editor/assets/nested/index-abc123.js', '/editor/assets/index-abc123.exe']) {
    const response = await app.inject({ method: 'GET', url })
    t.equal(response.statusCode, 404, url)
    t.same(Object.keys(response.json()).sort(), ['error', 'message', 'statusCode'], `${url}: the spec's error shape`)
  }
})

t.test('without a build the editor answers 503 with a page that says how to build it', async (t) => {
  const app = await appServing(t, join(tempDir(t), 'nothing-here'))
  const response = await app.inject({ method: 'GET', url: `/editor/en/flows/builder/${FLOW}` })
  t.equal(response.statusCode, 503)
  t.match(response.headers['content-type'], /^text\/html/)
  t.match(response.body, /npm run build:editor/)
  t.equal(response.headers['cache-control'], 'no-store')
})

t.test('the service looks for the build in dist/editor at the package root', async (t) => {
  t.match(defaultEditorDir(), /[/\\]dist[/\\]editor$/)
  t.notMatch(defaultEditorDir(), /[/\\]dist[/\\]dist[/\\]/)
})
