import t from 'tap'
import type { ConnectionAsUsed } from '../../../src/domain/ai-connection.js'
import { answerTool, check, exits, promptOf, readsToday, run, schema, writes, type Data } from '../../../src/domain/nodes/ai.js'
import type { Step } from '../../../src/domain/nodes/node-type.js'
import { redactedRequest, type HttpCallAnswer, type HttpCallRequest, type RecordedCall } from '../../../src/domain/outside-call.js'
import type { TranscriptLine, VariableValue } from '../../../src/domain/turn.js'
import type { VariableType } from '../../../src/domain/variables.js'
import { accepts, examples } from '../../helpers/decider-spec.js'
import { checkProblems, emptyCatalog, recordingVisit, type Effect } from '../../helpers/visit.js'

const CONNECTION_ID = 'c1'
const connection: ConnectionAsUsed = { baseUrl: 'https://llm.example.com/v1', apiKeySecret: 'llm', model: 'm1', headers: [], maxTokensPerCall: 100, callsPerSession: 5 }
const classify: Data = { connectionId: CONNECTION_ID, mode: 'classify', instructions: 'Route.', labels: [{ id: 'cancel', description: 'wants to cancel' }, { id: 'track', description: 'asks for an order' }] }
const extract: Data = {
  connectionId: CONNECTION_ID,
  mode: 'extract',
  instructions: '',
  fields: [
    { variable: 'order', type: 'string', description: 'the order number', required: true },
    { variable: 'due', type: 'date', description: 'the due date', required: true },
    { variable: 'count', type: 'number', description: 'how many', required: false },
  ],
}
const reply: Data = { connectionId: CONNECTION_ID, mode: 'reply', instructions: 'Answer about {{shop}}.', knowledge: 'Open 9 to 5.', history: 2 }

const completion = (content: string, finishReason = 'stop'): HttpCallAnswer => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ choices: [{ message: { role: 'assistant', content }, finish_reason: finishReason }], usage: { prompt_tokens: 30, completion_tokens: 4 } }),
})
const recorded = (answer: HttpCallAnswer): RecordedCall => ({ index: 0, nodeId: 'node', request: { method: 'POST', url: '', headers: [], body: null, timeoutMs: 1 }, answer, durationMs: 7 })

/** The step run on `said` with the model's `answers` given in order: its step and what it did. */
function ran(data: Data, said: string, answers: HttpCallAnswer[] = [], transcript: TranscriptLine[] = [], variables: Record<string, VariableValue> = {}) {
  const { visit, effects } = recordingVisit(variables, null, answers.map(recorded), [], [], { [CONNECTION_ID]: connection }, transcript)
  const scoped = { ...visit, scope: () => ({ system: { lastMessage: said }, variables }) }
  const step = run({ id: 'node', type: 'ai', position: { x: 0, y: 0 }, data }, scoped)
  return { step, effects }
}

const asked = (effects: readonly Effect[]): HttpCallRequest | undefined =>
  effects.flatMap((effect) => (typeof effect === 'object' && 'callModel' in effect ? [effect.callModel] : []))[0]
const warnings = (effects: readonly Effect[]) => effects.flatMap((effect) => (typeof effect === 'object' && 'warn' in effect ? [effect.warn] : []))
const assigned = (effects: readonly Effect[]) => Object.fromEntries(effects.flatMap((effect) => (typeof effect === 'object' && 'assign' in effect ? [[effect.assign, effect.value]] : [])))

t.test('schema', async (t) => {
  examples(t, accepts(schema), [
    ['a classify step', [classify], true],
    ['an extract step', [extract], true],
    ['a reply step', [reply], true],
    ['an unknown mode', [{ ...reply, mode: 'chat' }], false],
    ['no connection', [{ mode: 'reply', instructions: 'x' }], false],
    ['a history of 21 texts', [{ ...reply, history: 21 }], false],
    ['a field of an unknown type', [{ ...extract, fields: [{ variable: 'a', type: 'url', description: '', required: true }] }], false],
    ['21 labels', [{ ...classify, labels: Array.from({ length: 21 }, (_, i) => ({ id: `l${i}`, description: 'd' })) }], false],
  ])
})

