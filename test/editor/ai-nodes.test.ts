import type { FrameLocator, Locator } from 'playwright-core'
import t from 'tap'
import { browserSkipReason, waitForMessage } from '../helpers/browser.js'
import { startChatCompletionsServer, type ChatRequest } from '../helpers/chat-completions-server.js'
import { LOOKS } from '../helpers/dashboard.js'
import { addFromPalette, captureEditor, checkEditorLayout, link, openEditor, openEditorSetupCalling, sampleFlow, selectNode } from '../helpers/editor.js'

// The AI step in the editor against the real service and a real HTTPS chat completions endpoint
// whose answers the test writes: the form of each mode filled as a person would, the exits it gives
// on the canvas, the draft saved as built, and "Try it" on a sample message through the service.

const skip = browserSkipReason()
// Three modes built and tried, then every look of the form and its answer.
t.setTimeout(600_000)

const MODEL_KEY = 'sk-test-4f1c9a7e2b'

/** The classify step the first test builds in its form, and the looks show. */
const classifyStep = (connectionId: string) => ({
  connectionId,
  mode: 'classify',
  instructions: 'Sort the messages of {{customerName}}',
  labels: [
    { id: 'refund', description: 'The contact wants their money back' },
    { id: 'tracking', description: 'The contact asks where an order is' },
  ],
  saveAs: 'topic',
})

/** The `.var-text` field labelled `label` in `scope`, with its insertion buttons. */
const varField = (editor: FrameLocator, scope: Locator, label: string) => scope.locator('.var-text').filter({ has: editor.getByRole('textbox', { name: label, exact: true }) })

