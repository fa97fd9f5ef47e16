import type { Frame, Page } from 'playwright-core'
import t from 'tap'
import { browserSkipReason } from '../helpers/browser.js'
import { orderLookup } from '../fixtures/order-lookup.js'
import { captureEveryLook, captureScreen, LOOKS, openDashboard, showIn } from '../helpers/dashboard.js'
import { buttons, chain, edge, end, flow, list, message, question, start, text, transfer } from '../helpers/engine.js'
import { startHttpsReceiver } from '../helpers/https-receiver.js'
import { eventually } from '../helpers/wait.js'

const skip = browserSkipReason()

/** Greets with text (a line break and a link) and an image, asks with buttons, then with a list, thanks and ends. */
const planFlow = flow(
  [
    start(),
    message('hello', text('Hello Ana!\nOur help is at https://example.com/help'), {
      type: 'media',
      media: { type: 'image', mimeType: 'image/png', url: 'https://example.com/files/welcome.png', caption: 'Our shop' },
    }),
    question('plan', { prompt: buttons('Which plan?', ['basic', 'Basic'], ['pro', 'Pro']), input: { kind: 'choice' } }),
    question('slot', {
      prompt: {
        ...list('When should we call?', ['morning', 'Morning'], ['evening', 'Evening']),
        tags: ['ask-slot'],
      },
      input: { kind: 'choice' },
    }),
    message('bye', text('Thanks, talk soon')),
    end(),
  ],
  [...chain('start', 'hello', 'plan'), edge('plan', 'slot', 'basic'), edge('plan', 'slot', 'pro'), edge('slot', 'bye', 'morning'), edge('slot', 'bye', 'evening'), ...chain('bye', 'end')],
)

interface Session {
  status: string
  pendingMessages: number
  externalId: string | null
}

/** Where a transcript draws the contact and the bot: each side's alignment, and its bubble's distance from the list's two edges. */
interface ChatSides {
  contact: { justify: string; left: number; right: number }
  bot: { justify: string; left: number; right: number }
}
const chatSides = (target: Page | Frame, list: string): Promise<ChatSides> =>
  target.evaluate(`(() => {
    const list = document.querySelector(${JSON.stringify(list)}).getBoundingClientRect()
    const side = (kind) => {
      const entry = document.querySelector(${JSON.stringify(list)} + ' .chat-entry.' + kind)
      const bubble = entry.querySelector('.chat-bubble').getBoundingClientRect()
      return { justify: getComputedStyle(entry).justifyContent, left: Math.round(bubble.left - list.left), right: Math.round(list.right - bubble.right) }
    }
    return { contact: side('contact'), bot: side('bot') }
  })()`) as Promise<ChatSides>

/** Waits for an outside event (at most 5 s), then says whether it came. */
const paymentFlow = {
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'wait', type: 'waitForEvent', position: { x: 200, y: 0 }, data: { event: 'payment.confirmed', timeoutSeconds: 5, saveAs: 'payment' } },
    { id: 'paid', type: 'message', position: { x: 400, y: 0 }, data: { messages: [{ type: 'text', text: { body: 'Payment received' } }] } },
    { id: 'late', type: 'message', position: { x: 400, y: 200 }, data: { messages: [{ type: 'text', text: { body: 'Still waiting for the payment' } }] } },
  ],
  edges: [
    { id: 'a', source: 'start', target: 'wait' },
    { id: 'b', source: 'wait', sourceHandle: 'received', target: 'paid' },
    { id: 'c', source: 'wait', sourceHandle: 'timeout', target: 'late' },
  ],
}

/** Asks for an order number, reminds once after 1 s, and gives up after 5 s. */
const reminderFlow = flow(
  [start(), question('ask', { prompt: text('Your order number?'), input: { kind: 'text' }, timeout: { seconds: 5, reminders: [{ afterSeconds: 1, message: text('Still there?') }] } }), end()],
  [...chain('start', 'ask'), edge('ask', 'end', 'default'), edge('ask', 'end', 'timeout')],
)

