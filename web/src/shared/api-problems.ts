import type { ApiProblemKey } from './api-problems-strings'
import type { Translate } from './i18n'

// The service refuses a request with `{statusCode, message, error}`. Its message words request
// validation as `body/fields/0/currency must match pattern "^[A-Z]{3}$"` (several joined by ", "),
// the domain's checks as `values/<field id>: field "Amount" is required` or as a sentence about a
// field (`callbackUrl must use https`), several joined by "; ", and a flow's problems as
// `nodes[1].data.text: must not be empty`. Here a message becomes its problems, each with the field
// it is about and a sentence in the person's language: the one place where the service's words are
// known, for the dashboard and the editor alike.

type Words = Translate<ApiProblemKey>

/** One problem of a refusal. */
export interface ApiProblem {
  /** The field it is about, dotted (`fields.0.currency`, `values.<field id>`, `name`); undefined when it names none. */
  field?: string
  /** The path as the service wrote it (`nodes[1].data.text`, `fields/0/currency`), for a flow's problems. */
  path?: string
  /** The part of the request it is about, when the request's schema refused it. */
  part?: 'body' | 'querystring' | 'params' | 'headers'
  /** The service's words with the path taken off. */
  words: string
}

/** A problem in the person's words. `known` is false when no rule knew the service's words (the text then quotes them). */
export interface SaidProblem {
  field?: string
  text: string
  known: boolean
}

// ---------------------------------------------------------------------------------------------
// Splitting a message into problems

// Request validation joins its problems with ", " and each starts with the request part; the
// domain's "; " joins problems that each start with a path and a colon. Other commas and
// semicolons are inside a problem's words ("one of: a, b", "…; choose another name").
const SCHEMA_SEPARATOR = /, (?=(?:body|querystring|params|headers)[/ ])/
const PATH = String.raw`[A-Za-z_$][\w$-]*(?:[./][\w$-]+|\[\d+\]|\["(?:[^"\\]|\\.)*"\])*`
const DOMAIN_SEPARATOR = new RegExp(`; (?=${PATH}: )`)
const SCHEMA_PROBLEM = /^(body|querystring|params|headers)((?:\/\S*?)?):? (.*)$/s
const DOMAIN_PROBLEM = new RegExp(`^(${PATH}): (.*)$`, 's')
// A sentence about a field: `callbackUrl must use https`, `defaultValue must be a number, …`.
const FIELD_SENTENCE = /^([a-z][A-Za-z]*) (?:must|is not|host) /
const REQUIRED_PROPERTY = /^must have required property '(.+)'$/

