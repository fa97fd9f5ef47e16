import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Ajv, type ErrorObject } from 'ajv'
import formatsPlugin from 'ajv-formats'
import t, { type Test } from 'tap'
import { valueMisfit } from '../../src/domain/card.js'
import { FIELD_TYPES, type FieldType } from '../../src/domain/field-types.js'
import type { Field } from '../../src/domain/pipeline.js'
import { schemaErrorMessage } from '../../src/http/validation.js'
import { importWebModules } from '../helpers/web-modules.js'

// Every problem the API can answer a person with, said in their words (web/src/shared/api-problems.ts)
// in English and Portuguese: each keyword the request schemas of openapi.json use, as Ajv words it
// and the service formats it; each message the domain and the routes throw, read from the source;
// and each message of the flow validator. A new message no rule knows fails here.

type Lang = 'en' | 'pt'
type Words = (key: string, params?: Record<string, string | number>) => string
interface Said {
  field?: string
  text: string
  known: boolean
}
interface Module {
  createI18n(dictionaries: { en: Record<string, string>; pt: Record<string, string> }): { translator(lang: Lang): Words }
  apiProblemsEn: Record<string, string>
  apiProblemsPt: Record<string, string>
  sayMessage(message: string, t: Words): Said[]
  sayFlowWhat(message: string, t: Words): string
  knowsFlowWords(message: string, t: Words): boolean
}

const root = fileURLToPath(new URL('../../', import.meta.url))
const web = await importWebModules<Module>('web/src/shared/i18n.tsx', 'web/src/shared/api-problems-strings.ts', 'web/src/shared/api-problems.ts')
const { translator } = web.createI18n({ en: web.apiProblemsEn, pt: web.apiProblemsPt })
const LANGS = ['en', 'pt'] as const
const words: Record<Lang, Words> = { en: translator('en'), pt: translator('pt') }

// The API's own words: Ajv's phrasing and keywords, request paths, and the fallback's quote of
// words no rule knows. (A domain message said back unchanged is caught by comparing with it.)
const RAW = [
  /must NOT|must match (?:pattern|format|a schema)|must have required property|must be equal to|must be (?:string|number|integer|boolean|object|array|null|>=|<=|>|<)\b/,
  /\b(?:body|querystring|params|headers)\//,
  /\b(?:minLength|maxLength|minItems|maxItems|uniqueItems|additionalProperties|anyOf|enum|minimum|maximum)\b/,
  /\bthe service said\b|\bo serviço disse\b/,
]

/** The problems of `message` in both languages; each must be known, in the person's words, and translated. */
function checkSaid(tt: Test, message: string, where: string, expectedField?: string): Record<Lang, Said[]> {
  const said = { en: web.sayMessage(message, words.en), pt: web.sayMessage(message, words.pt) }
  for (const lang of LANGS) {
    for (const problem of said[lang]) {
      const raw = RAW.find((pattern) => pattern.test(problem.text))
      tt.ok(problem.known && !raw && problem.text !== message, `${where} (${lang}): "${message}" → "${problem.text}"`)
    }
  }
  tt.ok(
    said.pt.every((problem, i) => problem.text !== said.en[i]?.text),
    `${where}: Portuguese says it in Portuguese`,
  )
  if (expectedField !== undefined) tt.equal(said.en[0]?.field, expectedField, `${where}: the problem is placed on ${expectedField}`)
  return said
}

// ---------------------------------------------------------------------------------------------
// (a) The request schemas' keywords, as the service words their failures

type Schema = Record<string, unknown>
const openapi = JSON.parse(readFileSync(join(root, 'openapi.json'), 'utf8')) as { paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, Schema> } }

const resolve = (schema: Schema): Schema => {
  const ref = schema.$ref
  return typeof ref === 'string' ? resolve(openapi.components.schemas[ref.split('/').pop()!]!) : schema
}
/** The schema with every `$ref` replaced by what it names (request schemas are trees). */
const inline = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(inline)
  if (typeof value !== 'object' || value === null) return value
  const schema = resolve(value as Schema)
  return Object.fromEntries(Object.entries(schema).map(([key, item]) => [key, inline(item)]))
}