t.test('the AI step in the editor', { skip }, async (t) => {
  const model = await startChatCompletionsServer(MODEL_KEY)
  t.teardown(() => model.close())
  // "Try it" may reach the local endpoint.
  const setup = await openEditorSetupCalling(t, model.caFile)
  const { call } = setup
  for (const [name, type] of [['customerName', 'string'], ['topic', 'string'], ['answer', 'string'], ['orderNumber', 'number'], ['wantsRefund', 'boolean']] as const) {
    await call('POST', '/v1/variables', { name, type, ...(name === 'customerName' && { defaultValue: 'Ana' }) })
  }

  await t.test('with no AI connection in the workspace, the form says how one comes', async (t) => {
    const flowId = await setup.createFlow('Before any connection')
    const { editor } = await openEditor(t, setup, flowId)
    await addFromPalette(editor, 'ai')
    const panel = editor.getByTestId('node-panel')
    await panel.getByText(/^This workspace has no AI connection yet\./).waitFor()
    t.equal(await panel.getByRole('combobox', { name: 'AI connection', exact: true }).locator('option:not([disabled])').count(), 0, 'there is no connection to choose')
    t.equal(await panel.locator('.field', { hasText: 'This workspace has no AI connection yet.' }).locator('a').count(), 0, 'the explanation links nowhere')
    t.ok(await panel.getByTestId('ai-try-send').isDisabled(), 'and there is nothing to try')
  })

  await call('PUT', '/v1/secrets/model_key', { value: MODEL_KEY })
  const created = await call('POST', '/v1/ai-connections', { name: 'Shop assistant', baseUrl: model.baseUrl, apiKeySecret: 'model_key', model: 'test-model' })
  const connectionId = String(created.headers.location).split('/').pop()!
  const lastRequest = (): ChatRequest => model.requests.at(-1)!

  await t.test('each mode built in its form, its exits on the canvas, saved as built and tried on a sample message', async (t) => {
    const flowId = await setup.createFlow('Support')
    const opened = await openEditor(t, setup, flowId)
    const { page, editor } = opened
    const nodeId = await addFromPalette(editor, 'ai')
    const node = editor.getByTestId(`node-${nodeId}`)
    const panel = editor.getByTestId('node-panel')
    t.match(await node.innerText(), /AI step[\s\S]*Reply · No connection chosen[\s\S]*success[\s\S]*error/, 'a new step replies, and says it has no connection yet')
    let saves = 0
    const save = async () => {
      await editor.getByTestId('save').click()
      await waitForMessage(page, 'saved', ++saves)
      const draft = await setup.draft(flowId)
      return { data: draft.nodes.find((n) => n.id === nodeId)?.data, edges: draft.edges.filter((e) => e.source === nodeId) }
    }
    await selectNode(editor, 'start')
    await link(editor, 'Next node', nodeId)
    await selectNode(editor, nodeId)
    const tryIt = panel.getByTestId('ai-try')
    const tryOn = async (message: string) => {
      const before = model.requests.length
      await tryIt.getByRole('textbox', { name: 'Sample message from the contact', exact: true }).fill(message)
      await tryIt.getByRole('button', { name: 'Try it', exact: true }).click()
      // The answer before goes as the model is asked: the exit shown is this call's.
      await tryIt.getByRole('button', { name: 'Try it', exact: true }).waitFor()
      await tryIt.getByTestId('ai-try-exit').waitFor()
      t.equal(model.requests.length, before + 1, 'the endpoint got one call')
      t.equal(lastRequest().headers.authorization, `Bearer ${MODEL_KEY}`, "with the key of the connection's secret")
      return tryIt.getByTestId('ai-try-result')
    }

    // The connection, from the workspace's; the model left to it.
    const connection = panel.getByRole('combobox', { name: 'AI connection', exact: true })
    await connection.locator('option', { hasText: 'Shop assistant' }).waitFor({ state: 'attached' })
    t.same(await connection.locator('option:not([disabled])').allTextContents(), ['Shop assistant (test-model)'], "the workspace's connections, with their models")
    await connection.selectOption({ label: 'Shop assistant (test-model)' })
    t.equal(await panel.getByRole('textbox', { name: 'Model (optional)', exact: true }).getAttribute('placeholder'), 'test-model', "the model's placeholder is the connection's")
    t.match(await node.innerText(), /Reply · Shop assistant/, 'the canvas names the connection')

    // Classify: two labels, each an exit; the first one linked, then renamed: its edge follows.
    const mode = panel.getByRole('combobox', { name: 'Mode', exact: true })
    await mode.selectOption('classify')
    const instructions = panel.getByRole('textbox', { name: 'Instructions', exact: true })
    await instructions.fill('Sort the messages of ')
    await varField(editor, panel, 'Instructions').getByRole('button', { name: /Insert a variable/ }).click()
    await panel.getByRole('menuitem', { name: /^customerName\b/ }).click()
    t.equal(await instructions.inputValue(), 'Sort the messages of {{customerName}}', 'the variable is inserted as {{customerName}}')
    await panel.getByRole('button', { name: /Add label/ }).click()
    await panel.getByRole('button', { name: /Add label/ }).click()
    t.match(await node.innerText(), /label_1[\s\S]*label_2[\s\S]*other[\s\S]*error/, 'each label is an exit, then other and error')
    await link(editor, 'Next node: label_1', 'end')
    const first = panel.getByRole('group', { name: 'Label 1' })
    const second = panel.getByRole('group', { name: 'Label 2' })
    await first.getByRole('textbox', { name: 'Exit id', exact: true }).fill('other')
    await first.getByText('"other" is an exit of the step itself; choose another id.').waitFor()
    t.pass('a label may not take the exit of a message that fits none')
    await first.getByRole('textbox', { name: 'Exit id', exact: true }).fill('refund')
    await first.getByRole('textbox', { name: 'Description', exact: true }).fill('The contact wants their money back')
    await second.getByRole('textbox', { name: 'Exit id', exact: true }).fill('tracking')
    await second.getByRole('textbox', { name: 'Description', exact: true }).fill('The contact asks where an order is')
    t.match(await node.innerText(), /Classify · Shop assistant[\s\S]*Sort the messages of \{\{customerName\}\}/, 'the canvas sums the step up')
    t.same(await node.locator('.exit-row').allInnerTexts(), ['refund', 'tracking', 'other', 'error'], 'and shows its exits, the renamed ones once each')
    const saveAs = panel.getByRole('combobox', { name: "Save the label's id to", exact: true })
    t.same(await saveAs.locator('option').allTextContents(), ['(do not save)', 'customerName', 'topic', 'answer'], 'a label goes to text variables only')
    await saveAs.selectOption('topic')
    let saved = await save()
    t.same(saved.data, classifyStep(connectionId), 'the saved definition holds the classify step as built')
    t.match(saved.edges, [{ sourceHandle: 'refund', target: 'end' }], 'the edge of the renamed label follows it')

    model.answerWith(() => '{"label": "refund"}')
    t.equal(await tryIt.getByRole('textbox', { name: /customerName/ }).inputValue(), 'Ana', "the sample value starts as the variable's default")
    await tryIt.getByRole('textbox', { name: /customerName/ }).fill('Bea')
    let result = await tryOn('I want my money back')
    t.match(lastRequest().body.messages, [{ role: 'system', content: /^Sort the messages of Bea\n\n[\s\S]*refund: The contact wants their money back/ }, { role: 'user', content: 'I want my money back' }], 'the prompt with the sample filled in')
    t.equal(await result.getByTestId('ai-try-exit').innerText(), 'Leaves by refund', 'the exit the model picked')
    t.match(await result.getByTestId('ai-try-variables').innerText(), /topic\s+refund/, "the label's id saved")
    t.match(await result.getByTestId('ai-try-tokens').innerText(), /\d+ prompt tokens · 2 answer tokens · \d+ ms/, 'the tokens spent')
    await result.getByTestId('ai-try-prompt').getByText(/^Prompt \(2 messages\)$/).click()
    t.match(await result.getByTestId('ai-try-prompt').innerText(), /Instructions \(system\)\s+Sort the messages of Bea[\s\S]*Contact \(user\)\s+I want my money back/, 'the prompt by role')
    await result.getByTestId('ai-try-call').getByText('The call and its raw answer').click()
    t.match(await result.locator('.call-line').innerText(), `POST ${model.baseUrl}/chat/completions`, 'the call as sent')
    t.notMatch(await result.innerText(), MODEL_KEY, 'never the key')
    await result.getByTestId('ai-try-exit').scrollIntoViewIfNeeded()
    await captureEditor(t, opened, 'ai-classify-try', LOOKS[0])

    // Extract: the labels and the label's variable go; two values to fill, one of them optional.
    await mode.selectOption('extract')
    t.match(await node.innerText(), /Extract · Shop assistant[\s\S]*success[\s\S]*missing[\s\S]*error/, 'an extract step leaves by success, missing or error')
    t.notMatch(await node.innerText(), /refund|tracking/, 'the labels are gone')
    t.equal(await panel.getByRole('combobox', { name: "Save the label's id to" }).count(), 0, 'so is where a label is saved')
    await panel.getByRole('button', { name: /Add a value/ }).click()
    await panel.getByRole('button', { name: /Add a value/ }).click()
    const order = panel.getByRole('group', { name: 'Value 1' })
    const refund = panel.getByRole('group', { name: 'Value 2' })
    t.same(
      await order.getByRole('combobox', { name: 'Type', exact: true }).locator('option').allTextContents(),
      ['Text', 'Number', 'Yes/no', 'Date', 'E-mail', 'Phone'],
      'the types a value may have',
    )
    await order.getByRole('combobox', { name: 'Save to', exact: true }).selectOption('orderNumber')
    t.equal(await order.getByRole('combobox', { name: 'Type', exact: true }).inputValue(), 'number', 'a number variable makes it a number')
    await order.getByRole('combobox', { name: 'Type', exact: true }).selectOption('email')
    await order.getByText('Values of type E-mail are saved as Text: choose a variable of that type.').waitFor()
    t.pass('a type the variable cannot hold is flagged')
    await order.getByRole('combobox', { name: 'Type', exact: true }).selectOption('number')
    await order.getByRole('textbox', { name: 'Description', exact: true }).fill('The number of the order')
    await refund.getByRole('combobox', { name: 'Save to', exact: true }).selectOption('wantsRefund')
    await refund.getByRole('textbox', { name: 'Description', exact: true }).fill('Whether they want a refund')
    await refund.getByRole('checkbox', { name: /Required/ }).uncheck()
    t.match(await node.innerText(), /Saves to orderNumber, wantsRefund/, 'the canvas names the variables filled')
    // The edge of the label went with it: the end is reached by success now.
    await link(editor, 'Next node: success', 'end')
    saved = await save()
    t.same(
      saved.data,
      {
        connectionId,
        mode: 'extract',
        instructions: 'Sort the messages of {{customerName}}',
        fields: [
          { variable: 'orderNumber', type: 'number', description: 'The number of the order', required: true },
          { variable: 'wantsRefund', type: 'boolean', description: 'Whether they want a refund', required: false },
        ],
      },
      'the saved definition holds the extract step as built, without the labels nor saveAs',
    )

    model.answerWith(() => '{"orderNumber": 1234, "wantsRefund": "maybe"}')
    result = await tryOn('Order 1234, not sure about a refund')
    t.equal(await result.getByTestId('ai-try-exit').innerText(), 'Leaves by success', 'the required value was found')
    t.match(await result.getByTestId('ai-try-variables').innerText(), /orderNumber\s+1234/, 'and filled')
    t.notMatch(await result.getByTestId('ai-try-variables').innerText(), /wantsRefund/, 'an invalid value is not')
    t.match(await result.getByTestId('ai-try-warnings').innerText(), /wantsRefund "maybe" is not a valid boolean/, 'the warning says why')
    t.equal(lastRequest().body.response_format?.type, 'json_object', 'an extraction asks for JSON')
    await result.getByTestId('ai-try-exit').scrollIntoViewIfNeeded()
    await captureEditor(t, opened, 'ai-extract-try', LOOKS[0])

    // Reply: the values go; knowledge, history and the reply's variable come, with a model of its own.
    await mode.selectOption('reply')
    t.match(await node.innerText(), /Reply · Shop assistant[\s\S]*success[\s\S]*error/, 'a reply leaves by success or error')
    await instructions.fill('You answer the questions of {{customerName}} kindly.')
    await panel.getByRole('textbox', { name: 'Knowledge (optional)', exact: true }).fill('Refunds take 5 days.\nOrders ship in 2 days.')
    await panel.getByRole('spinbutton', { name: 'Texts of the conversation the model sees' }).fill('30')
    await panel.getByText('From 0 to 20; 10 when empty.').first().waitFor()
    await panel.getByRole('spinbutton', { name: 'Texts of the conversation the model sees' }).fill('4')
    await panel.getByRole('textbox', { name: 'Model (optional)', exact: true }).fill('test-model-mini')
    await panel.getByRole('combobox', { name: 'Save the reply to', exact: true }).selectOption('answer')
    await panel.getByRole('spinbutton', { name: 'Timeout (ms)' }).fill('8000')
    saved = await save()
    t.same(
      saved.data,
      {
        connectionId,
        mode: 'reply',
        instructions: 'You answer the questions of {{customerName}} kindly.',
        knowledge: 'Refunds take 5 days.\nOrders ship in 2 days.',
        history: 4,
        model: 'test-model-mini',
        saveAs: 'answer',
        timeoutMs: 8000,
      },
      'the saved definition holds the reply step as built, without the values to extract',
    )

    model.answerWith(() => 'A refund takes 5 days, Bea.')
    result = await tryOn('How long does a refund take?')
    t.equal(await result.getByTestId('ai-try-exit').innerText(), 'Leaves by success', 'the model answered a text')
    await result.getByTestId('ai-try-chat').getByText('A refund takes 5 days, Bea.').waitFor()
    t.match(await result.getByTestId('ai-try-chat').innerText(), /How long does a refund take\?[\s\S]*A refund takes 5 days, Bea\./, 'the sample message and the text sent, as a conversation')
    t.match(lastRequest().body, { model: 'test-model-mini', messages: [{ role: 'system', content: /^You answer the questions of Bea kindly\.\n\nAnswer from this knowledge only:\nRefunds take 5 days\./ }] }, "the step's model and knowledge")
    await result.getByTestId('ai-try-exit').scrollIntoViewIfNeeded()
    await captureEditor(t, opened, 'ai-reply-try', LOOKS[0])

    // A connection the endpoint refuses leaves by error, and says why.
    model.answerWith(() => ({ status: 500, body: '{"error": {"message": "overloaded"}}' }))
    result = await tryOn('Hello?')
    t.equal(await result.getByTestId('ai-try-exit').innerText(), 'Leaves by error', 'a failed call leaves by error')
    t.ok((await result.getByTestId('ai-try-warnings').innerText()).length > 'Warnings'.length, 'with a warning that says why')
  })

  // Every look of the form on the canvas, and of its answer.
  const classifyFlow = {
    schemaVersion: 1,
    nodes: [
      { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
      {
        id: 'sort',
        type: 'ai',
        position: { x: 240, y: 0 },
        data: classifyStep(connectionId),
      },
      { id: 'end', type: 'end', position: { x: 560, y: 0 }, data: {} },
      {
        id: 'pull',
        type: 'ai',
        position: { x: 240, y: 280 },
        data: { connectionId, mode: 'extract', instructions: 'Read the order of {{customerName}}', fields: [{ variable: 'orderNumber', type: 'number', description: 'The order number', required: true }] },
      },
      {
        id: 'replying',
        type: 'ai',
        position: { x: 240, y: 560 },
        data: { connectionId, mode: 'reply', instructions: 'Answer {{customerName}} kindly', knowledge: 'Shipping takes 3 days.', history: 6 },
      },
    ],
    edges: [
      { id: 'e1', source: 'start', target: 'sort' },
      { id: 'e2', source: 'sort', sourceHandle: 'refund', target: 'end' },
      { id: 'e3', source: 'sort', sourceHandle: 'tracking', target: 'pull' },
      { id: 'e4', source: 'sort', sourceHandle: 'other', target: 'end' },
      { id: 'e5', source: 'pull', sourceHandle: 'success', target: 'replying' },
      { id: 'e6', source: 'replying', sourceHandle: 'success', target: 'end' },
    ],
  }
  for (const look of LOOKS) {
    t.test(`the form and its answer in ${look.lang} and ${look.theme}`, async (t) => {
      const flowId = await sampleFlow(setup, `Support ${look.lang} ${look.theme}`, classifyFlow)
      const opened = await openEditor(t, setup, flowId, look)
      const { editor, frame } = opened
      const panel = await selectNode(editor, 'sort')
      if (look.lang === 'pt') t.match(await editor.getByTestId('node-sort').innerText(), /Etapa de IA[\s\S]*Classificar · Shop assistant[\s\S]*refund[\s\S]*tracking[\s\S]*outro[\s\S]*erro/, 'the canvas speaks Portuguese')
      await checkEditorLayout(t, frame, `the AI step's form, ${look.lang} ${look.theme}`)
      await captureEditor(t, opened, 'ai-form', look)
      model.answerWith(() => '{"label": "tracking"}')
      const tryIt = panel.getByTestId('ai-try')
      await tryIt.getByRole('textbox').first().fill(look.lang === 'pt' ? 'Onde está o meu pedido?' : 'Where is my order?')
      await tryIt.getByTestId('ai-try-send').click()
      const exit = tryIt.getByTestId('ai-try-exit')
      await exit.waitFor()
      t.equal(await exit.innerText(), look.lang === 'pt' ? 'Sai por tracking' : 'Leaves by tracking', 'the exit taken, in the look’s language')
      await tryIt.getByTestId('ai-try-prompt').locator('summary').click()
      await tryIt.getByTestId('ai-try-call').getByText(look.lang === 'pt' ? 'A chamada e a resposta bruta' : 'The call and its raw answer').click()
      await exit.scrollIntoViewIfNeeded()
      await checkEditorLayout(t, frame, `the answer of Try it, ${look.lang} ${look.theme}`)
      await captureEditor(t, opened, 'ai-try', look)

      for (const [nodeId, mode] of [['pull', 'extract'], ['replying', 'reply']] as const) {
        await selectNode(editor, nodeId)
        await checkEditorLayout(t, frame, `the AI step's ${mode} form, ${look.lang} ${look.theme}`)
        await captureEditor(t, opened, `ai-${mode}-form`, look)
      }
    })
  }
})
