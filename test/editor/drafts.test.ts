import { mkdir } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import type { FrameLocator, Page } from 'playwright-core'
import t, { type Test } from 'tap'
import { browserSkipReason, launchBrowser, pagePool, serveHostPage, waitForMessage } from '../helpers/browser.js'
import { CHEAP_CLIENT_SECRET_COST, openTestApp, type TestApp } from '../helpers/app.js'
import { oneBackend } from '../helpers/storage.js'

// Saving over someone else's save, going back to a published version, and problems in words.
const skip = browserSkipReason()
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/editor/', import.meta.url))

const at = (x: number) => ({ x, y: 0 })
/** Start → a message saying `body` → End. */
const greeting = (body: string) => ({
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: at(0), data: {} },
    { id: 'Welcome', type: 'message', position: at(260), data: { messages: [{ type: 'text', text: { body } }] } },
    { id: 'end', type: 'end', position: at(520), data: {} },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'Welcome' },
    { id: 'e2', source: 'Welcome', target: 'end' },
  ],
})

/** Start → a question asking with one button (its exit leads to End). */
const question = {
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: at(0), data: {} },
    {
      id: 'Welcome',
      type: 'question',
      position: at(260),
      data: {
        prompt: { type: 'interactive', interactive: { type: 'button', body: { text: 'Plan?' }, action: { buttons: [{ id: 'basic', title: 'Basic' }] } } },
        input: { kind: 'choice' },
      },
    },
    { id: 'end', type: 'end', position: at(520), data: {} },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'Welcome' },
    { id: 'e2', source: 'Welcome', sourceHandle: 'basic', target: 'end' },
  ],
}

interface Setup {
  service: TestApp
  api(method: 'GET' | 'POST' | 'PUT', url: string, payload?: object): Promise<{ statusCode: number; json(): any }>
  /** A page of its own for the editor at `path`, signed in: two opened in one test are two editors side by side. */
  open(t: Test, path: string): Promise<{ page: Page; editor: FrameLocator }>
}

async function setUp(t: Test): Promise<Setup> {
  const service = await openTestApp(t, oneBackend, { clientSecretCost: CHEAP_CLIENT_SECRET_COST })
  await service.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`
  const key = { 'x-api-key': service.admin.apiKey }
  const client = await service.app.inject({ method: 'POST', url: '/v1/clients', headers: key, payload: { name: 'Portal' } })
  if (client.statusCode !== 201) throw new Error(`no OAuth client: ${client.statusCode}`)
  const { clientId, clientSecret } = client.json()
  const basic = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`
  const host = await serveHostPage(t)
  const pages = pagePool(await launchBrowser(t))
  return {
    service,
    api: (method, url, payload) => service.app.inject({ method, url, headers: key, ...(payload && { payload }) }),
    async open(t, path) {
      const ott = await service.app.inject({ method: 'POST', url: '/auth/iframe-token', headers: { authorization: basic, 'content-type': 'application/json' } })
      const page = await pages.take(t, { width: 1440, height: 900 })
      page.setDefaultTimeout(10_000)
      await page.goto(host.url(`${base}${path}`, ott.json().ott))
      await waitForMessage(page, 'authenticated')
      return { page, editor: page.frameLocator('#editor') }
    },
  }
}

/** The text of the Welcome message, as the node's form shows it after selecting the node. */
const welcomeText = async (editor: FrameLocator) => {
  await editor.getByTestId('node-Welcome').click()
  await editor.getByRole('tab', { name: /^(Node|Nó)$/ }).click()
  return editor.getByTestId('node-panel').getByRole('textbox', { name: /^(Text|Texto)$/ })
}