interface Occurrence {
  keyword: string
  /** The part of the request, as the formatter names it (fastify's `dataVar`). */
  part: string
  /** Where in that part (a JSON pointer). */
  pointer: string
  schema: Schema
  where: string
}

function keywordsOf(schema: Schema, part: string, pointer: string, where: string, found: Occurrence[]): void {
  const s = resolve(schema)
  for (const keyword of Object.keys(s)) found.push({ keyword, part, pointer, schema: s, where })
  const child = (sub: unknown, at: string) => typeof sub === 'object' && sub !== null && keywordsOf(sub as Schema, part, at, where, found)
  for (const [name, sub] of Object.entries((s.properties as Record<string, unknown>) ?? {})) child(sub, `${pointer}/${name}`)
  if (s.items) child(s.items, `${pointer}/0`)
  if (typeof s.additionalProperties === 'object') child(s.additionalProperties, `${pointer}/key`)
  for (const branch of [...((s.anyOf as unknown[]) ?? []), ...((s.oneOf as unknown[]) ?? []), ...((s.allOf as unknown[]) ?? [])]) child(branch, pointer)
}

const PART_OF: Record<string, string> = { query: 'querystring', path: 'params', header: 'headers' }
const occurrences: Occurrence[] = []
for (const [path, operations] of Object.entries(openapi.paths)) {
  for (const [method, raw] of Object.entries(operations)) {
    const operation = raw as { parameters?: { in: string; name: string; schema: Schema }[]; requestBody?: { content?: Record<string, { schema: Schema }> } }
    const where = `${method.toUpperCase()} ${path}`
    for (const parameter of operation.parameters ?? []) keywordsOf(parameter.schema, PART_OF[parameter.in] ?? parameter.in, `/${parameter.name}`, where, occurrences)
    const body = operation.requestBody?.content?.['application/json']?.schema
    if (body) keywordsOf(body, 'body', '', where, occurrences)
  }
}

const ajv = (formatsPlugin as unknown as (ajv: Ajv) => Ajv)(new Ajv({ allErrors: false, strict: false }))
const CANDIDATES: unknown[] = [42, 'x', '', ' x', '#12', 'ab', true, null, {}, [], ['a', 'a'], { extra: 1 }, 'a\nb']

/**
 * A schema of just `keyword` (as `schema` has it) and a value that fails it; 'never' when this
 * use of the keyword fails no value (`minLength: 0`, a schema for additional properties);
 * undefined for a keyword this test does not know how to fail.
 */
function failing({ keyword, schema }: Occurrence): { schema: Schema; value: unknown } | 'never' | undefined {
  const n = schema[keyword]
  switch (keyword) {
    case 'type':
      return { schema: { type: n }, value: [n].flat().includes('string') ? 42 : 'x' }
    case 'required':
      return (n as string[]).length > 0 ? { schema: { type: 'object', required: n }, value: {} } : 'never'
    case 'minLength':
      return Number(n) > 0 ? { schema: { type: 'string', minLength: n }, value: 'x'.repeat(Number(n) - 1) } : 'never'
    case 'maxLength':
      return { schema: { type: 'string', maxLength: n }, value: 'x'.repeat(Number(n) + 1) }
    case 'minItems':
      return Number(n) > 0 ? { schema: { type: 'array', minItems: n }, value: Array(Number(n) - 1).fill('x') } : 'never'
    case 'maxItems':
      return { schema: { type: 'array', maxItems: n }, value: Array(Number(n) + 1).fill('x') }
    case 'minimum':
    case 'exclusiveMinimum':
      return { schema: { type: 'number', [keyword]: n }, value: Number(n) - 1 }
    case 'maximum':
    case 'exclusiveMaximum':
      return { schema: { type: 'number', [keyword]: n }, value: Number(n) + 1 }
    case 'uniqueItems':
      return n === true ? { schema: { type: 'array', uniqueItems: true }, value: ['a', 'a'] } : 'never'
    case 'additionalProperties':
      return n === false ? { schema: { type: 'object', properties: {}, additionalProperties: false }, value: { extra: 1 } } : 'never'
    case 'pattern':
    case 'format':
    case 'enum':
    case 'const':
    case 'anyOf':
    case 'oneOf':
    case 'allOf':
    case 'not':
    case 'multipleOf':
    case 'minProperties':
    case 'maxProperties': {
      const whole = { [keyword]: inline(n), ...(keyword === 'pattern' || keyword === 'format' ? { type: 'string' } : {}) }
      const check = ajv.compile(whole)
      const value = CANDIDATES.find((candidate) => (keyword === 'pattern' || keyword === 'format' ? typeof candidate === 'string' : true) && !check(candidate))
      return value === undefined ? undefined : { schema: whole, value }
    }
    default:
      return undefined
  }
}