/** "10:30:00 AM": the time of day as the dashboard in English says it, blanks made plain. */
const clockTimeInEnglish = (iso: string) => new Date(iso).toLocaleTimeString('en', { timeStyle: 'medium' }).replace(/\s+/g, ' ')

const SHOP_TOKEN = 'tok-Sh0p-7f3a9c'

/** The screens this file adds are captured at a small laptop's width and a common desktop's. */
const WIDTHS = [1280, 1440] as const

t.test('sessions: logs filtered in the address, a session read as a chat, its timeline and deliveries', { skip }, async (t) => {
  // The shop's API a flow calls: an HTTPS server on loopback, which the engine may reach here.
  const shop = await startHttpsReceiver()
  t.teardown(() => shop.close())
  const setup = await openDashboard(t, { engine: true, calls: { allowedPrivateCidrs: ['127.0.0.1/32'], caFile: shop.caFile } })
  const { service } = setup
  const headers = { 'x-api-key': service.admin.apiKey }
  const call = async <T>(method: 'GET' | 'POST' | 'PUT', url: string, payload?: object): Promise<T> => {
    const response = await service.app.inject({ method, url, headers, ...(payload ? { payload } : {}) })
    if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode}`)
    return response.json<T>()
  }
  const answered = (sessionId: string) =>
    eventually(`session ${sessionId} answered`, async () => {
      const session = await call<Session>('GET', `/v1/sessions/${sessionId}`)
      return session.pendingMessages === 0 ? session : undefined
    })

  const created = await call<{ id: string }>('POST', '/v1/flows', { name: 'Plans', definition: planFlow })
  const { sessionId: doneId } = await call<{ sessionId: string }>('POST', `/v1/sessions/flows/${created.id}/create`, { externalId: 'ana-5511' })
  await call('POST', `/v1/sessions/${doneId}/message`, { type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: 'pro', title: 'Pro' } } })
  await answered(doneId)
  await call('POST', `/v1/sessions/${doneId}/message`, { type: 'interactive', interactive: { type: 'list_reply', list_reply: { id: 'morning', title: 'Morning' } } })
  t.equal((await answered(doneId)).status, 'completed', 'the first session ran to its end')
  const { sessionId: runningId } = await call<{ sessionId: string }>('POST', `/v1/sessions/flows/${created.id}/create`, { externalId: 'bruno-5522' })
  await answered(runningId)

  const page = await setup.signedInPage(t, { path: '/sessions' })
  const rows = page.locator('table.sessions-table tbody tr')
  await rows.nth(1).waitFor()
  t.equal(await rows.count(), 2, 'the logs list both sessions')
  const row = (contact: string) => rows.filter({ hasText: contact })
  t.equal(await row('bruno-5522').locator('.status-badge').innerText(), 'Active', 'a running session reads Active in the list')
  t.equal(await row('ana-5511').locator('.status-badge').innerText(), 'Completed', 'a finished one Completed')
  t.equal(await row('ana-5511').getByRole('link', { name: 'Plans' }).getAttribute('href'), `/dashboard/flows/${created.id}`, "the flow is named, and links to the flow's page")

  await page.getByLabel('Status').selectOption('completed')
  await page.getByLabel('Started within').selectOption('today')
  await page.getByRole('button', { name: 'Apply' }).click()
  await page.waitForURL(/status=completed/)
  await page.getByText('bruno-5522').waitFor({ state: 'detached' })
  t.equal(await rows.count(), 1, 'the Completed filter leaves the finished session')
  t.match(page.url(), /dateRange=today/, 'the date range is in the address')
  await page.reload()
  await page.getByText('ana-5511').waitFor()
  t.equal(await page.getByLabel('Status').inputValue(), 'completed', 'the status filter survives a reload')
  t.equal(await rows.count(), 1, 'the reloaded address lists the same session')

  await page.getByLabel('Session id').fill('not-an-id')
  await page.getByRole('button', { name: 'Apply' }).click()
  await page.getByRole('alert').filter({ hasText: 'A session id is a UUID' }).waitFor()
  t.pass('a malformed session id is refused on its field')
  await page.getByLabel('Session id').fill(runningId)
  await page.getByLabel('Status').selectOption('')
  await page.getByRole('button', { name: 'Apply' }).click()
  await page.getByText('bruno-5522').waitFor()
  t.equal(await rows.count(), 1, 'the session id filter finds that session only')
  await page.getByRole('button', { name: 'Clear' }).click()
  await rows.nth(1).waitFor()

  // A session that waits for a payment which never comes: its timer fires while the rest runs.
  await call('POST', '/v1/variables', { name: 'payment', type: 'object' })
  const payments = await call<{ id: string }>('POST', '/v1/flows', { name: 'Payments', definition: paymentFlow })
  const { sessionId: lateId } = await call<{ sessionId: string }>('POST', `/v1/sessions/flows/${payments.id}/create`, { externalId: 'late-5544' })
  // And one asked a question that nobody answers: a reminder, then its timeout.
  const reminding = await call<{ id: string }>('POST', '/v1/flows', { name: 'Reminders', definition: reminderFlow })
  const { sessionId: silentId } = await call<{ sessionId: string }>('POST', `/v1/sessions/flows/${reminding.id}/create`, { externalId: 'silent-5588' })

  await page.getByRole('link', { name: `Open session ${doneId.slice(-8)}` }).click()
  await page.getByRole('heading', { level: 1, name: `Session ${doneId.slice(-8)}` }).waitFor()
  const flowFact = page.getByTestId('session-flow')
  await flowFact.getByRole('link', { name: 'Plans' }).waitFor()
  t.equal(await flowFact.innerText(), 'Plans · version 1', "the session page names the flow and its version, not an id")
  t.equal(await flowFact.getByRole('link').getAttribute('href'), `/dashboard/flows/${created.id}`, "and links to the flow's page")
  t.equal(await page.locator('.facts .status-badge').innerText(), 'Completed', 'the page says Completed, as the list does')
  const chat = page.getByRole('list', { name: 'Messages, oldest first' })
  const contact = chat.getByRole('article', { name: 'Contact' })
  const bot = chat.getByRole('article', { name: /^Bot/ })
  await bot.last().waitFor()
  t.equal(await contact.count(), 2, 'the two inbound messages are on the contact side')
  t.equal(await bot.count(), 5, 'the five outbound messages are on the bot side')
  t.equal(await bot.first().locator('.chat-text').innerText(), 'Hello Ana!\nOur help is at https://example.com/help', 'the text keeps its line break')
  t.equal(await bot.first().getByRole('link', { name: 'https://example.com/help' }).getAttribute('href'), 'https://example.com/help', 'the address in the text is a link')
  await bot.nth(1).getByText('welcome.png').waitFor()
  await bot.nth(1).getByText('Our shop').waitFor()
  t.equal(await bot.nth(1).getByRole('link', { name: 'Open the file' }).getAttribute('href'), 'https://example.com/files/welcome.png', 'the image is a card with its name, caption and link')
  const planButtons = bot.nth(2).getByRole('list', { name: 'Buttons' }).getByRole('button')
  t.same(await planButtons.allInnerTexts(), ['Basic', 'Pro'], 'the question shows its buttons')
  t.ok(await planButtons.first().isDisabled(), 'the buttons are shown, not pressable')
  t.same(await bot.nth(3).getByRole('list', { name: 'All' }).getByRole('listitem').allInnerTexts(), ['Morning', 'Evening'], 'the list shows its section rows')
  await bot.nth(3).getByText('ask-slot').waitFor()
  await contact.first().getByText('Pro').waitFor()
  await contact.last().getByText('Morning').waitFor()
  t.match(await contact.first().innerText(), /Pressed the button/, 'the button reply reads as a press')
  const planWho = bot.nth(2).locator('.chat-who span').first()
  t.equal(await planWho.innerText(), 'Bot · Question', "a bot message names its node by the node's type")
  t.equal(await planWho.getAttribute('title'), 'plan', 'with the node id on hover')
  await chat.getByText('The bot finished the session').waitFor()

  const timeline = page.getByRole('list', { name: 'Events, oldest first' })
  const events = timeline.getByRole('listitem')
  t.equal(await events.count(), 6, 'the timeline holds every event: started, three turns, two messages')
  t.match(await events.first().innerText(), /SessionStarted/, 'the first event is the start')
  await events.first().getByText('Data of SessionStarted').click()
  await events.first().locator('pre').first().getByText(`"externalId": "ana-5511"`).waitFor()
  t.pass('an event opens to its data as formatted JSON')

  const deliveries = page.locator('.session-deliveries > li')
  await eventually('the three deliveries', async () => {
    await page.getByRole('heading', { name: 'Webhook deliveries' }).waitFor()
    return (await deliveries.count()) === 3 ? true : (await page.reload(), undefined)
  })
  t.equal(await deliveries.filter({ hasText: 'Skipped' }).count(), 3, 'with no callback URL on the key, every delivery is skipped')
  t.equal(
    await page.getByRole('link', { name: 'See these deliveries in Webhooks' }).getAttribute('href'),
    `/dashboard/webhooks?sessionId=${doneId}`,
    'the deliveries link to Webhooks filtered to the session',
  )

  const salesCreated = await service.app.inject({ method: 'POST', url: '/v1/sectors', headers, payload: { name: 'Sales' } })
  const sales = { id: String(salesCreated.headers.location).split('/').at(-1)! }
  const handover = await call<{ id: string }>('POST', '/v1/flows', { name: 'Handover', definition: flow([start(), transfer('human', 'sector', sales.id)], chain('start', 'human')) })
  const { sessionId: handedOverId } = await call<{ sessionId: string }>('POST', `/v1/sessions/flows/${handover.id}/create`, {})
  await answered(handedOverId)
  await page.goto(`${setup.base}/dashboard/sessions/${handedOverId}`)
  await page.getByRole('list', { name: 'Messages, oldest first' }).getByText('Transferred to sector Sales').waitFor()
  t.pass("a transfer names the sector, not its id")

  await page.goto(`${setup.base}/dashboard/sessions/${runningId}`)
  // A text past the service's limit cannot be typed; sent anyway, it is refused in words.
  const text = page.getByLabel('Message', { exact: true })
  t.equal(await text.getAttribute('maxlength'), '4096', 'the text box holds the service limit')
  await text.fill('Hello')
  t.equal(await page.getByTestId('length-counter').innerText(), '5 / 4,096', 'and counts against it')
  await text.evaluate((box) => box.removeAttribute('maxlength'))
  await text.fill('x'.repeat(4097))
  await page.getByRole('button', { name: 'Send', exact: true }).click()
  const textError = page.locator('.field.invalid').filter({ has: text }).getByRole('alert')
  await textError.waitFor()
  t.equal(await textError.innerText(), 'Use at most 4,096 characters.', 'what the service refused shows on the text, in words')
  await page.getByLabel('Kind').selectOption('button_reply')
  await page.getByLabel('Chosen id').fill('basic')
  await page.getByLabel('Chosen title').fill('Basic')
  await page.getByRole('button', { name: 'Send', exact: true }).click()
  await page.getByRole('status').filter({ hasText: 'Sent.' }).waitFor()
  await page.getByRole('list', { name: 'Messages, oldest first' }).getByRole('article', { name: /^Bot/ }).nth(3).getByText('When should we call?').waitFor()
  t.pass('a reply sent from the session page gets the bot answer in the chat')
  t.equal(await page.locator('.facts .status-badge').innerText(), 'Active', 'the page says Active, as the list does')
  const waitingAt = page.locator('.facts .node-name')
  await waitingAt.filter({ hasText: 'Question' }).waitFor()
  t.equal(await waitingAt.getAttribute('title'), 'slot', 'the node it waits at is named, its id on hover')
  t.equal(await page.locator('.facts .node-gist').innerText(), 'When should we call?', 'with what it asks')
  const dashboardSides = await chatSides(page, '.chat')

  // Started from the flow's page: the session's page follows it live, so the bot's answer to a
  // message sent from elsewhere appears without a reload.
  await page.goto(`${setup.base}/dashboard/flows/${created.id}`)
  const startForm = page.getByRole('form', { name: 'Start a session' })
  await startForm.getByText('Plans · version 1').waitFor()
  await startForm.getByLabel('Contact id').fill('carla-5533')
  await startForm.getByRole('button', { name: 'Start the session' }).click()
  await page.waitForURL(/\/dashboard\/sessions\/[0-9a-f-]{36}$/)
  const liveId = new URL(page.url()).pathname.split('/').pop()!
  const liveChat = page.getByRole('list', { name: 'Messages, oldest first' })
  await liveChat.getByRole('article', { name: /^Bot/ }).getByText('Which plan?').waitFor()
  await page.getByRole('status').filter({ hasText: 'Following the conversation live.' }).waitFor()
  t.match(await call<Session>('GET', `/v1/sessions/${liveId}`), { status: 'active', externalId: 'carla-5533' }, 'the form started a session of the flow for the contact')
  await call('POST', `/v1/sessions/${liveId}/message`, { type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: 'basic', title: 'Basic' } } })
  await liveChat.getByRole('article', { name: /^Bot/ }).getByText('When should we call?').waitFor()
  t.pass("the bot's answer to a message sent through the API appears without a reload")

  // The editor's test panel draws the same chat with the same sides.
  await page.goto(`${setup.base}/dashboard/flows/${created.id}/edit`)
  await page.getByTestId('editor-status').getByText('Editor signed in').waitFor()
  const editor = page.frameLocator('iframe[title="Flow editor"]')
  await editor.getByTestId('test-toggle').click()
  await editor.getByTestId('test-start').click()
  const testChat = editor.getByTestId('test-chat')
  await testChat.getByRole('button', { name: 'Pro' }).click()
  await testChat.getByText('When should we call?').waitFor()
  const editorFrame = page.frames().find((frame) => frame.url().includes('/editor/'))!
  const editorSides = await chatSides(editorFrame, '[data-testid="test-chat"]')
  t.same([dashboardSides.contact.justify, dashboardSides.bot.justify], ['flex-start', 'flex-end'], 'the dashboard draws the contact on the left, the bot on the right')
  t.same([editorSides.contact.justify, editorSides.bot.justify], ['flex-start', 'flex-end'], "and so does the editor's test panel")
  for (const [where, sides] of [['dashboard', dashboardSides], ['editor', editorSides]] as const) {
    t.ok(sides.contact.left < sides.contact.right && sides.bot.right < sides.bot.left, `${where}: the contact's bubble hugs the left edge and the bot's the right (${JSON.stringify(sides)})`)
  }

  // A flow that calls the shop's API with a secret: the call in the chat, opened to what it sent and got.
  for (const name of ['order', 'status']) await call('POST', '/v1/variables', { name, type: 'string' })
  await call('POST', '/v1/variables', { name: 'httpStatus', type: 'number' })
  await call('PUT', '/v1/secrets/shop', { value: SHOP_TOKEN })
  const orders = await call<{ id: string }>('POST', '/v1/flows', { name: 'Orders', definition: orderLookup(shop.url) })
  shop.respondWith([{ status: 200, body: JSON.stringify({ id: '1234', status: 'shipped', items: [{ sku: 'A-1', quantity: 2 }] }), headers: { 'content-type': 'application/json' } }])
  const { sessionId: orderId } = await call<{ sessionId: string }>('POST', `/v1/sessions/flows/${orders.id}/create`, { externalId: 'dora-5566' })
  await answered(orderId)
  await call('POST', `/v1/sessions/${orderId}/message`, { type: 'text', text: { body: '1234' } })
  t.equal((await answered(orderId)).status, 'completed', 'the order session called the shop and answered')
  t.equal(shop.requests[0]?.headers.authorization, `Bearer ${SHOP_TOKEN}`, 'the shop got the secret')

  await page.goto(`${setup.base}/dashboard/sessions/${orderId}`)
  await page.getByTestId('session-flow').getByRole('link', { name: 'Orders' }).waitFor()
  const orderChat = page.getByRole('list', { name: 'Messages, oldest first' })
  const callEntry = orderChat.getByTestId('chat-call')
  await callEntry.waitFor()
  const callLine = callEntry.locator('summary')
  const oneLine = async (locator: typeof callLine) => (await locator.innerText()).replace(/\s+/g, ' ')
  t.match(await oneLine(callLine), new RegExp(`^Call from HTTP request GET ${shop.url}/orders/1234 → HTTP 200 \\d+ ms · `), 'the call is one line: the node, method and URL, status and duration')
  t.equal(await callLine.locator('.node-name').getAttribute('title'), 'lookup', "the node is named by its type, its id on hover")
  t.equal(await callEntry.getByTestId('call-details').isVisible(), false, 'what it sent and got is a click away')
  await callLine.click()
  const requestHeaders = callEntry.getByRole('table', { name: 'Request headers' })
  t.equal(await requestHeaders.getByRole('row', { name: /Authorization/ }).getByRole('cell').innerText(), 'Bearer {{secrets.shop}}', 'the request names the secret it sent')
  t.equal(await requestHeaders.locator('mark.call-secret').innerText(), '{{secrets.shop}}', 'marked as a secret')
  t.equal(
    await callEntry.getByTestId('call-body').innerText(),
    JSON.stringify({ id: '1234', status: 'shipped', items: [{ sku: 'A-1', quantity: 2 }] }, null, 2),
    "the shop's answer is indented",
  )
  await orderChat.getByRole('article', { name: /^Bot/ }).getByText('Your order is shipped').waitFor()
  t.notOk((await page.content()).includes(SHOP_TOKEN), "the secret's value is nowhere on the page")
  const callEvent = page.getByRole('list', { name: 'Events, oldest first' }).getByRole('listitem').filter({ hasText: 'OutsideCallAnswered' })
  t.match(await oneLine(callEvent.locator('.timeline-outside')), new RegExp(`GET ${shop.url}/orders/1234 → HTTP 200`), 'the timeline says what the call was')
  await callEvent.getByText('Data of OutsideCallAnswered').click()
  await callEvent.getByRole('table', { name: 'Answer headers' }).getByText('application/json').waitFor()
  t.pass("and opens to the same call, beside the event's data")

  // A call that could not be made says why, in words.
  const unsent = await call<{ id: string }>('POST', '/v1/flows', { name: 'Orders without a key', definition: orderLookup(shop.url, { headers: [{ name: 'Authorization', value: 'Bearer {{secrets.gone}}' }] }) })
  const { sessionId: unsentId } = await call<{ sessionId: string }>('POST', `/v1/sessions/flows/${unsent.id}/create`, {})
  await answered(unsentId)
  await call('POST', `/v1/sessions/${unsentId}/message`, { type: 'text', text: { body: '99' } })
  await answered(unsentId)
  await page.goto(`${setup.base}/dashboard/sessions/${unsentId}`)
  const unsentCall = page.getByTestId('chat-call')
  t.equal(await unsentCall.getByTestId('call-outcome').innerText(), 'A secret could not be read', 'a call without its secret says so')
  await unsentCall.locator('summary').click()
  await unsentCall.locator('.call-error').waitFor()

  // An outside event, and a wait whose time ran out.
  const { sessionId: paidId } = await call<{ sessionId: string }>('POST', `/v1/sessions/flows/${payments.id}/create`, { externalId: 'erik-5577' })
  await answered(paidId)
  await call('POST', `/v1/sessions/${paidId}/events`, { name: 'payment.confirmed', data: { amount: 120.5, currency: 'BRL' } })
  t.equal((await answered(paidId)).status, 'completed', 'the event let the flow go on')
  await page.goto(`${setup.base}/dashboard/sessions/${paidId}`)
  const eventEntry = page.getByTestId('chat-event')
  t.match(await oneLine(eventEntry.locator('summary')), /^Outside event payment\.confirmed \{"amount":120\.5,"currency":"BRL"\} · /, 'an outside event shows its name and data')
  await eventEntry.locator('summary').click()
  await eventEntry.locator('pre').getByText('"currency": "BRL"').waitFor()
  await captureScreen(t, page, 'sessions-event', LOOKS[0])
  await page.getByRole('list', { name: 'Events, oldest first' }).getByRole('listitem').filter({ hasText: 'OutsideEventReceived' }).getByText('Outside event payment.confirmed').waitFor()
  await eventually('the timer of the unpaid session', async () => ((await call<Session>('GET', `/v1/sessions/${lateId}`)).status === 'completed' ? true : undefined))
  await page.goto(`${setup.base}/dashboard/sessions/${lateId}`)
  await page.getByTestId('session-flow').getByRole('link', { name: 'Payments' }).waitFor()
  const firedAt = async (sessionId: string) =>
    (await call<{ content: { type: string; data: { until: string } }[] }>('GET', `/v1/sessions/${sessionId}/events?size=100`)).content.filter((e) => e.type === 'TimerFired').map((e) => e.data.until)
  const [waitDue] = await firedAt(lateId)
  const plain = (line: string) => line.replace(/\s+/g, ' ')
  const timerLine = `Timer fired at node Wait for event (due ${clockTimeInEnglish(waitDue!)})`
  t.equal(plain(await page.getByTestId('chat-timer').innerText()).split(' · ')[0], timerLine, 'a timer that fired says at which node, and when it was due')
  const timelineTimers = page.getByRole('list', { name: 'Events, oldest first' }).getByRole('listitem').filter({ hasText: 'TimerFired' })
  t.same((await timelineTimers.locator('.timeline-outside').allInnerTexts()).map(plain), [timerLine], 'so does its TimerFired entry in the timeline')

  await eventually('the reminder and the timeout of the silent session', async () => ((await call<Session>('GET', `/v1/sessions/${silentId}`)).status === 'completed' ? true : undefined))
  const [reminderDue, timeoutDue] = await firedAt(silentId)
  await page.goto(`${setup.base}/dashboard/sessions/${silentId}`)
  await page.getByRole('list', { name: 'Messages, oldest first' }).getByRole('article', { name: /^Bot/ }).getByText('Still there?').waitFor()
  // Nodes are named once the session's flow version has loaded, which comes apart from the events.
  await timelineTimers.first().getByText(/at node Question/).waitFor()
  t.same(
    (await timelineTimers.locator('.timeline-outside').allInnerTexts()).map(plain),
    [`Timer fired at node Question (due ${clockTimeInEnglish(reminderDue!)})`, `Timer fired at node Question (due ${clockTimeInEnglish(timeoutDue!)})`],
    "a question's reminder and its timeout are each a TimerFired entry in words, oldest first",
  )
  await showIn(page, setup.base, `/sessions/${silentId}`, LOOKS.at(-1)!)
  await page.getByRole('list', { name: 'Eventos, do mais antigo para o mais recente' }).getByRole('listitem').filter({ hasText: 'TimerFired' }).first().getByText(/^Temporizador disparado no nó Pergunta \(previsto para \d{2}:\d{2}:\d{2}\)$/).waitFor()
  t.pass('and in Portuguese')
  await captureScreen(t, page, 'sessions-timers', LOOKS.at(-1)!)

  for (const look of LOOKS) {
    await showIn(page, setup.base, `/sessions/${orderId}`, look)
    await page.getByTestId('session-flow').getByRole('link', { name: 'Orders' }).waitFor()
    await page.getByTestId('chat-call').locator('summary').click()
    await page.getByTestId('chat-call').getByTestId('call-body').waitFor()
    await captureScreen(t, page, 'sessions-call', look)
  }

  const ready = (p: typeof page) => p.getByRole('list', { name: /Messages|Mensagens/ }).getByRole('article').last().waitFor()
  await captureEveryLook(t, page, setup.base, 'sessions-logs', '/sessions', (p) => p.locator('table.sessions-table tbody tr').nth(1).waitFor())
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 })
    await captureEveryLook(t, page, setup.base, `sessions-session-${width}`, `/sessions/${doneId}`, async (p) => {
      await ready(p)
      await p.locator('.session-deliveries > li').nth(2).waitFor()
      await p.getByTestId('session-flow').getByRole('link', { name: 'Plans' }).waitFor()
    })
  }
})
