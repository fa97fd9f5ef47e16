import type { FrameLocator, Locator } from 'playwright-core'
import t, { type Test } from 'tap'
import { browserSkipReason } from '../helpers/browser.js'
import { LOOKS, type Look } from '../helpers/dashboard.js'
import { captureEditor, checkEditorLayout, focusedName, openEditor, openEditorSetup, PLAN_FLOW, selectNode, textMessage, waitForText, type EditorSetup, type OpenEditor } from '../helpers/editor.js'

// The flow's conversation tests in the editor against the real service and engine: a conversation
// tried in the test panel kept as a test ("Save as test"), named and loosened there; the Tests tab
// running it against the draft, passing, then failing after a change of the draft with the step and
// the words that differ; a name taken refused in the person's words; a test deleted.

const skip = browserSkipReason()
// A preview and a run in each look, on a busy machine.
t.setTimeout(600_000)

/** What the editor says, in each language, where these tests read it. */
const WORDS = {
  en: { failed: '0 of 1 test passed', step: 'Step 2: sends “Bia”', message: 'Message 1', kinds: ['Exactly', 'Containing', 'Like the pattern'] },
  pt: { failed: 'Aprovados: 0 de 1 teste', step: 'Passo 2: envia “Bia”', message: 'Mensagem 1', kinds: ['Exatamente', 'Contendo', 'Como o padrão'] },
}