// Keywords that never fail a value: annotations and the structure walked above.
const ANNOTATIONS = new Set(['description', 'examples', 'default', 'title', 'properties', 'items', 'nullable', 'deprecated', 'readOnly', 'writeOnly', 'example', '$id', '$schema'])

t.test("every keyword of the request schemas: Ajv's words, formatted as the service does, become the person's", async (t) => {
  const seen = new Set<string>()
  const keywords = new Set<string>()
  for (const occurrence of occurrences) {
    if (ANNOTATIONS.has(occurrence.keyword)) continue
    const value = occurrence.schema[occurrence.keyword]
    const id = `${occurrence.part} ${occurrence.keyword} ${JSON.stringify(value)}`
    if (seen.has(id)) continue
    seen.add(id)
    const made = failing(occurrence)
    t.ok(made, `${occurrence.where}: a value that fails ${occurrence.keyword} ${JSON.stringify(value)}`)
    if (!made || made === 'never') continue
    const check = ajv.compile(made.schema)
    t.notOk(check(made.value), `${occurrence.keyword}: the value fails`)
    const errors = (check.errors ?? []).map((error: ErrorObject) => ({ ...error, instancePath: `${occurrence.pointer}${error.instancePath}` }))
    const message = schemaErrorMessage(errors, occurrence.part)
    const missing = occurrence.keyword === 'required' ? `/${(value as string[])[0]}` : ''
    const field = `${occurrence.pointer}${missing}`.split('/').filter(Boolean).join('.') || undefined
    const said = checkSaid(t, message, `${occurrence.where} ${occurrence.keyword}`, field)
    keywords.add(occurrence.keyword)
    // A pattern or a format a person fills in is said for what it means, not as "the expected form".
    if ((occurrence.keyword === 'pattern' || occurrence.keyword === 'format') && occurrence.part === 'body') {
      for (const lang of LANGS) t.not(said[lang][0]?.text, words[lang](occurrence.keyword === 'pattern' ? 'api.pattern' : 'api.format'), `${occurrence.keyword} ${JSON.stringify(value)} (${lang}) is said for what it means`)
    }
  }
  t.ok(['type', 'required', 'minLength', 'maxLength', 'pattern', 'format', 'enum', 'minimum', 'maximum', 'minItems', 'maxItems', 'uniqueItems', 'anyOf'].every((keyword) => keywords.has(keyword)), `the walk reached every keyword the schemas use: ${[...keywords].join(', ')}`)

  // The service's own check after Ajv's (src/http/validation.ts), in the same shape.
  const unstorable = /keyword: 'unicode'[\s\S]*?message: '([^']+)'/.exec(readFileSync(join(root, 'src/http/validation.ts'), 'utf8'))
  t.ok(unstorable, 'the unstorable-text check is found')
  checkSaid(t, schemaErrorMessage([{ keyword: 'unicode', instancePath: '/text/body', params: {}, message: unstorable![1] }], 'body'), 'unstorable text', 'text.body')
})

