import { mkdir } from 'node:fs/promises'
import type { FrameLocator, Page } from 'playwright-core'
import t, { type Test } from 'tap'
import { browserSkipReason, waitForMessage } from '../helpers/browser.js'
import { LOOKS, seriousAccessibilityViolations, type Look } from '../helpers/dashboard.js'
import { EDITOR_ARTIFACTS, openEditor, openEditorSetup, type EditorSetup, type OpenEditor } from '../helpers/editor.js'

const skip = browserSkipReason()

const buttons = (body: string, titles: string[]) => ({
  type: 'interactive',
  interactive: { type: 'button', body: { text: body }, action: { buttons: titles.map((title, i) => ({ id: `b${i + 1}`, title })) } },
})

/** start → welcome (a message with buttons) → plan (a choice question) → basic / pro (ends). */
const SAMPLE = {
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'welcome', type: 'message', position: { x: 240, y: 0 }, data: { messages: [buttons('Welcome!', ['Menu', 'Help'])] } },
    { id: 'plan', type: 'question', position: { x: 480, y: 0 }, data: { prompt: buttons('Which plan?', ['Basic', 'Pro']), input: { kind: 'choice' }, maxRetries: 2 } },
    { id: 'basic', type: 'end', position: { x: 760, y: -60 }, data: {} },
    { id: 'pro', type: 'end', position: { x: 760, y: 120 }, data: {} },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'welcome' },
    { id: 'e2', source: 'welcome', target: 'plan' },
    { id: 'e3', source: 'plan', sourceHandle: 'b1', target: 'basic' },
    { id: 'e4', source: 'plan', sourceHandle: 'b2', target: 'pro' },
  ],
}

async function sampleFlow(setup: EditorSetup, name: string): Promise<string> {
  const flowId = await setup.createFlow(name)
  const saved = await setup.service.app.inject({ method: 'PUT', url: `/v1/flows/${flowId}/definition`, headers: setup.key, payload: SAMPLE })
  if (saved.statusCode !== 200) throw new Error(`sample not saved: ${saved.body}`)
  return flowId
}

/** Writes `test-artifacts/editor/{name}-{lang}-{theme}.png` and checks the frame with axe-core. */
async function capture(t: Test, opened: OpenEditor, name: string, look: Look): Promise<void> {
  await mkdir(EDITOR_ARTIFACTS, { recursive: true })
  await opened.page.waitForTimeout(250)
  await opened.page.screenshot({ path: `${EDITOR_ARTIFACTS}${name}-${look.lang}-${look.theme}.png` })
  const violations = await seriousAccessibilityViolations(opened.frame)
  t.same(violations, [], `${name} (${look.lang}, ${look.theme}): no serious or critical accessibility violation${violations.length ? `: ${JSON.stringify(violations)}` : ''}`)
}

t.test('the editor canvas in a real browser', { skip }, async (t) => {
  const setup = await openEditorSetup(t)

  t.test('every look passes axe with nothing selected, a node selected, and the variables and problems tabs', async (t) => {
    const flowId = await sampleFlow(setup, 'Plans')
    for (const look of LOOKS) {
      const opened = await openEditor(t, setup, flowId, look)
      const { editor } = opened
      await capture(t, opened, 'canvas', look)
      await editor.getByTestId('node-plan').click()
      await editor.getByTestId('node-panel').waitFor()
      await capture(t, opened, 'node-selected', look)
      await editor.getByTestId('tab-variables').click()
      await editor.getByTestId('variables-panel').waitFor()
      await capture(t, opened, 'variables', look)
      // An empty message makes the check find a problem: the panel, the node, the status and the
      // unsaved-changes badge all show theirs.
      await editor.getByTestId('palette-message').click()
      await editor.getByRole('button', { name: look.lang === 'pt' ? /Verificar/ : /Check/ }).click()
      await editor.getByTestId('problems-panel').locator('li').first().waitFor()
      await capture(t, opened, 'problems', look)
      await opened.page.close()
    }
  })
})

export type { FrameLocator, Page }
void waitForMessage