t.test('conversation tests in the editor', { skip }, async (t) => {
  const setup = await openEditorSetup(t, { engine: true })
  const api = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => {
    const response = await setup.service.app.inject({ method, url, headers: setup.key, ...(payload ? { payload } : {}) })
    if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
    return response.json()
  }
  await api('POST', '/v1/variables', { name: 'plan', type: 'string' })
  await api('POST', '/v1/variables', { name: 'name', type: 'string', defaultValue: 'Ana' })
  const newFlow = async (name: string) => {
    const flowId = await setup.createFlow(name)
    await api('PUT', `/v1/flows/${flowId}/definition`, PLAN_FLOW)
    return flowId
  }

  t.test('a conversation kept as a test passes, fails after the draft changes with the words that differ, and is deleted', async (t) => {
    const flowId = await newFlow('Plans')
    const opened = await openEditor(t, setup, flowId)
    const { editor, page, frame } = opened
    const panel = await chatThrough(editor, 'Bia')

    // "Save as test": the recorded conversation in a form, its name typed where the focus lands.
    await panel.getByTestId('test-save-as').click()
    const form = panel.getByTestId('save-test')
    await form.waitFor()
    t.equal(await focusedTestId(frame), 'save-test-name', 'the name field takes the focus as the form opens')
    const steps = form.getByTestId('save-test-step')
    t.same(await steps.locator('legend').allInnerTexts(), ['At the start', 'Step 1: sends “Pro”', 'Step 2: sends “Bia”'], 'one group per turn: the start, then each message sent, by its words')
    const greeting = steps.nth(0).getByTestId('expected-text').nth(0)
    t.equal(await greeting.getByTestId('expected-words').inputValue(), 'Hi Ana!\nWelcome to the shop.', "the bot's words as recorded, line break kept")
    t.equal(await greeting.getByTestId('expected-kind').inputValue(), 'equals', 'checked as the same words by default')

    // Loosened: the greeting only has to hold "Welcome"; the question's words are not checked at all.
    await greeting.getByRole('combobox', { name: 'How message 1 is checked' }).selectOption('contains')
    await greeting.getByTestId('expected-words').fill('')
    t.equal(await greeting.locator('.field-error').innerText(), 'Fill this in.', 'a check that must hold words says so while it holds none')
    t.ok(await form.getByTestId('save-test-submit').isDisabled(), 'and the test cannot be saved so')
    await greeting.getByTestId('expected-words').fill('Welcome')
    await steps.nth(0).getByRole('button', { name: 'Remove the check of the words of message 2' }).click()
    await steps.nth(0).getByText('Message 2: its words are not checked.').waitFor()
    t.ok(await form.getByTestId('save-test-submit').isDisabled(), 'a test without a name cannot be saved')
    await form.getByRole('textbox', { name: 'Test name' }).fill('Pro plan for Bia')
    await captureEditor(t, opened, 'tests-save-as', LOOKS[0])
    await form.getByTestId('save-test-submit').click()
    const saved = panel.getByTestId('test-saved')
    await saved.waitFor()
    t.match(await saved.innerText(), /The test “Pro plan for Bia” is saved with the flow\./, 'the test panel says the test is kept')

    const kept = (await api('GET', `/v1/flows/${flowId}/tests`)).content
    t.equal(kept.length, 1, 'the service keeps the test with the flow')
    t.equal(kept[0].name, 'Pro plan for Bia')
    t.same(kept[0].start.messages, [{ type: 'text', text: { contains: 'Welcome' } }, { type: 'interactive' }], 'as loosened in the form')
    t.same(kept[0].steps[1].send, { type: 'text', text: { body: 'Bia' } }, 'with the messages sent as its steps')

    // The Tests tab shows it; run against the draft, it passes.
    await saved.getByRole('button', { name: 'Show tests' }).click()
    const tests = editor.getByTestId('tests-panel')
    await tests.waitFor()
    t.equal(await editor.getByTestId('tab-tests').getAttribute('aria-selected'), 'true', '"Show tests" opens the Tests tab')
    const item = tests.getByTestId('conversation-test')
    t.same(await item.locator('.conversation-test-name').allInnerTexts(), ['Pro plan for Bia'], 'the new test is listed')
    t.match(await item.getByTestId('test-state').innerText(), /Not run/)
    await tests.getByTestId('tests-run-all').click()
    await waitForText(tests.getByTestId('tests-summary'), '1 of 1 test passed')
    t.match(await item.getByTestId('test-state').innerText(), /Passed/, 'the test passes on the draft it was recorded on')
    t.equal(await item.getByTestId('test-failure').count(), 0, 'and shows no failure')

    // The draft's thanks change; the test run again (unsaved changes saved first) fails at its step 2.
    await editor.getByRole('tab', { name: 'Node', exact: true }).click()
    const form2 = await selectNode(editor, 'bye')
    await form2.getByRole('textbox', { name: 'Text', exact: true }).fill('Thank you {{name}}: plan {{plan}}.')
    await editor.getByTestId('tab-tests').click()
    await tests.getByTestId('tests-stale').waitFor()
    t.pass('the result is marked as of another draft once the draft changes')
    await item.getByRole('button', { name: 'Run Pro plan for Bia' }).click()
    await waitForText(tests.getByTestId('tests-summary'), WORDS.en.failed)
    t.match(await editor.getByTestId('save-state').textContent(), /All changes saved/, 'the run saved the draft first')
    t.equal(await tests.getByTestId('tests-stale').count(), 0, 'the result is of the draft shown')
    t.match(await item.getByTestId('test-state').innerText(), /Failed/)
    const failing = item.getByTestId('failing-step')
    t.same(await failing.locator('h3').allInnerTexts(), ['Step 2: sends “Bia”'], 'the failure names the step that failed, by what was sent')
    const diff = failing.getByTestId('problem-diff')
    t.equal(await diff.count(), 1, 'one difference')
    t.match(await diff.locator('.problem-place').innerText(), /^Message 1\s+messages\[0\]\.text$/, 'where: the first message, and its path')
    t.equal(await diff.getByTestId('diff-expected').innerText(), 'Exactly\nThanks Bia: plan pro.', 'expected: the check as the test wrote it')
    t.equal(await diff.getByTestId('diff-actual').innerText(), 'Thank you Bia: plan pro.', 'got: what the changed draft said')
    t.equal(await diff.locator('del').innerText(), 'Thanks', 'the differing words are marked on the expected side')
    t.equal(await diff.locator('ins').innerText(), 'Thank you', 'and on the side of what came')
    const sides = await Promise.all([diff.getByTestId('diff-expected'), diff.getByTestId('diff-actual')].map((side) => side.boundingBox()))
    t.ok(sides[0] && sides[1] && sides[0].x + sides[0].width <= sides[1].x && Math.abs(sides[0].y - sides[1].y) < 2, 'expected and got side by side')
    await captureEditor(t, opened, 'tests-panel-failed', LOOKS[0])
    await checkEditorLayout(t, frame, 'the Tests tab beside the test panel')

    // A second test of the same name is refused, in the person's words, beside the name.
    await panel.getByTestId('test-save-as').click()
    await form.getByTestId('save-test-name').fill('pro plan for bia ')
    await form.getByTestId('save-test-submit').click()
    await waitForText(form.locator('.field-error').first(), 'This flow has a test named Pro plan for Bia already. Choose another name.')
    t.pass('a name taken is said as such, under the name')
    await form.getByRole('button', { name: 'Cancel' }).click()
    await form.waitFor({ state: 'detached' })
    t.equal(await focusedTestId(frame), 'test-save-as', 'Cancel closes the form and gives the focus back')

    // Deleted, asked once more first; the keyboard confirms it.
    await item.getByRole('button', { name: 'Delete Pro plan for Bia' }).click()
    const confirm = item.getByTestId('confirm-delete')
    await confirm.waitFor()
    t.match(await confirm.innerText(), /Delete the test Pro plan for Bia\? This cannot be undone\./, 'the deletion is asked about')
    await confirm.getByRole('button', { name: 'Cancel' }).click()
    t.equal(await confirm.count(), 0, 'Cancel keeps the test')
    t.equal((await api('GET', `/v1/flows/${flowId}/tests`)).totalElements, 1)
    await item.getByRole('button', { name: 'Delete Pro plan for Bia' }).click()
    t.equal(await focusedName(frame), 'Delete', 'the confirming button has the focus')
    await page.keyboard.press('Enter')
    await item.waitFor({ state: 'detached' })
    await tests.getByText('No tests yet.').waitFor()
    t.equal((await api('GET', `/v1/flows/${flowId}/tests`)).totalElements, 0, 'the service no longer keeps it')
  })

  // The first look is above; the others of LOOKS show the form and a failure in theirs.
  for (const look of LOOKS.slice(1)) {
    t.test(`the form and a failure in ${look.lang} and ${look.theme}`, async (t) => {
      const flowId = await newFlow(`Plans ${look.lang} ${look.theme}`)
      await showFailureAndForm(t, setup, flowId, look)
    })
  }
})

