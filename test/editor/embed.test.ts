import { mkdir } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import type { FrameLocator, Page, Response } from 'playwright-core'
import t, { type Test } from 'tap'
import { awaitReadModels } from '../../src/commands/context.js'
import { loadWorkspaceCatalog } from '../../src/commands/flows.js'
import { handleCommand } from '../../src/commands/handle.js'
import { flow, flowStream } from '../../src/domain/flow.js'
import { browserSkipReason, receivedMessages, waitForMessage } from '../helpers/browser.js'
import { openEditorSetup, type EditorSetup } from '../helpers/editor.js'

// One browser, one service and one host page for the whole file: each case loads the host page anew.
const skip = browserSkipReason()
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/editor/', import.meta.url))

/** Opens the host page framing the editor at `path` (after the service's address) with `ott`. */
async function openEditor(t: Test, setup: EditorSetup, path: string, ott: string): Promise<{ page: Page; editor: FrameLocator; tokens: string[] }> {
  const page = await setup.pages.take(t, { width: 1440, height: 900 })
  page.setDefaultTimeout(10_000)
  // The tokens the editor receives, to check that none ever reaches the host.
  const tokens: string[] = []
  const keepTokens = (response: Response) => {
    if (!/\/auth\/(exchange|refresh)$/.test(response.url()) || !response.ok()) return
    void response.json().then((body: { access_token: string; refresh_token: string }) => tokens.push(body.access_token, body.refresh_token))
  }
  page.on('response', keepTokens)
  t.teardown(() => void page.off('response', keepTokens))
  await page.goto(setup.hostUrl(`${setup.base}${path}`, ott))
  return { page, editor: page.frameLocator('#editor'), tokens }
}

