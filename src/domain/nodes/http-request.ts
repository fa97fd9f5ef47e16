import { Type, type Static } from '@sinclair/typebox'
import { VariableName } from '../flow-definition.js'
import { SECRETS_PREFIX, lookup, wholePlaceholder, type InterpolationOptions } from '../interpolate.js'
import { parseJsonPath, readJsonPath, MAX_PATH_LENGTH } from '../json-path.js'
import { CALL_LIMITS, HTTP_METHODS, redactSecrets, secretMarker, withoutMarkers, type HttpCallRequest, type RecordedCall } from '../outside-call.js'
import { SYSTEM_VARIABLES } from '../variables.js'
import { checkTarget } from './checks.js'
import type { CheckContext, Exit, NodeOf, Step, Visit } from './node-type.js'

export const SUCCESS_HANDLE = 'success'
export const ERROR_HANDLE = 'error'

/** A header name as HTTP writes it (RFC 9110 token). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/
/** Headers the agent sets itself from the request; a flow cannot write them. */
export const RESERVED_HEADERS = ['host', 'content-length', 'transfer-encoding', 'connection', 'upgrade', 'te', 'trailer', 'keep-alive', 'proxy-connection', 'expect'] as const

/**
 * Calls an HTTPS API and leaves by `success` (a 2xx answer whose every `saveResponse` path matched)
 * or `error` (any other status, a timeout, a refused address, an answer over the size limit, a path
 * that matches nothing). `{{…}}` fills in the URL (URL-encoded), the headers and the body; a body
 * that is not a string is JSON, and a string of it made of one `{{variable}}` alone takes the
 * variable's value with its type. `{{secrets.NAME}}` reads a workspace secret, here only.
 */
export const schema = Type.Object({
  method: Type.Union(HTTP_METHODS.map((method) => Type.Literal(method))),
  url: Type.String({ minLength: 1, maxLength: 2048 }),
  headers: Type.Optional(Type.Array(Type.Object({ name: Type.String({ minLength: 1 }), value: Type.String({ maxLength: 4096 }) }), { maxItems: 30 })),
  body: Type.Optional(Type.Unknown()),
  timeoutMs: Type.Optional(Type.Integer({ minimum: CALL_LIMITS.timeoutMs.min, maximum: CALL_LIMITS.timeoutMs.max })),
  saveResponse: Type.Optional(Type.Array(Type.Object({ path: Type.String({ minLength: 1, maxLength: MAX_PATH_LENGTH }), variable: VariableName }), { maxItems: 20 })),
  saveStatusAs: Type.Optional(VariableName),
})
export type Data = Static<typeof schema>

export const exits = (): readonly Exit[] => [
  { id: SUCCESS_HANDLE, label: SUCCESS_HANDLE, kind: 'default' },
  { id: ERROR_HANDLE, label: ERROR_HANDLE, kind: 'invalid' },
]

/** Where a template may read `{{secrets.NAME}}`. */
export const secretsIn = (key: string): boolean => key === 'url' || key === 'headers' || key === 'body'

export const writes = (data: Readonly<Record<string, unknown>>): string[] => {
  const saved = Array.isArray(data.saveResponse) ? data.saveResponse.map((mapping: { variable?: unknown }) => mapping?.variable) : []
  return [...saved, data.saveStatusAs].filter((name): name is string => typeof name === 'string')
}

export const check = (data: Data, context: CheckContext): void => {
  const { report } = context
  if (!data.url.startsWith('https://') && wholePlaceholder(data.url) === undefined) report(['url'], 'the URL must start with https:// (or be filled in whole by a variable holding one)')
  data.headers?.forEach((header, i) => {
    if (!HEADER_NAME.test(header.name)) report(['headers', i, 'name'], `"${header.name}" is not a header name: letters, digits and - only`)
    else if ((RESERVED_HEADERS as readonly string[]).includes(header.name.toLowerCase())) report(['headers', i, 'name'], `"${header.name}" is set by the service; leave it out`)
  })
  if (data.body !== undefined && (data.method === 'GET' || data.method === 'DELETE')) report(['body'], `a ${data.method} request has no body`)
  if (data.body !== undefined && JSON.stringify(data.body).length > CALL_LIMITS.requestBytes) report(['body'], `the body is longer than ${CALL_LIMITS.requestBytes} bytes`)
  data.saveResponse?.forEach((mapping, i) => {
    const parsed = parseJsonPath(mapping.path)
    if (typeof parsed === 'string') report(['saveResponse', i, 'path'], parsed)
    if (SYSTEM_VARIABLES.includes(mapping.variable)) report(['saveResponse', i, 'variable'], `"${mapping.variable}" is a system variable; it is read-only`)
    else if (!context.catalog.variables.has(mapping.variable)) report(['saveResponse', i, 'variable'], `no variable "${mapping.variable}" in this workspace`)
  })
  if (data.saveStatusAs !== undefined) checkTarget(data.saveStatusAs, 'number', 'a status is a number', ['saveStatusAs'], context)
}

