import { mkdir, readFile, readdir, rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FrameLocator, Page } from 'playwright-core'
import t from 'tap'
import { browserSkipReason, launchBrowser } from '../helpers/browser.js'
import { openTestApp } from '../helpers/app.js'
import { LOOKS } from '../helpers/dashboard.js'
import { oneBackend } from '../helpers/storage.js'
import { eventually, sleep } from '../helpers/wait.js'

/**
 * The embedded editor end to end: the demo host page (`/embed-demo`) signs the editor in through the
 * iframe, a flow is built in the editor with the mouse and the keyboard, saved and published, and a
 * session on it turns exactly what was built. Screenshots of the built flow in both themes and both
 * languages are kept in test-artifacts/editor/.
 */

const skip = browserSkipReason()
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/editor/', import.meta.url))

interface DemoMessage {
  type: string
  [key: string]: unknown
}

/** What the demo page lists under "Messages from the editor", in order. */
const demoMessages = async (page: Page): Promise<DemoMessage[]> =>
  (await page.locator('#messages li').allTextContents()).map((text) => JSON.parse(text) as DemoMessage)

/**
 * Does `action` (if any), then waits until the demo page lists the editor's next message of `type`;
 * an `error` listed meanwhile fails at once. (Locators, not waitForFunction: the demo page's CSP
 * forbids eval.)
 */
async function nextDemoMessage(page: Page, type: string, action?: () => Promise<void>): Promise<DemoMessage> {
  const listed = (name: string) => page.locator('#messages li').filter({ hasText: new RegExp(`^\\{"type":${JSON.stringify(name)}`) })
  const [before, errorsBefore] = [await listed(type).count(), await listed('error').count()]
  await action?.()
  await listed(type).nth(before).or(listed('error').nth(errorsBefore)).waitFor()
  const messages = await demoMessages(page)
  const found = messages.filter((m) => m.type === type)[before]
  if (found) return found
  // What the editor showed (its problems are marked on the nodes), for whoever reads the failure.
  const shot = join(ARTIFACTS, `failed-${type}.png`)
  await page.screenshot({ path: shot })
  throw new Error(`the editor reported an error instead of ${type} (see ${shot}): ${JSON.stringify(messages.filter((m) => m.type === 'error').at(-1))}`)
}

