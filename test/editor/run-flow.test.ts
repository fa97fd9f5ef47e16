import type { Locator } from 'playwright-core'
import t from 'tap'
import { browserSkipReason, waitForMessage } from '../helpers/browser.js'
import { LOOKS } from '../helpers/dashboard.js'
import { addFromPalette, captureEditor, checkEditorLayout, link, openEditor, openEditorSetup, sampleFlow, selectNode, tabStops, type EditorSetup } from '../helpers/editor.js'

// A flow that runs another flow of the workspace, in the editor against the real service and
// engine: the runFlow node added from the palette, its flow and version picked by name (never the
// flow edited), saved as built; its form by keyboard; and a preview in which the called flow's
// question comes into the chat.

const skip = browserSkipReason()
// Two looks of the form, and a preview: more than the default 300 s on a busy machine.
t.setTimeout(600_000)

const text = (body: string) => ({ type: 'text', text: { body } })

/** start → ask the name → thanks → end: the flow the others run. */
const IDENTIFY_FLOW = {
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'ask', type: 'question', position: { x: 240, y: 0 }, data: { prompt: text('What is your name?'), input: { kind: 'text' } } },
    { id: 'thanks', type: 'message', position: { x: 480, y: 0 }, data: { messages: [text('Thanks, noted.')] } },
    { id: 'end', type: 'end', position: { x: 720, y: 0 }, data: {} },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'ask' },
    { id: 'e2', source: 'ask', sourceHandle: 'default', target: 'thanks' },
    { id: 'e3', source: 'ask', sourceHandle: 'invalid', target: 'end' },
    { id: 'e4', source: 'thanks', target: 'end' },
  ],
}

/** start → identify (runs `flowId` as published) → bye → end. */
const callerFlow = (flowId: string) => ({
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'identify', type: 'runFlow', position: { x: 240, y: 0 }, data: { flowId, version: 'published' } },
    { id: 'bye', type: 'message', position: { x: 480, y: 0 }, data: { messages: [text('Back in the main flow. Bye!')] } },
    { id: 'end', type: 'end', position: { x: 720, y: 0 }, data: {} },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'identify' },
    { id: 'e2', source: 'identify', sourceHandle: 'done', target: 'bye' },
    { id: 'e3', source: 'bye', target: 'end' },
  ],
})

/** Publishes the flow's draft and answers the version it became. */
async function publish(setup: EditorSetup, flowId: string): Promise<number> {
  const published = await setup.service.app.inject({ method: 'POST', url: `/v1/flows/${flowId}/publish`, headers: setup.key })
  if (published.statusCode !== 200) throw new Error(`not published: ${published.body}`)
  return published.json().version
}


/** The words of a select's options, as a person reads them. */
const optionTexts = (select: Locator) => select.locator('option').allTextContents()