t.test("Ajv's several problems of one field are said as one, its own field each", async (t) => {
  const [currency] = checkSaid(t, 'body/fields/0/currency must match pattern "^[A-Z]{3}$", body/fields/0/currency must be null, body/fields/0/currency must match a schema in anyOf', 'a union').en
  t.same(currency, { field: 'fields.0.currency', text: 'Use a three-letter currency code such as BRL.', known: true })
  const [timezone] = checkSaid(t, 'body/timezone must be string, body/timezone must be null, body/timezone must match a schema in anyOf', 'a union of types').en
  t.equal(timezone?.text, 'Use text.')
  t.same(
    web.sayMessage('body/text/body must NOT have more than 4096 characters', words.pt),
    [{ field: 'text.body', text: 'Use no máximo 4.096 caracteres.', known: true }],
    'numbers are written in the language',
  )
  t.same(web.sayMessage('callbackUrl must use https', words.en), [{ field: 'callbackUrl', text: 'Use an https:// address.', known: true }], 'a sentence about a field is placed on it')
  t.same(web.sayMessage('variable "plan" already exists in this workspace', words.en).map((said) => said.field), ['name'], 'a name already taken is placed on the name')
  t.match(
    LANGS.flatMap((lang) => [1, 2].map((count) => web.sayMessage(`this flow publishes only when its tests pass, and ${count} fail against the draft: "a", "b"`, words[lang])[0]?.text)),
    [/and 1 fails against the draft\. Fix it,/, /and 2 fail against the draft\. Fix them,/, /e 1 falha no rascunho\. Corrija-o,/, /e 2 falham no rascunho\. Corrija-os,/],
    'a publish refused by failing tests counts them in the language',
  )
  const unknown = web.sayMessage('the moon is made of cheese', words.pt)
  t.same(unknown, [{ field: undefined, text: 'Isto não foi aceito. O serviço disse: “the moon is made of cheese”', known: false }], 'words no rule knows: a sentence in the language, then the service’s words')
})

// ---------------------------------------------------------------------------------------------
// Reading messages out of the source

interface Literal {
  parts: string[]
  expressions: string[]
}

/** The index after the string or template literal that starts at `i`. */
function skipLiteral(code: string, i: number): number {
  return readLiteral(code, i).end
}

function readLiteral(code: string, start: number): { literal: Literal; end: number } {
  const quote = code[start]!
  const parts: string[] = []
  const expressions: string[] = []
  let text = ''
  let i = start + 1
  while (i < code.length) {
    const c = code[i]!
    if (c === '\\') {
      const next = code[i + 1]!
      text += next === 'n' ? '\n' : next
      i += 2
    } else if (c === quote) {
      parts.push(text)
      return { literal: { parts, expressions }, end: i + 1 }
    } else if (quote === '`' && c === '$' && code[i + 1] === '{') {
      parts.push(text)
      text = ''
      const end = skipCode(code, i + 2, '}')
      expressions.push(code.slice(i + 2, end).trim())
      i = end + 1
    } else {
      text += c
      i += 1
    }
  }
  throw new Error(`unterminated literal at ${start}`)
}

/** The index of the `close` that ends the code starting at `i`, past nested brackets and literals. */
function skipCode(code: string, i: number, close: string): number {
  const pairs: Record<string, string> = { '(': ')', '[': ']', '{': '}' }
  const stack = [close]
  while (i < code.length) {
    const c = code[i]!
    if (c === "'" || c === '"' || c === '`') {
      i = skipLiteral(code, i)
      continue
    }
    if (pairs[c]) stack.push(pairs[c]!)
    else if (c === stack.at(-1)) {
      stack.pop()
      if (stack.length === 0) return i
    }
    i += 1
  }
  throw new Error('unbalanced code')
}

