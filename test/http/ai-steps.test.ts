import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { CALL_LIMITS } from '../../src/domain/outside-call.js'
import { bootstrap } from '../../src/commands/tenancy.js'
import { CALLS_PER_DESTINATION } from '../../src/engine/outside-calls.js'
import { Metrics } from '../../src/metrics/registry.js'
import { openTestApp, silentLogger } from '../helpers/app.js'
import { capturedLogs } from '../helpers/captured-logs.js'
import { startChatCompletionsServer, wordCount, type ChatRequest } from '../helpers/chat-completions-server.js'
import { startHttpsReceiver } from '../helpers/https-receiver.js'
import { apiBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'
import { replayedTurns } from '../helpers/replay.js'
import { curlStream } from '../helpers/sse.js'
import { parseExposition, valueOf, type Exposition } from '../metrics/exposition.js'

// AI steps black box: a flow's classify, extract and reply steps call a real HTTPS server of the
// test's own that speaks the chat completions protocol; what it answers is scripted per test, no
// model runs. Every call is recorded on the session, so audit replays the sessions with it stopped.

const at = (x: number) => ({ x, y: 0 })
const say = (id: string, body: string) => ({ id, type: 'message', position: at(600), data: { messages: [{ type: 'text', text: { body } }] } })
const ask = { id: 'ask', type: 'question', position: at(200), data: { prompt: { type: 'text', text: { body: 'How can I help?' } }, input: { kind: 'text' } } }
const start = { id: 'start', type: 'start', position: at(0), data: {} }

const routing = (connectionId: string) => ({
  schemaVersion: 1,
  nodes: [
    start,
    ask,
    {
      id: 'route',
      type: 'ai',
      position: at(400),
      data: {
        connectionId,
        mode: 'classify',
        instructions: 'You route the messages of a subscription shop.',
        labels: [
          { id: 'cancel', description: 'wants to cancel a plan or subscription' },
          { id: 'track', description: 'asks where an order is' },
        ],
        saveAs: 'intent',
      },
    },
    say('cancelling', 'Sorry to see you go'),
    say('tracking', 'Let me look for your order'),
    say('other', 'A person will answer'),
    say('sorry', 'Our assistant is away'),
  ],
  edges: [
    { id: 'a', source: 'start', target: 'ask' },
    { id: 'b', source: 'ask', sourceHandle: 'default', target: 'route' },
    { id: 'c', source: 'route', sourceHandle: 'cancel', target: 'cancelling' },
    { id: 'd', source: 'route', sourceHandle: 'track', target: 'tracking' },
    { id: 'e', source: 'route', sourceHandle: 'other', target: 'other' },
    { id: 'f', source: 'route', sourceHandle: 'error', target: 'sorry' },
  ],
})

const extraction = (connectionId: string) => ({
  schemaVersion: 1,
  nodes: [
    start,
    ask,
    {
      id: 'read',
      type: 'ai',
      position: at(400),
      data: {
        connectionId,
        mode: 'extract',
        instructions: 'The user tells about a late delivery.',
        fields: [
          { variable: 'orderNumber', type: 'string', description: 'the order number, digits only', required: true },
          { variable: 'deliveryDate', type: 'date', description: 'the promised delivery date', required: true },
        ],
      },
    },
    say('got', 'Order {{orderNumber}}, due {{deliveryDate}}'),
    say('missing', 'Which order, and when was it due?'),
    say('sorry', 'Our assistant is away'),
  ],
  edges: [
    { id: 'a', source: 'start', target: 'ask' },
    { id: 'b', source: 'ask', sourceHandle: 'default', target: 'read' },
    { id: 'c', source: 'read', sourceHandle: 'success', target: 'got' },
    { id: 'd', source: 'read', sourceHandle: 'missing', target: 'missing' },
    { id: 'e', source: 'read', sourceHandle: 'error', target: 'sorry' },
  ],
})

const answering = (connectionId: string) => ({
  schemaVersion: 1,
  nodes: [
    start,
    ask,
    {
      id: 'answer',
      type: 'ai',
      position: at(400),
      data: { connectionId, mode: 'reply', instructions: 'You answer questions about {{shop}}.', knowledge: 'Shipping takes 3 days. Returns are free for 30 days.', history: 4 },
    },
    say('sorry', 'Our assistant is away'),
  ],
  edges: [
    { id: 'a', source: 'start', target: 'ask' },
    { id: 'b', source: 'ask', sourceHandle: 'default', target: 'answer' },
    { id: 'c', source: 'answer', sourceHandle: 'error', target: 'sorry' },
  ],
})

/** The definition with its AI step `nodeId` waiting for its answer the least a call may. */
const impatient = (definition: { nodes: { id: string; data: object }[] }, nodeId: string) => ({
  ...definition,
  nodes: definition.nodes.map((node) => (node.id === nodeId ? { ...node, data: { ...node.data, timeoutMs: CALL_LIMITS.timeoutMs.min } } : node)),
})

/** The scripted model: it classifies by keyword and extracts by pattern, as the test's prompt asks. */
const scriptedModel = (request: ChatRequest): string => {
  const [system, ...rest] = request.body.messages ?? []
  const user = rest.at(-1)?.content ?? ''
  if (system?.content.includes('Classify')) return JSON.stringify({ label: /cancel/i.test(user) ? 'cancel' : /order/i.test(user) ? 'track' : 'other' })
  if (system?.content.includes('Extract')) {
    return JSON.stringify({ orderNumber: /\b(\d{4,})\b/.exec(user)?.[1] ?? null, deliveryDate: /\b(\d{4}-\d{2}-\d{2}|\d{2}\/\d{2}\/\d{4})\b/.exec(user)?.[1] ?? null })
  }
  return 'Shipping takes 3 days, and returns are free for 30 days.'
}

interface ModelUsage {
  calls: number
  promptTokens: number
  completionTokens: number
}

const NO_USAGE: ModelUsage = { calls: 0, promptTokens: 0, completionTokens: 0 }

const addedUsage = (a: ModelUsage, b: ModelUsage): ModelUsage => ({ calls: a.calls + b.calls, promptTokens: a.promptTokens + b.promptTokens, completionTokens: a.completionTokens + b.completionTokens })

const parsedJson = (text: string) => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The calls a session's events record the endpoint answering (a refusal or error status too), with the tokens the endpoint said they took. */
const answeredUsage = (events: readonly { type: string; data: { answer?: object } }[]): ModelUsage => {
  const answers = events.filter((e) => e.type === 'OutsideCallAnswered' && e.data.answer !== undefined && 'status' in e.data.answer)
  // A whole completion's usage, or a streamed one's: in its last chunk.
  const usageOf = (body: string): { prompt_tokens: number; completion_tokens: number } =>
    parsedJson(body)?.usage ??
    body.split('\n').filter((line) => line.startsWith('data: {')).map((line) => parsedJson(line.slice(6))?.usage).findLast(Boolean) ??
    { prompt_tokens: 0, completion_tokens: 0 }
  return answers
    .map((e) => usageOf((e.data.answer as { body: string }).body))
    .reduce((sum, usage) => addedUsage(sum, { calls: 1, promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens }), NO_USAGE)
}

for (const backend of apiBackends) {
  t.test(`AI steps against a chat completions server, on ${backend.name}`, async (t) => {
    const modelKey = `sk-${randomBytes(16).toString('hex')}`
    const model = await startChatCompletionsServer(modelKey)
    t.teardown(() => model.close())
    model.answerWith(scriptedModel)
    const receiver = await startHttpsReceiver()
    t.teardown(() => receiver.close())
    const logs = capturedLogs()
    const loopback = ['127.0.0.1/32']
    const metrics = new Metrics(silentLogger)
    const opened = await openTestApp(t, backend, {
      engine: true,
      calls: { allowedPrivateCidrs: loopback, caFile: model.caFile },
      webhooks: { allowedPrivateCidrs: loopback, caFile: receiver.caFile },
      config: loadConfig({ RATE_LIMIT_PER_MINUTE: '0', AUTH_RATE_LIMIT_PER_MINUTE: '0', WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WEBHOOK_CA_FILE: model.caFile }),
      logger: logs.logger,
      metrics,
    })
    const { app, admin } = opened
    const call = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: object, key = admin.apiKey) => {
      const response = await app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) })
      return { status: response.statusCode, body: response.body, json: response.body ? response.json() : undefined, headers: response.headers }
    }
    const ok = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: object, key = admin.apiKey) => {
      const response = await call(method, url, payload, key)
      if (response.status >= 400) throw new Error(`${method} ${url}: ${response.status} ${response.body}`)
      return response
    }
    for (const [name, type] of [['intent', 'string'], ['orderNumber', 'string'], ['deliveryDate', 'string'], ['shop', 'string']]) await ok('POST', '/v1/variables', { name, type })
    await ok('PUT', '/v1/secrets/llm', { value: modelKey })
    const connectionId = String((await ok('POST', '/v1/ai-connections', { name: 'Test model', baseUrl: model.baseUrl, apiKeySecret: 'llm', model: 'test-model', maxTokensPerCall: 50 })).headers.location).split('/').pop()!
    const bot = (await ok('POST', '/v1/api-keys', { name: 'bot', callbackUrl: `${receiver.url}/hooks` })).json.apiKey as string
    const flowOf = async (definition: object) => (await ok('POST', '/v1/flows', { name: `AI ${Math.random()}`, definition }, bot)).json.id as string
    const sessionEvents = async (sessionId: string, key = bot) => (await ok('GET', `/v1/sessions/${sessionId}/events?size=500`, undefined, key)).json.content
    const scrape = async (): Promise<Exposition> => {
      const response = await app.inject({ method: 'GET', url: '/metrics' })
      if (response.statusCode !== 200) throw new Error(`GET /metrics: ${response.statusCode} ${response.body}`)
      return parseExposition(response.body)
    }

    /** Every session this file starts, with a key of its workspace: the audit and the search for the key go through all of them. */
    const started: { id: string; flowId: string; key: string }[] = []
    const startSession = async (flowId: string, variables: Record<string, string> = {}, key = bot): Promise<string> => {
      const { sessionId } = (await ok('POST', `/v1/sessions/flows/${flowId}/create`, { variables }, key)).json
      started.push({ id: sessionId, flowId, key })
      return sessionId
    }

    /** Starts a session of the flow, says `text`, and waits until the flow has answered it. */
    const converse = async (flowId: string, text: string, variables: Record<string, string> = {}) => {
      const sessionId = await startSession(flowId, variables)
      await ok('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: text } }, bot)
      const detail = await eventually(`the answer of session ${sessionId}`, async () => {
        const current = (await ok('GET', `/v1/sessions/${sessionId}`, undefined, bot)).json
        return current.pendingMessages === 0 ? current : undefined
      })
      const events = await sessionEvents(sessionId)
      const turns = events.filter((e: { type: string }) => e.type === 'TurnCompleted')
      const said = turns.flatMap((e: { data: { output: { messages: { text?: { body: string } }[] } } }) => e.data.output.messages.map((m) => m.text?.body ?? ''))
      const warnings: string[] = turns.flatMap((e: { data: { output: { warnings: string[] } } }) => e.data.output.warnings)
      return { sessionId, detail, said, events, warnings, last: turns.at(-1)?.data }
    }

    const routes = await flowOf(routing(connectionId))
    const extracts = await flowOf(extraction(connectionId))
    const replies = await flowOf(answering(connectionId))

    await t.test('classify routes by the label the model answers', async (t) => {
      const cancelling = await converse(routes, 'I want to cancel my plan')
      t.same(cancelling.said, ['How can I help?', 'Sorry to see you go'])
      t.equal(cancelling.last.output.variables.intent, 'cancel', 'the label is saved')
      const asked = model.requests.at(-1)!
      t.equal(asked.headers.authorization, `Bearer ${modelKey}`, 'the endpoint saw the key')
      t.match(asked.body, { model: 'test-model', max_tokens: 50, response_format: { type: 'json_object' } }, 'a JSON answer is asked for, within the token limit')
      t.match(asked.body.messages, [{ role: 'system', content: /cancel: wants to cancel a plan or subscription/ }, { role: 'user', content: 'I want to cancel my plan' }])
      t.same((await converse(routes, 'where is my order?')).said.at(-1), 'Let me look for your order')
      t.same((await converse(routes, 'hello there')).said.at(-1), 'A person will answer')
      // An endpoint without JSON mode: the step asks again with a forced tool call.
      model.answerWith((request) =>
        request.body.response_format ? { status: 400, body: JSON.stringify({ error: { message: "'response_format' is not supported by this model" } }) } : { toolArguments: JSON.stringify({ label: 'track' }) },
      )
      const before = model.requests.length
      const byTool = await converse(routes, 'where is my parcel?')
      t.same(byTool.said.at(-1), 'Let me look for your order', 'the label given as the tool call\'s arguments')
      const [refused, again] = model.requests.slice(before)
      t.ok(refused?.body.response_format, 'first in JSON mode')
      t.match(again?.body, { tool_choice: { type: 'function', function: { name: 'classify' } }, tools: [{ type: 'function', function: { name: 'classify', parameters: { properties: { label: { enum: ['cancel', 'track', 'other'] } } } } }] })
      t.notOk(again && 'response_format' in again.body)
      t.equal(byTool.last.output.modelCalls.length, 2, 'both calls count')
      model.answerWith(() => JSON.stringify({ label: 'refund' }))
      const unknown = await converse(routes, 'I want a refund')
      model.answerWith(scriptedModel)
      t.same(unknown.said.at(-1), 'A person will answer', 'a label the step lacks leaves by other')
      t.match(unknown.warnings.join('\n'), /"refund", which is not one of the step's/)
    })

    await t.test('extract fills the variables, by success or by missing', async (t) => {
      const found = await converse(extracts, 'Order 48213 was due 2026-11-20 and never came')
      t.same(found.said.at(-1), 'Order 48213, due 2026-11-20')
      t.match(found.last.output.variables, { orderNumber: '48213', deliveryDate: '2026-11-20' })
      const lacking = await converse(extracts, 'My order 48213 is late')
      t.same(lacking.said.at(-1), 'Which order, and when was it due?', 'a required value the answer lacks')
      t.match(lacking.last.output.variables, { orderNumber: '48213' }, 'what was found is still filled')
      model.answerWith(() => JSON.stringify({ orderNumber: '48213', deliveryDate: '2026-02-30' }))
      const invalid = await converse(extracts, 'Order 48213 was due on the 30th of February')
      model.answerWith(scriptedModel)
      t.same(invalid.said.at(-1), 'Which order, and when was it due?', 'a date the calendar lacks is not taken')
      t.match(invalid.warnings.join('\n'), /deliveryDate "2026-02-30" is not a valid date/)
      t.notOk('deliveryDate' in invalid.last.output.variables)
    })

    await t.test("reply sends the model's text, from the instructions, the knowledge and the conversation", async (t) => {
      const answered = await converse(replies, 'How long does shipping take?', { shop: 'Acme Shoes' })
      t.same(answered.said, ['How can I help?', 'Shipping takes 3 days, and returns are free for 30 days.'])
      const asked = model.requests.at(-1)!
      t.notOk('response_format' in asked.body, 'a reply is free text')
      t.same(asked.body.messages, [
        { role: 'system', content: 'You answer questions about Acme Shoes.\n\nAnswer from this knowledge only:\nShipping takes 3 days. Returns are free for 30 days.' },
        { role: 'assistant', content: 'How can I help?' },
        { role: 'user', content: 'How long does shipping take?' },
      ])
      const webhook = await eventually('the webhook with the answer', async () =>
        receiver.requests.find((request) => request.body.includes('Shipping takes 3 days, and returns') && request.body.includes(answered.sessionId)),
      )
      t.ok(webhook, 'the webhook carries the finished text')
      const [modelCall] = answered.last.output.modelCalls
      t.match(modelCall, { nodeId: 'answer', connectionId, model: 'test-model', completionTokens: wordCount('Shipping takes 3 days, and returns are free for 30 days.') })
      t.ok(modelCall.promptTokens > 10, 'the prompt tokens the endpoint counted are recorded')

      await t.test('the session stream shows the text in pieces as it is generated, before the turn', async (t) => {
        const base = await app.listen({ host: '127.0.0.1', port: 0 })
        const sessionId = await startSession(replies, { shop: 'Acme' })
        const stream = curlStream(t, `${base}/v1/sessions/${sessionId}/stream`, { 'x-api-key': bot })
        await eventually('the first turn on the stream', async () => (stream.events.some((e) => e.event === 'turn') ? true : undefined))
        const reply = 'Shipping takes 3 days, and returns are free for 30 days.'
        await ok('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: 'How long does shipping take?' } }, bot)
        await eventually('the reply on the stream', async () => (stream.events.filter((e) => e.event === 'turn').length === 2 ? true : undefined))
        stream.stop()
        const answered = stream.events.findIndex((e) => e.event === 'turn' && e.data.includes(reply))
        t.ok(answered >= 0, 'the turn with the text is on the stream')
        const pieceEvents = stream.events.slice(0, answered).filter((e) => e.event === 'text')
        const pieces = pieceEvents.map((e) => JSON.parse(e.data))
        t.ok(pieces.length > 1, `the stream had more than one piece (${pieces.length})`)
        t.ok(pieces.length >= wordCount(reply), `the text came in pieces (${pieces.length}) before its turn`)
        const webhook = await eventually('the webhook with the streamed text', async () =>
          receiver.requests.find((request) => request.body.includes(sessionId) && request.body.includes(reply)),
        )
        t.ok((pieceEvents[0]?.arrivedAt ?? Infinity) < webhook.arrivedAt, 'the first piece was on the stream before the webhook with the text arrived')
        t.equal(pieces.map((piece) => piece.text).join(''), reply, 'the pieces make up the text the turn sends')
        t.match(pieces[0], { nodeId: 'answer', messageId: /^[0-9a-f-]{36}$/ })
        t.ok(stream.events.filter((e) => e.event === 'text').every((e) => e.id === undefined), 'pieces carry no id: a resumed stream gets the turn')
        const asked = model.requests.at(-1)!
        t.match(asked.body, { stream: true, stream_options: { include_usage: true } }, 'a reply is asked for as a stream')
        const recorded = (await ok('GET', `/v1/sessions/${sessionId}/events?size=50`, undefined, bot)).json.content.find((e: { type: string }) => e.type === 'OutsideCallAnswered')
        t.match(recorded.data, { request: { streamsText: true }, answer: { status: 200, headers: { 'content-type': 'text/event-stream' }, body: /^data: / } }, 'the streamed answer is recorded as it came')
        const turn = (await ok('GET', `/v1/sessions/${sessionId}`, undefined, bot)).json
        t.match(turn.modelUsage, { calls: 1, completionTokens: wordCount(reply) }, 'its usage is read from the last chunk')
      })

      const long = 'word '.repeat(1200).trim()
      model.answerWith(() => long)
      model.streamGapMs = 0
      const cut = await converse(replies, 'Tell me everything')
      model.streamGapMs = 20
      model.answerWith(scriptedModel)
      t.equal([...cut.said.at(-1)!].length, 4096, "a text past the channel's limit is cut to it")
      t.match(cut.warnings.join('\n'), /cut to the channel's 4096/)

      model.answerWith(() => 'Hello {{shop}} {{secrets.llm}}')
      const literal = await converse(replies, 'Say braces', { shop: 'Acme' })
      model.answerWith(scriptedModel)
      t.same(literal.said.at(-1), 'Hello {{shop}} {{secrets.llm}}', "the model's text is sent as written, never filled in")
    })

    await t.test('the model counters on /metrics go up by the calls and tokens the turns recorded', async (t) => {
      const before = await scrape()
      const turns = [
        await converse(routes, 'I want to cancel my plan'),
        await converse(extracts, 'Order 48213 was due 2026-11-20 and never came'),
        await converse(replies, 'How long does shipping take?', { shop: 'Acme Shoes' }),
      ]
      const recorded = turns.map((turn) => answeredUsage(turn.events)).reduce(addedUsage)
      t.equal(recorded.calls, 3, 'one call a turn')
      t.ok(recorded.promptTokens > 0 && recorded.completionTokens > 0, 'the endpoint counted tokens of both kinds')
      const wentUp = (scraped: Exposition): ModelUsage => ({
        calls: valueOf(scraped, 'flowd_model_calls_total') - valueOf(before, 'flowd_model_calls_total'),
        promptTokens: valueOf(scraped, 'flowd_model_tokens_total', { kind: 'prompt' }) - valueOf(before, 'flowd_model_tokens_total', { kind: 'prompt' }),
        completionTokens: valueOf(scraped, 'flowd_model_tokens_total', { kind: 'completion' }) - valueOf(before, 'flowd_model_tokens_total', { kind: 'completion' }),
      })
      // The engine counts a turn once it is appended, which the session may show a moment sooner.
      const counted = await eventually('the three turns counted on /metrics', async () => {
        const usage = wentUp(await scrape())
        return usage.calls >= recorded.calls ? usage : undefined
      })
      t.same(counted, recorded, 'the counters went up by exactly what the endpoint answered')
    })

    await t.test('every failure leaves by error, with a reason', async (t) => {
      /** Says `text` to a new session of the flow; answers the warnings of the turn, which must have left by the error exit. */
      const failing = async (why: string, flowId: string, text: string, variables: Record<string, string> = {}) => {
        const outcome = await converse(flowId, text, variables)
        t.same(outcome.said.at(-1), 'Our assistant is away', why)
        return outcome.last.output.warnings.join('\n')
      }
      const overloaded = () => ({ status: 500, body: JSON.stringify({ error: { message: 'model overloaded' } }) })
      model.answerWith(overloaded)
      t.match(await failing('a 500', routes, 'cancel'), /answered 500: model overloaded/)
      t.match(await failing('a 500 to a streamed reply', replies, 'How long does shipping take?', { shop: 'Acme' }), /answered 500: model overloaded/)
      model.answerWith(() => 'Sure! The label is cancel.')
      t.match(await failing('an answer that is not JSON', routes, 'cancel'), /did not answer a JSON object/)
      model.answerWith(() => 'Sure! It is order 48213, due on 2026-11-20.')
      t.match(await failing('an extraction that is not JSON', extracts, 'Order 48213 was due 2026-11-20 and never came'), /did not answer a JSON object/)
      model.answerWith(() => ({ content: '{"label": "can', finishReason: 'length' }))
      t.match(await failing('an answer cut at the token limit', routes, 'cancel'), /cut at the connection's limit of 50 tokens/)
      model.answerWith(() => ({ status: 200, body: '<html>gateway</html>', contentType: 'text/html' }))
      t.match(await failing('an answer that is no completion', routes, 'cancel'), /other than a chat completion/)
      model.answerWith(scriptedModel)

      const slowRoutes = await flowOf(impatient(routing(connectionId), 'route'))
      const slowExtracts = await flowOf(impatient(extraction(connectionId), 'read'))
      model.delay(1500)
      const classifyTimedOut = await failing('a classification slow past the timeout', slowRoutes, 'cancel')
      const extractTimedOut = await failing('an extraction slow past the timeout', slowExtracts, 'Order 48213 was due 2026-11-20 and never came')
      model.delay(0)
      t.match(classifyTimedOut, /gave no answer in time/)
      t.match(extractTimedOut, /gave no answer in time/)

      await model.down()
      const down = await failing('the endpoint down', routes, 'cancel')
      await model.up()
      t.match(down, /could not be reached/)
    })

    await t.test("an organization whose endpoint hangs holds only its own sessions", async (t) => {
      const hangingKey = `sk-${randomBytes(8).toString('hex')}`
      // The same endpoint, slow for their key alone: only the organization sets the two apart.
      model.acceptKey(hangingKey)
      model.delay(25_000, hangingKey)
      const theirsAsked = () => model.requests.filter((request) => request.headers.authorization === `Bearer ${hangingKey}`).length
      const other = await bootstrap(opened.ctx, { organization: 'Hostile', workspace: 'Main', callbackUrl: null })
      for (const [name, type] of [['intent', 'string']]) await ok('POST', '/v1/variables', { name, type }, other.apiKey)
      await ok('PUT', '/v1/secrets/llm', { value: hangingKey }, other.apiKey)
      const theirs = String((await ok('POST', '/v1/ai-connections', { name: 'Slow', baseUrl: model.baseUrl, apiKeySecret: 'llm', model: 'test-model' }, other.apiKey)).headers.location).split('/').pop()!
      const theirFlow = (await ok('POST', '/v1/flows', { name: 'Slow', definition: routing(theirs) }, other.apiKey)).json.id as string
      const held: string[] = []
      for (let i = 0; i < 2 * CALLS_PER_DESTINATION; i++) {
        const sessionId = await startSession(theirFlow, {}, other.apiKey)
        await ok('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: 'cancel' } }, other.apiKey)
        held.push(sessionId)
      }
      await eventually('their calls to reach the hanging endpoint', async () => (theirsAsked() >= CALLS_PER_DESTINATION ? true : undefined))
      const ours = await converse(routes, 'I want to cancel my plan')
      t.same(ours.said.at(-1), 'Sorry to see you go', 'our step is answered')
      const waiting = await Promise.all(held.map(async (id) => (await ok('GET', `/v1/sessions/${id}`, undefined, other.apiKey)).json.pendingMessages))
      t.ok(waiting.every((pending) => pending === 1), 'while every one of theirs still waits for its endpoint')
      t.equal(theirsAsked(), CALLS_PER_DESTINATION, 'their calls in flight stay within their share of the destination')
      // Their held calls fail at once; their sessions are settled before the later checks read every session.
      model.delay(0, hangingKey)
      await model.down()
      await model.up()
      await eventually('their sessions to have answered', async () => {
        const pending = await Promise.all(held.map(async (id) => (await ok('GET', `/v1/sessions/${id}`, undefined, other.apiKey)).json.pendingMessages))
        return pending.every((count) => count === 0) ? true : undefined
      })
    })

    await t.test('a session makes at most the connection\'s calls per session', async (t) => {
      await ok('PATCH', `/v1/ai-connections/${connectionId}`, { callsPerSession: 1 })
      const looping = routing(connectionId)
      looping.edges = looping.edges.map((edge) => (edge.id === 'e' ? { ...edge, target: 'ask' } : edge))
      looping.nodes = looping.nodes.filter((node) => node.id !== 'other')
      const flowId = await flowOf(looping)
      const first = await converse(flowId, 'hello')
      t.same(first.said.at(-1), 'How can I help?', 'the first call is made, and asks again')
      await ok('POST', `/v1/sessions/${first.sessionId}/message`, { type: 'text', text: { body: 'hello again' } }, bot)
      const events = await eventually('the second answer', async () => {
        const content = (await ok('GET', `/v1/sessions/${first.sessionId}/events?size=500`, undefined, bot)).json.content
        return content.filter((e: { type: string }) => e.type === 'TurnCompleted').length === 3 ? content : undefined
      })
      const last = events.filter((e: { type: string }) => e.type === 'TurnCompleted').at(-1).data
      t.same(last.output.messages.map((m: { text: { body: string } }) => m.text.body), ['Our assistant is away'])
      t.match(last.output.warnings.join('\n'), /at most 1 calls through this AI connection/)
      await ok('PATCH', `/v1/ai-connections/${connectionId}`, { callsPerSession: 50 })
    })

    await t.test('"try it" runs a step on a sample message and records nothing', async (t) => {
      const step = routing(connectionId).nodes.find((n) => n.id === 'route')!.data
      const before = model.requests.length
      const tried = await call('POST', '/v1/ai-steps/try', { step, message: 'please cancel my subscription' })
      t.equal(tried.status, 200, tried.body)
      t.match(tried.json, { exit: 'cancel', variables: { intent: 'cancel' }, answer: { status: 200 }, usage: { completionTokens: 1 } })
      t.match(JSON.parse(tried.json.request.body).messages.at(-1), { role: 'user', content: 'please cancel my subscription' })
      t.same(tried.json.request.headers.find((h: { name: string }) => h.name === 'Authorization'), { name: 'Authorization', value: 'Bearer {{secrets.llm}}' })
      t.equal(model.requests.length, before + 1)
      t.notOk(tried.body.includes(modelKey))
      const stranger = await call('POST', '/v1/ai-steps/try', { step: { ...step, connectionId: '00000000-0000-4000-8000-000000000000' }, message: 'x' })
      t.equal(stranger.status, 400)
      t.match(stranger.json.message, /no AI connection/)
      t.equal((await call('POST', '/v1/ai-steps/try', { step: { mode: 'classify' }, message: 'x' })).status, 400, 'data that is no AI step')
    })

    await t.test('publishing checks the connection and each mode\'s data', async (t) => {
      const refused = await call('POST', '/v1/flows', { name: 'Broken', definition: routing('00000000-0000-4000-8000-000000000000') })
      t.equal(refused.status, 400)
      t.match(refused.json.message, /no AI connection "00000000-0000-4000-8000-000000000000" in this workspace/)
      const wrongMode = routing(connectionId)
      wrongMode.nodes = wrongMode.nodes.map((n) => (n.id === 'route' ? { ...n, data: { ...n.data, fields: [] } } : n))
      t.match((await call('POST', '/v1/flows', { name: 'Mixed', definition: wrongMode })).json.message, /fields is read in extract mode only/)
    })

    await t.test('the key is nowhere but in the calls sent', async (t) => {
      const raw = await sql<{ text: string }>`select data::text || metadata::text as text from events`.execute(opened.storage.db)
      t.ok(raw.rows.length > 0)
      t.notOk(raw.rows.some((row) => row.text.includes(modelKey)), "the event store's rows do not hold the key")
      t.notOk(logs.text().includes(modelKey), 'no log line holds the key')
      t.notOk(receiver.requests.some((request) => request.body.includes(modelKey)), 'no webhook holds the key')
      const listed = await ok('GET', '/v1/sessions/logs?size=100', undefined, bot)
      t.notOk(listed.body.includes(modelKey), 'the session list does not hold it')
      for (const { id, key } of started) {
        t.notOk((await ok('GET', `/v1/sessions/${id}`, undefined, key)).body.includes(modelKey), `session ${id} does not hold it`)
        t.notOk((await ok('GET', `/v1/sessions/${id}/events?size=500`, undefined, key)).body.includes(modelKey), `the events API of ${id} does not hold it`)
      }
      t.notOk((await call('GET', `/v1/ai-connections/${connectionId}`)).body.includes(modelKey))
    })

    await t.test('audit verify replays every turn with the endpoint stopped, calling nothing', async (t) => {
      await model.down()
      t.teardown(() => model.up())
      const asked = model.requests.length
      // Every session of the event store, rather than a read model's list of some flows': the timed out, limited and failed ones too.
      const recorded = await opened.storage.db
        .selectFrom('events')
        .select(['stream_id', 'event_type'])
        .where('stream_id', 'like', 'session-%')
        .where('event_type', 'in', ['SessionStarted', 'TurnCompleted'])
        .execute()
      const sessions = recorded.filter((event) => event.event_type === 'SessionStarted').map((event) => event.stream_id.slice('session-'.length))
      t.same([...sessions].sort(), started.map((session) => session.id).sort(), 'the store holds every session this file started, and no other')
      const turns = await replayedTurns(t, opened.store, sessions)
      t.ok(turns >= sessions.length * 2, 'each session had its start and an answer replayed')
      t.equal(turns, recorded.filter((event) => event.event_type === 'TurnCompleted').length, 'every recorded turn was replayed')
      t.equal(model.requests.length, asked, 'the endpoint counted no new call')
    })

    await t.test("a session's token usage is the sum of its recorded answers", async (t) => {
      const sessions = await opened.storage.db.selectFrom('session_logs').select('id').where('flow_id', 'in', [routes, extracts, replies]).execute()
      let tokens = 0
      for (const { id } of sessions) {
        const expected = answeredUsage(await sessionEvents(id, admin.apiKey))
        t.same((await ok('GET', `/v1/sessions/${id}`)).json.modelUsage, expected, `session ${id}`)
        tokens += expected.promptTokens
      }
      t.ok(tokens > 0, 'the sessions took tokens')
    })

    await t.test("a flow's analytics count the model calls and tokens of its sessions' recorded answers", async (t) => {
      for (const [name, flowId] of [['routes', routes], ['extracts', extracts], ['replies', replies]] as const) {
        let expected = NO_USAGE
        for (const session of started.filter((s) => s.flowId === flowId)) expected = addedUsage(expected, answeredUsage(await sessionEvents(session.id, session.key)))
        t.ok(expected.calls > 0, `the ${name} flow's sessions called the model`)
        // The analytics are read models: once they show every call, they must show exactly the tokens too.
        const usage = await eventually(`the analytics of the ${name} flow to count its ${expected.calls} calls`, async () => {
          const { modelUsage } = (await ok('GET', `/v1/flows/${flowId}/analytics`, undefined, bot)).json
          return modelUsage.calls >= expected.calls ? modelUsage : undefined
        })
        const { calls, promptTokens, completionTokens } = usage
        t.same({ calls, promptTokens, completionTokens }, expected, `the ${name} flow's usage is the sum of what the endpoint answered its sessions`)
        t.same(usage.models, [{ model: 'test-model', ...expected }], 'all of it by the one model')
        t.same(usage.days.reduce((sum: ModelUsage, day: ModelUsage) => addedUsage(sum, day), NO_USAGE), expected, 'and the days add up to it')
      }
    })
  })
}
