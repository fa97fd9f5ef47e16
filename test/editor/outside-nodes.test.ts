import type { FrameLocator, Locator } from 'playwright-core'
import t, { type Test } from 'tap'
import { browserSkipReason, waitForMessage } from '../helpers/browser.js'
import { LOOKS, type Look } from '../helpers/dashboard.js'
import { captureEditor, checkEditorLayout, link, openEditor, openEditorSetupCalling, sampleFlow, selectNode, type OpenEditor } from '../helpers/editor.js'
import { startHttpsReceiver } from '../helpers/https-receiver.js'

// The nodes that reach outside the conversation, in the editor against the real service: an HTTP
// request built in its form, tried once against a local HTTPS API and a value of the answer picked
// for a response mapping; a wait for an outside event; and a preview that makes the call and waits,
// followed in the test panel, which posts the event.

const skip = browserSkipReason()
// Every look of three screens, and a preview with a call: more than the default 300 s on a busy machine.
t.setTimeout(600_000)

const SHOP_TOKEN = 'tok-Sh0p-7f3a9c'
const text = (body: string) => ({ type: 'text', text: { body } })
const ORDER = { order: { id: '1234', status: 'shipped', total: 42.5 }, items: [{ sku: 'A-1' }] }

/** start → lookup (GET the order) → pay (waits for payment.confirmed) → paid → end; failures say sorry. */
const ordersFlow = (api: string) => ({
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    {
      id: 'lookup',
      type: 'httpRequest',
      position: { x: 240, y: 0 },
      data: {
        method: 'GET',
        url: `${api}/orders/{{order}}`,
        headers: [{ name: 'Authorization', value: 'Bearer {{secrets.shop}}' }],
        saveResponse: [{ path: '$.order.status', variable: 'orderStatus' }],
        saveStatusAs: 'httpStatus',
        timeoutMs: 5000,
      },
    },
    { id: 'pay', type: 'waitForEvent', position: { x: 480, y: 0 }, data: { event: 'payment.confirmed', timeoutSeconds: 7200, saveAs: 'payment' } },
    { id: 'paid', type: 'message', position: { x: 720, y: -80 }, data: { messages: [text('Paid {{payment.amount}} for an order {{orderStatus}}')] } },
    { id: 'sorry', type: 'message', position: { x: 720, y: 140 }, data: { messages: [text('Sorry, the shop cannot be reached')] } },
    { id: 'end', type: 'end', position: { x: 960, y: 0 }, data: {} },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'lookup' },
    { id: 'e2', source: 'lookup', sourceHandle: 'success', target: 'pay' },
    { id: 'e3', source: 'lookup', sourceHandle: 'error', target: 'sorry' },
    { id: 'e4', source: 'pay', sourceHandle: 'received', target: 'paid' },
    { id: 'e5', source: 'pay', sourceHandle: 'timeout', target: 'sorry' },
    { id: 'e6', source: 'paid', target: 'end' },
    { id: 'e7', source: 'sorry', target: 'end' },
  ],
})

/** The `.var-text` field labelled `label` in `scope`, with its insertion buttons. */
const varField = (editor: FrameLocator, scope: Locator, label: string) => scope.locator('.var-text').filter({ has: editor.getByRole('textbox', { name: label, exact: true }) })


