import { randomBytes } from 'node:crypto'
import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { browserSkipReason } from '../helpers/browser.js'
import { startChatCompletionsServer } from '../helpers/chat-completions-server.js'
import { captureEveryLook, openDashboard } from '../helpers/dashboard.js'
import { eventually } from '../helpers/wait.js'

const skip = browserSkipReason()

/** A number as the dashboard writes it in English. */
const en = (n: number) => new Intl.NumberFormat('en-US').format(n)

interface Usage {
  calls: number
  promptTokens: number
  completionTokens: number
}
interface Session {
  pendingMessages: number
  modelUsage: Usage
}
interface Analytics {
  modelUsage: Usage & { models: (Usage & { model: string })[] }
}

// start → ask → an AI step that replies, and back to ask: each message the session gets makes one model call.
const answering = (connectionId: string) => ({
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'ask', type: 'question', position: { x: 200, y: 0 }, data: { prompt: { type: 'text', text: { body: 'How can I help?' } }, input: { kind: 'text' } } },
    { id: 'answer', type: 'ai', position: { x: 400, y: 0 }, data: { connectionId, mode: 'reply', instructions: 'You answer questions about a shoe shop.', history: 4 } },
    { id: 'sorry', type: 'message', position: { x: 600, y: 0 }, data: { messages: [{ type: 'text', text: { body: 'Our assistant is away' } }] } },
  ],
  edges: [
    { id: 'a', source: 'start', target: 'ask' },
    { id: 'b', source: 'ask', sourceHandle: 'default', target: 'answer' },
    { id: 'c', source: 'answer', sourceHandle: 'success', target: 'ask' },
    { id: 'd', source: 'answer', sourceHandle: 'error', target: 'sorry' },
  ],
})

// The endpoint is a real HTTPS chat-completions server on loopback (test/http/ai-steps.test.ts),
// which counts a word as a token.
t.test("model usage: the flow's analytics and the session page show the tokens the AI steps used", { skip }, async (t) => {
  const modelKey = `sk-${randomBytes(12).toString('hex')}`
  const endpoint = await startChatCompletionsServer(modelKey)
  t.teardown(() => endpoint.close())
  endpoint.answerWith(() => 'Shipping takes three days.')
  const setup = await openDashboard(t, {
    engine: true,
    calls: { allowedPrivateCidrs: ['127.0.0.1/32'], caFile: endpoint.caFile },
    config: loadConfig({ RATE_LIMIT_PER_MINUTE: '0', AUTH_RATE_LIMIT_PER_MINUTE: '0', WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WEBHOOK_CA_FILE: endpoint.caFile }),
  })
  const { service, base } = setup
  const call = async <T>(method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => {
    const response = await service.app.inject({ method, url, headers: { 'x-api-key': service.admin.apiKey }, ...(payload ? { payload } : {}) })
    if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
    return { json: (response.body ? response.json() : undefined) as T, location: String(response.headers.location ?? '') }
  }
  await call('PUT', '/v1/secrets/llm', { value: modelKey })
  const connectionId = (await call('POST', '/v1/ai-connections', { name: 'Test model', baseUrl: endpoint.baseUrl, apiKeySecret: 'llm', model: 'test-model', maxTokensPerCall: 50 })).location.split('/').pop()!
  const flow = (await call<{ id: string }>('POST', '/v1/flows', { name: 'Shop assistant', definition: answering(connectionId) })).json

  const { sessionId } = (await call<{ sessionId: string }>('POST', `/v1/sessions/flows/${flow.id}/create`, {})).json
  for (const text of ['How long does shipping take?', 'And to Lisbon?']) {
    await call('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: text } })
    await eventually(`session ${sessionId} answered "${text}"`, async () => ((await call<Session>('GET', `/v1/sessions/${sessionId}`)).json.pendingMessages === 0 ? true : undefined))
  }
  const { modelUsage } = (await call<Session>('GET', `/v1/sessions/${sessionId}`)).json
  t.equal(modelUsage.calls, 2, 'the session made a model call per message')
  const analytics = await eventually('the analytics counted the calls', async () => {
    const now = (await call<Analytics>('GET', `/v1/flows/${flow.id}/analytics`)).json
    return now.modelUsage.calls === modelUsage.calls ? now : undefined
  })
  t.match(analytics.modelUsage, modelUsage, "the flow's usage is its one session's")

  const page = await setup.signedInPage(t, { path: `/flows/${flow.id}/analytics` })
  const card = page.getByTestId('model-usage')
  await card.getByRole('heading', { level: 2, name: 'Model usage' }).waitFor()
  const figure = async (key: string) => (await card.locator(`[data-figure="${key}"] .flows-total-value`).innerText()).trim()
  t.same(
    [await figure('calls'), await figure('promptTokens'), await figure('completionTokens')],
    [en(modelUsage.calls), en(modelUsage.promptTokens), en(modelUsage.completionTokens)],
    'the calls, prompt and completion tokens of the range',
  )
  const table = card.getByRole('table', { name: 'Per model' })
  t.same(
    (await table.locator('tbody tr[data-model="test-model"] > *').allInnerTexts()).map((cell) => cell.trim()),
    ['test-model', en(modelUsage.calls), en(modelUsage.promptTokens), en(modelUsage.completionTokens)],
    'and per model',
  )
  await captureEveryLook(t, page, base, 'flows-analytics-model-usage', `/flows/${flow.id}/analytics`, (p) => p.getByTestId('model-usage').getByRole('table').waitFor())

  await page.goto(`${base}/dashboard/sessions/${sessionId}?lang=en`)
  const usage = page.getByTestId('session-model-usage')
  await usage.waitFor()
  t.equal(
    (await usage.innerText()).trim(),
    `2 model calls · ${en(modelUsage.promptTokens)} prompt and ${en(modelUsage.completionTokens)} completion tokens`,
    "the session page shows the session's model usage",
  )
  await captureEveryLook(t, page, base, 'session-model-usage', `/sessions/${sessionId}`, (p) => p.getByTestId('session-model-usage').waitFor())
})
