import t from 'tap'
import { check, exits, run, schema, secretsIn, writes, type Data } from '../../../src/domain/nodes/http-request.js'
import type { Step } from '../../../src/domain/nodes/node-type.js'
import { CALL_LIMITS, fillSecrets, redactedRequest, secretMarker, secretsOfRequest, withoutMarkers, type HttpCallAnswer, type HttpCallRequest, type RecordedCall } from '../../../src/domain/outside-call.js'
import type { VariableValue } from '../../../src/domain/turn.js'
import type { VariableType } from '../../../src/domain/variables.js'
import { assertionMessage } from '../../helpers/assertion-message.js'
import { accepts, examples } from '../../helpers/decider-spec.js'
import { checkProblems, emptyCatalog, recordingVisit, type Effect } from '../../helpers/visit.js'

const API = 'https://api.example.com'

/** The node run with `variables`, the recorded `answers` given in order: its step and what it did. */
function ran(data: Data, variables: Record<string, VariableValue> = {}, answers: RecordedCall[] = []) {
  const { visit, effects } = recordingVisit(variables, null, answers)
  const step = run({ id: 'node', type: 'httpRequest', position: { x: 0, y: 0 }, data }, visit)
  return { step, effects }
}

/** The one request a run asked to call, or undefined when it called nothing. */
const requested = (effects: readonly Effect[]): HttpCallRequest | undefined => {
  const calls = effects.flatMap((effect) => (typeof effect === 'object' && 'callOutside' in effect ? [effect.callOutside] : []))
  return calls.length === 1 ? calls[0] : undefined
}

/** Every text of a request, where a marker could hide. */
const texts = (request: HttpCallRequest): string[] => [request.url, ...request.headers.flatMap((header) => [header.name, header.value]), request.body ?? '']

const answer = (request: HttpCallRequest, recorded: HttpCallAnswer): RecordedCall => ({ index: 0, nodeId: 'node', request, answer: recorded, durationMs: 12 })
const json = (status: number, body: unknown): HttpCallAnswer => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

t.test('schema', async (t) => {
  const get = { method: 'GET', url: `${API}/orders` }
  examples(t, accepts(schema), [
    ['a GET of a URL', [get], true],
    ['every field', [{ ...get, method: 'POST', headers: [{ name: 'x-api-key', value: '{{secrets.key}}' }], body: { id: '{{id}}' }, timeoutMs: 5000, saveResponse: [{ path: '$.status', variable: 'status' }], saveStatusAs: 'code' }], true],
    ['a body of any JSON: a string', [{ ...get, method: 'POST', body: 'text' }], true],
    ['a body of any JSON: a list', [{ ...get, method: 'PUT', body: [1, '{{n}}'] }], true],
    ['each method', [{ ...get, method: 'DELETE' }], true],
    ['a method outside the list', [{ ...get, method: 'HEAD' }], false],
    ['a lower-case method', [{ ...get, method: 'get' }], false],
    ['no URL', [{ method: 'GET' }], false],
    ['an empty URL', [{ ...get, url: '' }], false],
    ['a URL over 2048 characters', [{ ...get, url: `${API}/${'a'.repeat(2048)}` }], false],
    [`a timeout of ${CALL_LIMITS.timeoutMs.min} ms`, [{ ...get, timeoutMs: CALL_LIMITS.timeoutMs.min }], true],
    [`a timeout under ${CALL_LIMITS.timeoutMs.min} ms`, [{ ...get, timeoutMs: CALL_LIMITS.timeoutMs.min - 1 }], false],
    [`a timeout over ${CALL_LIMITS.timeoutMs.max} ms`, [{ ...get, timeoutMs: CALL_LIMITS.timeoutMs.max + 1 }], false],
    ['a header without a name', [{ ...get, headers: [{ name: '', value: 'x' }] }], false],
    ['a header value over 4096 characters', [{ ...get, headers: [{ name: 'x-a', value: 'a'.repeat(4097) }] }], false],
    ['31 headers', [{ ...get, headers: Array.from({ length: 31 }, (_, i) => ({ name: `x-${i}`, value: '' })) }], false],
    ['a response path saved in a name that is no variable name', [{ ...get, saveResponse: [{ path: '$.a', variable: 'my var' }] }], false],
    ['an empty response path', [{ ...get, saveResponse: [{ path: '', variable: 'a' }] }], false],
    ['21 response paths', [{ ...get, saveResponse: Array.from({ length: 21 }, (_, i) => ({ path: `$.a${i}`, variable: `a${i}` })) }], false],
  ])
})

