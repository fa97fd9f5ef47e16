import t from 'tap'
import { browserSkipReason, waitForMessage } from '../helpers/browser.js'
import { LOOKS } from '../helpers/dashboard.js'
import { addFromPalette, captureEditor, checkEditorLayout, focusedName, link, openEditor, openEditorSetup, sampleFlow, selectNode, tabStops, type EditorSetup } from '../helpers/editor.js'

// The nodes that wait for time and the A/B split, in the editor against the real service and
// engine: a delay and a question's reply timeout with its reminders built in their forms, by
// mouse and by keyboard, and saved as built; a split's branches weighed; and a preview whose
// pending timers the test panel shows and fires.

const skip = browserSkipReason()
// Every look of four screens and a preview: more than the default 300 s on a busy machine.
t.setTimeout(600_000)

const text = (body: string) => ({ type: 'text', text: { body } })

/**
 * start → ask (a reply in 10 min, a reminder after 2) → pause (30 s) → thanks → end; without a
 * reply in time, an A/B split says goodbye one of two ways.
 */
const TIMED_FLOW = {
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    {
      id: 'ask',
      type: 'question',
      position: { x: 240, y: 0 },
      data: { prompt: text('What is your order number?'), input: { kind: 'text' }, timeout: { seconds: 600, reminders: [{ afterSeconds: 120, message: text('Still there? Just reply here.') }] } },
    },
    { id: 'pause', type: 'delay', position: { x: 500, y: -140 }, data: { seconds: 30 } },
    { id: 'thanks', type: 'message', position: { x: 760, y: -140 }, data: { messages: [text('Thanks, we are on it.')] } },
    { id: 'ab', type: 'split', position: { x: 500, y: 160 }, data: { branches: [{ id: 'short', weight: 70 }, { id: 'long', weight: 30 }] } },
    { id: 'bye', type: 'message', position: { x: 760, y: 80 }, data: { messages: [text('Talk soon!')] } },
    { id: 'byeLong', type: 'message', position: { x: 760, y: 280 }, data: { messages: [text('We will write again later. Talk soon!')] } },
    { id: 'end', type: 'end', position: { x: 1020, y: 0 }, data: {} },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'ask' },
    { id: 'e2', source: 'ask', sourceHandle: 'default', target: 'pause' },
    { id: 'e3', source: 'ask', sourceHandle: 'invalid', target: 'end' },
    { id: 'e4', source: 'ask', sourceHandle: 'timeout', target: 'ab' },
    { id: 'e5', source: 'pause', target: 'thanks' },
    { id: 'e6', source: 'thanks', target: 'end' },
    { id: 'e7', source: 'ab', sourceHandle: 'short', target: 'bye' },
    { id: 'e8', source: 'ab', sourceHandle: 'long', target: 'byeLong' },
    { id: 'e9', source: 'bye', target: 'end' },
    { id: 'e10', source: 'byeLong', target: 'end' },
  ],
}

/** start → ask (no timeout yet) → pause (1 min) → end. */
const KEYBOARD_FLOW = {
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'ask', type: 'question', position: { x: 240, y: 0 }, data: { prompt: text('What is your order number?'), input: { kind: 'text' } } },
    { id: 'pause', type: 'delay', position: { x: 500, y: 0 }, data: { seconds: 60 } },
    { id: 'end', type: 'end', position: { x: 760, y: 0 }, data: {} },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'ask' },
    { id: 'e2', source: 'ask', sourceHandle: 'default', target: 'pause' },
    { id: 'e3', source: 'ask', sourceHandle: 'invalid', target: 'end' },
    { id: 'e4', source: 'pause', target: 'end' },
  ],
}


const savedNode = async (setup: EditorSetup, flowId: string, nodeId: string) => (await setup.draft(flowId)).nodes.find((n) => n.id === nodeId)