t.test('the outside nodes in the editor', { skip }, async (t) => {
  const api = await startHttpsReceiver()
  t.teardown(() => api.close())
  // The engine's calls and "Try it" may reach the local API.
  const setup = await openEditorSetupCalling(t, api.caFile, { engine: true })
  const { call } = setup
  await call('POST', '/v1/variables', { name: 'order', type: 'string', defaultValue: '1234' })
  await call('POST', '/v1/variables', { name: 'orderStatus', type: 'string' })
  await call('POST', '/v1/variables', { name: 'httpStatus', type: 'number' })
  await call('POST', '/v1/variables', { name: 'payment', type: 'object' })
  await call('PUT', '/v1/secrets/shop', { value: SHOP_TOKEN })
  const answerWithOrder = () => api.respondWith([{ status: 200, body: JSON.stringify(ORDER), headers: { 'content-type': 'application/json' } }])

  t.test('an HTTP request built in its form, tried once, a value of the answer picked, saved as built', async (t) => {
    const flowId = await setup.createFlow('Orders')
    const opened = await openEditor(t, setup, flowId)
    const { page, editor } = opened

    await editor.getByTestId('palette-httpRequest').click()
    const added = editor.locator('[data-node-type="httpRequest"]')
    await added.waitFor()
    const nodeId = (await added.getAttribute('data-testid'))!.replace(/^node-/, '')
    const panel = editor.getByTestId('node-panel')
    t.match(await added.innerText(), /HTTP request[\s\S]*success[\s\S]*error/, 'the canvas names the type and its two exits in words')

    await panel.getByRole('combobox', { name: 'Method', exact: true }).selectOption('POST')
    // The URL: typed, then a variable inserted from the menu the other forms use.
    const url = panel.getByRole('textbox', { name: 'URL', exact: true })
    await url.fill('http://shop.example/orders/')
    await panel.getByText('Use an https:// address, or a variable that holds one whole.').waitFor()
    t.pass('an address that is not https is flagged as typed')
    await url.fill(`${api.url}/orders/`)
    await varField(editor, panel, 'URL').getByRole('button', { name: /Insert a variable/ }).click()
    await panel.getByRole('menuitem', { name: /^order\b/ }).click()
    t.equal(await url.inputValue(), `${api.url}/orders/{{order}}`, 'the variable is inserted as {{order}}')

    // A header whose value reads a secret, inserted by name: the editor may not list the secrets.
    await panel.getByRole('button', { name: /Add header/ }).click()
    await panel.getByRole('group', { name: 'Header 1' }).getByRole('textbox', { name: 'Name', exact: true }).fill('Authorization')
    const headerValue = panel.getByRole('group', { name: 'Header 1' }).getByRole('textbox', { name: 'Value', exact: true })
    await headerValue.fill('Bearer ')
    await varField(editor, panel, 'Value').getByRole('button', { name: /Insert a secret/ }).click()
    const secrets = panel.getByRole('group', { name: 'Workspace secrets' })
    await secrets.getByText(/^(shop|The secrets cannot be listed here: type the name\.)$/).first().waitFor()
    t.pass('the secret menu lists the secrets, or says they must be typed')
    await captureEditor(t, opened, 'http-request-secret', { lang: 'en', theme: 'light' })
    await secrets.getByRole('textbox', { name: 'Secret name' }).fill('shop key')
    t.ok(await secrets.getByRole('button', { name: 'Insert', exact: true }).isDisabled(), 'a name a secret cannot have is not inserted')
    await secrets.getByRole('textbox', { name: 'Secret name' }).fill('shop')
    await secrets.getByRole('button', { name: 'Insert', exact: true }).click()
    t.equal(await headerValue.inputValue(), 'Bearer {{secrets.shop}}', 'the secret is inserted as {{secrets.shop}}')

    // The body: JSON checked as it is typed.
    await panel.getByRole('combobox', { name: 'Body type', exact: true }).selectOption('json')
    const body = panel.getByRole('textbox', { name: 'JSON', exact: true })
    await body.fill('{"id": "{{order}}", "note": }')
    await panel.locator('.field-error', { hasText: /^Not valid JSON: / }).waitFor()
    t.match(await panel.locator('.field-error', { hasText: /^Not valid JSON: / }).innerText(), /position|Unexpected/, 'bad JSON shows the parse error')
    t.equal(await body.getAttribute('aria-invalid'), 'true', 'and the field is marked invalid')
    await body.fill('"just text"')
    await panel.getByText('A body that is only a string is sent as text: choose Text.').waitFor()
    await body.fill('{"id": "{{order}}", "note": "gift"}')
    t.equal(await panel.locator('.field-error', { hasText: /JSON/ }).count(), 0, 'valid JSON clears the error')

    await panel.getByRole('spinbutton', { name: 'Timeout (ms)' }).fill('50')
    await panel.getByText('Between 100 and 30000 ms; 10000 when empty.').first().waitFor()
    await panel.getByRole('spinbutton', { name: 'Timeout (ms)' }).fill('5000')

    // A value to save: its variable from the workspace's, its path picked from the answer below.
    await panel.getByRole('button', { name: /Add a value to save/ }).click()
    const mapping = panel.getByRole('group', { name: 'Value 1' })
    const saveTo = mapping.getByRole('combobox', { name: 'Save to', exact: true })
    t.same(
      await saveTo.locator('option:not([disabled])').allTextContents(),
      ['order (Text)', 'orderStatus (Text)', 'httpStatus (Number)', 'payment (Object (JSON))'],
      "the variables to save to are the workspace's",
    )
    await saveTo.selectOption('orderStatus')
    await mapping.getByRole('textbox', { name: 'Path', exact: true }).fill('order.status')
    await mapping.getByText(/^Write a path from \$/).waitFor()
    t.pass('a path that does not start with $ is flagged')
    const statusTo = panel.getByRole('combobox', { name: 'Save the status code to', exact: true })
    t.same(await statusTo.locator('option').allTextContents(), ['(do not save)', 'httpStatus'], 'the status goes to number variables only')
    await statusTo.selectOption('httpStatus')
    t.match(await added.innerText(), new RegExp(`POST ${api.url.replace('https://', '').replace(/\./g, '\\.')}/orders/\\{\\{order\\}\\}`), 'the canvas sums the request up')

    // Try it: the service calls the local API once with the sample value and the secret.
    answerWithOrder()
    const tryIt = panel.getByTestId('http-try')
    t.equal(await tryIt.getByRole('textbox', { name: /order/ }).inputValue(), '1234', "the sample value starts as the variable's default")
    await tryIt.getByRole('textbox', { name: /order/ }).fill('987')
    const before = api.requests.length
    await tryIt.getByRole('button', { name: 'Try it', exact: true }).click()
    const result = tryIt.getByTestId('http-try-result')
    await result.getByText('Status 200').waitFor()
    const sent = api.requests[before]!
    t.match(sent, { method: 'POST', path: '/orders/987' }, 'the API got the request with the sample value')
    t.equal(sent.headers.authorization, `Bearer ${SHOP_TOKEN}`, "with the secret's value")
    t.same(JSON.parse(sent.body), { id: '987', note: 'gift' }, 'and the JSON body filled in')
    t.match(await result.locator('.call-line').innerText(), `POST ${api.url}/orders/987`, 'the request line as sent')
    t.match(await result.innerText(), /\d+ ms/, 'how long it took')
    await result.getByRole('button', { name: /"shipped"/ }).scrollIntoViewIfNeeded()
    await captureEditor(t, opened, 'http-request-try', { lang: 'en', theme: 'light' })
    await result.getByRole('button', { name: /"shipped"/ }).click()
    t.equal(await mapping.getByRole('textbox', { name: 'Path', exact: true }).inputValue(), '$.order.status', 'a click on "shipped" fills the path of the value to save')
    await result.getByRole('status').getByText('Path $.order.status set in value 1 to save.').waitFor()
    await result.getByRole('button', { name: /"A-1"/ }).click()
    t.equal(await mapping.getByRole('textbox', { name: 'Path', exact: true }).inputValue(), '$.items[0].sku', 'an item of a list is picked by its index')
    await result.getByRole('button', { name: /"shipped"/ }).click()

    // Connected start → request → end, and saved: the draft holds what the form says.
    await selectNode(editor, 'start')
    await link(editor, 'Next node', nodeId)
    await selectNode(editor, nodeId)
    await link(editor, 'Next node: success', 'end')
    await link(editor, 'Next node: error', 'end')
    await editor.getByTestId('save').click()
    await waitForMessage(page, 'saved')
    const saved = (await setup.draft(flowId)).nodes.find((n) => n.id === nodeId)
    t.same(
      saved?.data,
      {
        method: 'POST',
        url: `${api.url}/orders/{{order}}`,
        headers: [{ name: 'Authorization', value: 'Bearer {{secrets.shop}}' }],
        body: { id: '{{order}}', note: 'gift' },
        timeoutMs: 5000,
        saveResponse: [{ path: '$.order.status', variable: 'orderStatus' }],
        saveStatusAs: 'httpStatus',
      },
      'the saved definition holds the request as built',
    )

    // A GET has no body: the method takes it away.
    await panel.getByRole('combobox', { name: 'Method', exact: true }).selectOption('GET')
    await panel.getByText('A GET request sends no body.').waitFor()
    t.pass('a GET says it sends no body')
  })

  t.test('a wait for an event built in its form, its name checked, saved as built', async (t) => {
    const flowId = await setup.createFlow('Payments')
    const opened = await openEditor(t, setup, flowId)
    const { page, editor } = opened
    await editor.getByTestId('palette-waitForEvent').click()
    const added = editor.locator('[data-node-type="waitForEvent"]')
    await added.waitFor()
    const nodeId = (await added.getAttribute('data-testid'))!.replace(/^node-/, '')
    const panel = editor.getByTestId('node-panel')
    t.match(await added.innerText(), /received[\s\S]*timeout/, 'the canvas names its two exits')

    const name = panel.getByRole('textbox', { name: 'Event name', exact: true })
    await name.fill('payment confirmed!')
    await panel.getByText(/^Start with a letter or digit; then letters, digits/).waitFor()
    t.equal(await name.getAttribute('aria-invalid'), 'true', 'a name an event cannot have is flagged')
    await name.fill('payment.confirmed')
    t.equal(await panel.getByText(/^Start with a letter or digit; then letters, digits/).count(), 0, 'a good one is not')

    const amount = panel.getByRole('spinbutton', { name: 'Gives up after' })
    const unit = panel.getByRole('combobox', { name: 'Unit', exact: true })
    t.equal(await amount.inputValue(), '1', 'a new wait gives up after 1…')
    t.equal(await unit.inputValue(), 'hours', '…hour')
    await amount.fill('8')
    await unit.selectOption('days')
    await panel.getByText('Between 5 seconds and 7 days, in whole seconds.').waitFor()
    t.pass('more than 7 days is flagged')
    await unit.selectOption('hours')
    await amount.fill('2')
    t.equal(await panel.getByText('Between 5 seconds and 7 days, in whole seconds.').count(), 0, '2 hours is fine')

    const saveAs = panel.getByRole('combobox', { name: "Save the event's data to", exact: true })
    t.same(await saveAs.locator('option').allTextContents(), ['(do not save)', 'payment'], 'the data goes to object variables only')
    await saveAs.selectOption('payment')
    t.match(await added.innerText(), /waits for payment\.confirmed · 2 h/, 'the canvas sums the wait up')
    t.match(await added.innerText(), /Saves its data to payment/)

    await selectNode(editor, 'start')
    await link(editor, 'Next node', nodeId)
    await selectNode(editor, nodeId)
    await link(editor, 'Next node: received', 'end')
    await link(editor, 'Next node: timeout', 'end')
    await page.keyboard.press('Control+s')
    await waitForMessage(page, 'saved')
    const saved = (await setup.draft(flowId)).nodes.find((n) => n.id === nodeId)
    t.same(saved?.data, { event: 'payment.confirmed', timeoutSeconds: 7200, saveAs: 'payment' }, 'the saved definition holds the wait as built')
  })

  /** The test panel of `flowId` open in `look`, a preview started and waiting at the event. */
  const startPreview = async (t: Test, flowId: string, look: Look): Promise<OpenEditor & { testPanel: Locator }> => {
    const opened = await openEditor(t, setup, flowId, look)
    const { editor } = opened
    await editor.getByTestId('test-toggle').click()
    const testPanel = editor.getByTestId('test-panel')
    answerWithOrder()
    await testPanel.getByTestId('test-start').click()
    await editor.locator('.react-flow__node.test-waiting[data-id="pay"]').waitFor()
    return { ...opened, testPanel }
  }

  t.test('a preview makes the call, waits, and takes the event the test panel posts', async (t) => {
    const flowId = await sampleFlow(setup, 'Orders preview', ordersFlow(api.url))
    const { page, frame, editor, testPanel } = await startPreview(t, flowId, LOOKS[0])
    const lookups = api.requests.filter((r) => r.path === '/orders/1234')
    t.ok(lookups.length >= 1, 'the engine called the API for the preview')
    t.equal(lookups.at(-1)?.headers.authorization, `Bearer ${SHOP_TOKEN}`, 'with the secret')

    const form = testPanel.getByTestId('test-event')
    t.equal(await form.getByRole('textbox', { name: 'Event name', exact: true }).inputValue(), 'payment.confirmed', 'the event form names the event the node waits for')
    const data = form.getByRole('textbox', { name: 'Data (a JSON object)', exact: true })
    await data.fill('[1, 2]')
    await form.getByText('Not a JSON object.').waitFor()
    t.ok(await form.getByTestId('test-event-post').isDisabled(), 'data that is not an object is not posted')
    await data.fill('{"amount": 42}')
    await page.waitForTimeout(100)
    await checkEditorLayout(t, frame, 'the test panel waiting for an event', { minCanvas: 300 })
    await captureEditor(t, { page, frame, editor }, 'test-panel-event', LOOKS[0])
    await form.getByTestId('test-event-post').click()
    const chat = testPanel.getByTestId('test-chat')
    await chat.getByText('Paid 42 for an order shipped').waitFor()
    t.pass('the flow went on with the data of the event and the status saved from the answer')
    t.match(await chat.getByTestId('test-event-posted').innerText(), /Event payment\.confirmed posted/, 'the chat shows the event posted')
    await testPanel.getByTestId('test-ended').waitFor()
    t.equal(await testPanel.getByTestId('test-event').count(), 0, 'the event form goes once nothing waits')

    await testPanel.getByTestId('test-tab-debug').click()
    await testPanel.getByTestId('test-var-orderStatus').waitFor()
    t.match(await testPanel.getByTestId('test-var-httpStatus').innerText(), /200/, 'the status code was saved')

    t.test('the debug view lists the call of the preview', async (t) => {
      const calls = testPanel.getByTestId('test-call')
      await calls.first().waitFor({ timeout: 5000 })
      t.equal(await calls.count(), 1, 'one call')
      const shown = calls.first()
      t.match(await shown.locator('.call-line').innerText(), `GET ${api.url}/orders/1234`, 'its request line')
      t.match(await shown.getByTestId('call-outcome').innerText(), /Status 200/, 'its status')
      t.match(await shown.getByTestId('test-call-exit').innerText(), /left by success/, 'the exit it led to')
      await shown.getByText('Response body').click()
      await shown.getByTestId('call-body-json').getByText('"shipped"').waitFor()
      t.pass('its body, expanded')
      t.notMatch(await shown.innerText(), SHOP_TOKEN, 'the secret is not shown, only its placeholder')
      await captureEditor(t, { page, frame, editor }, 'test-panel-calls', LOOKS[0])
    })
  })

  // Every other look of the forms, the answer of "Try it" and the test panel.
  for (const look of LOOKS) {
    t.test(`the forms and the test panel in ${look.lang} and ${look.theme}`, async (t) => {
      const flowId = await sampleFlow(setup, `Orders ${look.lang} ${look.theme}`, ordersFlow(api.url))
      const opened = await openEditor(t, setup, flowId, look)
      const { editor, frame } = opened
      let panel = await selectNode(editor, 'lookup')
      await checkEditorLayout(t, frame, `the HTTP request form, ${look.lang} ${look.theme}`)
      await captureEditor(t, opened, 'http-request-form', look)
      answerWithOrder()
      const tryIt = panel.getByTestId('http-try')
      await tryIt.getByTestId('http-try-send').click()
      await tryIt.getByTestId('call-body-json').waitFor()
      await tryIt.getByTestId('call-body').scrollIntoViewIfNeeded()
      if (look.lang === 'pt') t.match(await tryIt.innerText(), /Corpo da resposta/, 'the answer is told in Portuguese')
      await checkEditorLayout(t, frame, `the answer of Try it, ${look.lang} ${look.theme}`)
      await captureEditor(t, opened, 'http-request-try', look)
      panel = await selectNode(editor, 'pay')
      if (look.lang === 'pt') t.match(await editor.getByTestId('node-pay').innerText(), /aguarda payment\.confirmed · 2 h[\s\S]*recebido[\s\S]*tempo esgotado/, 'the canvas speaks Portuguese')
      await captureEditor(t, opened, 'wait-for-event-form', look)

      const preview = await startPreview(t, flowId, look)
      await preview.testPanel.getByTestId('test-event').waitFor()
      await captureEditor(t, preview, 'test-panel-event', look)
    })
  }
})