t.test('exits, writes and secretsIn', async (t) => {
  t.same(exits(), [
    { id: 'success', label: 'success', kind: 'default' },
    { id: 'error', label: 'error', kind: 'invalid' },
  ])
  examples(t, writes, [
    ['each saved path and the status', [{ saveResponse: [{ path: '$.a', variable: 'a' }, { path: '$.b', variable: 'b' }], saveStatusAs: 'code' }], ['a', 'b', 'code']],
    ['nothing saved', [{ method: 'GET' }], []],
    ['a draft with broken mappings keeps what is a name', [{ saveResponse: [null, { path: '$.a' }, { variable: 'kept' }], saveStatusAs: 3 }], ['kept']],
  ])
  examples(t, secretsIn, [
    ['the URL', ['url'], true],
    ['the headers', ['headers'], true],
    ['the body', ['body'], true],
    ['not where a response is saved', ['saveResponse'], false],
    ['not the status variable', ['saveStatusAs'], false],
  ])
})

t.test('check', async (t) => {
  const catalog = {
    ...emptyCatalog,
    variables: new Map<string, VariableType>([
      ['order', 'object'],
      ['total', 'number'],
      ['code', 'number'],
      ['label', 'string'],
    ]),
  }
  const problems = function problems(data: Partial<Data>) {
    return checkProblems(check, { method: 'GET', url: `${API}/orders`, ...data }, catalog)
  }
  examples(t, problems, [
    ['an https URL', [{}], []],
    ['an http URL', [{ url: 'http://api.example.com' }], ['url: the URL must start with https:// (or be filled in whole by a variable holding one)']],
    ['a URL without its scheme', [{ url: 'api.example.com/{{id}}' }], ['url: the URL must start with https:// (or be filled in whole by a variable holding one)']],
    ['an upper-case scheme', [{ url: 'HTTPS://api.example.com' }], ['url: the URL must start with https:// (or be filled in whole by a variable holding one)']],
    ['a URL filled in whole by {{url}}', [{ url: '{{url}}' }], []],
    ['headers named as HTTP names them', [{ headers: [{ name: 'X-Api-Key', value: '{{secrets.key}}' }, { name: 'accept', value: 'application/json' }] }], []],
    [
      'a header name with a space or a colon',
      [{ headers: [{ name: 'x api', value: '' }, { name: 'x:a', value: '' }] }],
      ['headers.0.name: "x api" is not a header name: letters, digits and - only', 'headers.1.name: "x:a" is not a header name: letters, digits and - only'],
    ],
    [
      'reserved header names, in any case',
      [{ headers: [{ name: 'Host', value: 'x' }, { name: 'content-length', value: '1' }, { name: 'Transfer-Encoding', value: 'chunked' }] }],
      ['headers.0.name: "Host" is set by the service; leave it out', 'headers.1.name: "content-length" is set by the service; leave it out', 'headers.2.name: "Transfer-Encoding" is set by the service; leave it out'],
    ],
    ['a body on a GET', [{ body: { a: 1 } }], ['body: a GET request has no body']],
    ['a body on a DELETE', [{ method: 'DELETE', body: '' }], ['body: a DELETE request has no body']],
    ['a body on a POST, PUT or PATCH', [{ method: 'PATCH', body: { a: 1 } }], []],
    ['a body longer than the limit', [{ method: 'POST', body: 'a'.repeat(CALL_LIMITS.requestBytes) }], [`body: the body is longer than ${CALL_LIMITS.requestBytes} bytes`]],
    ['response paths into variables of any type', [{ saveResponse: [{ path: '$.order', variable: 'order' }, { path: "$.items[0]['price']", variable: 'total' }, { path: '$.name', variable: 'label' }] }], []],
    ['a path that is not one', [{ saveResponse: [{ path: 'order.status', variable: 'label' }] }], ['saveResponse.0.path: a path starts with $ (the whole response), as in $.order.status']],
    ['a wildcard path', [{ saveResponse: [{ path: '$.items[*]', variable: 'label' }] }], ['saveResponse.0.path: "[*]" is not a member (.name or [\'name\']) or an item ([0])']],
    ['a path saved in a variable the workspace lacks', [{ saveResponse: [{ path: '$.a', variable: 'missing' }] }], ['saveResponse.0.variable: no variable "missing" in this workspace']],
    ['a path saved in a system variable', [{ saveResponse: [{ path: '$.a', variable: 'sessionId' }] }], ['saveResponse.0.variable: "sessionId" is a system variable; it is read-only']],
    ['the status saved in a number variable', [{ saveStatusAs: 'code' }], []],
    ['the status saved in a string variable', [{ saveStatusAs: 'label' }], ['saveStatusAs: variable "label" holds a string, but a status is a number']],
    ['the status saved in a variable the workspace lacks', [{ saveStatusAs: 'missing' }], ['saveStatusAs: no variable "missing" in this workspace']],
    ['the status saved in a system variable', [{ saveStatusAs: 'externalId' }], ['saveStatusAs: "externalId" is a system variable; it is read-only']],
  ])
})

