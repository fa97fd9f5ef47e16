import { randomBytes } from 'node:crypto'
import type { Page } from 'playwright-core'
import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { browserSkipReason } from '../helpers/browser.js'
import { startChatCompletionsServer } from '../helpers/chat-completions-server.js'
import { LOOKS, captureEveryLook, captureScreen, openDashboard, showIn } from '../helpers/dashboard.js'

const skip = browserSkipReason()

interface Connection {
  id: string
  name: string
  baseUrl: string
  apiKeySecret: string
  model: string
  headers: { name: string; value: string }[]
  maxTokensPerCall: number
  callsPerSession: number
}

// The endpoint is a real HTTPS chat-completions server on loopback, which the operator's settings
// allow here (its range and its self-signed certificate), as WEBHOOK_ALLOWED_PRIVATE_CIDRS and
// WEBHOOK_CA_FILE would for an Ollama on a customer's network.
t.test('AI connections: created with a key secret, tested (works), its key secret changed to a wrong one and tested again (refused, in words), deleted', { skip }, async (t) => {
  const modelKey = `sk-${randomBytes(12).toString('hex')}`
  const endpoint = await startChatCompletionsServer(modelKey)
  t.teardown(() => endpoint.close())
  const setup = await openDashboard(t, {
    config: loadConfig({ RATE_LIMIT_PER_MINUTE: '0', AUTH_RATE_LIMIT_PER_MINUTE: '0', WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WEBHOOK_CA_FILE: endpoint.caFile }),
  })
  const { service, base } = setup
  const call = async <T>(method: 'GET' | 'PUT', url: string, payload?: object): Promise<T> => {
    const response = await service.app.inject({ method, url, headers: { 'x-api-key': service.admin.apiKey }, ...(payload ? { payload } : {}) })
    if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
    return response.json<T>()
  }
  const connections = async () => (await call<{ content: Connection[] }>('GET', '/v1/ai-connections')).content
  await call('PUT', '/v1/secrets/model_key', { value: modelKey })
  await call('PUT', '/v1/secrets/old_key', { value: 'sk-revoked-long-ago' })

  const page = await setup.signedInPage(t)
  const nav = page.getByRole('navigation', { name: 'Main' })
  await nav.getByRole('link', { name: 'AI connections' }).click()
  await page.getByRole('heading', { level: 1, name: 'AI connections' }).waitFor()
  t.equal(await nav.getByRole('link', { name: 'AI connections' }).getAttribute('aria-current'), 'page', 'the navigation marks the AI connections area')
  await page.getByText('No AI connections yet: add the first below').waitFor()
  t.pass('an empty workspace says how to add the first connection')

  // The key is never typed: the form chooses one of the workspace's secrets, and says where they are set.
  const form = page.getByRole('form', { name: 'New AI connection' })
  const secret = form.getByLabel('Key secret')
  t.same(await secret.locator('option').allInnerTexts(), ['Choose a secret', 'model_key', 'old_key'], "the secret is chosen among the workspace's secrets")
  t.equal(
    await form.getByRole('link', { name: 'Add or replace a secret under Secrets' }).getAttribute('href'),
    `/dashboard/workspaces/${service.admin.workspaceId}/secrets`,
    "the form links to the workspace's secrets",
  )
  await form.getByLabel('Name', { exact: true }).fill('Test model')
  await form.getByLabel('Model', { exact: true }).fill('test-model')
  const baseUrl = form.getByLabel('Base URL')
  await baseUrl.fill(endpoint.baseUrl.replace('https:', 'http:'))
  await form.getByRole('button', { name: 'Create' }).click()
  await form.getByText('Choose the secret that holds the endpoint’s key.').waitFor()
  t.equal(await secret.getAttribute('aria-invalid'), 'true', 'no secret chosen: the field says so before anything is sent')
  t.same(await connections(), [], 'nothing was sent')

  await secret.selectOption('model_key')
  await form.getByRole('button', { name: 'Create' }).click()
  await form.getByText('Use an https:// address.').waitFor()
  t.equal(await baseUrl.getAttribute('aria-invalid'), 'true', "the service's refusal of an http address is said in words on the Base URL field")
  t.same(await connections(), [], 'nothing was created')

  await baseUrl.fill(endpoint.baseUrl)
  await form.getByRole('button', { name: 'Create' }).click()
  await page.getByRole('status').filter({ hasText: 'AI connection Test model created.' }).waitFor()
  const [created] = await connections()
  t.match(created, { name: 'Test model', baseUrl: endpoint.baseUrl, apiKeySecret: 'model_key', model: 'test-model', headers: [], maxTokensPerCall: 1024, callsPerSession: 50 }, 'the API has the connection, with the default limits')

  const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Test model', exact: true }) })
  // The status comes as soon as the API answers; the list shows the new row once it has read it again.
  await row.waitFor()
  t.same(
    (await row.getByRole('cell').allInnerTexts()).slice(0, 4),
    ['test-model', new URL(endpoint.baseUrl).host, 'model_key', '1,024 tokens a call · 50 calls a session'],
    'the row shows the model, the endpoint host, the key secret and the limits',
  )
  const result = page.getByTestId('connection-check')
  await page.getByRole('button', { name: 'Test connection: Test model' }).click()
  await result.locator('.notice.ok').waitFor()
  t.match(await result.innerText(), /^Test model works \(\d+ ms\)\. Models the endpoint lists: test-model\.$/, 'the test says the connection works, with the models the endpoint lists')
  t.equal(endpoint.requests.length, 0, 'a listed model needs no chat completion: nothing was spent')

  // Edited: another key secret (one holding a key the endpoint refuses), a header, a smaller limit.
  await page.getByRole('button', { name: 'Edit Test model' }).click()
  const edit = page.getByRole('form', { name: 'Edit Test model' })
  t.equal(await edit.getByLabel('Name', { exact: true }).inputValue(), 'Test model', 'the form holds the connection as it is')
  t.equal(await edit.getByLabel('Most tokens an answer may take').inputValue(), '1024', 'with its limits')
  await edit.getByLabel('Key secret').selectOption('old_key')
  await edit.getByLabel('Extra headers').fill('OpenAI-Project: proj_1')
  await edit.getByLabel('Most tokens an answer may take').fill('200')
  await edit.getByRole('button', { name: 'Save' }).click()
  await page.getByRole('status').filter({ hasText: 'AI connection Test model saved.' }).waitFor()
  t.equal(await result.innerText(), '', "a change clears the earlier test's finding")
  t.match((await connections())[0], { apiKeySecret: 'old_key', maxTokensPerCall: 200, callsPerSession: 50, headers: [{ name: 'OpenAI-Project', value: 'proj_1' }] }, 'the API has the changes')
  // As after creating: the list reads the connections again after the status; the check below says what it shows.
  await row.getByRole('cell').filter({ hasText: '200 tokens a call' }).waitFor({ timeout: 10_000 }).catch(() => {})
  t.equal(await row.getByRole('cell').nth(3).innerText(), '200 tokens a call · 50 calls a session', 'the row shows the new limit')

  await page.getByRole('button', { name: 'Test connection: Test model' }).click()
  await result.locator('.notice.error').waitFor()
  t.match(
    await result.innerText(),
    /^Test model does not work \(\d+ ms\)\. The endpoint refused the key: check that the secret old_key holds the right one. It said: “Incorrect API key provided”$/,
    'the test says in words that the key was refused, which secret to check, and what the endpoint said',
  )

  const testFirst = async (p: Page) => {
    await p.locator('tbody tr').first().getByRole('button').first().click()
    await p.getByTestId('connection-check').locator('.notice.error').waitFor()
  }
  await captureEveryLook(t, page, base, 'ai-connections', '/ai-connections', testFirst)
  t.match(await result.innerText(), 'O endpoint recusou a chave: confira se o segredo old_key guarda a chave certa.', 'the problem is said in Portuguese too')
  await captureEveryLook(t, page, base, 'ai-connections-edit', '/ai-connections', async (p) => {
    await p.locator('tbody tr').first().getByRole('button').nth(1).click()
    await p.locator('#edit-ai-connection').waitFor()
  })

  await showIn(page, base, '/ai-connections', LOOKS[0])
  await page.getByRole('button', { name: 'Delete: Test model' }).click()
  const confirm = page.getByRole('group', { name: /^Delete Test model\?/ })
  await captureScreen(t, page, 'ai-connections-delete', LOOKS[0])
  await confirm.getByRole('button', { name: 'Delete' }).click()
  await page.getByRole('status').filter({ hasText: 'AI connection Test model deleted.' }).waitFor()
  await page.getByText('No AI connections yet: add the first below').waitFor()
  t.same(await connections(), [], 'the API has no connection left')
  t.equal((await call<{ totalElements: number }>('GET', '/v1/secrets')).totalElements, 2, 'the secrets it named stay')

  await page.getByRole('link', { name: 'Add or replace a secret under Secrets' }).click()
  await page.getByRole('heading', { level: 2, name: 'Secrets', exact: true }).waitFor()
  await page.getByRole('rowheader', { name: 'model_key', exact: true }).waitFor()
  t.pass("the link opens the workspace's secrets")
})
