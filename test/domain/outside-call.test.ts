import t from 'tap'
import {
  fillSecrets,
  HttpCallAnswer,
  HttpCallRequest,
  redactedRequest,
  redactSecrets,
  secretMarker,
  secretsIn,
  secretsOfRequest,
  withoutMarkers,
  type HttpCallRequest as Request,
} from '../../src/domain/outside-call.js'
import { accepts, examples } from '../helpers/decider-spec.js'

/** A value with every character a place may need escaped: quotes, a backslash, line breaks, a space, &, /, non-ASCII, a control character. */
const tricky = 'a"b\\c\nd\re &é/\u0001\u2028'
const values: Record<string, string> = { shop: tricky, key: 'k-1', empty: '' }
const valueOf = (name: string) => values[name] ?? `<${name}?>`

const filled = function filled(text: string) {
  return fillSecrets(text, valueOf)
}

t.test('fillSecrets writes each value as its marker says', async (t) => {
  examples(t, filled, [
    ['raw: as it is (a header)', [`Bearer ${secretMarker('shop', 'raw')}`], `Bearer ${tricky}`],
    ['raw is the default encoding', [`Bearer ${secretMarker('shop')}`], `Bearer ${tricky}`],
    ['json: escaped for a JSON string', [`{"k":"${secretMarker('shop', 'json')}"}`], '{"k":"a\\"b\\\\c\\nd\\re &é/\\u0001\u2028"}'],
    ['url: URL-encoded', [`https://x.example/?k=${secretMarker('shop', 'url')}`], 'https://x.example/?k=a%22b%5Cc%0Ad%0De%20%26%C3%A9%2F%01%E2%80%A8'],
    ['several secrets, each in place, one of them twice', [`${secretMarker('key')}:${secretMarker('empty')}:${secretMarker('key', 'url')}`], 'k-1::k-1'],
    ['text without markers is left as it is', ['plain {{secrets.shop}} text'], 'plain {{secrets.shop}} text'],
    ['a marker whose name is not a secret name is no reference', [secretMarker('a.b')], secretMarker('a.b')],
    ['nor one with a name over 64 characters', [secretMarker('x'.repeat(65))], secretMarker('x'.repeat(65))],
    ['an opening without its close is no reference', ['\uE000shop'], '\uE000shop'],
  ])
  const json = fillSecrets(`{"k":"${secretMarker('shop', 'json')}"}`, valueOf)
  t.same(JSON.parse(json), { k: tricky }, 'the JSON-escaped value parses back to the secret')
  const url = new URL(fillSecrets(`https://x.example/p?k=${secretMarker('shop', 'url')}&n=1`, valueOf))
  t.same([url.searchParams.get('k'), url.searchParams.get('n')], [tricky, '1'], 'the URL-encoded value reads back whole, and breaks no other parameter')
  const asked: string[] = []
  fillSecrets(`${secretMarker('b')}${secretMarker('a', 'json')}${secretMarker('b', 'url')}`, (name) => {
    asked.push(name)
    return ''
  })
  t.same(asked, ['b', 'a', 'b'], 'each marker asks for its value by name')
})

t.test('redactSecrets writes each marker as its placeholder', async (t) => {
  examples(t, redactSecrets, [
    ['a raw marker', [`Bearer ${secretMarker('shop')}`], 'Bearer {{secrets.shop}}'],
    ['a JSON marker', [`{"k":"${secretMarker('shop', 'json')}"}`], '{"k":"{{secrets.shop}}"}'],
    ['a URL marker', [`?k=${secretMarker('key', 'url')}&j=${secretMarker('shop', 'url')}`], '?k={{secrets.key}}&j={{secrets.shop}}'],
    ['text without markers', ['no secret'], 'no secret'],
  ])
})

t.test('withoutMarkers strips every marker character', async (t) => {
  examples(t, withoutMarkers, [
    ['a whole marker of each encoding', [`a${secretMarker('x')}b${secretMarker('y', 'json')}c${secretMarker('z', 'url')}`], 'axbycz'],
    ['each of the four characters alone', ['1\uE0002\uE0013\uE0024\uE0035'], '12345'],
    ['other private-use characters stay', ['\uE004\uDB80\uDC00'], '\uE004\uDB80\uDC00'],
    ['the placeholder text is not a marker', ['{{secrets.shop}}'], '{{secrets.shop}}'],
  ])
})

t.test('secretsIn and secretsOfRequest', async (t) => {
  examples(t, secretsIn, [
    ['each marker, in order', [`${secretMarker('b')} ${secretMarker('a', 'json')} ${secretMarker('b', 'url')}`], ['b', 'a', 'b']],
    ['the placeholder text names none', ['{{secrets.shop}}'], []],
  ])
  const request: Request = {
    method: 'POST',
    url: `https://x.example/${secretMarker('shop', 'url')}`,
    headers: [
      { name: 'authorization', value: `Bearer ${secretMarker('key')}` },
      { name: 'x-shop', value: secretMarker('shop') },
    ],
    body: `{"a":"${secretMarker('key', 'json')}","b":"${secretMarker('body', 'json')}"}`,
    timeoutMs: 1000,
  }
  examples(t, secretsOfRequest, [
    ['each name once, from the URL, the headers and the body', [request], ['shop', 'key', 'body']],
    ['none in a request without markers', [{ method: 'GET', url: 'https://x.example/{{secrets.shop}}', headers: [], body: null, timeoutMs: 1000 }], []],
    ['a body of null has none', [{ ...request, url: 'https://x.example', headers: [], body: null }], []],
  ])
  const before = structuredClone(request)
  examples(t, redactedRequest, [
    [
      'every secret written as its placeholder; the rest as it was',
      [request],
      {
        method: 'POST',
        url: 'https://x.example/{{secrets.shop}}',
        headers: [
          { name: 'authorization', value: 'Bearer {{secrets.key}}' },
          { name: 'x-shop', value: '{{secrets.shop}}' },
        ],
        body: '{"a":"{{secrets.key}}","b":"{{secrets.body}}"}',
        timeoutMs: 1000,
      },
    ],
    ['a body of null stays null', [{ ...request, body: null }], { ...redactedRequest(request), body: null }],
  ])
  t.same(request, before, 'the request itself is left as it was')
})

t.test('the recorded shapes', async (t) => {
  const request = { method: 'GET', url: 'https://x.example', headers: [], body: null, timeoutMs: 100 }
  examples(t, accepts(HttpCallRequest), [
    ['a GET without a body', [request], true],
    ['a method outside the list', [{ ...request, method: 'HEAD' }], false],
    ['a timeout of 0', [{ ...request, timeoutMs: 0 }], false],
  ])
  examples(t, accepts(HttpCallAnswer), [
    ['a status, its headers and body', [{ status: 204, headers: { 'content-type': 'text/plain' }, body: '' }], true],
    ['an error of a known code', [{ error: 'timeout', message: 'no answer in 10 s' }], true],
    ['an error of another code', [{ error: 'oops', message: 'no' }], false],
  ])
})