t.test('exits by mode, and what each writes', async (t) => {
  t.same(exits(classify).map((exit) => exit.id), ['cancel', 'track', 'other', 'error'])
  t.same(exits(extract).map((exit) => exit.id), ['success', 'missing', 'error'])
  t.same(exits(reply).map((exit) => exit.id), ['success', 'error'])
  t.same(exits({}).map((exit) => exit.id), ['success', 'error'], 'a draft without a mode')
  t.same(writes({ ...extract }), ['order', 'due', 'count'])
  t.same(writes({ ...classify, saveAs: 'intent' }), ['intent'])
  t.ok(readsToday(extract))
  t.notOk(readsToday(classify))
})

t.test('checks', async (t) => {
  const catalog = { ...emptyCatalog, aiConnections: new Set([CONNECTION_ID]), variables: new Map<string, VariableType>([['order', 'string'], ['due', 'string'], ['count', 'number'], ['intent', 'string']]) }
  const problems = (data: Data) => checkProblems(check, data, catalog)
  examples(t, problems, [
    ['a classify step', [classify], []],
    ['an extract step', [extract], []],
    ['a connection the workspace lacks', [{ ...reply, connectionId: 'gone' }], ['connectionId: no AI connection "gone" in this workspace']],
    ['one label', [{ ...classify, labels: [classify.labels![0]!] }], ['labels: a classify step needs at least 2 labels']],
    ['a label named other', [{ ...classify, labels: [...classify.labels!, { id: 'other', description: 'x' }] }], ['labels.2.id: "other" is the handle of a message that fits no label; choose another id']],
    ['a label without a description', [{ ...classify, labels: [classify.labels![0]!, { id: 'b', description: ' ' }] }], ['labels.1.description: describe the label: the model picks by the description']],
    ['labels in reply mode', [{ ...reply, labels: [] }], ['labels: labels is read in classify mode only']],
    ['a field saved in a variable of another type', [{ ...extract, fields: [{ variable: 'count', type: 'date', description: '', required: true }] }], ['fields.0.variable: variable "count" holds a number, but an extracted date is a string']],
    ['a field extracted twice', [{ ...extract, fields: [extract.fields![0]!, extract.fields![0]!] }], ['fields.1.variable: "order" is extracted twice']],
    ['a reply without instructions', [{ ...reply, instructions: ' ' }], ['instructions: a reply needs instructions: what the model answers, and how']],
  ])
})