t.test('embedded editor in a real browser', { skip }, async (t) => {
  const setup = await openEditorSetup(t)
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
    const text = editor.getByTestId('node-panel').getByRole('textbox', { name: 'Text', exact: true })
    await text.fill('Hello from the editor')
    // Leaving the host page now would lose the change: the browser asks first (and stays when told to).
    const leaving = new Promise<string>((resolve) => page.once('dialog', (dialog) => void dialog.dismiss().then(() => resolve(dialog.type()))))
    await page.evaluate('setTimeout(() => location.reload(), 0)')
    t.equal(await leaving, 'beforeunload', 'a reload with unsaved changes is asked about')
    // Ctrl+S saves, even with the cursor in a field.
    await text.press('Control+s')
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
    // Published, the draft holds nothing new: Publish is off and says why.
    const publish = editor.getByTestId('publish')
    await editor.locator('[data-testid="publish"][disabled]').waitFor()
    t.equal(await publish.getAttribute('title'), 'Nothing new to publish: version 2 is the saved draft', 'Publish is disabled, with the reason in its title')

    const messages = await receivedMessages(page)
    t.same(
      messages.map((m) => m.data.type).filter((type) => type !== 'dirty'),
      ['ready', 'authenticated', 'error', 'saved', 'published'],
      'the host heard each step once',
    )
    const dirtiness = messages.filter((m) => m.data.type === 'dirty').map((m) => m.data.dirty)
    t.equal(dirtiness[0], false, 'the host first hears that the draft has no unsaved changes')
    t.ok(dirtiness.includes(true), 'then that it has some')
    t.equal(dirtiness.at(-1), false, 'and, once saved, that it has none')
    t.ok(
      dirtiness.every((dirty, i) => i === 0 || dirty !== dirtiness[i - 1]),
      'each time it changes, and only then',
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
    t.equal(await panel.getByRole('menuitem', { name: /^plan/ }).locator('small').textContent(), 'Text', 'the picker names its type as the variables form does')
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

  /** A pipeline with a field of each kind of input the kanbanMove form offers, and its field ids. */
  const dealsPipeline = async (name: string) => {
    const response = await service.app.inject({
      method: 'POST',
      url: '/v1/kanban/pipelines',
      headers: key,
      payload: {
        name,
        stages: [{ name: 'New' }, { name: 'Won' }],
        fields: [
          { name: 'Amount', type: 'currency', currency: 'BRL' },
          { name: 'Seats', type: 'number' },
          { name: 'Signed', type: 'boolean' },
          { name: 'Plan', type: 'text' },
        ],
      },
    })
    if (response.statusCode !== 201) throw new Error(`no pipeline: ${response.body}`)
    const pipeline: { id: string; stages: { id: string }[]; fields: { id: string; name: string }[] } = response.json()
    const field = (fieldName: string) => pipeline.fields.find((f) => f.name === fieldName)!.id
    return { id: pipeline.id, stageIds: pipeline.stages.map((s) => s.id), amount: field('Amount'), seats: field('Seats'), signed: field('Signed'), plan: field('Plan') }
  }
  const kanbanData = async (flowId: string, where: 'draft' | number) => {
    const url = where === 'draft' ? `/v1/flows/${flowId}` : `/v1/flows/${flowId}/versions/${where}`
    const definition = (await service.app.inject({ method: 'GET', url, headers: key })).json().definition
    return definition.nodes.find((n: { type: string }) => n.type === 'kanbanMove')?.data
  }

  t.test('a kanbanMove sets number, currency and yes/no fields as JSON numbers and booleans; saved and published', async (t) => {
    const deals = await dealsPipeline('Deals')
    const flowId = await setup.createFlow('Deals intake')
    const { page, editor } = await openEditor(t, setup, `/editor/en/flows/builder/${flowId}?theme=light`, await setup.ott())
    await waitForMessage(page, 'authenticated')

    await editor.getByTestId('palette-kanbanMove').click()
    const added = editor.locator('[data-node-type="kanbanMove"]')
    await added.waitFor()
    const nodeId = (await added.getAttribute('data-testid'))!.replace(/^node-/, '')
    const panel = editor.getByTestId('node-panel')
    await panel.getByRole('combobox', { name: 'Pipeline', exact: true }).selectOption({ label: 'Deals' })
    const values = panel.getByRole('group', { name: 'Field values' })
    await values.getByRole('spinbutton', { name: 'Amount (Currency, BRL)' }).fill('1234.5')
    await values.getByRole('spinbutton', { name: 'Seats (Number)' }).fill('12')
    await values.getByRole('combobox', { name: 'Signed (Yes/no)' }).selectOption({ label: 'Yes' })
    await values.getByRole('textbox', { name: 'Plan (Text)' }).fill('Gold for {{externalId}}')

    await editor.locator('[data-testid="node-start"] .react-flow__handle.source').click()
    await editor.locator(`[data-testid="node-${nodeId}"] .react-flow__handle.target`).click()
    await editor.locator(`[data-testid="node-${nodeId}"] .react-flow__handle.source`).click()
    await editor.locator('[data-testid="node-end"] .react-flow__handle.target').click()
    await editor.getByTestId(`node-${nodeId}`).click()
    await mkdir(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: `${ARTIFACTS}kanban-values-en-light.png` })

    await editor.getByTestId('save').click()
    await waitForMessage(page, 'saved')
    await editor.getByTestId('publish').click()
    const published = await waitForMessage(page, 'published')
    t.equal(published.data.version, 2, 'the flow is published')
    const expected = { [deals.amount]: 1234.5, [deals.seats]: 12, [deals.signed]: true, [deals.plan]: 'Gold for {{externalId}}' }
    t.strictSame(await kanbanData(flowId, 'draft'), { pipelineId: deals.id, stageId: deals.stageIds[0], values: expected }, 'the draft holds numbers, a boolean and the text')
    t.strictSame((await kanbanData(flowId, 2))?.values, expected, 'and so does the published version')

    // Setting the yes/no field to "not set" and emptying a number take their values away.
    await values.getByRole('combobox', { name: 'Signed (Yes/no)' }).selectOption({ label: '(not set)' })
    await values.getByRole('spinbutton', { name: 'Seats (Number)' }).fill('')
    await editor.getByTestId('save').click()
    await waitForMessage(page, 'saved', 2)
    t.strictSame((await kanbanData(flowId, 'draft'))?.values, { [deals.amount]: 1234.5, [deals.plan]: 'Gold for {{externalId}}' }, 'cleared values are left out')
  })

  t.test('pt and dark: text saved earlier for number and yes/no fields is shown converted, or flagged until cleared', async (t) => {
    const deals = await dealsPipeline('Negócios')
    const flowId = await setup.createFlow('Negócios antigos')
    // A draft of a time when every value was text: saved as the card then took it (every field text).
    const saved = { [deals.amount]: '{{lastMessage}}', [deals.seats]: ' 12 ', [deals.signed]: 'true', [deals.plan]: 'Ouro' }
    const definition = {
      schemaVersion: 1,
      nodes: [
        { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
        { id: 'deal', type: 'kanbanMove', position: { x: 240, y: 0 }, data: { pipelineId: deals.id, stageId: deals.stageIds[1], values: saved } },
        { id: 'end', type: 'end', position: { x: 480, y: 0 }, data: {} },
      ],
      edges: [
        { id: 'e1', source: 'start', target: 'deal' },
        { id: 'e2', source: 'deal', target: 'end' },
      ],
    }
    const { workspaceId } = service.admin
    const catalog = await loadWorkspaceCatalog({ db: service.storage.db, store: service.store }, workspaceId)
    const asText = new Map([...catalog.pipelines].map(([id, p]) => [id, { ...p, fields: p.fields.map((f) => ({ ...f, type: 'text' as const, currency: null })) }]))
    const written = await handleCommand(
      service.store,
      flow,
      flowStream(flowId),
      { type: 'SaveDraft', data: { flowId, workspaceId, definition, catalog: { ...catalog, pipelines: asText }, now: new Date().toISOString() } },
      { actor: 'test' },
    )
    await awaitReadModels(service.ctx, written)
    t.strictSame((await kanbanData(flowId, 'draft'))?.values, saved, 'the draft holds text for every field')

    const { page, editor } = await openEditor(t, setup, `/editor/pt/flows/builder/${flowId}?theme=dark`, await setup.ott())
    await waitForMessage(page, 'authenticated')
    await editor.getByTestId('node-deal').click()
    const values = editor.getByTestId('node-panel').getByRole('group', { name: 'Valores dos campos' })
    t.equal(await values.getByRole('spinbutton', { name: 'Seats (Número)' }).inputValue(), '12', '" 12 " is shown as the number 12')
    t.equal(await values.getByRole('combobox', { name: 'Signed (Sim/não)' }).inputValue(), 'true', '"true" is shown as Sim')
    t.equal(await values.getByRole('textbox', { name: 'Plan (Texto)' }).inputValue(), 'Ouro', 'text stays text')
    const amount = values.getByRole('spinbutton', { name: 'Amount (Moeda, BRL)' })
    t.equal(await amount.inputValue(), '', 'text that is no number is not put in the number input')
    const flagged = values.getByText('Salvo como o texto “{{lastMessage}}”, que este campo não aceita: digite um número ou limpe o campo.')
    await flagged.waitFor()
    t.pass('but it is flagged, quoting the text saved')
    t.match(await editor.getByTestId('save-state').textContent(), /Alterações não salvas/, 'the conversion is a change to save')
    await page.screenshot({ path: `${ARTIFACTS}kanban-values-pt-dark.png` })

    await values.getByRole('button', { name: 'Limpar Amount' }).click()
    await flagged.waitFor({ state: 'detached' })
    await editor.getByTestId('save').click()
    await waitForMessage(page, 'saved')
    t.strictSame((await kanbanData(flowId, 'draft'))?.values, { [deals.seats]: 12, [deals.signed]: true, [deals.plan]: 'Ouro' }, 'the saved draft holds a number and a boolean; the cleared value is gone')
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
