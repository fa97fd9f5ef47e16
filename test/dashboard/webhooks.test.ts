import t from 'tap'
import { fakeDns } from '../helpers/blocked-callbacks.js'
import { browserSkipReason } from '../helpers/browser.js'
import { captureEveryLook, openDashboard } from '../helpers/dashboard.js'
import { chain, end, flow, message, start, text } from '../helpers/engine.js'
import { startHttpsReceiver } from '../helpers/https-receiver.js'
import { eventually } from '../helpers/wait.js'

const skip = browserSkipReason()

interface Delivery {
  id: string
  status: string
  attempts: { statusCode: number | null }[]
}

t.test('webhooks: a dead delivery seen with its attempts, retried from the screen, delivered', { skip }, async (t) => {
  const receiver = await startHttpsReceiver()
  t.teardown(() => receiver.close())
  // The key's callback names the receiver by a host name the API cannot resolve (so it accepts it);
  // the delivery agent resolves it to the receiver on loopback, allowed here, and trusts its certificate.
  const setup = await openDashboard(t, {
    engine: true,
    webhooks: { allowedPrivateCidrs: ['127.0.0.1/32'], caFile: receiver.caFile, lookup: fakeDns({ [receiver.dnsName]: ['127.0.0.1'] }) },
  })
  const { service } = setup
  const headers = { 'x-api-key': service.admin.apiKey }
  const call = async <T>(method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object): Promise<T> => {
    const response = await service.app.inject({ method, url, headers, ...(payload ? { payload } : {}) })
    if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode}`)
    return response.json<T>()
  }
  await call('PATCH', `/v1/api-keys/${service.admin.apiKeyId}`, { callbackUrl: `https://${receiver.dnsName}:${receiver.port}/hooks` })

  receiver.respondWith([500, 500, 500])
  const created = await call<{ id: string }>('POST', '/v1/flows', { name: 'Hello', definition: flow([start(), message('hello', text('Hello!')), end()], chain('start', 'hello', 'end')) })
  const { sessionId } = await call<{ sessionId: string }>('POST', `/v1/sessions/flows/${created.id}/create`, {})
  const dead = await eventually('the delivery to die after its three attempts', async () => {
    const page = await call<{ content: Delivery[] }>('GET', `/v1/webhooks/deliveries?sessionId=${sessionId}`)
    return page.content[0]?.status === 'dead' ? page.content[0] : undefined
  })
  t.same(dead.attempts.map((attempt) => attempt.statusCode), [500, 500, 500], 'every attempt got a 500')

  const page = await setup.signedInPage(t, { path: '/webhooks' })
  const tabs = page.getByRole('navigation', { name: 'Deliveries by status' })
  await tabs.getByRole('link', { name: 'Dead' }).click()
  await page.waitForURL(/status=dead/)
  t.equal(await tabs.getByRole('link', { name: 'Dead' }).getAttribute('aria-current'), 'page', 'the Dead tab is the current one')
  const item = page.getByRole('list', { name: 'Deliveries' }).getByRole('listitem')
  await item.first().waitFor()
  t.equal(await item.count(), 1, 'the dead delivery is under Dead')
  await tabs.getByRole('link', { name: 'Delivered' }).click()
  await page.getByText('No delivery here.').waitFor()
  t.pass('nothing is under Delivered yet')
  await tabs.getByRole('link', { name: 'Dead' }).click()

  const short = dead.id.slice(-8)
  await page.getByText(`Attempts of ${short} (3)`).click()
  const attempts = page.getByRole('table', { name: `Attempts of ${short}` }).locator('tbody tr')
  await attempts.nth(2).waitFor()
  t.equal(await attempts.count(), 3, 'its three attempts open below it')
  t.match(await attempts.first().innerText(), /500/, 'each attempt shows the status code received')

  receiver.respondWith([200])
  await page.getByRole('button', { name: `Retry delivery ${short}` }).click()
  await page.getByRole('status').filter({ hasText: 'Sent again: Delivered.' }).waitFor()
  t.pass('the retried delivery is shown delivered')
  const delivered = await call<Delivery>('GET', `/v1/webhooks/deliveries/${dead.id}`)
  t.equal(delivered.status, 'delivered', 'the API has it delivered')
  t.same(delivered.attempts.map((attempt) => attempt.statusCode), [500, 500, 500, 200], 'the retry added a fourth, successful attempt')
  t.equal(receiver.requests.length, 4, 'the receiver got the webhook a fourth time')

  await page.getByRole('link', { name: `Open delivery ${short}` }).click()
  await page.getByRole('heading', { level: 1, name: `Delivery ${short}` }).waitFor()
  const detailAttempts = page.getByRole('table', { name: `Attempts of ${short}` }).locator('tbody tr')
  await detailAttempts.nth(3).waitFor()
  t.match(await detailAttempts.last().innerText(), /200/, 'the delivery page lists the successful attempt')
  await page.getByText('"Hello!"').waitFor()
  t.pass('the delivery page shows the body as sent')

  await captureEveryLook(t, page, setup.base, 'webhooks-list', '/webhooks', (p) => p.locator('.webhooks-item').first().waitFor())
  await captureEveryLook(t, page, setup.base, 'webhooks-delivery', `/webhooks/${dead.id}`, (p) => p.locator('table tbody tr').nth(3).waitFor())
})