t.test('classify leaves by the label the model picks, else by other', async (t) => {
  const picked = ran(classify, 'cancel it', [completion('{"label": "cancel"}')])
  t.same(picked.step, { exit: 'cancel' })
  const request = asked(picked.effects)!
  t.same(redactedRequest(request).headers.find((h) => h.name === 'Authorization'), { name: 'Authorization', value: 'Bearer {{secrets.llm}}' })
  t.match(JSON.parse(request.body!), { model: 'm1', max_tokens: 100, temperature: 0, response_format: { type: 'json_object' }, messages: [{ role: 'system' }, { role: 'user', content: 'cancel it' }] })
  t.same(picked.effects.find((e) => typeof e === 'object' && 'noteModelCall' in e), { noteModelCall: { connectionId: CONNECTION_ID, model: 'm1', promptTokens: 30, completionTokens: 4, durationMs: 7 } })
  t.same(ran(classify, 'x', [completion('```json\n{"label": "track"}\n```')]).step, { exit: 'track' }, 'a fenced object')
  t.same(ran(classify, 'x', [completion('{"label": "other"}')]).step, { exit: 'other' })
  const unknown = ran(classify, 'x', [completion('{"label": "refund"}')])
  t.same(unknown.step, { exit: 'other' })
  t.match(warnings(unknown.effects), [/"refund", which is not one of the step's/])
  t.same(ran({ ...classify, saveAs: 'intent' }, 'x', [completion('{"label": "cancel"}')]).effects.filter((e) => typeof e === 'object' && 'assign' in e), [{ assign: 'intent', value: 'cancel' }])
  t.same(ran(classify, 'x').step, 'suspend', 'without its answer the turn waits for the call')
  t.same(ran(classify, '  ').step, { exit: 'other' }, 'no message to classify: no call')
})

t.test('extract checks every value as a question would', async (t) => {
  const all = ran(extract, 'order 42 due tomorrow', [completion(JSON.stringify({ order: '42', due: '2026-01-05', count: '3' }))])
  t.same(all.step, { exit: 'success' })
  t.same(assigned(all.effects), { order: '42', due: '2026-01-05', count: 3 })
  t.match(JSON.parse(asked(all.effects)!.body!).messages[0].content, /today is 2026-01-01/, 'dates count from the turn\'s day')
  const relative = ran(extract, 'x', [completion(JSON.stringify({ order: 42, due: 'tomorrow' }))])
  t.same(assigned(relative.effects), { order: '42', due: '2026-01-02' })
  const lacking = ran(extract, 'x', [completion(JSON.stringify({ order: '42', due: null }))])
  t.same(lacking.step, { exit: 'missing' })
  t.same(assigned(lacking.effects), { order: '42' })
  const invalid = ran(extract, 'x', [completion(JSON.stringify({ order: '42', due: '2026-02-30', count: 'many' }))])
  t.same(invalid.step, { exit: 'missing' })
  t.same(warnings(invalid.effects), ['ai node: due "2026-02-30" is not a valid date', 'ai node: count "many" is not a valid number'])
  const optional = ran(extract, 'x', [completion(JSON.stringify({ order: '42', due: '2026-01-09' }))])
  t.same(optional.step, { exit: 'success' }, 'an optional value may be missing')
  const typed = { ...extract, fields: [{ variable: 'ok', type: 'boolean', description: '', required: true }, { variable: 'mail', type: 'email', description: '', required: true }, { variable: 'tel', type: 'phone', description: '', required: true }] } satisfies Data
  t.same(assigned(ran(typed, 'x', [completion(JSON.stringify({ ok: 'true', mail: 'a@b.co', tel: '(11) 98765-4321' }))]).effects), { ok: true, mail: 'a@b.co', tel: '+11987654321' })
  t.same(ran(typed, 'x', [completion(JSON.stringify({ ok: 'yes', mail: 'not mail', tel: '12' }))]).step, { exit: 'missing' })
})

t.test('reply sends the text as written, from the instructions, knowledge and the last texts', async (t) => {
  const transcript: TranscriptLine[] = [{ role: 'user', text: 'hi' }, { role: 'assistant', text: 'Hello!' }, { role: 'user', text: 'When do you open?' }]
  const answered = ran(reply, 'When do you open?', [completion('We open at {{nine}}.')], transcript, { shop: 'Acme' })
  t.same(answered.step, { exit: 'success' })
  t.same(answered.effects.find((e) => typeof e === 'object' && 'sendAsWritten' in e), { sendAsWritten: [{ type: 'text', text: { body: 'We open at {{nine}}.' } }] })
  t.same(JSON.parse(asked(answered.effects)!.body!).messages, [
    { role: 'system', content: 'Answer about Acme.\n\nAnswer from this knowledge only:\nOpen 9 to 5.' },
    { role: 'assistant', content: 'Hello!' },
    { role: 'user', content: 'When do you open?' },
  ])
  t.notOk('response_format' in JSON.parse(asked(answered.effects)!.body!))
  const data = { ...reply, history: 0 }
  t.same(promptOf(data, { ...recordingVisit({ shop: 'A' }).visit, transcript: () => transcript }, '').length, 1, 'a history of 0 sends the instructions alone')
})

t.test('every failure leaves by error with its reason', async (t) => {
  const failure = (answer: HttpCallAnswer): [Step, string[]] => {
    const { step, effects } = ran(classify, 'x', [answer])
    return [step, warnings(effects)]
  }
  examples(t, failure, [
    ['a 500', [{ status: 500, headers: {}, body: '{"error":{"message":"overloaded"}}' }], [{ exit: 'error', unhandled: 'ai node failed and has no error edge: https://llm.example.com/v1/chat/completions answered 500: overloaded' }, ['ai node: https://llm.example.com/v1/chat/completions answered 500: overloaded']]],
    ['a timeout', [{ error: 'timeout', message: 'no complete answer within 30 s' }], [{ exit: 'error', unhandled: 'ai node failed and has no error edge: https://llm.example.com/v1/chat/completions gave no answer in time (no complete answer within 30 s)' }, ['ai node: https://llm.example.com/v1/chat/completions gave no answer in time (no complete answer within 30 s)']]],
    ['a limit', [{ error: 'limit', message: 'a session makes at most 5 calls through this AI connection' }], [{ exit: 'error', unhandled: 'ai node failed and has no error edge: a session makes at most 5 calls through this AI connection' }, ['ai node: a session makes at most 5 calls through this AI connection']]],
    ['an answer cut at the token limit', [completion('{"label": "ca', 'length')], [{ exit: 'error', unhandled: "ai node failed and has no error edge: the answer was cut at the connection's limit of 100 tokens per call" }, ["ai node: the answer was cut at the connection's limit of 100 tokens per call"]]],
    ['prose instead of JSON', [completion('It is cancel')], [{ exit: 'error', unhandled: 'ai node failed and has no error edge: the model did not answer a JSON object' }, ['ai node: the model did not answer a JSON object']]],
  ])
  const gone = ran({ ...reply, connectionId: 'gone' }, 'x')
  t.same(gone.step, { exit: 'error', unhandled: 'ai node failed and has no error edge: the AI connection gone is not in this workspace any more' })
  t.same(ran(reply, 'x', [completion('   ')]).step, { exit: 'error', unhandled: 'ai node failed and has no error edge: the model answered an empty text' })
})

t.test('an endpoint without JSON mode is asked again with a forced tool call', async (t) => {
  const refused: HttpCallAnswer = { status: 400, headers: {}, body: '{"error":{"message":"Unrecognized request argument supplied: response_format"}}' }
  const toolCall: HttpCallAnswer = {
    status: 200,
    headers: {},
    body: JSON.stringify({ choices: [{ message: { content: null, tool_calls: [{ type: 'function', function: { name: 'extract', arguments: '{"order":"7","due":"2026-01-03","count":null}' } }] }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 40, completion_tokens: 9 } }),
  }
  const { step, effects } = ran(extract, 'order 7 due on the 3rd', [refused, toolCall])
  t.same(step, { exit: 'success' })
  t.same(assigned(effects), { order: '7', due: '2026-01-03' })
  const calls = effects.flatMap((effect) => (typeof effect === 'object' && 'callModel' in effect ? [JSON.parse(effect.callModel.body!)] : []))
  t.match(calls[0], { response_format: { type: 'json_object' } })
  t.notOk('tools' in calls[0])
  t.same(calls[1].tool_choice, { type: 'function', function: { name: 'extract' } })
  t.same(calls[1].tools[0].function.parameters, answerTool(extract).parameters)
  t.notOk('response_format' in calls[1])
  t.same(answerTool(extract).parameters, {
    type: 'object',
    properties: { order: { type: ['string', 'null'], description: 'the order number' }, due: { type: ['string', 'null'], description: 'the due date' }, count: { type: ['number', 'null'], description: 'how many' } },
    required: ['order', 'due', 'count'],
  })
  t.same(effects.filter((effect) => typeof effect === 'object' && 'noteModelCall' in effect).length, 2, 'both calls are counted')
  t.same(ran(classify, 'x', [{ status: 400, headers: {}, body: 'bad request' }]).step, { exit: 'error', unhandled: 'ai node failed and has no error edge: https://llm.example.com/v1/chat/completions answered 400: bad request' }, 'another 400 is an error')
  t.same(ran(classify, 'x', [refused]).step, 'suspend', 'the second call waits to be made')
})
