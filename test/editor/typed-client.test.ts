import type { AddressInfo } from 'node:net'
import type { Page } from 'playwright-core'
import t from 'tap'
import { browserSkipReason, launchBrowser, serveHostPage, waitForMessage } from '../helpers/browser.js'
import { openTestApp } from '../helpers/app.js'
import { oneBackend } from '../helpers/storage.js'

// The editor's calls go through its typed client, whose middleware carries the access token,
// renews it on a 401 and sends the call once more. The 401s here are answered by the browser
// (the service would accept the token), so each case controls exactly which call is refused.
const skip = browserSkipReason()

interface Sent {
  authorization: string | undefined
  body: string | null
}

/** Answers the first `method` call to `path` with a 401 and lets the later ones through; records each. */
async function refuseFirst(page: Page, method: string, path: RegExp): Promise<Sent[]> {
  const sent: Sent[] = []
  await page.route(
    (url) => path.test(url.pathname),
    async (route) => {
      const request = route.request()
      if (request.method() !== method) return route.fallback()
      sent.push({ authorization: request.headers()['authorization'], body: request.postData() })
      if (sent.length > 1) return route.fallback()
      return route.fulfill({ status: 401, contentType: 'application/json', body: JSON.stringify({ statusCode: 401, error: 'Unauthorized', message: 'expired' }) })
    },
  )
  return sent
}

t.test('the editor on its typed client: a refused token is renewed and the call sent again', { skip }, async (t) => {
  const service = await openTestApp(t, oneBackend)
  await service.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`
  const key = { 'x-api-key': service.admin.apiKey }
  const client = (await service.app.inject({ method: 'POST', url: '/v1/clients', headers: key, payload: { name: 'Portal' } })).json()
  const basic = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`
  const ott = (await service.app.inject({ method: 'POST', url: '/auth/iframe-token', headers: { authorization: basic } })).json().ott
  const flowId = (await service.app.inject({ method: 'POST', url: '/v1/flows', headers: key, payload: { name: 'Retry' } })).json().id
  t.type(ott, 'string', 'the host has a one-time token')
  t.type(flowId, 'string', 'the flow exists')
  // A draft other than version 1, so that there is something to publish: its end moved.
  const { definition } = (await service.app.inject({ method: 'GET', url: `/v1/flows/${flowId}`, headers: key })).json()
  const moved = { ...definition, nodes: definition.nodes.map((n: { type: string; position: { x: number; y: number } }) => (n.type === 'end' ? { ...n, position: { x: n.position.x + 40, y: n.position.y } } : n)) }
  t.equal((await service.app.inject({ method: 'PUT', url: `/v1/flows/${flowId}/definition`, headers: key, payload: moved })).statusCode, 200, 'its draft differs from version 1')

  const browser = await launchBrowser(t)
  const host = await serveHostPage(t)
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } })
  t.teardown(() => page.close())
  page.setDefaultTimeout(10_000)
  let refreshes = 0
  page.on('request', (request) => {
    if (new URL(request.url()).pathname === '/auth/refresh') refreshes++
  })
  const flowReads = await refuseFirst(page, 'GET', new RegExp(`^/v1/flows/${flowId}$`))
  const publishes = await refuseFirst(page, 'POST', /\/publish$/)
  const saves = await refuseFirst(page, 'PUT', /\/definition$/)
  const editor = page.frameLocator('#editor')

  await page.goto(host.url(`${base}/editor/en/flows/builder/${flowId}`, ott))
  await editor.getByTestId('node-start').waitFor()
  t.equal(flowReads.length, 2, 'the refused read of the flow was sent again')
  t.match(flowReads[0]?.authorization, /^Bearer .+/, 'the first read carried the access token')
  t.match(flowReads[1]?.authorization, /^Bearer .+/, 'so did the second')
  t.not(flowReads[1]?.authorization, flowReads[0]?.authorization, 'with the renewed token')
  t.equal(refreshes, 1, 'the tokens were renewed once')

  await editor.getByTestId('publish').click()
  const published = await waitForMessage(page, 'published')
  t.equal(published.data.version, 2, 'a refused publish (no body) is sent again and publishes')
  t.equal(publishes.length, 2, 'the publish was sent twice')
  t.equal(refreshes, 2, 'after one more renewal')

  // A node nothing reaches, saved: the resent body is the same, and the service's problems reach the node.
  await editor.getByTestId('palette-message').click()
  const added = editor.locator('[data-node-type="message"]')
  await added.waitFor()
  await editor.getByTestId('save').click()
  const refused = await waitForMessage(page, 'error')
  t.equal(refused.data.code, 'invalid_flow', 'the resent save was answered with the flow problems')
  await editor.locator('[data-node-type="message"].has-problems').waitFor()
  t.pass('the problems are shown on the node')
  t.equal(saves.length, 2, 'the refused save was sent again')
  t.ok(saves[0]?.body && saves[0].body === saves[1]?.body, 'with the same definition')
  t.match(JSON.parse(saves[1]?.body ?? '{}'), { schemaVersion: 1 }, 'the body is the definition itself')
  t.equal(refreshes, 3, 'after one more renewal')

  // The service refuses the renewal: the session is over, the editor says so and tells the host.
  await page.route(
    (url) => url.pathname === '/auth/refresh',
    (route) => route.fulfill({ status: 401, contentType: 'application/json', body: JSON.stringify({ statusCode: 401, error: 'Unauthorized', message: 'revoked' }) }),
  )
  await refuseFirst(page, 'POST', /\/v1\/flows\/validate$/)
  await editor.getByRole('button', { name: /Check/ }).click()
  const expired = await waitForMessage(page, 'error', 2)
  t.equal(expired.data.code, 'session_expired', 'the host hears that the session expired')
  await editor.getByRole('alert').filter({ hasText: 'Your session has ended' }).waitFor()
  t.pass('the editor shows that the session expired')
})
