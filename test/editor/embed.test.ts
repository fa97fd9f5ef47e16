import type { AddressInfo } from 'node:net'
import type { Browser, FrameLocator, Page } from 'playwright-core'
import t, { type Test } from 'tap'
import { browserSkipReason, launchBrowser, receivedMessages, serveHostPage, waitForMessage } from '../helpers/browser.js'
import { openTestApp, type TestApp } from '../helpers/app.js'
import { pgliteBackend } from '../helpers/storage.js'

// One browser, one service and one host page for the whole file: each case opens its own page.
const skip = browserSkipReason()

interface Setup {
  service: TestApp
  base: string
  browser: Browser
  hostUrl(editorUrl: string, ott: string): string
  ott(): Promise<string>
  createFlow(name: string): Promise<string>
}

async function setUp(t: Test): Promise<Setup> {
  const service = await openTestApp(t, pgliteBackend)
  await service.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`
  const key = { 'x-api-key': service.admin.apiKey }
  const client = await service.app.inject({ method: 'POST', url: '/v1/clients', headers: key, payload: { name: 'Portal' } })
  if (client.statusCode !== 201) throw new Error(`no OAuth client: ${client.body}`)
  const { clientId, clientSecret } = client.json()
  const basic = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`
  const host = await serveHostPage(t)
  return {
    service,
    base,
    browser: await launchBrowser(t),
    hostUrl: host.url,
    async ott() {
      // What the customer's backend does (spec §5.2 step 1).
      const response = await service.app.inject({ method: 'POST', url: '/auth/iframe-token', headers: { authorization: basic, 'content-type': 'application/json' } })
      if (response.statusCode !== 200) throw new Error(`no OTT: ${response.body}`)
      return response.json().ott
    },
    async createFlow(name) {
      const response = await service.app.inject({ method: 'POST', url: '/v1/flows', headers: key, payload: { name } })
      if (response.statusCode !== 201) throw new Error(`no flow: ${response.body}`)
      return response.json().id
    },
  }
}

/** Opens the host page framing the editor at `path` (after the service's address) with `ott`. */
async function openEditor(t: Test, setup: Setup, path: string, ott: string): Promise<{ page: Page; editor: FrameLocator; tokens: string[] }> {
  const page = await setup.browser.newPage({ viewport: { width: 1440, height: 900 } })
  t.teardown(() => page.close())
  page.setDefaultTimeout(10_000)
  // The tokens the editor receives, to check that none ever reaches the host.
  const tokens: string[] = []
  page.on('response', (response) => {
    if (!/\/auth\/(exchange|refresh)$/.test(response.url()) || !response.ok()) return
    void response.json().then((body: { access_token: string; refresh_token: string }) => tokens.push(body.access_token, body.refresh_token))
  })
  await page.goto(setup.hostUrl(`${setup.base}${path}`, ott))
  return { page, editor: page.frameLocator('#editor'), tokens }
}