t.test('the time nodes and the split in the editor', { skip }, async (t) => {
  const setup = await openEditorSetup(t, { engine: true })

  t.test('a delay added from the palette, set in its form, saved as built', async (t) => {
    const flowId = await setup.createFlow('Pause')
    const { page, editor } = await openEditor(t, setup, flowId)
    const nodeId = await addFromPalette(editor, 'delay')
    const node = editor.getByTestId(`node-${nodeId}`)
    t.match(await node.innerText(), /Delay[\s\S]*waits 1 min/, 'the canvas names the type and its pause')
    const panel = editor.getByTestId('node-panel')
    const amount = panel.getByRole('spinbutton', { name: 'Pauses for', exact: true })
    const unit = panel.getByRole('combobox', { name: 'Unit', exact: true })
    t.same([await amount.inputValue(), await unit.inputValue()], ['1', 'minutes'], 'a new delay pauses for 1 minute')

    await amount.fill('2')
    await unit.selectOption('days')
    await panel.getByText('Between 1 second and 1 day, in whole seconds.').waitFor()
    t.equal(await amount.getAttribute('aria-invalid'), 'true', 'more than a day is flagged, in the limits of the service')
    await unit.selectOption('minutes')
    await amount.fill('90')
    t.equal(await panel.getByText('Between 1 second and 1 day, in whole seconds.').count(), 0, '90 minutes is fine')
    t.match(await node.innerText(), /waits 90 min/, 'the canvas says the pause as typed')

    await selectNode(editor, 'start')
    await link(editor, 'Next node', nodeId)
    await selectNode(editor, nodeId)
    await link(editor, 'Next node', 'end')
    await page.keyboard.press('Control+s')
    await waitForMessage(page, 'saved')
    t.same((await savedNode(setup, flowId, nodeId))?.data, { seconds: 5400 }, 'the saved definition holds the pause in seconds')
  })

  t.test("a question's reply timeout with a reminder: its rules in words, saved as built, and gone when turned off", async (t) => {
    const flowId = await setup.createFlow('Order number')
    const { page, editor } = await openEditor(t, setup, flowId)
    const nodeId = await addFromPalette(editor, 'question')
    const node = editor.getByTestId(`node-${nodeId}`)
    const panel = editor.getByTestId('node-panel')
    await panel.getByRole('group', { name: 'Prompt' }).getByRole('textbox', { name: 'Text', exact: true }).fill('What is your order number?')
    const exits = () => node.locator('.exit-row span').allTextContents()
    t.same(await exits(), ['default', 'invalid'], 'without a timeout the question has no timeout exit')

    const group = panel.getByRole('group', { name: 'Reply timeout' })
    const enabled = group.getByRole('checkbox', { name: 'Give up when no reply comes in time' })
    t.notOk(await enabled.isChecked(), 'the reply timeout is off by default')
    t.equal(await group.getByRole('spinbutton').count(), 0, 'and shows nothing more')
    await enabled.check()
    t.same(await exits(), ['default', 'invalid', 'timeout'], 'turned on, the question gets its timeout exit')
    const after = group.getByRole('spinbutton', { name: 'Gives up after', exact: true })
    t.same([await after.inputValue(), await group.getByRole('combobox', { name: 'Unit', exact: true }).first().inputValue()], ['1', 'hours'], 'it gives up after 1 hour at first')
    await after.fill('8')
    await group.getByRole('combobox', { name: 'Unit', exact: true }).first().selectOption('days')
    await group.getByText('Between 5 seconds and 7 days, in whole seconds.').waitFor()
    t.pass('more than 7 days is flagged')
    await group.getByRole('combobox', { name: 'Unit', exact: true }).first().selectOption('minutes')
    await after.fill('10')
    t.equal(await group.getByText('Between 5 seconds and 7 days, in whole seconds.').count(), 0, '10 minutes is fine')

    await group.getByRole('button', { name: '+ Add reminder' }).click()
    const reminder = group.getByRole('group', { name: 'Reminder 1' })
    const remindAfter = reminder.getByRole('spinbutton', { name: 'Sent after', exact: true })
    t.same([await remindAfter.inputValue(), await reminder.getByRole('combobox', { name: 'Unit', exact: true }).inputValue()], ['5', 'minutes'], 'a new reminder comes halfway to the timeout')
    await remindAfter.fill('15')
    await reminder.getByText('Send it before the question gives up, after 10 minutes.').waitFor()
    t.equal(await remindAfter.getAttribute('aria-invalid'), 'true', 'a reminder after the timeout is flagged on its field')
    await remindAfter.fill('2')
    t.equal(await reminder.locator('.field-error').count(), 0, 'one before it is fine')
    await reminder.getByRole('textbox', { name: 'Text', exact: true }).fill('Still there? Just reply here.')

    await group.getByRole('button', { name: '+ Add reminder' }).click()
    const second = group.getByRole('group', { name: 'Reminder 2' })
    await second.getByRole('spinbutton', { name: 'Sent after', exact: true }).fill('1')
    await second.getByText('Send it later than the reminder before it.').waitFor()
    t.pass('a reminder no later than the one before is flagged')
    await second.getByRole('button', { name: 'Remove' }).click()
    t.equal(await group.getByRole('group', { name: /^Reminder \d/ }).count(), 1, 'and removed')
    t.match(await node.innerText(), /Gives up after 10 min · 1 reminder/, 'the canvas sums the timeout up')

    await selectNode(editor, 'start')
    await link(editor, 'Next node', nodeId)
    await selectNode(editor, nodeId)
    for (const exit of ['default', 'invalid', 'timeout']) await link(editor, `Next node: ${exit}`, 'end')
    await page.keyboard.press('Control+s')
    await waitForMessage(page, 'saved')
    const saved = await savedNode(setup, flowId, nodeId)
    t.same(
      saved?.data,
      {
        prompt: text('What is your order number?'),
        input: { kind: 'text' },
        maxRetries: 2,
        timeout: { seconds: 600, reminders: [{ afterSeconds: 120, message: text('Still there? Just reply here.') }] },
      },
      'the saved definition holds the timeout and its reminder as built',
    )
    t.ok((await setup.draft(flowId)).edges.some((e) => e.source === nodeId && e.sourceHandle === 'timeout' && e.target === 'end'), 'and the edge of its timeout exit')

    await selectNode(editor, nodeId)
    await panel.getByRole('group', { name: 'Reply timeout' }).getByRole('checkbox', { name: 'Give up when no reply comes in time' }).uncheck()
    t.same(await exits(), ['default', 'invalid'], 'turned off, the timeout exit goes')
    await page.keyboard.press('Control+s')
    await waitForMessage(page, 'saved', 2)
    const draft = await setup.draft(flowId)
    t.notOk('timeout' in (draft.nodes.find((n) => n.id === nodeId)?.data ?? {}), 'the saved question has no timeout')
    t.notOk(draft.edges.some((e) => e.source === nodeId && e.sourceHandle === 'timeout'), 'nor an edge from a timeout exit')
  })

  t.test("an A/B split's branches added and weighed, their shares shown, saved as built", async (t) => {
    const flowId = await setup.createFlow('Two greetings')
    const { page, editor } = await openEditor(t, setup, flowId)
    const nodeId = await addFromPalette(editor, 'split')
    const node = editor.getByTestId(`node-${nodeId}`)
    const panel = editor.getByTestId('node-panel')
    const weights = panel.getByRole('spinbutton', { name: 'Weight', exact: true })
    t.same(await node.locator('.exit-row span').allTextContents(), ['a · 50%', 'b · 50%'], 'a new split has two even branches')

    await panel.getByRole('button', { name: '+ Add branch' }).click()
    t.equal(await weights.count(), 3, 'a branch is added')
    t.same(await panel.locator('.field-hint').filter({ hasText: 'of visits' }).allTextContents(), ['33% of visits', '33% of visits', '33% of visits'], 'three even branches share the visits')
    await weights.nth(0).fill('60')
    await weights.nth(1).fill('30')
    await weights.nth(2).fill('0')
    await panel.getByText('A whole number from 1 to 100.').waitFor()
    t.equal(await panel.locator('.field-hint').filter({ hasText: 'of visits' }).count(), 0, 'a weight out of range is flagged, and no share is shown while it is')
    await weights.nth(2).fill('10')
    t.same(await panel.locator('.field-hint').filter({ hasText: 'of visits' }).allTextContents(), ['60% of visits', '30% of visits', '10% of visits'], 'each branch shows its share')
    await panel.getByRole('textbox', { name: 'Exit id', exact: true }).nth(2).fill('control')
    t.same(await node.locator('.exit-row span').allTextContents(), ['a · 60%', 'b · 30%', 'control · 10%'], 'the canvas names each exit with its share')

    await selectNode(editor, 'start')
    await link(editor, 'Next node', nodeId)
    await selectNode(editor, nodeId)
    for (const exit of ['a · 60%', 'b · 30%', 'control · 10%']) await link(editor, `Next node: ${exit}`, 'end')
    await page.keyboard.press('Control+s')
    await waitForMessage(page, 'saved')
    t.same(
      (await savedNode(setup, flowId, nodeId))?.data,
      { branches: [{ id: 'a', weight: 60 }, { id: 'b', weight: 30 }, { id: 'control', weight: 10 }] },
      'the saved definition holds the branches and their weights',
    )
    t.same(
      (await setup.draft(flowId)).edges.filter((e) => e.source === nodeId).map((e) => e.sourceHandle).sort(),
      ['a', 'b', 'control'],
      'and an edge from each branch',
    )
  })

  t.test('the new controls by keyboard alone: each reached by Tab and named', async (t) => {
    const flowId = await sampleFlow(setup, 'Keyboard timers', KEYBOARD_FLOW)
    const { page, editor, frame } = await openEditor(t, setup, flowId)
    const keys = page.keyboard
    const panel = editor.getByTestId('node-panel')
    /** Selects the node by keyboard, as a person on the canvas does. */
    const select = async (nodeId: string) => {
      await editor.locator(`.react-flow__node[data-id="${nodeId}"]`).focus()
      await keys.press('Enter')
      await panel.getByText(nodeId, { exact: true }).waitFor()
    }

    await select('ask')
    const group = panel.getByRole('group', { name: 'Reply timeout' })
    const enabled = group.getByRole('checkbox', { name: 'Give up when no reply comes in time' })
    await enabled.focus()
    await keys.press('Space')
    t.ok(await enabled.isChecked(), 'Space turns the reply timeout on')
    t.same(await tabStops(page, frame, 3), ['Gives up after', 'Unit', '+ Add reminder'], 'Tab goes from it to the duration, its unit and the reminders')
    await keys.press('Enter')
    await group.getByRole('group', { name: 'Reminder 1' }).waitFor()
    t.pass('Enter adds a reminder')
    // The new reminder comes before the button; its Move up and Move down are disabled, out of the Tab order.
    await group.getByRole('combobox', { name: 'Unit', exact: true }).first().focus()
    t.same(await tabStops(page, frame, 5), ['Remove', 'Sent after', 'Unit', 'Type', 'Text'], "Tab goes from the timeout's unit through the reminder's controls to its text")
    await keys.type('Still there?')
    await group.getByRole('spinbutton', { name: 'Gives up after', exact: true }).focus()
    await keys.press('Control+a')
    await keys.type('20')
    await keys.press('Tab')
    await keys.type('minutes')
    t.equal(await group.getByRole('combobox', { name: 'Unit', exact: true }).first().inputValue(), 'minutes', 'a unit is chosen by typing its name')
    const remindAfter = group.getByRole('group', { name: 'Reminder 1' }).getByRole('spinbutton', { name: 'Sent after', exact: true })
    await remindAfter.focus()
    await keys.press('Control+a')
    await keys.type('3')

    await select('pause')
    await panel.getByRole('spinbutton', { name: 'Pauses for', exact: true }).focus()
    await keys.press('Control+a')
    await keys.type('45')
    t.same(await tabStops(page, frame, 1), ['Unit'], "the delay's unit follows its amount")
    await keys.type('seconds')

    await keys.press('Control+s')
    await waitForMessage(page, 'saved')
    const draft = await setup.draft(flowId)
    t.match(
      draft.nodes.find((n) => n.id === 'ask')?.data,
      { timeout: { seconds: 1200, reminders: [{ afterSeconds: 180, message: text('Still there?') }] } },
      'the timeout and the reminder typed are saved',
    )
    t.same(draft.nodes.find((n) => n.id === 'pause')?.data, { seconds: 45 }, 'and the delay')
  })

  t.test('a preview shows its pending timers and fires them on demand: a reminder, then a delay', async (t) => {
    const flowId = await sampleFlow(setup, 'Timed preview', TIMED_FLOW)
    const opened = await openEditor(t, setup, flowId)
    const { page, editor, frame } = opened
    await editor.getByTestId('test-toggle').click()
    const testPanel = editor.getByTestId('test-panel')
    await testPanel.getByTestId('test-start').click()
    const chat = testPanel.getByTestId('test-chat')
    await chat.getByText('What is your order number?').waitFor()
    const timer = testPanel.getByTestId('test-timer')
    await timer.waitFor()
    t.match(await timer.locator('p').innerText(), /^Timer at Question · ask: due in (1 min( \d+ s)?|2 min)$/, 'the panel says which node waits for a timer, and when it is due')
    t.match(await timer.locator('time').getAttribute('title'), /^\d{1,2}:\d{2}:\d{2}/, 'the due time is a hover away')
    await checkEditorLayout(t, frame, 'the test panel with a pending timer', { minCanvas: 300 })
    await captureEditor(t, opened, 'test-panel-timer', LOOKS[0])

    await timer.getByRole('button', { name: 'Fire now' }).click()
    await chat.getByText('Still there? Just reply here.').waitFor()
    t.pass('fired, the reminder comes into the chat')
    await timer.locator('p').getByText(/due in (9 min( \d+ s)?|10 min)$/).waitFor()
    t.pass("the panel then shows the question's timeout, counted from the prompt")

    await testPanel.getByTestId('test-reply').fill('1234')
    await testPanel.getByRole('button', { name: 'Send', exact: true }).click()
    await editor.locator('.react-flow__node.test-waiting[data-id="pause"]').waitFor()
    await timer.locator('p').getByText(/^Timer at Delay · pause: due in (2\d|30) s$/).waitFor()
    t.pass("the reply ends the question's wait; the delay's timer is next")
    // By keyboard: Tab from Restart reaches Fire now.
    await testPanel.getByTestId('test-restart').focus()
    const stops = await tabStops(page, frame, 3)
    t.ok(stops.includes('Fire now'), `Fire now is a Tab stop of the panel (${stops.join(', ')})`)
    while ((await focusedName(frame)) !== 'Fire now') await page.keyboard.press('Shift+Tab')
    await page.keyboard.press('Enter')
    await chat.getByText('Thanks, we are on it.').waitFor()
    await testPanel.getByTestId('test-ended').waitFor()
    t.equal(await testPanel.getByTestId('test-timer').count(), 0, 'the delay fired by Enter; with the session over, no timer is shown')
  })

  // Every look of the forms and the panel, each checked with axe.
  for (const look of LOOKS) {
    t.test(`the time nodes' forms and the pending timer in ${look.lang} and ${look.theme}`, async (t) => {
      const flowId = await sampleFlow(setup, `Timed ${look.lang} ${look.theme}`, TIMED_FLOW)
      const opened = await openEditor(t, setup, flowId, look)
      const { editor, frame } = opened
      const pt = look.lang === 'pt'
      const panel = await selectNode(editor, 'ask')
      await panel.getByRole('group', { name: pt ? 'Lembrete 1' : 'Reminder 1' }).scrollIntoViewIfNeeded()
      if (pt) {
        t.match(await editor.getByTestId('node-ask').innerText(), /Desiste depois de 10 min · 1 lembrete[\s\S]*padrão[\s\S]*inválida[\s\S]*tempo esgotado/, 'the canvas speaks Portuguese')
        t.match(await editor.getByTestId('node-pause').innerText(), /Pausa[\s\S]*aguarda 30 s/, 'so does the delay')
      }
      await checkEditorLayout(t, frame, `the reply timeout, ${look.lang} ${look.theme}`)
      await captureEditor(t, opened, 'question-timeout-form', look)
      await selectNode(editor, 'pause')
      await checkEditorLayout(t, frame, `the delay form, ${look.lang} ${look.theme}`)
      await captureEditor(t, opened, 'delay-form', look)
      await selectNode(editor, 'ab')
      await checkEditorLayout(t, frame, `the split form, ${look.lang} ${look.theme}`)
      await captureEditor(t, opened, 'split-form', look)

      await editor.getByTestId('test-toggle').click()
      const testPanel = editor.getByTestId('test-panel')
      await testPanel.getByTestId('test-start').click()
      await testPanel.getByTestId('test-timer').waitFor()
      if (pt) t.match(await testPanel.getByTestId('test-timer').innerText(), /Temporizador em Pergunta · ask: vence em[\s\S]*Disparar agora/, 'the timer is told in Portuguese')
      await checkEditorLayout(t, frame, `the test panel with a pending timer, ${look.lang} ${look.theme}`, { minCanvas: 300 })
      await captureEditor(t, opened, 'test-panel-timer', look)
    })
  }
})
