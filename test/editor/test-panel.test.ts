import { mkdir } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import type { Frame, FrameLocator, Page } from 'playwright-core'
import t, { type Test } from 'tap'
import { browserSkipReason, launchBrowser, pagePool, serveHostPage, waitForMessage } from '../helpers/browser.js'
import { CHEAP_CLIENT_SECRET_COST, openTestApp } from '../helpers/app.js'
import { checkAccessibility, LOOKS } from '../helpers/dashboard.js'
import { checkEditorLayout, editorSettled, PLAN_FLOW, textMessage } from '../helpers/editor.js'
import { oneBackend } from '../helpers/storage.js'

// The editor's test panel against the real service and engine: a preview of the draft, talked to
// by tapping a button and typing, followed on the canvas and in the debug view, restarted after a
// change of the draft.

const skip = browserSkipReason()
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/editor/', import.meta.url))

t.test('the editor test panel', { skip }, async (t) => {
  const service = await openTestApp(t, oneBackend, { engine: true, clientSecretCost: CHEAP_CLIENT_SECRET_COST })
  await service.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`
  const key = { 'x-api-key': service.admin.apiKey }
  const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const response = await service.app.inject({ method, url, headers: key, ...(payload ? { payload } : {}) })
    if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode}`)
    return response.json()
  }
  const client = await call('POST', '/v1/clients', { name: 'Portal' })
  const basic = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`
  const ott = async (): Promise<string> => {
    const response = await service.app.inject({ method: 'POST', url: '/auth/iframe-token', headers: { authorization: basic, 'content-type': 'application/json' } })
    if (response.statusCode !== 200) throw new Error('no OTT')
    return response.json().ott
  }
  await call('POST', '/v1/variables', { name: 'name', type: 'string', defaultValue: 'Ana', description: 'The contact' })
  await call('POST', '/v1/variables', { name: 'plan', type: 'string' })
  await call('POST', '/v1/variables', { name: 'vip', type: 'boolean' })
  await call('POST', '/v1/variables', { name: 'visits', type: 'number', defaultValue: 3 })
  const host = await serveHostPage(t)
  const pages = pagePool(await launchBrowser(t))
  await mkdir(ARTIFACTS, { recursive: true })

  /** The host page framing the editor of `flowId`, signed in, with the test panel open. */
  const openPanel = async (t: Test, flowId: string, look: { lang: 'en' | 'pt'; theme: 'light' | 'dark' }, width = 1440) => {
    const page = await pages.take(t, { width, height: 900 })
    page.setDefaultTimeout(15_000)
    await page.goto(host.url(`${base}/editor/${look.lang}/flows/builder/${flowId}?theme=${look.theme}`, await ott()))
    await waitForMessage(page, 'authenticated')
    const editor = page.frameLocator('#editor')
    await editor.getByTestId('node-ask').waitFor()
    await editor.getByTestId('test-toggle').click()
    await editor.getByTestId('test-panel').waitFor()
    const frame = page.frames().find((f) => f.url().startsWith(`${base}/editor/`))
    if (!frame) throw new Error('no editor frame')
    return { page, editor, frame }
  }
  /** Clicks a node after fitting the view, which shows a flow too wide for the canvas from its start. */
  const clickNode = async (editor: FrameLocator, nodeId: string) => {
    await editor.locator('.toolbar').getByRole('button', { name: 'Fit view', exact: true }).click()
    await editor.getByTestId(`node-${nodeId}`).click()
  }
  const waitingAt = (editor: FrameLocator) => editor.locator('.react-flow__node.test-waiting').getAttribute('data-id')
  const waitUntilWaitingAt = (editor: FrameLocator, nodeId: string) => editor.locator(`.react-flow__node.test-waiting[data-id="${nodeId}"]`).waitFor()

  const capture = async (t: Test, page: Page, frame: Frame, name: string, minCanvas?: number) => {
    await editorSettled(frame)
    await page.screenshot({ path: `${ARTIFACTS}${name}.png` })
    await checkAccessibility(t, frame, name)
    await checkEditorLayout(t, frame, name, { minCanvas })
  }
  /** The same at 1280 px, the narrowest frame that keeps every column, then back at 1440 px. */
  const captureAt1280 = async (t: Test, page: Page, frame: Frame, name: string) => {
    await page.setViewportSize({ width: 1280, height: 900 })
    await capture(t, page, frame, name.replace(/^test-panel/, 'test-panel-1280'))
    await page.setViewportSize({ width: 1440, height: 900 })
  }

  t.test('a conversation through a button question, followed on the canvas and in the debug view, restarted after a change', async (t) => {
    const flow = await call('POST', '/v1/flows', { name: 'Plans', definition: PLAN_FLOW })
    const { page, editor, frame } = await openPanel(t, flow.id, { lang: 'en', theme: 'light' })
    const panel = editor.getByTestId('test-panel')

    const form = panel.getByTestId('test-variables')
    t.equal(await form.getByRole('textbox', { name: /^name/ }).inputValue(), 'Ana', 'a text variable is prefilled with its default')
    t.equal(await form.getByRole('spinbutton', { name: /^visits/ }).inputValue(), '3', 'a number variable gets a number input')
    await form.getByRole('combobox', { name: /^vip/ }).selectOption('true')
    await capture(t, page, frame, 'test-panel-variables-en-light')
    await panel.getByTestId('test-start').click()

    const chat = panel.getByTestId('test-chat')
    await chat.getByText('Welcome to the shop.').waitFor()
    t.equal(await chat.locator('.chat-text').first().innerText(), 'Hi Ana!\nWelcome to the shop.', "the bot's text keeps its line break and its variables filled")
    await chat.getByRole('button', { name: 'Pro' }).waitFor()
    await waitUntilWaitingAt(editor, 'ask')
    t.equal(await waitingAt(editor), 'ask', 'the canvas marks the question the session waits at')
    t.match(await panel.getByTestId('test-waiting-at').textContent(), /Question · ask/)
    await capture(t, page, frame, 'test-panel-en-light')
    await captureAt1280(t, page, frame, 'test-panel-en-light')

    await chat.getByRole('button', { name: 'Pro' }).click()
    await chat.getByText('Your name, please?').waitFor()
    await chat.getByText('Tapped').waitFor()
    await waitUntilWaitingAt(editor, 'askName')
    t.equal(await waitingAt(editor), 'askName', 'the mark moves to the next question')

    await panel.getByTestId('test-tab-debug').click()
    const plan = panel.getByTestId('test-var-plan')
    await plan.waitFor()
    t.match(await plan.innerText(), /pro/, 'the debug view shows the variable the button reply set')
    t.match(await plan.getAttribute('class'), /changed/, 'marked as changed by the last turn')
    t.match(await panel.getByTestId('test-var-vip').innerText(), /true/, 'the starting variables are there')
    t.notMatch((await panel.getByTestId('test-var-vip').getAttribute('class')) ?? '', /changed/, 'and not marked as changed')
    const turns = panel.getByTestId('test-turn')
    t.equal(await turns.count(), 2, 'one entry per turn: the start and the reply')
    t.match(await turns.first().innerText(), /Question · ask → Question · askName/, "the newest turn's path, by node name")
    await capture(t, page, frame, 'test-panel-debug-en-light')

    // Back to the chat, with the keyboard.
    await panel.getByTestId('test-tab-debug').press('ArrowLeft')
    const reply = panel.getByTestId('test-reply')
    // A reply the service refuses (past its limit, which the box itself keeps) shows as not sent, and why.
    t.equal(await reply.getAttribute('maxlength'), '4096', 'the reply box holds the service limit')
    await reply.fill('Hello')
    t.equal(await panel.getByTestId('length-counter').innerText(), '5 / 4,096', 'and counts against it')
    await reply.evaluate((box) => box.removeAttribute('maxlength'))
    await reply.fill('word '.repeat(820))
    await reply.press('Enter')
    const notSent = chat.getByTestId('test-not-sent')
    await notSent.waitFor()
    t.equal(await notSent.innerText(), 'Not sent: Use at most 4,096 characters.', 'a refused reply is shown as not sent, with why in words')
    const refusedBubble = `getComputedStyle(document.querySelector('.test-chat-log .chat-entry.contact:has(+ [data-testid="test-not-sent"]) .chat-bubble')).borderStyle`
    t.equal(await frame.evaluate(refusedBubble), 'dashed', 'its bubble looks unlike a sent one')
    await capture(t, page, frame, 'test-panel-not-sent-en-light')
    await reply.fill('Bia')
    await reply.press('Enter')
    await chat.getByText('Thanks Bia: plan pro.').waitFor()
    await panel.getByTestId('test-ended').waitFor()
    t.match(await panel.getByTestId('test-ended').textContent(), /conversation ended/, 'the end of the session is shown')
    await editor.locator('.react-flow__node.test-waiting').waitFor({ state: 'detached' })
    t.pass('no node is marked once the session ended')

    // The draft changes: the restart saves it first and runs it.
    await clickNode(editor, 'greet')
    await editor.getByTestId('node-panel').getByRole('textbox', { name: 'Text', exact: true }).fill('Hello again, {{name}}.')
    await panel.getByTestId('test-draft-changed').waitFor()
    await panel.getByTestId('test-restart').click()
    await chat.getByText('Hello again, Ana.').waitFor()
    t.equal(await chat.getByText('Thanks Bia').count(), 0, 'the restart is a new conversation')
    await waitUntilWaitingAt(editor, 'ask')
    t.match(await editor.getByTestId('save-state').textContent(), /All changes saved/, 'the draft was saved before the restart')
    const draft = (await call('GET', `/v1/flows/${flow.id}`)).definition
    t.same(draft.nodes.find((n: { id: string }) => n.id === 'greet').data.messages, [textMessage('Hello again, {{name}}.')], "the service's draft holds the change")
    const logs = await call('GET', `/v1/sessions/logs?flowId=${flow.id}`)
    t.equal(logs.content.length, 0, 'previews stay out of the session logs')

    // Closing the panel takes the mark off the canvas; opening it shows the same conversation.
    await editor.getByTestId('test-toggle').click()
    await editor.locator('.react-flow__node.test-waiting').waitFor({ state: 'detached' })
    await editor.getByTestId('test-toggle').click()
    await waitUntilWaitingAt(editor, 'ask')
    t.equal(await chat.getByText('Hello again, Ana.').count(), 1, 'the panel keeps its session while hidden')

    // A draft the service refuses to save: the preview says so and runs the last saved draft.
    await clickNode(editor, 'greet')
    await editor.getByTestId('node-panel').getByRole('textbox', { name: 'Text', exact: true }).fill('')
    await panel.getByTestId('test-restart').click()
    await panel.getByRole('alert').getByText(/could not be saved/).waitFor()
    // Enabled again once the new session has replaced the conversation.
    await panel.locator('[data-testid="test-restart"]:not([disabled])').waitFor()
    await chat.getByText('Hello again, Ana.').waitFor()
    t.pass('the restarted preview runs the last saved draft')
    t.match(await editor.getByTestId('save-state').textContent(), /Unsaved changes/, 'the refused change is still unsaved')
  })

  // The conversation above is in English and light; the other looks of LOOKS here.
  for (const look of LOOKS.slice(1)) {
    t.test(`the panel in ${look.lang} and ${look.theme}`, async (t) => {
      const flow = await call('POST', '/v1/flows', { name: `Plans ${look.lang} ${look.theme}`, definition: PLAN_FLOW })
      const { page, editor, frame } = await openPanel(t, flow.id, look)
      const panel = editor.getByTestId('test-panel')
      await panel.getByTestId('test-start').click()
      await panel.getByTestId('test-chat').getByRole('button', { name: 'Basic' }).click()
      await waitUntilWaitingAt(editor, 'askName')
      if (look.lang === 'pt') t.match(await panel.getByTestId('test-chat').textContent(), /Tocou/, 'the chat speaks Portuguese')
      await capture(t, page, frame, `test-panel-${look.lang}-${look.theme}`)
      await captureAt1280(t, page, frame, `test-panel-${look.lang}-${look.theme}`)
      await panel.getByTestId('test-tab-debug').click()
      await panel.getByTestId('test-var-plan').waitFor()
      await capture(t, page, frame, `test-panel-debug-${look.lang}-${look.theme}`)
    })
  }

  t.test('in an 800 px frame the panel and the canvas share the width', async (t) => {
    const flow = await call('POST', '/v1/flows', { name: 'Narrow', definition: PLAN_FLOW })
    const { page, editor, frame } = await openPanel(t, flow.id, { lang: 'en', theme: 'light' }, 800)
    const panel = editor.getByTestId('test-panel')
    await panel.getByTestId('test-start').click()
    await waitUntilWaitingAt(editor, 'ask')
    const canvas = await editor.locator('.canvas').boundingBox()
    const side = await panel.boundingBox()
    t.ok(canvas && canvas.width >= 300, 'the canvas keeps a usable width')
    t.ok(side && side.width >= 300 && side.x + side.width <= 801, 'the panel fits in the frame')
    await capture(t, page, frame, 'test-panel-800-en-light', 300)
    t.equal(await editor.getByTestId('panel-toggle').getAttribute('aria-expanded'), 'false', 'the side panel folded away for the test panel')
    await editor.getByTestId('panel-toggle').click()
    await editor.getByTestId('tab-variables').waitFor()
    const drawer = await editor.locator('.side-panel').boundingBox()
    t.ok(drawer && side && Math.abs(drawer.x + drawer.width - side.x) <= 1, 'unfolded, it opens as a drawer over the canvas, beside the test panel')
    await page.screenshot({ path: `${ARTIFACTS}test-panel-800-drawer-en-light.png` })
  })
})