t.test('the demo host embeds the editor; what is built there runs in a session', { skip }, async (t) => {
  // --- the service, with the engine, and what the demo needs ---------------------------------
  const service = await openTestApp(t, oneBackend, { engine: true })
  await service.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`
  const key = { 'x-api-key': service.admin.apiKey }
  const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const response = await service.app.inject({ method, url, headers: key, ...(payload ? { payload } : {}) })
    if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
    return response.body ? response.json() : undefined
  }

  const { clientId, clientSecret } = await call('POST', '/v1/clients', { name: 'Demo portal' })
  // Support first: a new transfer node defaults to the first sector, so Sales has to be picked.
  await call('POST', '/v1/sectors', { name: 'Support' })
  await call('POST', '/v1/sectors', { name: 'Sales' })
  const sectors: { id: string; name: string }[] = (await call('GET', '/v1/sectors')).content
  const sales = sectors.find((s) => s.name === 'Sales')!
  const flowId: string = (await call('POST', '/v1/flows', { name: 'Acme welcome' })).id

  await mkdir(ARTIFACTS, { recursive: true })
  for (const name of await readdir(ARTIFACTS)) if (name.startsWith('failed-')) await rm(join(ARTIFACTS, name))
  const browser = await launchBrowser(t)
  const page = await browser.newPage({ viewport: { width: 1440, height: 1200 } })
  t.teardown(() => page.close())
  page.setDefaultTimeout(10_000)
  const frame = page.locator('#frame iframe')
  const editor: FrameLocator = page.frameLocator('#frame iframe')

  // --- 1. the demo page signs the editor in --------------------------------------------------
  await page.goto(`${base}/embed-demo`)
  const form = page.locator('form#embed')
  await form.getByLabel('Client id').fill(clientId)
  await form.getByLabel('Client secret').fill(clientSecret)
  await form.getByLabel('Flow id').fill(flowId)
  await form.getByLabel('Language').selectOption('en')
  await form.getByLabel('Theme').selectOption('light')
  await nextDemoMessage(page, 'authenticated', () => form.getByRole('button', { name: 'Open the editor' }).click())
  t.equal(await page.locator('#status').textContent(), 'The editor is signed in.', 'the demo page says the editor is signed in')
  t.equal(await frame.getAttribute('src'), `${base}/editor/en/flows/builder/${flowId}?theme=light`, 'the demo framed the editor for the flow, in English and light')
  await editor.getByTestId('node-start').waitFor()
  await editor.getByTestId('node-end').waitFor()
  t.not(await page.locator('form#embed').evaluate('(form) => getComputedStyle(form).backgroundColor'), 'rgba(0, 0, 0, 0)', 'the demo page is styled: its form sits on a card')
  await page.screenshot({ path: join(ARTIFACTS, 'embed-demo.png') })
  const panel = editor.getByTestId('node-panel')

  // --- 2. build: message, question with two buttons, transfer to Sales ------------------------
  const nodeIdOf = async (type: string) => (await editor.locator(`[data-node-type="${type}"]`).getAttribute('data-testid'))!.replace(/^node-/, '')
  /**
   * Drags a node by its header so that its corner lands at `at` (flow units from the start node's
   * corner), for a layout that reads left to right in the screenshots. A new node appears in the
   * middle of the view, so each is moved away before the next one is added.
   */
  const place = async (id: string, at: { x: number; y: number }) => {
    const start = (await editor.getByTestId('node-start').boundingBox())!
    const node = (await editor.getByTestId(`node-${id}`).boundingBox())!
    const zoom = start.width / 200
    const grip = { x: node.x + 30, y: node.y + 14 }
    await page.mouse.move(grip.x, grip.y)
    await page.mouse.down()
    // The drag starts with the first move past React Flow's threshold; the node follows from there.
    await page.mouse.move(grip.x + 2, grip.y + 2)
    await page.mouse.move(start.x + at.x * zoom + 30, start.y + at.y * zoom + 14, { steps: 8 })
    await page.mouse.up()
  }

  await editor.getByTestId('palette-message').click()
  const messageId = await nodeIdOf('message')
  await panel.getByRole('textbox', { name: 'Text', exact: true }).fill('Welcome to Acme')
  await editor.getByTestId(`node-${messageId}`).getByText('Welcome to Acme').waitFor()
  await place(messageId, { x: 0, y: 140 })

  await editor.getByTestId('palette-question').click()
  const questionId = await nodeIdOf('question')
  await panel.getByRole('combobox', { name: 'Expected answer' }).selectOption('choice')
  const prompt = panel.getByRole('group', { name: 'Prompt' })
  t.equal(await prompt.getByRole('combobox', { name: 'Type', exact: true }).inputValue(), 'button', 'a choice question asks with buttons')
  await prompt.getByRole('textbox', { name: /^Body/ }).fill('How can we help?')
  const buttons = prompt.getByRole('group', { name: 'Buttons' })
  await buttons.getByRole('button', { name: /Add button/ }).click()
  const choices = [
    { id: 'sales', title: 'Sales' },
    { id: 'support', title: 'Support' },
  ]
  for (const [i, choice] of choices.entries()) {
    const item = buttons.locator('.item').nth(i)
    await item.getByRole('textbox', { name: /^Title/ }).fill(choice.title)
    await item.getByRole('textbox', { name: /^Reply id/ }).fill(choice.id)
  }
  const question = editor.getByTestId(`node-${questionId}`)
  for (const choice of choices) await question.locator(`.react-flow__handle.source[data-handleid="${choice.id}"]`).waitFor()
  t.pass('the question shows an exit for each button')
  await place(questionId, { x: 250, y: 140 })

  await editor.getByTestId('palette-transfer').click()
  const transferId = await nodeIdOf('transfer')
  await panel.getByRole('combobox', { name: 'Sector', exact: true }).selectOption({ label: 'Sales' })
  await editor.getByTestId(`node-${transferId}`).getByText('Sector: Sales').waitFor()
  t.pass('the transfer node names the sector picked from the list')
  await place(transferId, { x: 500, y: 60 })
  await place('end', { x: 500, y: 280 })

  // Every node in view, then connect exits to entries by clicking one and then the other. Fit view
  // animates the viewport; a click while it moves can miss its handle, so wait for it to rest.
  await editor.getByRole('button', { name: /Fit view/ }).first().click()
  await viewportAtRest(editor)
  const exit = (node: string, handle?: string) =>
    editor.locator(`[data-testid="node-${node}"] .react-flow__handle.source${handle ? `[data-handleid="${handle}"]` : ''}`)
  const entry = (node: string) => editor.locator(`[data-testid="node-${node}"] .react-flow__handle.target`)
  const links: [from: string, handle: string | undefined, to: string][] = [
    ['start', undefined, messageId],
    [messageId, undefined, questionId],
    [questionId, 'sales', transferId],
    [questionId, 'support', 'end'],
    [questionId, 'invalid', 'end'],
  ]
  // React Flow labels each edge "Edge from <source> to <target>".
  const edgeBetween = (from: string, to: string) => editor.locator(`.react-flow__edge[aria-label="Edge from ${from} to ${to}"]`)
  for (const [from, handle, to] of links) {
    const before = await edgeBetween(from, to).count()
    await exit(from, handle).click()
    await entry(to).click()
    await edgeBetween(from, to).nth(before).waitFor().catch(() => {
      throw new Error(`connecting ${from}${handle ? `:${handle}` : ''} → ${to} made no edge`)
    })
  }
  t.equal(await edgeBetween('start', 'end').count(), 0, 'connecting the start to the message replaced start→end')
  t.equal(await editor.locator('.react-flow__edge').count(), links.length, 'the canvas shows one edge per connection')

  // --- 3. save and publish ---------------------------------------------------------------------
  const saved = await nextDemoMessage(page, 'saved', () => editor.getByTestId('save').click())
  t.equal(saved.flowId, flowId, 'the demo page hears `saved` for the flow')
  const published = await nextDemoMessage(page, 'published', () => editor.getByTestId('publish').click())
  t.equal(published.flowId, flowId)
  t.type(published.version, 'number', '`published` carries the version')
  const version = published.version as number
  t.equal((await call('GET', `/v1/flows/${flowId}`)).publishedVersion, version, 'the API shows that version published')
  const listed = (await demoMessages(page)).map((m) => m.type)
  t.ok(listed.includes('dirty'), 'the demo page lists when the draft has unsaved changes')
  t.same(
    listed.filter((type) => type !== 'dirty'),
    ['ready', 'authenticated', 'saved', 'published'],
    'the demo page listed each step of the editor once',
  )
  const shots: string[] = []
  const screenshot = async (lang: string, theme: string) => {
    const path = join(ARTIFACTS, `flow-${lang}-${theme}.png`)
    await frame.screenshot({ path })
    shots.push(path)
  }
  await screenshot('en', 'light')

  // --- 4. the published version is what was built ----------------------------------------------
  const definition = (await call('GET', `/v1/flows/${flowId}/versions/${version}`)).definition
  const byId = new Map<string, { id: string; type: string; data: Record<string, unknown> }>(definition.nodes.map((n: { id: string }) => [n.id, n]))
  t.same(
    [...byId.values()].map((n) => n.type).sort(),
    ['end', 'message', 'question', 'start', 'transfer'],
    'the published version holds the nodes built',
  )
  const welcome = { type: 'text', text: { body: 'Welcome to Acme' } }
  const ask = { type: 'interactive', interactive: { type: 'button', body: { text: 'How can we help?' }, action: { buttons: choices } } }
  t.strictSame(byId.get(messageId)?.data, { messages: [welcome] }, 'the message node as typed')
  t.match(byId.get(questionId)?.data, { prompt: ask, input: { kind: 'choice' } }, 'the question as typed')
  t.strictSame(byId.get(transferId)?.data, { targetType: 'sector', targetId: sales.id }, 'the transfer goes to Sales')
  t.same(
    definition.edges.map((e: { source: string; sourceHandle?: string; target: string }) => `${e.source}:${e.sourceHandle ?? ''}->${e.target}`).sort(),
    links.map(([from, handle, to]) => `${from}:${handle ?? ''}->${to}`).sort(),
    'the published edges are the connections made',
  )

  // --- 5. a session on the flow turns exactly that ----------------------------------------------
  const { sessionId } = await call('POST', `/v1/sessions/flows/${flowId}/create`, { externalId: 'contact-1' })
  const turns = (count: number) =>
    eventually(`turn ${count} of session ${sessionId}`, async () => {
      const events: { type: string; data: { output: TurnOutputLike } }[] = (await call('GET', `/v1/sessions/${sessionId}/events?size=500`)).content
      const completed = events.filter((e) => e.type === 'TurnCompleted')
      return completed.length >= count ? completed.map((e) => e.data.output) : undefined
    }, 10_000)

  const [first] = await turns(1)
  t.strictSame(first!.messages, [{ ...welcome, nodeId: messageId }, { ...ask, nodeId: questionId }], 'the first turn sends the welcome, then the question with its two buttons')
  t.strictSame(first!.functions, [], 'and calls no function')
  t.equal(first!.status, 'active', 'the session waits for the answer')
  t.equal((await call('GET', `/v1/sessions/${sessionId}`)).waitingAt, questionId, 'at the question')

  await call('POST', `/v1/sessions/${sessionId}/message`, { type: 'interactive', interactive: { type: 'button_reply', button_reply: choices[0] } })
  const second = (await turns(2))[1]!
  t.equal(second.functions.length, 1, 'the answer turns one function')
  t.match(second.functions[0], { type: 'transfer', targetType: 'sector', targetId: sales.id }, 'a transfer to the Sales sector')
  t.strictSame(second.messages, [], 'and sends nothing')
  t.equal(second.status, 'completed')
  const detail = await call('GET', `/v1/sessions/${sessionId}`)
  t.equal(detail.status, 'completed', 'the session is completed')
  t.equal(detail.flowVersion, version, 'it ran the published version')

  // --- 6. the built flow in the other themes and languages, each with a fresh sign-in ----------
  for (const { lang, theme } of LOOKS.slice(1)) {
    // The demo prefills everything but the secret from its address.
    await page.goto(`${base}/embed-demo?${new URLSearchParams({ clientId, flowId, lang, theme })}`)
    t.equal(await form.getByLabel('Language').inputValue(), lang, `the demo prefilled ${lang}`)
    await form.getByLabel('Client secret').fill(clientSecret)
    await nextDemoMessage(page, 'authenticated', () => form.getByRole('button', { name: 'Open the editor' }).click())
    for (const id of ['start', messageId, questionId, transferId, 'end']) await editor.getByTestId(`node-${id}`).waitFor()
    await editor.locator('.react-flow__edge').nth(links.length - 1).waitFor()
    t.equal(await editor.locator('html').getAttribute('data-theme'), theme, `${lang}/${theme}: the editor is ${theme}`)
    t.equal(await editor.locator('html').getAttribute('lang'), lang === 'pt' ? 'pt-BR' : 'en', `${lang}/${theme}: the editor speaks ${lang}`)
    await editor.getByTestId('node-start').getByText(lang === 'pt' ? 'Início' : 'Start', { exact: true }).waitFor()
    await screenshot(lang, theme)
  }

  const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  t.equal(shots.length, LOOKS.length, 'one screenshot per look')
  for (const path of shots) {
    const png = await readFile(path)
    t.ok(png.length > PNG.length && png.subarray(0, PNG.length).equals(PNG), `${path} is a non-empty PNG`)
  }
  t.comment(`screenshots of the built flow (en/pt × light/dark) are in ${ARTIFACTS}`)
})

/** Waits until the editor's viewport transform reads the same three times in a row, 50 ms apart. */
async function viewportAtRest(editor: FrameLocator): Promise<void> {
  const viewport = editor.locator('.react-flow__viewport')
  let last = await viewport.getAttribute('style')
  for (let same = 0; same < 2; ) {
    await sleep(50)
    const now = await viewport.getAttribute('style')
    same = now === last ? same + 1 : 0
    last = now
  }
}

interface TurnOutputLike {
  messages: Record<string, unknown>[]
  functions: Record<string, unknown>[]
  status: string
}
