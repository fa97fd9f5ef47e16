import t from 'tap'
import { answerObject, chunkText, completionChunks, completionRequest, connectionCheck, modelIds, modelsRequest, needsPing, parseCompletion, pingRequest } from '../../src/domain/chat-completions.js'
import { redactedRequest, type HttpCallAnswer } from '../../src/domain/outside-call.js'
import { examples } from '../helpers/decider-spec.js'

const connection = { baseUrl: 'https://llm.example.com/v1', apiKeySecret: 'llm', model: 'm1', headers: [{ name: 'OpenAI-Project', value: 'p' }] }
const ok = (body: unknown): HttpCallAnswer => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
const status = (code: number, body = ''): HttpCallAnswer => ({ status: code, headers: {}, body })

t.test('the requests carry the key as its secret: recorded, they name it and hold no value', async (t) => {
  t.same(redactedRequest(modelsRequest(connection)), {
    method: 'GET',
    url: 'https://llm.example.com/v1/models',
    headers: [
      { name: 'OpenAI-Project', value: 'p' },
      { name: 'Authorization', value: 'Bearer {{secrets.llm}}' },
      { name: 'Accept', value: 'application/json' },
    ],
    body: null,
    timeoutMs: 10_000,
  })
  const ping = pingRequest(connection)
  t.match(ping, { method: 'POST', url: 'https://llm.example.com/v1/chat/completions' })
  t.same(JSON.parse(ping.body!), { model: 'm1', messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 })
})

t.test("the protocol's model list, and only it", async (t) => {
  examples(t, modelIds, [
    ['a list', [JSON.stringify({ object: 'list', data: [{ id: 'a' }, { id: 'b' }] })], ['a', 'b']],
    ['an empty list', [JSON.stringify({ data: [] })], []],
    ['an entry without an id', [JSON.stringify({ data: [{ id: 'a' }, { name: 'b' }] })], undefined],
    ['not JSON', ['<html>'], undefined],
    ['another shape', [JSON.stringify({ models: ['a'] })], undefined],
  ])
})

t.test('the outcome of a check', async (t) => {
  t.same(connectionCheck(connection, ok({ data: [{ id: 'm1' }, { id: 'm2' }] })), { ok: true, models: ['m1', 'm2'] }, 'the model is listed')
  t.match(connectionCheck(connection, ok({ data: [{ id: 'm2' }] })), { ok: false, problem: 'the endpoint does not list the model m1; it lists m2' })
  t.match(connectionCheck(connection, ok({ data: [] })), { ok: false, problem: 'the endpoint does not list the model m1' }, 'an empty list')
  const many = Array.from({ length: 150 }, (_, i) => ({ id: `x${i}` }))
  const long = connectionCheck(connection, ok({ data: many }))
  t.equal(long.models.length, 100, 'at most 100 models shown')
  t.match(long, { problem: /it lists x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, …$/ })

  t.match(connectionCheck(connection, status(403, JSON.stringify({ error: 'no access' }))), { ok: false, problem: 'the endpoint refused the key (403: no access); check the secret llm' })
  t.match(connectionCheck(connection, { error: 'timeout', message: 'no complete answer within 10 s' }), { ok: false, problem: /gave no answer in time/ })
  t.match(connectionCheck(connection, { error: 'refused_address', message: 'llm.example.com resolves to 10.0.0.1' }), { ok: false, problem: /WEBHOOK_ALLOWED_PRIVATE_CIDRS/ })
  t.match(connectionCheck(connection, { error: 'secret', message: 'no secret llm in this workspace' }), { ok: false, problem: 'the key could not be read: no secret llm in this workspace' })

  t.ok(needsPing(status(404)), 'no model list: a one-token call decides')
  t.ok(needsPing(ok({ unexpected: true })), 'a list of another shape: the call decides')
  t.notOk(needsPing(status(401)), 'a refused key needs no call')
  t.notOk(needsPing({ error: 'network', message: 'refused' }), 'an unreachable endpoint needs no call')
  t.same(connectionCheck(connection, status(404), ok({ choices: [] })), { ok: true, models: [] }, 'the call answered')
  t.match(connectionCheck(connection, status(404), status(400, JSON.stringify({ error: { message: 'model m1 not found' } }))), {
    ok: false,
    problem: 'https://llm.example.com/v1/chat/completions answered 400: model m1 not found',
  })
  t.match(connectionCheck(connection, status(500)), { ok: false, problem: /a call to its chat completions is needed/ }, 'without the call, no verdict')
})

t.test('a completion, whole or streamed as chunks', async (t) => {
  const asked = completionRequest(connection, { model: 'm2', messages: [{ role: 'user', content: 'hi' }], maxTokens: 20, json: false, stream: true, timeoutMs: 5000 })
  t.match(asked, { streamsText: true, url: 'https://llm.example.com/v1/chat/completions', headers: [{ name: 'OpenAI-Project' }, { name: 'Authorization' }, { name: 'Accept', value: 'text/event-stream' }, { name: 'Content-Type' }] })
  t.same(JSON.parse(asked.body!), { model: 'm2', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20, stream: true, stream_options: { include_usage: true } })
  t.notOk('streamsText' in completionRequest(connection, { model: 'm2', messages: [], maxTokens: 20, json: true, timeoutMs: 5000 }), 'a structured answer comes whole')

  const chunk = (content: string | null, finish: string | null = null, usage?: object) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }], ...(usage && { usage }) })}\n\n`
  const streamed = (body: string): HttpCallAnswer => ({ status: 200, headers: { 'content-type': 'text/event-stream' }, body })
  const body = chunk('Hel') + chunk('lo') + chunk(null, 'stop', { prompt_tokens: 9, completion_tokens: 2 }) + 'data: [DONE]\n\n'
  examples(t, (answer: HttpCallAnswer) => parseCompletion(answer, connection, 20), [
    ['a whole completion', [ok({ choices: [{ message: { content: 'Hello' }, finish_reason: 'stop' }], usage: { prompt_tokens: 9, completion_tokens: 2 } })], { ok: true, text: 'Hello', usage: { promptTokens: 9, completionTokens: 2 } }],
    ['a streamed one, its usage in the last chunk', [streamed(body)], { ok: true, text: 'Hello', usage: { promptTokens: 9, completionTokens: 2 } }],
    ['a stream without usage', [streamed(chunk('Hi') + chunk(null, 'stop'))], { ok: true, text: 'Hi', usage: { promptTokens: 0, completionTokens: 0 } }],
    ['a stream cut at the token limit', [streamed(chunk('Hel') + chunk(null, 'length'))], { ok: false, problem: "the answer was cut at the connection's limit of 20 tokens per call", usage: { promptTokens: 0, completionTokens: 0 } }],
    ['an empty body', [status(200, '')], { ok: false, problem: 'the endpoint answered something other than a chat completion (no choices[0].message.content)', usage: { promptTokens: 0, completionTokens: 0 } }],
    ['an error status', [status(429, '{"error":{"message":"slow down"}}')], { ok: false, problem: 'https://llm.example.com/v1/chat/completions answered 429: slow down', usage: { promptTokens: 0, completionTokens: 0 } }],
  ])
  t.same(completionChunks(body).map(chunkText), ['Hel', 'lo', ''], "each chunk's text, up to [DONE]")
  examples(t, answerObject, [
    ['an object', ['{"a":1}'], { a: 1 }],
    ['a fenced object', ['```json\n{"a":1}\n```'], { a: 1 }],
    ['a list', ['[1]'], undefined],
    ['prose', ['the label is a'], undefined],
  ])
})