const inUrl: InterpolationOptions = { encode: encodeURIComponent, secret: (name) => secretMarker(name, 'url'), clean: withoutMarkers }
const inText: InterpolationOptions = { secret: (name) => secretMarker(name, 'raw'), clean: withoutMarkers }
const inJson: InterpolationOptions = { secret: (name) => secretMarker(name, 'json'), clean: withoutMarkers }

/** A JSON body with its strings filled in: one made of a variable alone takes the variable's value. */
const fillJson = (value: unknown, text: (template: string) => string, visit: Pick<Visit, 'scope'>): unknown => {
  if (typeof value === 'string') {
    const whole = wholePlaceholder(value)
    if (whole === undefined || whole.startsWith(SECRETS_PREFIX)) return text(value)
    const found = lookup(visit.scope(), whole)
    return typeof found === 'string' ? withoutMarkers(found) : found === undefined ? text(value) : scrubbed(found)
  }
  if (Array.isArray(value)) return value.map((item) => fillJson(item, text, visit))
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fillJson(item, text, visit)]))
  return value
}

const scrubbed = (value: unknown): unknown => JSON.parse(withoutMarkers(JSON.stringify(value)))

/**
 * The request as the node's templates make it now, secrets as markers, or why none can be sent.
 * "Try it" in the editor builds it the same way, from sample values.
 */
export function buildRequest(data: Data, visit: Pick<Visit, 'interpolating' | 'scope'>): HttpCallRequest | string {
  // A URL filled in whole by a variable takes the variable's URL as it is; encoded, it is no URL.
  const whole = wholePlaceholder(data.url)
  const url = visit.interpolating((text) => text(data.url), whole !== undefined && !whole.startsWith(SECRETS_PREFIX) ? inText : inUrl)
  const shown = redactSecrets(url)
  let parsed: URL
  try {
    parsed = new URL(shown)
  } catch {
    return `the URL "${shown}" is not a URL`
  }
  if (parsed.protocol !== 'https:') return `the URL "${shown}" is not https`
  const headers = visit.interpolating((text) => (data.headers ?? []).map((header) => ({ name: header.name, value: text(header.value) })), inText)
  const broken = headers.find((header) => /[\r\n\0]/.test(header.value))
  if (broken) return `the header ${broken.name} holds a line break once filled in`
  let body: string | null = null
  if (typeof data.body === 'string') body = visit.interpolating((text) => text(data.body as string), inText)
  else if (data.body !== undefined) body = JSON.stringify(visit.interpolating((text) => fillJson(data.body, text, visit), inJson))
  if (body !== null && new TextEncoder().encode(body).length > CALL_LIMITS.requestBytes) return `the body is longer than ${CALL_LIMITS.requestBytes} bytes once filled in`
  const typed = body !== null && !headers.some((header) => header.name.toLowerCase() === 'content-type')
  return {
    method: data.method,
    url,
    headers: typed ? [...headers, { name: 'content-type', value: typeof data.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json' }] : headers,
    body,
    timeoutMs: data.timeoutMs ?? CALL_LIMITS.timeoutMs.default,
  }
}

/** Leaves by `error`; with no edge there, the session ends in error for this reason. */
const failed = (visit: Visit, reason: string): Step => {
  visit.warn(`httpRequest ${visit.nodeId}: ${reason}`)
  return { exit: ERROR_HANDLE, unhandled: `httpRequest ${visit.nodeId} failed and has no error edge: ${reason}` }
}

export const run = ({ data }: NodeOf<typeof schema>, visit: Visit): Step => {
  const built = buildRequest(data, visit)
  if (typeof built === 'string') return failed(visit, built)
  const call = visit.callOutside(built)
  if (!call) return 'suspend'
  return answered(data, call, visit)
}

/** Saves what the flow asked for from a recorded answer and picks the exit. */
function answered(data: Data, { request, answer }: RecordedCall, visit: Visit): Step {
  const what = `${request.method} ${request.url}`
  if ('error' in answer) return failed(visit, `${what}: ${answer.message}`)
  if (data.saveStatusAs !== undefined) visit.assign(data.saveStatusAs, answer.status)
  if (answer.status < 200 || answer.status > 299) return failed(visit, `${what} answered ${answer.status}`)
  const mappings = data.saveResponse ?? []
  if (mappings.length === 0) return { exit: SUCCESS_HANDLE }
  let document: unknown
  try {
    document = JSON.parse(answer.body)
  } catch {
    return failed(visit, `${what} answered ${answer.status} with a body that is not JSON`)
  }
  const saved: [string, string | number | boolean | Record<string, unknown>][] = []
  for (const { path, variable } of mappings) {
    const segments = parseJsonPath(path)
    const value = typeof segments === 'string' ? undefined : readJsonPath(document, segments)
    if (value === undefined || value === null) return failed(visit, `${path} matches nothing in the answer of ${what}`)
    if (Array.isArray(value)) return failed(visit, `${path} is a list in the answer of ${what}; save one item, such as ${path}[0]`)
    saved.push([variable, value as string | number | boolean | Record<string, unknown>])
  }
  for (const [variable, value] of saved) visit.assign(variable, value)
  return { exit: SUCCESS_HANDLE }
}