/** Chats through the flow in the test panel: Pro, then `name`, until the conversation ends. */
async function chatThrough(editor: FrameLocator, name: string): Promise<Locator> {
  await editor.getByTestId('test-toggle').click()
  const panel = editor.getByTestId('test-panel')
  await panel.getByTestId('test-start').click()
  const chat = panel.getByTestId('test-chat')
  await chat.getByRole('button', { name: 'Pro' }).click()
  await chat.getByText('Your name, please?').waitFor()
  await panel.getByTestId('test-reply').fill(name)
  await panel.getByTestId('test-reply').press('Enter')
  await panel.getByTestId('test-ended').waitFor()
  return panel
}

/** Records and saves a test in `look`, changes the draft's thanks through the API, runs it, and captures the failure and the form. */
async function showFailureAndForm(t: Test, setup: EditorSetup, flowId: string, look: Look): Promise<void> {
  const words = WORDS[look.lang]
  const opened: OpenEditor = await openEditor(t, setup, flowId, look)
  const { editor } = opened
  const panel = await chatThrough(editor, 'Bia')
  await panel.getByTestId('test-save-as').click()
  const form = panel.getByTestId('save-test')
  const greeting = form.getByTestId('expected-text').first()
  t.equal(await greeting.locator('label').innerText(), words.message, `the form speaks ${look.lang}`)
  t.same(await greeting.getByTestId('expected-kind').locator('option').allInnerTexts(), words.kinds, 'the ways a text is checked, in its words')
  await greeting.getByTestId('expected-kind').selectOption('pattern')
  await captureEditor(t, opened, 'tests-save-as', look)
  await greeting.getByTestId('expected-kind').selectOption('equals')
  await form.getByTestId('save-test-name').fill('Pro plan')
  await form.getByTestId('save-test-submit').click()
  await panel.getByTestId('test-saved').getByRole('button').click()

  const definition = structuredClone(PLAN_FLOW)
  definition.nodes.find((node) => node.id === 'bye')!.data = { messages: [textMessage('Thank you {{name}}: plan {{plan}}.')] }
  const changed = await setup.service.app.inject({ method: 'PUT', url: `/v1/flows/${flowId}/definition`, headers: setup.key, payload: definition })
  t.equal(changed.statusCode, 200, "the draft's thanks changed through the API")
  const tests = editor.getByTestId('tests-panel')
  await tests.getByTestId('tests-run-all').click()
  await waitForText(tests.getByTestId('tests-summary'), words.failed)
  t.same(await tests.getByTestId('failing-step').locator('h3').allInnerTexts(), [words.step], `the failing step, in ${look.lang}`)
  await captureEditor(t, opened, 'tests-panel-failed', look)
  await checkEditorLayout(t, opened.frame, `the Tests tab in ${look.lang} and ${look.theme}`)
  // The narrowest frame that keeps every column: the side panel's five tabs, one with a count of
  // problems (an empty message nothing reaches has two), still on one line.
  await editor.getByTestId('palette-message').click()
  await editor.locator('.toolbar').getByRole('button', { name: look.lang === 'pt' ? /Verificar/ : /Check/ }).click()
  await editor.getByTestId('tab-problems').locator('.tab-count').waitFor()
  await opened.page.setViewportSize({ width: 1280, height: 900 })
  await checkEditorLayout(t, opened.frame, `the Tests tab at 1280 px in ${look.lang} and ${look.theme}`)
}

const focusedTestId = (frame: OpenEditor['frame']) => frame.evaluate(`document.activeElement && document.activeElement.getAttribute('data-testid')`) as Promise<string | null>