/** The literals of an argument: itself when it is one, both branches of a ternary of literals; none for any other expression. */
function messageLiterals(argument: string): Literal[] | undefined {
  const code = argument.trim().replace(/,$/, '').trim()
  const whole = (text: string): Literal | undefined => {
    if (!/^['"`]/.test(text)) return undefined
    const { literal, end } = readLiteral(text, 0)
    return end === text.length ? literal : undefined
  }
  const single = whole(code)
  if (single) return [single]
  const question = code.indexOf('?')
  const branches = question > 0 ? code.slice(question + 1) : ''
  if (/^\s*[`'"]/.test(branches)) {
    const first = readLiteral(branches.trimStart(), 0)
    const rest = branches.trimStart().slice(first.end).trim()
    const second = rest.startsWith(':') ? whole(rest.slice(1).trim()) : undefined
    if (second) return [first.literal, second]
  }
  return undefined
}

/** The arguments of every call of `callee` in `code` (the text between its parentheses). */
function callArguments(code: string, callee: RegExp): { text: string; line: number }[] {
  const found: { text: string; line: number }[] = []
  for (const match of code.matchAll(new RegExp(`${callee.source}\\(`, 'g'))) {
    const open = match.index + match[0].length
    const close = skipCode(code, open, ')')
    found.push({ text: code.slice(open, close), line: code.slice(0, open).split('\n').length })
  }
  return found
}

/** Splits a call's arguments at its top-level commas. */
function topLevelArguments(text: string): string[] {
  const parts: string[] = []
  let start = 0
  let i = 0
  const pairs: Record<string, string> = { '(': ')', '[': ']', '{': '}' }
  const stack: string[] = []
  while (i < text.length) {
    const c = text[i]!
    if (c === "'" || c === '"' || c === '`') {
      i = skipLiteral(text, i)
      continue
    }
    if (pairs[c]) stack.push(pairs[c]!)
    else if (c === stack.at(-1)) stack.pop()
    else if (c === ',' && stack.length === 0) {
      parts.push(text.slice(start, i))
      start = i + 1
    }
    i += 1
  }
  parts.push(text.slice(start))
  return parts.map((part) => part.trim()).filter((part) => part !== '')
}

const source = (file: string) => readFileSync(join(root, file), 'utf8')
const sourceFiles = (folder: string): string[] =>
  readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => `${folder}/${file.split('\\').join('/')}`)

/** Every card field type, each with a value it refuses: what `valueMisfit` says of each. */
const misfits = FIELD_TYPES.map((type: FieldType) => {
  const field: Field = { id: '0b5e3f1c-8a2d-4c6e-9f1a-2b3c4d5e6f70', name: 'Amount', type, required: false, isFeatured: true, order: 0, options: type === 'select' ? ['Gold', 'Silver'] : null, currency: type === 'currency' ? 'BRL' : null }
  return valueMisfit(field, type === 'text' ? '' : type === 'boolean' ? 'yes' : type === 'select' ? 'Bronze' : 'x')!
})

/** Samples for the `${…}` of a template, by expression; any other expression gets `x1`. */
const SAMPLES: Record<string, string[]> = {
  node: ['node "ask" (question)'],
  limit: ['20'],
  'LIMITS.buttons': ['3'],
  'LIMITS.sections': ['10'],
  'LIMITS.rows': ['10'],
  'buttons.length': ['4'],
  'sections.length': ['11'],
  rows: ['11'],
  MAX_BODY_DEPTH: ['64'],
  version: ['3'],
  'flow.publishedVersion': ['2'],
  'article(type)': ['a number'],
  'article(variable.type)': ['a number'],
  what: ['stages'],
  misfit: misfits,
  'valueMisfit(field, value)': misfits,
  'alternatives(variants.map(kindName))': ['a string or null'],
  'commaList(tags)': ['button, list'],
  'commaList(Object.keys(types))': ['message, question'],
  'commaList(handles)': ['yes, no'],
  'JSON.stringify(schema.const)': ['"text"'],
  'schema.pattern': ['^[a-z]+$'],
  'schema.format': ['date-time'],
  'schema.minLength': ['2'],
  'schema.maxLength': ['20'],
  'schema.minItems': ['2'],
  'schema.maxItems': ['3'],
  'items(error.value).length': ['4'],
  repeated: ['"a"'],
  'schema.minimum': ['0'],
  'schema.maximum': ['5'],
  'error instanceof Error ? error.message : String(error)': ['Invalid regular expression: /(/: Unterminated group'],
  'rule.operator': ['greaterThan'],
  names: ['"Done" (0b5e3f1c-8a2d-4c6e-9f1a-2b3c4d5e6f70)'],
  'before.type': ['text'],
  'f.type': ['number'],
  zone: ['Mars/Olympus'],
  'blocked.join(\', \')': ['10.0.0.1, 192.168.0.1'],
  host: ['10.0.0.1'],
}

/** Every message a literal can make, its `${…}` filled with samples. */
function samplesOf(literal: Literal, extra: Record<string, string[]> = {}): string[] {
  let texts = [literal.parts[0]!]
  literal.expressions.forEach((expression, i) => {
    const values = extra[expression] ?? SAMPLES[expression] ?? ['x1']
    texts = texts.flatMap((text) => values.map((value) => `${text}${value}${literal.parts[i + 1]}`))
  })
  return texts
}

/** The literals `pattern` (a call or statement start) takes in `file`: `return '…'`, `problems.push(\`…\`)`. */
const literalsAfter = (file: string, pattern: RegExp): Literal[] =>
  [...source(file).matchAll(new RegExp(`(?:${pattern.source})\\s*(?=['"\`])`, 'g'))].map((match) => readLiteral(source(file), match.index + match[0].length).literal)

/** The messages the function starting with `start` in `file` returns as literals. */
function returnedLiterals(file: string, start: string): string[] {
  const code = source(file)
  const at = code.indexOf(start)
  const body = code.slice(at, code.indexOf('\n}\n', at))
  return [...body.matchAll(/return ([`'"][^\n]+)/g)].flatMap((match) => messageLiterals(match[1]!)?.flatMap((literal) => samplesOf(literal)) ?? [])
}

// ---------------------------------------------------------------------------------------------
// (b) The messages of the 400s and 409s a person can cause

// Raised only by an operator's command or by the service itself, never by a person in the
// dashboard or the editor: left out, each with why.
const OPERATOR_ONLY: { file: string; starts: string; why: string }[] = [
  { file: 'src/engine/partitions.ts', starts: '', why: 'repartitioning is a CLI command' },
  { file: 'src/http/auth.ts', starts: 'headers/', why: 'the dashboard sends the id of a workspace it listed' },
  { file: 'src/http/routes/session-stream.ts', starts: 'Last-Event-ID', why: 'the stream readers send back ids the stream gave them' },
  { file: 'src/http/routes/dashboard-session.ts', starts: 'body must have exactly one', why: 'the sign-in page sends one of them' },
  { file: '', starts: 'session x1 already exists', why: 'ids the service makes itself' },
  { file: '', starts: 'card x1 already exists', why: 'ids the service makes itself' },
  { file: '', starts: 'pipeline x1 already exists', why: 'ids the service makes itself' },
  { file: '', starts: 'workspace x1 already exists', why: 'ids the service makes itself' },
  { file: '', starts: 'API key x1 already exists', why: 'ids the service makes itself' },
  { file: '', starts: 'sector x1 already exists', why: 'ids the service makes itself' },
  { file: '', starts: 'flow x1 already exists', why: 'ids the service makes itself' },
  { file: '', starts: 'OAuth client x1 already exists', why: 'ids the service makes itself' },
  { file: '', starts: 'organization x1 already exists', why: 'ids the service makes itself' },
  { file: 'src/domain/variables.ts', starts: 'variable x1 already exists', why: 'ids the service makes itself' },
]

// Messages a throw composes elsewhere: where their words come from.
const COMPOSED: Record<string, () => string[]> = {
  // src/commands/api-keys.ts: a callback URL's refusal, worded in src/webhooks/callback-url.ts.
  problem: () => literalsAfter('src/webhooks/callback-url.ts', /return/).flatMap((literal) => samplesOf(literal)),
  // src/http/routes/sessions.ts: the variables a session starts with, worded in src/domain/variables.ts.
  "variables.problems.join('; ')": () => {
    const each = literalsAfter('src/domain/variables.ts', /problems\.push\(/).flatMap((literal) => samplesOf(literal, { name: ['plan'] }))
    return [...each, each.join('; ')]
  },
  // src/http/routes/http-requests.ts: why "Try it" cannot send a node's request, worded by `buildRequest`.
  built: () => returnedLiterals('src/domain/nodes/http-request.ts', 'export function buildRequest'),
}
// Why a flow cannot run (src/engine/flow-versions.ts), for the session routes' 409s.
const cannotRun = literalsAfter('src/engine/flow-versions.ts', /return/).flatMap((literal) => samplesOf(literal))

t.test('every 400 and 409 message a person can cause is said in their words', async (t) => {
  const files = sourceFiles('src').filter((file) => !file.startsWith('src/cli/'))
  let count = 0
  for (const file of files) {
    const code = source(file)
    for (const { text, line } of callArguments(code, /new (?:BadRequestError|ConflictError)/)) {
      const where = `${file}:${line}`
      const literals = messageLiterals(text)
      const composed = COMPOSED[text.trim()]
      t.ok(literals || composed, `${where}: the message is a literal, or COMPOSED says where its words come from (${text.trim()})`)
      const messages = literals ? literals.flatMap((literal) => samplesOf(literal, { published: cannotRun, runnable: cannotRun })) : (composed?.() ?? [])
      for (const message of messages) {
        if (OPERATOR_ONLY.some((excluded) => (excluded.file === '' || excluded.file === file) && message.startsWith(excluded.starts))) continue
        checkSaid(t, message, where)
        count += 1
      }
    }
  }
  t.ok(count > 50, `the messages were found (${count})`)
})

// ---------------------------------------------------------------------------------------------
// (c) The flow validator's messages (shown in the editor and for a definition the dashboard sends)

// Messages a report composes elsewhere: where their words come from.
const COMPOSED_FLOW: Record<string, () => string[]> = {
  // validate-flow.ts: a schema error, worded by `describe` (a literal or a choice of two per
  // case; its default passes on TypeBox's own words for checks the format does not use).
  'describe(error)': () => {
    const code = source('src/domain/validate-flow.ts')
    const start = code.indexOf('const describe = ')
    const body = code.slice(start, code.indexOf('\n}\n', start))
    return [...body.matchAll(/return ([^\n]+)/g)].flatMap((match) => messageLiterals(match[1]!)?.flatMap((literal) => samplesOf(literal)) ?? [])
  },
  // nodes/kanban-move.ts: what a card would refuse of a value (src/domain/card.ts), or a field the pipeline lacks.
  problem: () => [...misfits, ...literalsAfter('src/domain/nodes/kanban-move.ts', /return|const problem = [^\n]*? : /).flatMap((literal) => samplesOf(literal))],
  // nodes/http-request.ts: a response path the parser refuses, worded in src/domain/json-path.ts.
  parsed: () => literalsAfter('src/domain/json-path.ts', /return/).flatMap((literal) => samplesOf(literal)),
  // validate-flow.ts: a node type's own checks, reported through the context (read below, from nodes/).
  message: () => [],
}

t.test("every message of the flow validator is known, in both languages", async (t) => {
  // node-type.ts declares the context's `report`; the node types call it.
  const files = ['src/domain/validate-flow.ts', ...sourceFiles('src/domain/nodes').filter((file) => !file.endsWith('/node-type.ts'))]
  const messages = new Set<string>()
  for (const file of files) {
    for (const { text, line } of callArguments(source(file), /(?<![\w.])(?:context\.)?report/)) {
      const args = topLevelArguments(text)
      if (args.length !== 2) continue
      const literals = messageLiterals(args[1]!)
      const composed = COMPOSED_FLOW[args[1]!]
      t.ok(literals || composed, `${file}:${line}: the message is a literal, or COMPOSED_FLOW says where its words come from (${args[1]})`)
      for (const message of literals ? literals.flatMap((literal) => samplesOf(literal)) : (composed?.() ?? [])) messages.add(message)
    }
  }
  t.ok(messages.size > 40, `the messages were found (${messages.size})`)
  for (const message of messages) {
    // The validator writes for people already, so some English words stay as they are ("longer
    // than 20 characters"); what matters is that a rule knows them, in both languages.
    const said = { en: web.sayFlowWhat(message, words.en), pt: web.sayFlowWhat(message, words.pt) }
    t.ok(LANGS.every((lang) => web.knowsFlowWords(message, words[lang])), `"${message}" → "${said.en}" / "${said.pt}"`)
    t.not(said.pt, said.en, `"${message}" is said in Portuguese`)
  }
})