t.test('a flow that runs another flow, in the editor', { skip }, async (t) => {
  const setup = await openEditorSetup(t, { engine: true })
  const identifyId = await sampleFlow(setup, 'Identify', IDENTIFY_FLOW)
  t.equal(await publish(setup, identifyId), 2, 'Identify asks the name from its version 2')

  t.test('a runFlow added from the palette, its flow and version picked by name, saved as built', async (t) => {
    const flowId = await setup.createFlow('Support')
    const opened = await openEditor(t, setup, flowId)
    const { page, editor } = opened
    const nodeId = await addFromPalette(editor, 'runFlow')
    const node = editor.getByTestId(`node-${nodeId}`)
    t.match(await node.innerText(), /Run flow[\s\S]*No flow chosen/, 'the canvas names the type and says no flow is chosen yet')
    t.same(await node.locator('.exit-row span').allTextContents(), ['done'], 'its one exit is done')

    const panel = editor.getByTestId('node-panel')
    const flow = panel.getByRole('combobox', { name: 'Flow', exact: true })
    await flow.locator('option', { hasText: 'Identify' }).waitFor({ state: 'attached' })
    const offered = await optionTexts(flow)
    t.same(offered[0], 'Choose a flow', 'a new node asks for a flow')
    t.ok(offered.includes('Identify (newest v2)'), 'the flows of the workspace are offered by name, with their newest version')
    t.notOk(offered.some((option) => option.startsWith('Support')), 'the flow edited is not offered: a flow cannot run itself')
    await captureEditor(t, opened, 'run-flow-new', LOOKS[0])

    await flow.selectOption({ label: 'Identify (newest v2)' })
    t.match(await node.innerText(), /Identify · published/, 'the canvas names the flow chosen, not its id, and runs it as published')
    const version = panel.getByRole('combobox', { name: 'Version', exact: true })
    t.same(await optionTexts(version), ['Published when the session starts', 'Version 1', 'Version 2'], 'the version is the published one when the session starts, or one of its versions')
    await version.selectOption({ label: 'Version 2' })
    t.match(await node.innerText(), /Identify · v2/, 'the canvas says the version chosen')

    await selectNode(editor, 'start')
    await link(editor, 'Next node', nodeId)
    await selectNode(editor, nodeId)
    await link(editor, 'Next node: done', 'end')
    await page.keyboard.press('Control+s')
    await waitForMessage(page, 'saved')
    const draft = await setup.draft(flowId)
    t.same(draft.nodes.find((n) => n.id === nodeId)?.data, { flowId: identifyId, version: 2 }, 'the saved definition holds the flow by its id and the version number')
    t.ok(draft.edges.some((e) => e.source === nodeId && e.sourceHandle === 'done' && e.target === 'end'), 'and the edge of its done exit')
    t.equal(await publish(setup, flowId), 2, 'the service takes the flow as built: it publishes')
  })

  t.test('the runFlow form by keyboard alone: each control reached by Tab and named', async (t) => {
    const flowId = await setup.createFlow('Keyboard caller')
    const { page, editor, frame } = await openEditor(t, setup, flowId)
    const keys = page.keyboard
    const nodeId = await addFromPalette(editor, 'runFlow')
    await selectNode(editor, 'start')
    await link(editor, 'Next node', nodeId)
    const panel = await selectNode(editor, nodeId)
    await link(editor, 'Next node: done', 'end')
    const flow = panel.getByRole('combobox', { name: 'Flow', exact: true })
    await flow.locator('option', { hasText: 'Identify' }).waitFor({ state: 'attached' })
    await flow.focus()
    await keys.type('Identify')
    t.equal(await flow.inputValue(), identifyId, 'a flow is chosen by typing its name')
    t.same(await tabStops(page, frame, 1), ['Version'], 'Tab goes from the flow to its version')
    await keys.press('ArrowDown')
    t.equal(await panel.getByRole('combobox', { name: 'Version', exact: true }).inputValue(), '1', 'Down picks the version after "published": 1')
    t.match(await editor.getByTestId(`node-${nodeId}`).innerText(), /Identify · v1/, 'the canvas follows')
    await keys.press('Control+s')
    await waitForMessage(page, 'saved')
    t.same((await setup.draft(flowId)).nodes.find((n) => n.id === nodeId)?.data, { flowId: identifyId, version: 1 }, 'and the choice typed is saved')
  })

  t.test('a preview runs the called flow: its question comes into the chat, and the caller goes on by done', async (t) => {
    const flowId = await sampleFlow(setup, 'Greeter', callerFlow(identifyId))
    const opened = await openEditor(t, setup, flowId)
    const { editor } = opened
    await editor.getByTestId('test-toggle').click()
    const testPanel = editor.getByTestId('test-panel')
    await testPanel.getByTestId('test-start').click()
    const chat = testPanel.getByTestId('test-chat')
    await chat.getByText('What is your name?').waitFor()
    t.pass("Identify's question is asked in the preview of the flow that runs it")
    await captureEditor(t, opened, 'run-flow-preview', LOOKS[0])
    await testPanel.getByTestId('test-reply').fill('Ana')
    await testPanel.getByRole('button', { name: 'Send', exact: true }).click()
    await chat.getByText('Thanks, noted.').waitFor()
    await chat.getByText('Back in the main flow. Bye!').waitFor()
    await testPanel.getByTestId('test-ended').waitFor()
    t.pass('the reply finishes Identify, and the caller goes on by done to its end')
  })

  // Each look of the form and the node, each checked with axe.
  for (const look of LOOKS) {
    t.test(`the runFlow form in ${look.lang} and ${look.theme}`, async (t) => {
      const flowId = await sampleFlow(setup, `Caller ${look.lang} ${look.theme}`, callerFlow(identifyId))
      const opened = await openEditor(t, setup, flowId, look)
      const { editor, frame } = opened
      const pt = look.lang === 'pt'
      const panel = await selectNode(editor, 'identify')
      await panel.getByRole('combobox', { name: pt ? 'Fluxo' : 'Flow', exact: true }).locator('option', { hasText: 'Identify' }).waitFor({ state: 'attached' })
      const node = editor.getByTestId('node-identify')
      if (pt) {
        t.match(await node.innerText(), /Executar fluxo[\s\S]*Identify · publicada[\s\S]*concluído/, 'the canvas speaks Portuguese')
        t.match(await panel.innerText(), /A publicada quando a sessão começa/, 'so does the form')
      } else t.match(await node.innerText(), /Run flow[\s\S]*Identify · published[\s\S]*done/, 'the canvas names the flow and its version')
      await checkEditorLayout(t, frame, `the runFlow form, ${look.lang} ${look.theme}`)
      await captureEditor(t, opened, 'run-flow-form', look)
    })
  }
})