t.test('run: the request the node asks for', async (t) => {
  const plain = (data: Partial<Data>, variables: Record<string, VariableValue> = {}) => {
    const { step, effects } = ran({ method: 'GET', url: `${API}/orders`, ...data }, variables)
    return { step, effects }
  }
  const request = (data: Partial<HttpCallRequest>): HttpCallRequest => ({ method: 'GET', url: `${API}/orders`, headers: [], body: null, timeoutMs: CALL_LIMITS.timeoutMs.default, ...data })
  const calling = (data: Partial<HttpCallRequest>, warnings: string[] = []): { step: Step; effects: Effect[] } => ({ step: 'suspend', effects: [...warnings.map((warn) => ({ warn })), { callOutside: request(data) }] })
  examples(t, plain, [
    ['with no answer yet, the call is asked for and the turn suspends', [{}], calling({})],
    [
      'variables in the URL are URL-encoded',
      [{ url: `${API}/orders/{{id}}?q={{q}}&n={{n}}` }, { id: 'a b/c', q: 'x&y=z#', n: 7 }],
      calling({ url: `${API}/orders/a%20b%2Fc?q=x%26y%3Dz%23&n=7` }),
    ],
    ['a URL filled in whole by {{url}} takes its value as it is', [{ url: '{{url}}' }, { url: `${API}/a b?x=1&y=2` }], calling({ url: `${API}/a b?x=1&y=2` })],
    ['an unknown variable in the URL is empty, with a warning', [{ url: `${API}/orders/{{id}}` }], calling({ url: `${API}/orders/` }, ['unknown variable {{id}}'])],
    [
      'headers are filled in as they are',
      [{ headers: [{ name: 'X-Name', value: '{{name}} & co' }] }, { name: 'Ana/Bia' }],
      calling({ headers: [{ name: 'X-Name', value: 'Ana/Bia & co' }] }),
    ],
    ['the timeout as written', [{ timeoutMs: 2500 }], calling({ timeoutMs: 2500 })],
    [
      'a string body is text, its content type added',
      [{ method: 'POST', body: 'Hi {{name}}' }, { name: 'Ana' }],
      calling({ method: 'POST', body: 'Hi Ana', headers: [{ name: 'content-type', value: 'text/plain; charset=utf-8' }] }),
    ],
    [
      'a JSON body, its content type added',
      [{ method: 'PUT', headers: [{ name: 'accept', value: 'application/json' }], body: { a: 1 } }],
      calling({ method: 'PUT', body: '{"a":1}', headers: [{ name: 'accept', value: 'application/json' }, { name: 'content-type', value: 'application/json' }] }),
    ],
    [
      'a content type the flow gives, in any case, is kept and none added',
      [{ method: 'POST', headers: [{ name: 'Content-Type', value: 'application/vnd.api+json' }], body: { a: 1 } }],
      calling({ method: 'POST', body: '{"a":1}', headers: [{ name: 'Content-Type', value: 'application/vnd.api+json' }] }),
    ],
  ])

  t.test('a JSON body: a string that is only {{n}} takes the value with its type', async (t) => {
    const variables = { n: 3, vip: true, name: 'Ana "A"', order: { id: 'o-1', lines: [1, 2] } }
    const body = { n: '{{n}}', spaced: '{{ n }}', vip: '{{vip}}', name: '{{name}}', order: '{{order}}', id: '{{order.id}}', text: 'n={{n}} {{name}}', list: ['{{n}}', { deep: '{{vip}}' }], kept: 5, none: null, missing: '{{nope}}' }
    const { step, effects } = ran({ method: 'POST', url: API, body }, variables)
    t.equal(step, 'suspend')
    t.same(effects.filter((effect) => typeof effect === 'object' && 'warn' in effect), [{ warn: 'unknown variable {{nope}}' }], 'an unknown variable warns once')
    const sent = requested(effects)
    t.same(JSON.parse(sent?.body ?? 'null'), {
      n: 3,
      spaced: 3,
      vip: true,
      name: 'Ana "A"',
      order: { id: 'o-1', lines: [1, 2] },
      id: 'o-1',
      text: 'n=3 Ana "A"',
      list: [3, { deep: true }],
      kept: 5,
      none: null,
      missing: '',
    })
  })

  t.test('{{secrets.NAME}} becomes a secret reference, written for its place', async (t) => {
    const data: Data = {
      method: 'POST',
      url: `${API}/{{secrets.shop}}/orders?key={{secrets.key}}`,
      headers: [{ name: 'Authorization', value: 'Bearer {{secrets.key}}' }],
      body: { token: '{{secrets.key}}', note: 'shop {{secrets.shop}}' },
    }
    const sent = requested(ran(data).effects)
    if (!sent) return t.fail('no call asked for')
    t.same(
      redactedRequest(sent),
      {
        method: 'POST',
        url: `${API}/{{secrets.shop}}/orders?key={{secrets.key}}`,
        headers: [
          { name: 'Authorization', value: 'Bearer {{secrets.key}}' },
          { name: 'content-type', value: 'application/json' },
        ],
        body: '{"token":"{{secrets.key}}","note":"shop {{secrets.shop}}"}',
        timeoutMs: CALL_LIMITS.timeoutMs.default,
      },
      'recorded with its placeholders',
    )
    t.same(secretsOfRequest(sent), ['shop', 'key'], 'each secret named once')
    const values: Record<string, string> = { shop: 'my shop', key: 'k"1\\/&' }
    const fill = (text: string) => fillSecrets(text, (name) => values[name] ?? '')
    t.equal(fill(sent.url), `${API}/my%20shop/orders?key=k%221%5C%2F%26`, 'URL-encoded in the URL')
    t.equal(fill(sent.headers[0]?.value ?? ''), 'Bearer k"1\\/&', 'as it is in a header')
    t.same(JSON.parse(fill(sent.body ?? '')), { token: 'k"1\\/&', note: 'shop my shop' }, 'JSON-escaped in the body, which stays JSON')
    t.same(requested(ran({ method: 'GET', url: `${API}/orders` }).effects)?.url, `${API}/orders`, 'without one, the request holds no marker')
  })

  t.test('a variable never becomes a secret reference', async (t) => {
    const sneaky = {
      marked: `x${secretMarker('shop')}y${secretMarker('shop', 'url')}z`,
      typed: '{{secrets.shop}}',
      object: { [`k${secretMarker('shop', 'json')}`]: `v${secretMarker('shop', 'json')}` },
      url: `${API}/${secretMarker('shop', 'url')}`,
    }
    const cases: [string, Data][] = [
      ['in the URL', { method: 'GET', url: `${API}/{{marked}}/{{typed}}` }],
      ['as the whole URL', { method: 'GET', url: '{{url}}' }],
      ['in a header', { method: 'GET', url: API, headers: [{ name: 'x-a', value: '{{marked}} {{typed}} {{object}}' }] }],
      ['in a text body', { method: 'POST', url: API, body: '{{marked}} {{typed}} {{object}}' }],
      ['in a JSON body, whole or inside text', { method: 'POST', url: API, body: { a: '{{marked}}', b: '{{typed}}', c: '{{object}}', d: 'in {{marked}} {{typed}} {{object}}' } }],
    ]
    for (const [situation, data] of cases) {
      const sent = requested(ran(data, sneaky).effects)
      if (!sent) {
        t.fail(`${situation}: no call asked for`)
        continue
      }
      t.same(secretsOfRequest(sent), [], `${situation}: no secret named`)
      const marked = texts(sent).filter((text) => withoutMarkers(text) !== text)
      t.same(marked.map((text) => assertionMessage(text)), [], `${situation}: no marker character left`)
      t.same(texts(sent).map((text) => fillSecrets(text, () => 'SECRET')), texts(sent), `${situation}: filling secrets changes nothing`)
    }
    const sent = requested(ran({ method: 'POST', url: API, body: { a: '{{marked}}', b: '{{typed}}', c: '{{object}}' } }, sneaky).effects)
    t.same(JSON.parse(sent?.body ?? 'null'), { a: 'xshopyshopz', b: '{{secrets.shop}}', c: { kshop: 'vshop' } }, 'the values, their marker characters stripped')
  })

  t.test('a request that cannot be sent leaves by error without a call', async (t) => {
    const refused = (data: Data, variables: Record<string, VariableValue>) => {
      const { step, effects } = ran(data, variables)
      return { step, effects }
    }
    const failed = (reason: string) => ({
      step: { exit: 'error', unhandled: `httpRequest node failed and has no error edge: ${reason}` },
      effects: [{ warn: `httpRequest node: ${reason}` }],
    })
    examples(t, refused, [
      ['a URL that becomes http once filled in', [{ method: 'GET', url: '{{url}}' }, { url: 'http://api.example.com/x' }], failed('the URL "http://api.example.com/x" is not https')],
      ['a URL that becomes another scheme', [{ method: 'GET', url: '{{url}}' }, { url: 'file:///etc/passwd' }], failed('the URL "file:///etc/passwd" is not https')],
      ['a URL that becomes no URL', [{ method: 'GET', url: '{{url}}' }, { url: 'not a url' }], failed('the URL "not a url" is not a URL')],
      [
        'a header that holds a line break once filled in',
        [{ method: 'GET', url: API, headers: [{ name: 'x-name', value: '{{name}}' }] }, { name: 'Ana\r\nX-Evil: 1' }],
        failed('the header x-name holds a line break once filled in'),
      ],
      [
        'a body longer than the limit once filled in',
        [{ method: 'POST', url: API, body: '{{long}}' }, { long: 'é'.repeat(CALL_LIMITS.requestBytes / 2 + 1) }],
        failed(`the body is longer than ${CALL_LIMITS.requestBytes} bytes once filled in`),
      ],
    ])
  })
})