t.test('the editor in a real browser: drafts, versions and problems', { skip }, async (t) => {
  const setup = await setUp(t)
  await mkdir(ARTIFACTS, { recursive: true })
  const createFlow = async (name: string, body: string): Promise<string> => {
    const created = await setup.api('POST', '/v1/flows', { name, definition: greeting(body) })
    if (created.statusCode !== 201) throw new Error(`no flow: ${created.statusCode}`)
    return created.json().id
  }
  const draftBody = async (flowId: string) => (await setup.api('GET', `/v1/flows/${flowId}`)).json().definition.nodes[1].data.messages[0].text.body

  t.test('two editors change one flow: the second save is told, and either choice keeps a whole draft', async (t) => {
    const flowId = await createFlow('Shared', 'Hello')
    const first = await setup.open(t, `/editor/en/flows/builder/${flowId}?theme=light`)
    const second = await setup.open(t, `/editor/en/flows/builder/${flowId}?theme=dark`)

    await (await welcomeText(first.editor)).fill('Hello from the first')
    await (await welcomeText(second.editor)).fill('Hello from the second')
    await first.editor.getByTestId('save').click()
    await waitForMessage(first.page, 'saved')
    t.equal(await draftBody(flowId), 'Hello from the first')

    await second.editor.getByTestId('save').click()
    const conflict = second.editor.getByTestId('save-conflict')
    await conflict.waitFor()
    t.match(await conflict.textContent(), /Someone else saved this flow meanwhile/)
    t.equal((await waitForMessage(second.page, 'error')).data.code, 'draft_conflict', 'the host hears of it')
    t.match(await second.editor.getByTestId('save-state').textContent(), /Unsaved changes/, 'the second editor keeps its changes')
    t.equal(await draftBody(flowId), 'Hello from the first', 'and nothing was saved over the first')
    await second.page.screenshot({ path: `${ARTIFACTS}save-conflict-dark.png` })

    // "Overwrite with mine" saves the second editor's draft over the first's.
    await second.editor.getByTestId('conflict-overwrite').click()
    await waitForMessage(second.page, 'saved')
    await conflict.waitFor({ state: 'detached' })
    t.equal(await draftBody(flowId), 'Hello from the second', 'overwrite saves mine')
    t.match(await second.editor.getByTestId('save-state').textContent(), /All changes saved/)

    // The first editor is now behind: its next save meets the conflict, and "Reload theirs" takes the saved draft.
    await (await welcomeText(first.editor)).fill('Hello again from the first')
    await first.editor.getByTestId('save').click()
    await first.editor.getByTestId('save-conflict').waitFor()
    await first.page.screenshot({ path: `${ARTIFACTS}save-conflict-light.png` })
    await first.editor.getByTestId('conflict-reload').click()
    await first.editor.getByTestId('save-conflict').waitFor({ state: 'detached' })
    t.equal(await (await welcomeText(first.editor)).inputValue(), 'Hello from the second', 'reload shows the draft saved meanwhile')
    t.match(await first.editor.getByTestId('save-state').textContent(), /All changes saved/, 'with nothing left unsaved')
    t.equal(await draftBody(flowId), 'Hello from the second', 'reloading saves nothing')

    // And from there it saves normally again.
    await (await welcomeText(first.editor)).fill('Hello, agreed')
    await first.editor.getByTestId('save').click()
    await waitForMessage(first.page, 'saved', 2)
    t.equal(await draftBody(flowId), 'Hello, agreed')
  })

  t.test('the versions tab lists published versions with their dates; restore loads one into the draft', async (t) => {
    const flowId = await createFlow('Versions', 'First words')
    t.equal((await setup.api('PUT', `/v1/flows/${flowId}/definition`, greeting('Second words'))).statusCode, 200)
    t.equal((await setup.api('POST', `/v1/flows/${flowId}/publish`)).statusCode, 200)
    const published = (await setup.api('GET', `/v1/flows/${flowId}/versions`)).json().content as { version: number; publishedAt: string }[]
    const { page, editor } = await setup.open(t, `/editor/pt/flows/builder/${flowId}?theme=dark`)

    await editor.getByTestId('tab-versions').click()
    const panel = editor.getByTestId('versions-panel')
    await panel.getByTestId('version-1').waitFor()
    t.same(await panel.locator('li').evaluateAll((items) => items.map((item) => item.getAttribute('data-testid'))), ['version-2', 'version-1'], 'newest first')
    for (const { version, publishedAt } of published) {
      t.equal(await panel.getByTestId(`version-${version}`).locator('time').getAttribute('datetime'), publishedAt, `version ${version} shows its date`)
    }
    t.match(await panel.getByTestId('version-1').textContent(), /Versão 1/)
    await page.screenshot({ path: `${ARTIFACTS}versions-dark-pt.png` })

    await panel.getByTestId('version-1').getByRole('button', { name: 'Restaurar' }).click()
    await editor.getByTestId('status').getByText('A versão 1 foi carregada no rascunho; salve para mantê-la.').waitFor()
    t.match(await editor.getByTestId('save-state').textContent(), /●/, 'the restored version is an unsaved change')
    t.equal(await draftBody(flowId), 'Second words', 'nothing is saved before the person saves')
    t.equal(await (await welcomeText(editor)).inputValue(), 'First words', 'the canvas holds version 1')
    await editor.getByTestId('save').click()
    await waitForMessage(page, 'saved')
    t.same((await setup.api('GET', `/v1/flows/${flowId}`)).json().definition, greeting('First words'), "the draft is version 1's definition")
  })

  for (const [lang, expected] of [
    ['en', 'Button 1 of node Welcome: title longer than 20 characters'],
    ['pt', 'Botão 1 do nó Welcome: título com mais de 20 caracteres'],
  ] as const) {
    t.test(`a check names a problem by what the person sees (${lang})`, async (t) => {
      const created = await setup.api('POST', '/v1/flows', { name: `Check ${lang}`, definition: question })
      const { editor } = await setup.open(t, `/editor/${lang}/flows/builder/${created.json().id}?theme=dark`)
      await editor.getByTestId('node-Welcome').click()
      await editor.getByRole('tab', { name: /^(Node|Nó)$/ }).click()
      await editor.getByTestId('node-panel').getByRole('textbox', { name: /^(Title|Título)$/ }).first().fill('An extremely long title')
      await editor.getByRole('button', { name: /Check|Verificar/ }).click()
      const list = editor.getByTestId('problems-panel')
      await list.locator('li').first().waitFor()
      t.same(await list.locator('li').allTextContents(), [expected])
    })
  }

  for (const [lang, expected] of [
    ['en', 'Message 1 of node Welcome: text is empty'],
    ['pt', 'Mensagem 1 do nó Welcome: texto está vazio'],
  ] as const) {
    t.test(`problems are written for people (${lang}), and a node's clear once it is edited`, async (t) => {
      const flowId = await createFlow(`Problems ${lang}`, 'Hi')
      const { page, editor } = await setup.open(t, `/editor/${lang}/flows/builder/${flowId}?theme=light`)
      await (await welcomeText(editor)).fill('')
      await editor.getByTestId('save').click()
      t.equal((await waitForMessage(page, 'error')).data.code, 'invalid_flow')
      const marked = editor.locator('[data-testid="node-Welcome"].has-problems')
      await marked.waitFor()
      t.match(await editor.getByTestId('node-panel').textContent(), expected, 'the node panel says it in words')
      t.notMatch(await editor.getByTestId('node-panel').textContent(), /data\.|messages\[/, 'with no path')

      await editor.getByRole('tab', { name: /Problems|Problemas/ }).click()
      const list = editor.getByTestId('problems-panel')
      t.same(await list.locator('li').allTextContents(), [expected], 'so does the problems tab')
      await page.screenshot({ path: `${ARTIFACTS}problems-${lang}.png` })

      await (await welcomeText(editor)).fill('Hi again')
      await marked.waitFor({ state: 'detached' })
      t.pass('the marker is gone as soon as the node is edited')
      t.equal(await editor.getByTestId('node-panel').getByRole('alert').count(), 0, 'and so are its problems in the panel')
    })
  }
})