/** `/fields/0/currency`, `stages/0/name`, `nodes[1].data["a b"]` → `fields.0.currency`, `stages.0.name`, `nodes.1.data.a b`. */
function dotted(path: string): string | undefined {
  const segments: string[] = []
  const part = /\/?([^/.[\]]+)|\.([^/.[\]]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/gy
  for (let match = part.exec(path); match; match = part.exec(path)) {
    const raw = match[1] ?? match[2] ?? match[3]
    segments.push(raw !== undefined ? raw.replace(/~1/g, '/').replace(/~0/g, '~') : (JSON.parse(match[4]!) as string))
  }
  return segments.length > 0 ? segments.join('.') : undefined
}

function problemOf(text: string): ApiProblem {
  const schema = SCHEMA_PROBLEM.exec(text)
  if (schema) {
    const [, part, pointer = '', words = ''] = schema
    const required = REQUIRED_PROPERTY.exec(words)
    const path = required ? `${pointer}/${required[1]}` : pointer
    return { part: part as ApiProblem['part'], field: dotted(path), path: path || undefined, words }
  }
  const domain = DOMAIN_PROBLEM.exec(text)
  if (domain) return { field: dotted(domain[1]!), path: domain[1], words: domain[2]! }
  const sentence = FIELD_SENTENCE.exec(text)
  if (sentence) return { field: sentence[1], path: sentence[1], words: text }
  return { words: text }
}

/** The problems of an error message, in the order the service gave them. */
export function splitProblems(message: string): ApiProblem[] {
  return message
    .split(SCHEMA_SEPARATOR)
    .flatMap((chunk) => chunk.split(DOMAIN_SEPARATOR))
    .map((chunk) => problemOf(chunk.trim()))
}

// ---------------------------------------------------------------------------------------------
// Rules: the service's words → the person's

type Params = Record<string, string | number>
interface Rule {
  pattern: RegExp
  /** The sentence; a function when it depends on what matched. */
  say: ApiProblemKey | ((match: RegExpExecArray, t: Words, problem: ApiProblem) => string)
  params?: (match: RegExpExecArray, t: Words, problem: ApiProblem) => Params
  /** The field the problem is about when its words name it only in passing (a name already taken). */
  field?: string
}

/** A number as the person's language writes it (4,096 or 4.096). */
const number = (t: Words, value: string | undefined): string => {
  const n = Number(value)
  if (!Number.isFinite(n)) return String(value)
  try {
    return new Intl.NumberFormat(t('api.numberLocale')).format(n)
  } catch {
    // A translator without the locale's entry (a test's) writes the number plainly.
    return String(n)
  }
}
const limit = (match: RegExpExecArray, t: Words): Params => ({ limit: number(t, match[1]) })
/** The last segment of the problem's field: the variable of `variables.plan`. */
const leaf = (problem: ApiProblem) => problem.field?.split('.').at(-1) ?? ''
const orList = (items: string[], t: Words) => (items.length > 1 ? `${items.slice(0, -1).join(', ')} ${t('api.or')} ${items.at(-1)}` : (items[0] ?? ''))

// The request schemas' patterns (openapi.json), each said for what it means; the test of this
// module fails on a pattern a person fills in that is missing here.
const PATTERNS: Record<string, ApiProblemKey> = {
  '^[A-Z]{3}$': 'api.pattern.currency',
  '^#[0-9A-Fa-f]{6}$': 'api.pattern.color',
  '^[A-Za-z_][A-Za-z0-9_]*$': 'api.pattern.variableName',
  '^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$': 'api.pattern.mimeType',
  '^https?://': 'api.pattern.httpUrl',
  '^[^,\\s](?:[^,]*[^,\\s])?$': 'api.pattern.tag',
  '^[A-Za-z0-9_]{1,64}$': 'api.pattern.secretName',
  '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$': 'api.pattern.eventName',
  "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$": 'api.pattern.headerName',
  [String.raw`^[\t\x20-\x7e\u0080-\uffff]*$`]: 'api.pattern.headerValue',
}
const FORMATS: Record<string, ApiProblemKey> = {
  uuid: 'api.format.uuid',
  uri: 'api.format.uri',
  email: 'api.format.email',
  date: 'api.format.date',
  'date-time': 'api.format.dateTime',
}
const KINDS: Record<string, ApiProblemKey> = {
  string: 'api.kind.string',
  number: 'api.kind.number',
  integer: 'api.kind.integer',
  boolean: 'api.kind.boolean',
  object: 'api.kind.object',
  array: 'api.kind.array',
}
/** What a card field takes (src/domain/card.ts), said as what to do. */
function cardValue(takes: string, t: Words): string | undefined {
  if (takes === 'a number') return t('api.takes.number')
  if (takes === 'true or false') return t('api.takes.boolean')
  if (takes === 'a date as YYYY-MM-DD') return t('api.format.date')
  if (takes === 'an email address') return t('api.format.email')
  if (takes.startsWith('a phone number')) return t('api.takes.phone')
  const text = /^a non-empty string of at most (\d+) characters$/.exec(takes)
  if (text) return t('api.takes.text', { limit: number(t, text[1]) })
  const option = /^one of: (.*)$/s.exec(takes)
  if (option) return t('api.oneOf', { values: option[1]! })
  return undefined
}
/** A JSON type's name in Ajv's words (`string`, `integer`) or the domain's (`a number`, `an object`) → the person's. */
const kindName = (type: string, t: Words): string | undefined => {
  const key = KINDS[type.replace(/^an? /, '')]
  return key && t(key)
}

const RULES: Rule[] = [
  // Request validation (Ajv's words, src/http/validation.ts).
  { pattern: REQUIRED_PROPERTY, say: 'api.required' },
  { pattern: /^must NOT have fewer than (\d+) characters$/, say: (m, t) => (m[1] === '1' ? t('api.required') : t('api.tooShort', limit(m, t))) },
  { pattern: /^must NOT have more than (\d+) characters$/, say: 'api.tooLong', params: limit },
  { pattern: /^must NOT have fewer than (\d+) items$/, say: (m, t) => (m[1] === '1' ? t('api.atLeastOne') : t('api.tooFewItems', limit(m, t))) },
  { pattern: /^must NOT have more than (\d+) items$/, say: 'api.tooManyItems', params: limit },
  { pattern: /^must NOT have duplicate items/, say: 'api.repeated' },
  { pattern: /^must NOT have additional properties$/, say: 'api.notTaken' },
  { pattern: /^must match pattern "(.*)"$/s, say: (m, t) => t(PATTERNS[m[1]!] ?? 'api.pattern') },
  { pattern: /^must match format "(.*)"$/, say: (m, t) => t(FORMATS[m[1]!] ?? 'api.format') },
  { pattern: /^must be equal to one of the allowed values(?:: (.*))?$/s, say: 'api.oneOf', params: (m) => ({ values: m[1] ?? '' }) },
  { pattern: /^must be null$/, say: 'api.leaveEmpty' },
  {
    pattern: /^must be ((?:string|number|integer|boolean|object|array|null)(?:,(?:string|number|integer|boolean|object|array|null))*)$/,
    say: (m, t) => t('api.kinds', { kinds: orList(m[1]!.split(',').flatMap((type) => kindName(type, t) ?? []), t) }),
  },
  { pattern: /^must be >= (\S+)$/, say: 'api.min', params: limit },
  { pattern: /^must be <= (\S+)$/, say: 'api.max', params: limit },
  { pattern: /^must be > (\S+)$/, say: 'api.above', params: limit },
  { pattern: /^must be < (\S+)$/, say: 'api.below', params: limit },
  { pattern: /^must match a schema in anyOf$/, say: 'api.noMatch' },
  { pattern: /^must not contain U\+0000 or a lone surrogate$/, say: 'api.unstorable' },
  { pattern: /^must not nest deeper than (\d+) levels$/, say: 'api.tooDeep', params: limit },
  { pattern: /^is required when (?:interactive\.)?type is \S+$/, say: 'api.required' },

  // URLs the service calls: callback URLs, AI connections' base URLs (src/webhooks/callback-url.ts).
  { pattern: /^\w+ is not a valid URL$/, say: 'api.callback.invalid' },
  { pattern: /^\w+ must use https$/, say: 'api.callback.https' },
  { pattern: /^\w+ must not carry a user name or password$/, say: 'api.callback.credentials' },
  { pattern: /^\w+ must not point to localhost$/, say: 'api.callback.localhost' },
  { pattern: /^\w+ must not point to a .*non-public address \((.*)\)$/, say: 'api.callback.private', params: (m) => ({ host: m[1]! }) },
  { pattern: /^\w+ host (\S+) resolves to a .*non-public address/, say: 'api.callback.resolvesPrivate', params: (m) => ({ host: m[1]! }) },
  { pattern: /^baseUrl must not carry a query or a fragment/, say: 'api.aiBaseUrlQuery' },

  // Workspaces, flows and sessions.
  { pattern: /^(.*) is not an IANA time zone$/, say: 'api.timezone' },
  { pattern: /^flow \S+ has no published version (\d+)/, say: 'api.noVersion', params: (m) => ({ version: m[1]! }) },
  { pattern: /^Session is not active$/, say: 'api.sessionEnded' },
  { pattern: /^a system variable; the engine sets it$/, say: 'api.systemVariable', params: (_m, _t, p) => ({ name: leaf(p) }) },
  { pattern: /^no variable "(.*)" in this workspace$/, say: 'api.noVariable', params: (m) => ({ name: m[1]! }) },
  { pattern: /^must be (a string|a number|a boolean|an object)$/, say: (m, t) => t('api.kinds', { kinds: kindName(m[1]!, t) ?? m[1]! }) },
  { pattern: /^(?:the draft of )?flow \S+ cannot run: flow \S+ has no published version/, say: 'api.notPublished' },
  { pattern: /^(?:the draft of )?flow \S+ cannot run: node (\S+) has /, say: 'api.flowCannotRun', params: (m) => ({ node: m[1]! }) },
  { pattern: /^(?:the draft of )?flow \S+ cannot run: flow \S+ not found in this workspace$/, say: 'api.subflowGone' },
  { pattern: /^(?:the draft of )?flow \S+ cannot run: flow \S+ had no published version when the session started$/, say: 'api.subflowUnpublished' },

  // Variables (src/domain/variables.ts).
  { pattern: /^defaultValue must be (a string|a number|a boolean|an object), the variable's type$/, say: 'api.defaultType', params: (m, t) => ({ kind: kindName(m[1]!, t) ?? m[1]! }) },
  { pattern: /^"(.*)" is a system variable; choose another name$/, say: 'api.variableSystemName', params: (m) => ({ name: m[1]! }), field: 'name' },
  { pattern: /^variable "(.*)" already exists in this workspace$/, say: 'api.variableExists', params: (m) => ({ name: m[1]! }), field: 'name' },
  { pattern: /^variable "(.*)" cannot be renamed/, say: 'api.variableNameKept', field: 'name' },
  { pattern: /^the type of variable "(.*)" cannot change/, say: 'api.variableTypeKept', field: 'type' },

  // Sectors, kanban pipelines and cards (src/commands/sector-names.ts, src/domain/pipeline.ts, card.ts).
  { pattern: /^a sector named "(.*)" already exists in this workspace$/, say: 'api.sectorExists', params: (m) => ({ name: m[1]! }), field: 'name' },
  { pattern: /^the sector name "(.*)" is being claimed concurrently/, say: 'api.sectorClaimed', params: (m) => ({ name: m[1]! }), field: 'name' },
  { pattern: /^field "(.*)" is required and cannot be cleared$/, say: 'api.requiredKept', params: (m) => ({ name: m[1]! }) },
  { pattern: /^field "(.*)" is required$/, say: 'api.requiredNamed', params: (m) => ({ name: m[1]! }) },
  { pattern: /^field ".*" \(\w+\) takes (.*)$/s, say: (m, t, p) => cardValue(m[1]!, t) ?? unknown(p, t) },
  { pattern: /^the pipeline has no field with this id$/, say: 'api.noLongerThere' },
  { pattern: /^\S+ is not a stage of pipeline \S+$/, say: 'api.notAStage' },
  { pattern: /^\S+ is listed twice$/, say: 'api.listedTwice' },
  { pattern: /^\S+ is not one of this pipeline's (?:stages|fields)$/, say: 'api.noLongerThere' },
  { pattern: /^field ".*" is a \w+ field and cannot become \w+/, say: 'api.fieldTypeKept' },
  { pattern: /^a select field needs its options$/, say: 'api.optionsNeeded' },
  { pattern: /^only select fields have options$/, say: 'api.optionsOnlySelect' },
  { pattern: /^a currency field needs a currency code$/, say: 'api.currencyNeeded' },
  { pattern: /^only currency fields have a currency$/, say: 'api.currencyOnly' },
  {
    pattern: /^cannot remove stage (.*): it still holds cards/s,
    say: 'api.stageHoldsCards',
    params: (m, t) => ({ names: orList([...m[1]!.matchAll(/"((?:[^"\\]|\\.)*)" \(/g)].map((name) => name[1]!), t) }),
  },
  { pattern: / is being changed concurrently(?:; try again)?$/, say: 'api.concurrent' },

  // Secrets, outside events and calls (src/commands/secrets.ts, src/domain/secret.ts, the sessions' events, "Try it" of an HTTP request).
  { pattern: /^a secret's name is 1 to 64 letters, digits or _$/, say: 'api.pattern.secretName', field: 'name' },
  { pattern: /^value must not be empty$/, say: 'api.required' },
  { pattern: /^value must be at most (\S+) bytes of UTF-8/, say: 'api.tooManyBytes', params: limit },
  { pattern: /^this workspace holds (\S+) secrets, the most it may/, say: 'api.secretsFull', params: limit },
  // AI connections (src/commands/ai-connections.ts, src/domain/ai-connection.ts).
  { pattern: /^this workspace holds (\S+) AI connections, the most it may/, say: 'api.aiConnectionsFull', params: limit },
  { pattern: /^this workspace has an AI connection named "(.*)" already$/, say: 'api.aiConnectionExists', params: (m) => ({ name: m[1]! }), field: 'name' },
  { pattern: /^this workspace has no secret named "(.*)"; PUT /, say: 'api.aiNoSecret', params: (m) => ({ name: m[1]! }) },
  { pattern: /^(\S+) is written by the service \(the key goes in apiKeySecret\)$/, say: 'api.aiReservedHeader', params: (m) => ({ name: m[1]! }) },
  { pattern: /^(\S+) appears twice$/, say: 'api.aiHeaderTwice', params: (m) => ({ name: m[1]! }) },
  { pattern: /^(?:name|model) must not be blank$/, say: 'api.required' },
  { pattern: /^the session holds (\S+) events no node has waited for yet/, say: 'api.eventsFull', params: limit },
  { pattern: /^is \S+ bytes of JSON; an event's data holds at most (\S+)$/, say: 'api.eventDataTooLarge', params: limit },
  { pattern: /^only a preview session's timer fires on demand/, say: 'api.timerLiveSession' },
  { pattern: /^the session has no pending timer$/, say: 'api.noPendingTimer' },
  { pattern: /^is not the data of an httpRequest node$/, say: 'api.notHttpRequest' },
  { pattern: /^is not the data of an AI step$/, say: 'api.notAiStep' },
  // Conversation tests (src/domain/conversation-test.ts, src/engine/conversation-tests.ts).
  { pattern: /^this flow has (\S+) tests, the most it may/, say: 'api.testsFull', params: limit },
  { pattern: /^this flow has a test named "(.*)" already$/s, say: 'api.testExists', params: (m) => ({ name: m[1]! }), field: 'name' },
  { pattern: /^no test (\S+) in this flow$/, say: 'api.noTest' },
  { pattern: /^flow \S+ has published versions 1 to (\S+)$/, say: 'api.publishedVersion', params: (m, t) => ({ max: number(t, m[1]) }) },
  { pattern: /^the flow cannot run: /, say: 'api.testFlowCannotRun' },
  { pattern: /^this flow publishes only when its tests pass, and (\S+) fail/, say: 'api.testsFailPublish', params: (m) => ({ count: Number(m[1]) }) },
  // Replays (src/commands/replays.ts, src/domain/replay.ts).
  { pattern: /^this organization has (\S+) replays not finished, the most it may/, say: 'api.replaysFull', params: limit },
  { pattern: /^is not after sessions\/from$/, say: 'api.replayRange' },
  { pattern: /^replay \S+ exists already$/, say: 'api.replayExists' },
  // Releases (src/domain/flow.ts).
  { pattern: /^version (\S+) is live; roll back/, say: 'api.liveNotHalted', params: (m, t) => ({ version: number(t, m[1]) }) },
  { pattern: /^version (\S+) is live: it takes what/, say: 'api.liveNoShare', params: (m, t) => ({ version: number(t, m[1]) }) },
  { pattern: /^no AI connection (\S+) in this workspace$/, say: 'api.noAiConnection' },
  { pattern: /^the URL "(.*)" is not a URL$/s, say: 'api.call.notUrl', params: (m) => ({ url: m[1]! }) },
  { pattern: /^the URL "(.*)" is not https$/s, say: 'api.call.notHttps', params: (m) => ({ url: m[1]! }) },
  { pattern: /^the header (.*) holds a line break once filled in$/, say: 'api.call.headerBreak', params: (m) => ({ name: m[1]! }) },
  { pattern: /^the body is longer than (\S+) bytes once filled in$/, say: 'api.call.bodyTooLong', params: limit },

  // Keys and webhook deliveries.
  { pattern: /^An API key cannot revoke itself/, say: 'api.keyRevokesItself' },
  { pattern: /^delivery \S+ has no callback URL to send to$/, say: 'api.deliveryNoCallback' },
  { pattern: /^delivery \S+ is \w+: it is still queued/, say: 'api.deliveryQueued' },

  // What any call may meet.
  { pattern: /^Invalid API key or sign-in link$/, say: 'api.badKey' },
  { pattern: /^Invalid or expired (?:one-time|refresh|access) token$|^Invalid client credentials$|^Not signed in$/, say: 'api.signInAgain' },
  { pattern: /(?:^| )not found$|^\S+ \S+ has no version \d+$/i, say: 'api.notFound' },
  { pattern: /^Only an organization-admin (?:API )?key can /, say: 'api.adminOnly' },
  { pattern: /^Rate limit exceeded/, say: 'api.tooMany' },
  { pattern: /^Internal Server Error$|^HTTP 5\d\d$/, say: 'api.serviceFailed' },
  { pattern: /^The database is unavailable/, say: 'api.unavailable' },
]

/** Words no rule knows: a sentence that says so, with the service's words after it. */
const unknown = (problem: ApiProblem, t: Words): string =>
  t('api.unknown', { detail: problem.path && !problem.words.startsWith(problem.path) ? `${problem.path}: ${problem.words}` : problem.words })

/** One problem in the person's words. */
export function sayProblem(problem: ApiProblem, t: Words): SaidProblem {
  for (const rule of RULES) {
    const match = rule.pattern.exec(problem.words)
    if (!match) continue
    const text = typeof rule.say === 'function' ? rule.say(match, t, problem) : t(rule.say, rule.params?.(match, t, problem))
    return { field: problem.field ?? rule.field, text, known: text !== unknown(problem, t) }
  }
  return { field: problem.field, text: unknown(problem, t), known: false }
}

// Ajv explains a value that fits no branch of a union by each branch (`must be string`, `must be
// null`) and then `must match a schema in anyOf`; a person needs the one that says most.
const TYPE_ONLY = /^must be (?:string|number|integer|boolean|object|array|null)(?:,\w+)*$|^must match a schema in anyOf$/

/** The problems of a message in the person's words: one per field (the one that says most), then those of no field. */
export function sayMessage(message: string, t: Words): SaidProblem[] {
  const byField = new Map<string, ApiProblem[]>()
  const loose: ApiProblem[] = []
  for (const problem of splitProblems(message)) {
    if (problem.field === undefined) loose.push(problem)
    else byField.set(problem.field, [...(byField.get(problem.field) ?? []), problem])
  }
  const fields = [...byField.values()].map((problems) => {
    const telling = problems.find((problem) => !TYPE_ONLY.test(problem.words))
    if (telling) return sayProblem(telling, t)
    const types = problems.flatMap((problem) => /^must be ([\w,]+)$/.exec(problem.words)?.[1]?.split(',') ?? []).filter((type) => type !== 'null')
    if (types.length === 0) return sayProblem(problems[0]!, t)
    return { field: problems[0]!.field, text: t('api.kinds', { kinds: orList([...new Set(types)].flatMap((type) => kindName(type, t) ?? []), t) }), known: true }
  })
  return [...fields, ...loose.map((problem) => sayProblem(problem, t))]
}

/** A failed call, as far as this module needs to know it: the service's status and message. */
interface Refusal {
  status: number
  message: string
}

const isRefusal = (error: unknown): error is Refusal & Error =>
  error instanceof Error && typeof (error as Partial<Refusal>).status === 'number'

/**
 * Any failure in the person's words: the service's refusal by its problems, a call that never
 * reached the service (the browser's TypeError) as such, anything else by its message.
 */
export function sayError(error: unknown, t: Words): SaidProblem[] {
  if (isRefusal(error)) return sayMessage(error.message, t)
  if (error instanceof TypeError) return [{ text: t('api.unreachable'), known: true }]
  const message = error instanceof Error ? error.message : String(error)
  return [sayProblem({ words: message }, t)]
}

const oneLine = (problems: SaidProblem[]) => problems.map((problem) => problem.text).join(' ')

/** `sayError` as one line, for a status line or a notice. */
export const errorText = (error: unknown, t: Words): string => oneLine(sayError(error, t))

/** `sayMessage` as one line: the service's message that reached a page without its call (the editor's to its host). */
export const messageText = (message: string, t: Words): string => oneLine(sayMessage(message, t))

// ---------------------------------------------------------------------------------------------
// A flow definition's problems (src/domain/validate-flow.ts and the node types' checks)

/** The validator's words → what is wrong, said after the field ("title longer than 20 characters"). */
const FLOW_RULES: Rule[] = [
  { pattern: /^is required$/, say: 'flow.what.required' },
  { pattern: /^must not be empty$/, say: 'flow.what.empty' },
  { pattern: /^longer than (\d+) characters$/, say: 'flow.what.tooLong', params: limit },
  { pattern: /^shorter than (\d+) characters$/, say: 'flow.what.tooShort', params: limit },
  { pattern: /^no node "(.*)"$/, say: 'flow.what.noNode', params: (m) => ({ id: m[1]! }) },
  { pattern: /^unknown variable "(.*)"$/, say: 'flow.what.unknownVariable', params: (m) => ({ name: m[1]! }) },
  { pattern: /^no variable "(.*)" in this workspace$/, say: 'flow.what.noVariable', params: (m) => ({ name: m[1]! }) },
  { pattern: /^"(.*)" is a system variable/, say: 'flow.what.systemVariable', params: (m) => ({ name: m[1]! }) },
  { pattern: /^variable "(.*)" holds /, say: 'flow.what.variableType', params: (m) => ({ name: m[1]! }) },
  { pattern: /^no sector ".*" in this workspace$/, say: 'flow.what.noSector' },
  { pattern: /^a flow cannot run itself$/, say: 'flow.what.runsItself' },
  { pattern: /^no flow \S+ in this workspace$/, say: 'flow.what.noFlow' },
  { pattern: /^flow "(.*)" has no version \S+ \(its newest is (\S+)\)$/s, say: 'flow.what.noVersion', params: (m) => ({ name: m[1]!, newest: m[2]! }) },
  { pattern: /^flow ".*" runs this flow again \((.*)\): sub-flows cannot run in a circle$/s, say: 'flow.what.subflowCircle', params: (m) => ({ path: m[1]! }) },
  { pattern: /^sub-flows nest (\S+) deep from here \((.*)\); at most (\S+)$/s, say: 'flow.what.subflowDepth', params: (m) => ({ depth: m[1]!, path: m[2]!, max: m[3]! }) },
  { pattern: /^a reminder is sent before the question times out \(after (\S+) s\)$/, say: 'flow.what.reminderAfterTimeout', params: (m) => ({ seconds: m[1]! }) },
  { pattern: /^reminders are listed in the order they are sent, each later than the one before$/, say: 'flow.what.remindersOrder' },
  { pattern: /^no pipeline ".*" in this workspace$/, say: 'flow.what.noPipeline' },
  { pattern: /^pipeline ".*" has no stage ".*"$/, say: 'flow.what.noStage' },
  { pattern: /^pipeline ".*" has no field ".*"$/, say: 'flow.what.noCardField' },
  { pattern: /^unreachable from the start node$/, say: 'flow.what.unreachable' },
  { pattern: /^no start node/, say: 'flow.what.noStart' },
  { pattern: /^a second start node/, say: 'flow.what.secondStart' },
  { pattern: /^duplicate (?:node |edge )?id "(.*?)"/, say: 'flow.what.duplicateId', params: (m) => ({ id: m[1]! }) },
  { pattern: /^"(.*)" is the handle of /, say: 'flow.what.handleReserved', params: (m) => ({ id: m[1]! }) },
  { pattern: /^more than (\d+) buttons/, say: 'flow.what.tooManyButtons', params: (m, t) => ({ max: number(t, m[1]) }) },
  { pattern: /^more than (\d+) sections/, say: 'flow.what.tooManySections', params: (m, t) => ({ max: number(t, m[1]) }) },
  { pattern: /^more than (\d+) rows in total/, say: 'flow.what.tooManyRows', params: (m, t) => ({ max: number(t, m[1]) }) },
  { pattern: /^more than (\d+) items/, say: 'flow.what.tooManyItems', params: (m, t) => ({ max: number(t, m[1]) }) },
  { pattern: /^must have at least (\d+) items$/, say: 'flow.what.tooFewItems', params: (m, t) => ({ min: number(t, m[1]) }) },
  { pattern: /^must not repeat an item/, say: 'flow.what.repeated' },
  { pattern: /^a second edge from the same exit/, say: 'flow.what.exitTaken' },
  { pattern: /^node "(.*)" \(.*\) has no exits$/, say: 'flow.what.noExits', params: (m) => ({ id: m[1]! }) },
  { pattern: /^node "(.*)" \(.*\) has one unnamed exit/, say: 'flow.what.oneExit', params: (m) => ({ id: m[1]! }) },
  { pattern: /^node "(.*)" \(.*\) needs a sourceHandle/, say: 'flow.what.chooseExit', params: (m) => ({ id: m[1]! }) },
  { pattern: /^node "(.*)" \(.*\) has no handle "(.*)"; /, say: 'flow.what.noExit', params: (m) => ({ id: m[1]!, exit: m[2]! }) },
  { pattern: /^not a valid regular expression/, say: 'flow.what.badRegex' },
  { pattern: /^(\S+) compares numbers;/, say: 'flow.what.comparesNumbers', params: (m) => ({ operator: m[1]! }) },
  { pattern: /^a choice question's prompt must be/, say: 'flow.what.choicePrompt' },
  { pattern: /^is not a property of the flow format$/, say: 'flow.what.unknownProperty' },
  { pattern: /^unknown node type "(.*?)"/, say: 'flow.what.unknownType', params: (m) => ({ type: m[1]! }) },
  { pattern: /^the definition must be a JSON object$/, say: 'flow.what.notJson' },
  { pattern: /^(field .* takes .*); a value with \{\{…\}\} is text$/s, say: (m, t) => t('flow.what.placeholderIsText', { what: sayFlowWhat(m[1]!, t) }) },
  { pattern: /^field ".*" \(\w+\) takes (.*)$/s, say: (m, t, p) => cardValueWhat(m[1]!, t) ?? t('flow.what.unknown', { detail: p.words }) },
  { pattern: /^must be a variable name/, say: 'flow.what.variableName' },
  { pattern: /^must have no commas and no blanks at either end$/, say: 'flow.what.tag' },
  { pattern: /^must be a UUID$/, say: 'flow.what.uuid' },
  { pattern: /^must be an object$/, say: 'flow.what.object' },
  { pattern: /^must be an array$/, say: 'flow.what.array' },
  { pattern: /^must be a string$/, say: 'flow.what.string' },
  { pattern: /^must be a number$/, say: 'flow.what.number' },
  { pattern: /^must be an integer$/, say: 'flow.what.integer' },
  { pattern: /^must be a boolean$/, say: 'flow.what.boolean' },
  // A string format the schema names (`must be a date-time`).
  { pattern: /^must be an? [a-z][a-z-]*$/, say: 'flow.what.pattern' },
  { pattern: /^must be at least (\S+)$/, say: 'flow.what.atLeast', params: (m, t) => ({ min: number(t, m[1]) }) },
  { pattern: /^must be at most (\S+)$/, say: 'flow.what.atMost', params: (m, t) => ({ max: number(t, m[1]) }) },
  { pattern: /^must be one of (.*)$/s, say: 'flow.what.oneOf', params: (m) => ({ values: m[1]! }) },
  { pattern: /^must be (".*")$/s, say: 'flow.what.literal', params: (m) => ({ value: m[1]! }) },
  { pattern: /^must match /, say: 'flow.what.pattern' },
  { pattern: /^(.+?) in .+: a secret can be read only in an httpRequest node's /s, say: 'flow.what.secretNotHere', params: (m) => ({ placeholder: m[1]! }) },
  { pattern: /^(.+?) in .+: write a secret as /s, say: 'flow.what.secretName', params: (m) => ({ placeholder: m[1]! }) },
  { pattern: /^the URL must start with https:\/\//, say: 'flow.what.httpsUrl' },
  { pattern: /^no AI connection "(.*)" in this workspace$/s, say: 'flow.what.noAiConnection' },
  { pattern: /^(\w+) is read in (\w+) mode only$/, say: 'flow.what.aiModeOnly', params: (m) => ({ field: m[1]!, mode: m[2]! }) },
  { pattern: /^a reply needs instructions/, say: 'flow.what.aiInstructions' },
  { pattern: /^a classify step needs at least (\S+) labels$/, say: 'flow.what.aiLabels', params: limit },
  { pattern: /^describe the label: /, say: 'flow.what.aiLabelDescription' },
  { pattern: /^an extract step needs at least one field$/, say: 'flow.what.aiFields' },
  { pattern: /^"(.*)" is extracted twice$/s, say: 'flow.what.aiExtractedTwice', params: (m) => ({ name: m[1]! }) },
  { pattern: /^an extract step saves into its fields' variables$/, say: 'flow.what.aiExtractSaveAs' },
  { pattern: /^"(.*)" is not a header name/s, say: 'flow.what.headerName', params: (m) => ({ name: m[1]! }) },
  { pattern: /^"(.*)" is set by the service; leave it out$/s, say: 'flow.what.headerReserved', params: (m) => ({ name: m[1]! }) },
  { pattern: /^a (\S+) request has no body$/, say: 'flow.what.noBody', params: (m) => ({ method: m[1]! }) },
  { pattern: /^the body is longer than (\S+) bytes$/, say: 'flow.what.bodyTooLong', params: limit },
  { pattern: /^a path has at most (\S+) characters$/, say: 'flow.what.pathTooLong', params: limit },
  { pattern: /^a path starts with \$/, say: 'flow.what.pathStart' },
  { pattern: /^"(.*)" is not a member \(/s, say: 'flow.what.pathPart', params: (m) => ({ part: m[1]! }) },
  { pattern: /^must be /, say: 'flow.what.kind' },
]

function cardValueWhat(takes: string, t: Words): string | undefined {
  if (takes === 'a number') return t('flow.what.takes.number')
  if (takes === 'true or false') return t('flow.what.takes.boolean')
  if (takes === 'a date as YYYY-MM-DD') return t('flow.what.takes.date')
  if (takes === 'an email address') return t('flow.what.takes.email')
  if (takes.startsWith('a phone number')) return t('flow.what.takes.phone')
  const text = /^a non-empty string of at most (\d+) characters$/.exec(takes)
  if (text) return t('flow.what.takes.text', { limit: number(t, text[1]) })
  const option = /^one of: (.*)$/s.exec(takes)
  if (option) return t('flow.what.takes.option', { values: option[1]! })
  return undefined
}

/** What is wrong, in the validator's words → the person's; `undefined` when no rule knows them. */
function flowWhat(message: string, t: Words): string | undefined {
  for (const rule of FLOW_RULES) {
    const match = rule.pattern.exec(message)
    if (match) return typeof rule.say === 'function' ? rule.say(match, t, { words: message }) : t(rule.say, rule.params?.(match, t, { words: message }))
  }
  return undefined
}

/** What is wrong with a place of a flow, said after its field: "longer than 20 characters", "is empty". */
export function sayFlowWhat(message: string, t: Words): string {
  return flowWhat(message, t) ?? t('flow.what.unknown', { detail: message })
}

/** Whether a rule knows the validator's words (the editor then needs no fallback). */
export const knowsFlowWords = (message: string, t: Words): boolean => flowWhat(message, t) !== undefined

type Segment = string | number

/** `nodes[2].data.values["a b"]` → ['nodes', 2, 'data', 'values', 'a b']. */
export function pathSegments(path: string): Segment[] {
  const segments: Segment[] = []
  const part = /\.?([A-Za-z_$][A-Za-z0-9_$]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/gy
  for (let match = part.exec(path); match; match = part.exec(path)) {
    if (match[1] !== undefined) segments.push(match[1])
    else if (match[2] !== undefined) segments.push(Number(match[2]))
    else segments.push(JSON.parse(match[3]!) as string)
  }
  return segments
}

/** Lists whose items a person sees numbered in the forms: the item's name, and its name after "of". */
const ITEMS: Record<string, { one: ApiProblemKey; of: ApiProblemKey }> = {
  messages: { one: 'flow.where.message', of: 'flow.where.ofMessage' },
  buttons: { one: 'flow.where.button', of: 'flow.where.ofButton' },
  sections: { one: 'flow.where.section', of: 'flow.where.ofSection' },
  rows: { one: 'flow.where.row', of: 'flow.where.ofRow' },
  rules: { one: 'flow.where.rule', of: 'flow.where.ofRule' },
  headers: { one: 'flow.where.header', of: 'flow.where.ofHeader' },
  saveResponse: { one: 'flow.where.mapping', of: 'flow.where.ofMapping' },
}

/** The fields a person fills, by the name the format gives them. */
const FIELDS: Record<string, ApiProblemKey> = {
  title: 'flow.field.title',
  body: 'flow.field.text',
  text: 'flow.field.text',
  caption: 'flow.field.caption',
  url: 'flow.field.url',
  link: 'flow.field.url',
  display_text: 'flow.field.label',
  button: 'flow.field.label',
  id: 'flow.field.id',
  variable: 'flow.field.variable',
  value: 'flow.field.value',
  saveAs: 'flow.field.saveAs',
  targetId: 'flow.field.target',
  pipelineId: 'flow.field.pipeline',
  stageId: 'flow.field.stage',
  target: 'flow.field.targetNode',
  source: 'flow.field.sourceNode',
  sourceHandle: 'flow.field.exit',
  maxRetries: 'flow.field.maxRetries',
  operator: 'flow.field.operator',
  type: 'flow.field.type',
  name: 'flow.field.name',
  method: 'flow.field.method',
  path: 'flow.field.path',
  timeoutMs: 'flow.field.timeout',
  timeoutSeconds: 'flow.field.timeout',
  saveStatusAs: 'flow.field.saveStatusAs',
  event: 'flow.field.event',
  flowId: 'flow.field.flow',
  version: 'flow.field.version',
}

/** As much of a flow definition as saying where a problem is needs. */
export interface FlowOutline {
  nodes: readonly { id: string }[]
  edges: readonly { source: string; target: string }[]
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)

/** Where a problem is, as the person sees it: "Button 1 of node Welcome", "Connection from node a to node b". */
function where(definition: FlowOutline, segments: Segment[], t: Words): { place: string; rest: Segment[] } {
  const [list, index] = segments
  if (list === 'nodes' && typeof index === 'number') {
    const node = definition.nodes[index]
    const nodeName = node?.id ?? String(index + 1)
    const rest = segments.slice(2)
    // The items the path goes through, outermost first ("Section 1", then "Row 2").
    const items: { list: string; number: number; at: number }[] = []
    rest.forEach((segment, at) => {
      const next = rest[at + 1]
      if (typeof segment === 'string' && ITEMS[segment] && typeof next === 'number') items.push({ list: segment, number: next + 1, at })
    })
    const innermost = items.at(-1)
    if (!innermost) return { place: t('flow.where.node', { id: nodeName }), rest }
    const outer = [...items.slice(0, -1)].reverse().map((item) => t(ITEMS[item.list]!.of, { n: item.number }))
    const place = [t(ITEMS[innermost.list]!.one, { n: innermost.number }), ...outer, t('flow.where.ofNode', { id: nodeName })].join(' ')
    return { place, rest: rest.slice(innermost.at + 2) }
  }
  if (list === 'edges' && typeof index === 'number') {
    const edge = definition.edges[index]
    const place = edge ? t('flow.where.edge', { source: edge.source, target: edge.target }) : t('flow.where.edgeNumber', { n: index + 1 })
    return { place, rest: segments.slice(2) }
  }
  return { place: t('flow.where.flow'), rest: segments.slice(1) }
}

/** The field a problem is about, when the form names it: the last named segment of what is left of the path. */
function field(rest: Segment[], t: Words): string | undefined {
  const named = rest.filter((segment): segment is string => typeof segment === 'string' && segment !== 'data')
  const last = named.at(-1)
  if (last === undefined) return undefined
  // An HTTP request's own body (`data.body`), not a message's text (`text.body`).
  if (named.length === 1 && last === 'body') return t('flow.field.requestBody')
  if (named.at(-2) === 'values') return t('flow.field.cardField', { name: last })
  const key = FIELDS[last]
  return key ? t(key) : last
}

/**
 * A problem the flow validator reported, written for a person: "Button 1 of node Welcome: title
 * longer than 20 characters", never `nodes[2].data.prompt.interactive.action.buttons[0].title`.
 */
export function flowProblemText(definition: FlowOutline, problem: { path: string; message: string }, t: Words): string {
  const { place, rest } = where(definition, pathSegments(problem.path), t)
  const about = field(rest, t)
  const wrong = sayFlowWhat(problem.message, t)
  return `${capitalize(place)}: ${about ? `${about} ${wrong}` : capitalize(wrong)}`
}