t.test('run: the answer picks the exit', async (t) => {
  const get = `GET ${API}/order`
  const answered = function answered(data: Partial<Data>, recorded: HttpCallAnswer) {
    const full: Data = { method: 'GET', url: `${API}/order`, ...data }
    const request = requested(ran(full).effects)
    if (!request) throw new Error('no call asked for')
    const { step, effects } = ran(full, {}, [answer(request, recorded)])
    return { step, effects: effects.filter((effect) => !(typeof effect === 'object' && 'callOutside' in effect)) }
  }
  const failed = (reason: string, before: Effect[] = []) => ({
    step: { exit: 'error', unhandled: `httpRequest node failed and has no error edge: ${reason}` },
    effects: [...before, { warn: `httpRequest node: ${reason}` }],
  })
  const order = { order: { id: 'o-1', total: 12.5, paid: true, lines: [{ sku: 'tea' }], none: null, customer: { name: 'Ana' } } }
  const mappings = (...pairs: [string, string][]) => ({ saveResponse: pairs.map(([path, variable]) => ({ path, variable })) })
  examples(t, answered, [
    ['a 200 without mappings leaves by success', [{}, { status: 200, headers: {}, body: 'not even JSON' }], { step: { exit: 'success' }, effects: [] }],
    ['a 299 is a success', [{}, { status: 299, headers: {}, body: '' }], { step: { exit: 'success' }, effects: [] }],
    [
      'a 2xx saves each path: objects, numbers, strings, booleans',
      [mappings(['$.order.customer', 'customer'], ['$.order.total', 'total'], ['$.order.id', 'id'], ['$.order.paid', 'paid'], ["$.order.lines[0]['sku']", 'sku']), json(201, order)],
      {
        step: { exit: 'success' },
        effects: [
          { assign: 'customer', value: { name: 'Ana' } },
          { assign: 'total', value: 12.5 },
          { assign: 'id', value: 'o-1' },
          { assign: 'paid', value: true },
          { assign: 'sku', value: 'tea' },
        ],
      },
    ],
    ['$ saves the whole answer', [mappings(['$', 'all']), json(200, { a: 1 })], { step: { exit: 'success' }, effects: [{ assign: 'all', value: { a: 1 } }] }],
    ['the status saved', [{ saveStatusAs: 'code' }, json(204, {})], { step: { exit: 'success' }, effects: [{ assign: 'code', value: 204 }] }],
    ['a 404 leaves by error, with a warning', [{}, json(404, { error: 'no' })], failed(`${get} answered 404`)],
    ['a 300 is not a success', [{}, json(300, {})], failed(`${get} answered 300`)],
    ['a 199 is not a success', [{}, json(199, {})], failed(`${get} answered 199`)],
    ['the status is saved before a non-2xx leaves by error', [{ saveStatusAs: 'code' }, json(500, {})], failed(`${get} answered 500`, [{ assign: 'code', value: 500 }])],
    ['a non-2xx saves no path', [mappings(['$.error', 'why']), json(422, { error: 'bad' })], failed(`${get} answered 422`)],
    ['an error answer (a timeout) leaves by error', [{ saveStatusAs: 'code' }, { error: 'timeout', message: 'no answer in 10 s' }], failed(`${get}: no answer in 10 s`)],
    ['a limit answer too', [{}, { error: 'limit', message: 'a turn makes at most 10 calls' }], failed(`${get}: a turn makes at most 10 calls`)],
    ['a body that is not JSON, with paths to save', [mappings(['$.a', 'a']), { status: 200, headers: {}, body: '<html>' }], failed(`${get} answered 200 with a body that is not JSON`)],
    ['a path that matches nothing', [mappings(['$.order.missing', 'a']), json(200, order)], failed(`$.order.missing matches nothing in the answer of ${get}`)],
    ['a path that matches null', [mappings(['$.order.none', 'a']), json(200, order)], failed(`$.order.none matches nothing in the answer of ${get}`)],
    ['a path to a list', [mappings(['$.order.lines', 'a']), json(200, order)], failed(`$.order.lines is a list in the answer of ${get}; save one item, such as $.order.lines[0]`)],
    [
      'one path failing saves none of the others',
      [mappings(['$.order.id', 'id'], ['$.order.gone', 'gone']), json(200, order)],
      failed(`$.order.gone matches nothing in the answer of ${get}`),
    ],
    ['a path into a string answer', [mappings(['$.a', 'a']), json(200, 'text')], failed(`$.a matches nothing in the answer of ${get}`)],
  ])

  t.test('the answer is read from the recorded call, not from a new one', async (t) => {
    const data: Data = { method: 'GET', url: `${API}/order`, saveStatusAs: 'code' }
    const recorded = answer({ method: 'GET', url: `${API}/recorded`, headers: [], body: null, timeoutMs: 100 }, { error: 'network', message: 'reset' })
    const { step, effects } = ran(data, {}, [recorded])
    t.same(effects.filter((effect) => typeof effect === 'object' && 'warn' in effect), [{ warn: `httpRequest node: GET ${API}/recorded: reset` }], 'the warning names the request as recorded')
    t.same(step, { exit: 'error', unhandled: `httpRequest node failed and has no error edge: GET ${API}/recorded: reset` })
  })
})
