import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { openTestApp } from '../helpers/app.js'
import { oneBackend } from '../helpers/storage.js'

// The demo host page only plays the customer's side with the service's own endpoints, so one
// backend is enough here; the browser test drives it for real.

t.test('the embed demo: page, script, and a backend route that gets a one-time token', async (t) => {
  const { app, admin } = await openTestApp(t, oneBackend)
  const page = await app.inject({ method: 'GET', url: '/embed-demo' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  t.match(page.body, /<script type="module" src="\/embed-demo\/demo.js"><\/script>/)
  t.match(page.headers['content-security-policy'], /default-src 'self'/)
  const script = await app.inject({ method: 'GET', url: '/embed-demo/demo.js' })
  t.match(script.headers['content-type'], /^text\/javascript/)
  t.match(script.body, /postMessage\(\{ type: 'auth', ott: current\.ott \}, current\.origin\)/, 'the OTT goes to the editor origin only')

  const { clientId, clientSecret } = (await app.inject({ method: 'POST', url: '/v1/clients', headers: { 'x-api-key': admin.apiKey }, payload: { name: 'Demo' } })).json()
  const ott = await app.inject({ method: 'POST', url: '/embed-demo/ott', payload: { clientId, clientSecret } })
  t.equal(ott.statusCode, 200)
  const exchanged = await app.inject({ method: 'POST', url: '/auth/exchange', payload: { ott: ott.json().ott } })
  t.equal(exchanged.statusCode, 200, 'the token it got is a real one-time token')
  t.equal(exchanged.json().token_type, 'Bearer')

  const wrong = await app.inject({ method: 'POST', url: '/embed-demo/ott', payload: { clientId, clientSecret: 'nope' } })
  t.equal(wrong.statusCode, 401)
  t.same(Object.keys(wrong.json()).sort(), ['error', 'message', 'statusCode'])
  const bad = await app.inject({ method: 'POST', url: '/embed-demo/ott', payload: { clientId: 'x', clientSecret: 's' } })
  t.equal(bad.statusCode, 400)
})

t.test('the demo is off unless enabled when a database is configured', async (t) => {
  t.equal(loadConfig({}).embedDemo, true, 'on in the embedded default')
  t.equal(loadConfig({ DATABASE_URL: 'postgres://db/flowd' }).embedDemo, false)
  t.equal(loadConfig({ DATABASE_URL: 'postgres://db/flowd', EMBED_DEMO: 'true' }).embedDemo, true)
  const { app } = await openTestApp(t, oneBackend, { config: loadConfig({ EMBED_DEMO: 'false' }) })
  t.equal((await app.inject({ method: 'GET', url: '/embed-demo' })).statusCode, 404)
  t.equal((await app.inject({ method: 'POST', url: '/embed-demo/ott', payload: {} })).statusCode, 404)
})