t.test('embedded editor in a real browser', { skip }, async (t) => {
  const setup = await setUp(t)
  const { service, base } = setup
  const key = { 'x-api-key': service.admin.apiKey }

  t.test('the host signs it in, then a node added, connected and edited is saved and published', async (t) => {
    const flowId = await setup.createFlow('Support')
    const { page, editor, tokens } = await openEditor(t, setup, `/editor/en/flows/builder/${flowId}?theme=light`, await setup.ott())

    const ready = await waitForMessage(page, 'ready')
    t.equal(ready.origin, base, 'ready comes from the editor, on its own origin')
    await waitForMessage(page, 'authenticated')
    await editor.getByTestId('node-start').waitFor()
    await editor.getByTestId('node-end').waitFor()
    t.pass("the canvas shows the flow's nodes")

    await editor.getByTestId('palette-message').click()
    const added = editor.locator('[data-node-type="message"]')
    await added.waitFor()
    const nodeId = (await added.getAttribute('data-testid'))!.replace(/^node-/, '')
    t.match(nodeId, /^message_/, 'the new node has an id of its type')
    t.match(await editor.getByTestId('save-state').textContent(), /Unsaved changes/)
    await editor.getByRole('button', { name: /Undo/ }).click()
    await added.waitFor({ state: 'detached' })
    t.match(await editor.getByTestId('save-state').textContent(), /All changes saved/, 'undo takes the node away again')
    await editor.getByRole('button', { name: /Redo/ }).click()
    await added.waitFor()
    t.pass('redo brings it back')

    // Saving a node that nothing reaches, with no text, is refused; the problems show on it.
    await editor.getByTestId('save').click()
    const refused = await waitForMessage(page, 'error')
    t.equal(refused.data.code, 'invalid_flow')
    await editor.locator(`[data-testid="node-${nodeId}"].has-problems`).waitFor()
    t.pass('the problems are shown on the node')

    // Start → new node → End, by clicking an exit and then an entry.
    await editor.locator('[data-testid="node-start"] .react-flow__handle.source').click()
    await editor.locator(`[data-testid="node-${nodeId}"] .react-flow__handle.target`).click()
    await editor.locator(`[data-testid="node-${nodeId}"] .react-flow__handle.source`).click()
    await editor.locator('[data-testid="node-end"] .react-flow__handle.target').click()

    await editor.getByTestId(`node-${nodeId}`).click()
    await editor.getByTestId('node-panel').getByRole('textbox', { name: 'Text', exact: true }).fill('Hello from the editor')
    await editor.getByTestId('save').click()
    const saved = await waitForMessage(page, 'saved')
    t.equal(saved.data.flowId, flowId)
    t.match(await editor.getByTestId('save-state').textContent(), /All changes saved/)

    const draft = (await service.app.inject({ method: 'GET', url: `/v1/flows/${flowId}`, headers: key })).json().definition
    const node = draft.nodes.find((n: { id: string }) => n.id === nodeId)
    t.equal(node?.type, 'message')
    t.same(node?.data.messages, [{ type: 'text', text: { body: 'Hello from the editor' } }], "the server's draft holds the edited node")
    const links = draft.edges.map((e: { source: string; target: string }) => `${e.source}->${e.target}`).sort()
    t.same(links, [`${nodeId}->end`, `start->${nodeId}`].sort(), 'start leads to the new node and it to the end (the old start→end edge is replaced)')

    await editor.getByTestId('publish').click()
    const published = await waitForMessage(page, 'published')
    t.same({ flowId: published.data.flowId, version: published.data.version }, { flowId, version: 2 })
    t.equal((await service.app.inject({ method: 'GET', url: `/v1/flows/${flowId}`, headers: key })).json().publishedVersion, 2)

    const messages = await receivedMessages(page)
    t.same(
      messages.map((m) => m.data.type),
      ['ready', 'authenticated', 'error', 'saved', 'published'],
      'the host heard each step once',
    )
    t.ok(
      messages.every((m) => m.origin === base),
      'every message comes from the editor origin',
    )
    t.equal(tokens.length, 2, 'the editor received an access and a refresh token')
    const sent = JSON.stringify(messages)
    t.ok(tokens.every((token) => !sent.includes(token)), 'no token reaches the host')
    t.notMatch(sent, /access_token|refresh_token|eyJ/, 'nothing token-like reaches the host')
  })

  t.test('the side panel creates variables and sectors in the workspace and offers them', async (t) => {
    const flowId = await setup.createFlow('Forms')
    const { page, editor } = await openEditor(t, setup, `/editor/en/flows/builder/${flowId}`, await setup.ott())
    await waitForMessage(page, 'authenticated')

    await editor.getByTestId('tab-variables').click()
    const form = editor.getByTestId('new-variable')
    await form.getByRole('textbox', { name: 'Name', exact: true }).fill('plan')
    await form.getByRole('textbox', { name: 'Description', exact: true }).fill('The chosen plan')
    await form.getByRole('button', { name: 'Create' }).click()
    await editor.getByTestId('variables-panel').locator('code', { hasText: /^plan$/ }).waitFor()
    const variables = (await service.app.inject({ method: 'GET', url: '/v1/variables', headers: key })).json().content
    t.match(variables, [{ name: 'plan', type: 'string', description: 'The chosen plan' }], 'the variable is in the workspace')

    // A message's text offers it for {{…}} insertion.
    await editor.getByTestId('palette-message').click()
    const panel = editor.getByTestId('node-panel')
    const text = panel.getByRole('textbox', { name: 'Text', exact: true })
    await text.fill('Your plan: ')
    await panel.getByRole('button', { name: 'Insert a variable' }).first().click()
    await panel.getByRole('menuitem', { name: /^plan/ }).click()
    t.equal(await text.inputValue(), 'Your plan: {{plan}}')

    // A transfer picks a sector, or creates one on the spot.
    await editor.getByTestId('palette-transfer').click()
    await panel.getByRole('textbox', { name: 'Name of the new sector' }).fill('Billing')
    await panel.getByRole('button', { name: 'Create' }).click()
    await editor.locator('[data-node-type="transfer"]').getByText('Sector: Billing').waitFor()
    const sectors = (await service.app.inject({ method: 'GET', url: '/v1/sectors', headers: key })).json().content
    t.match(sectors, [{ name: 'Billing' }], 'the sector is in the workspace and the node transfers to it')
  })

  t.test('a bad one-time token is answered with an error message, and nothing else', async (t) => {
    const flowId = await setup.createFlow('Bad token')
    const { page, editor } = await openEditor(t, setup, `/editor/en/flows/builder/${flowId}`, 'not-a-real-one-time-token')
    const error = await waitForMessage(page, 'error')
    t.equal(error.data.code, 'auth_failed')
    t.type(error.data.message, 'string')
    t.match(await editor.getByTestId('app-message').textContent(), /Sign-in failed/)
    t.same(
      (await receivedMessages(page)).map((m) => m.data.type),
      ['ready', 'error'],
    )
  })

  t.test('pt and dark: the editor speaks Portuguese in the dark theme', async (t) => {
    const flowId = await setup.createFlow('Atendimento')
    const { page, editor } = await openEditor(t, setup, `/editor/pt/flows/builder/${flowId}?theme=dark`, await setup.ott())
    await waitForMessage(page, 'authenticated')
    await editor.getByText('Adicionar um nó').waitFor()
    await editor.getByRole('button', { name: 'Salvar rascunho' }).waitFor()
    await editor.getByTestId('node-start').getByText('Início').waitFor()
    t.pass('palette, toolbar and nodes are in Portuguese')
    t.equal(await editor.locator('html').getAttribute('data-theme'), 'dark')
    t.equal(await editor.locator('html').getAttribute('lang'), 'pt-BR')
  })
})
