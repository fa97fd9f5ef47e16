import { Type, type Static } from '@sinclair/typebox'
import { AnyKey } from './schemas.js'

/**
 * A call a flow makes outside the conversation, as recorded on the session stream: the request as
 * sent (each secret written `{{secrets.NAME}}`, never its value) and what came back. A turn that
 * reaches a call stops; the engine makes the call, records the answer, and the turn is run again
 * from its start with the answers recorded so far, so replay reads them and calls nothing.
 */

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const
export type HttpMethod = (typeof HTTP_METHODS)[number]

export const HttpCallRequest = Type.Object({
  method: Type.Union(HTTP_METHODS.map((method) => Type.Literal(method))),
  url: Type.String(),
  headers: Type.Array(Type.Object({ name: Type.String(), value: Type.String() })),
  body: Type.Union([Type.String(), Type.Null()]),
  timeoutMs: Type.Integer({ minimum: 1 }),
  /**
   * The answer comes as server-sent events of chat completion chunks (an AI reply): the engine
   * hands their text to the session's open streams as it arrives, and records the whole answer.
   */
  streamsText: Type.Optional(Type.Literal(true)),
})
export type HttpCallRequest = Static<typeof HttpCallRequest>

/** Why a call has no answer a flow can use; each leaves the node by `error`. */
export const CALL_ERRORS = ['timeout', 'refused_address', 'too_large', 'network', 'secret', 'limit'] as const
export type CallErrorCode = (typeof CALL_ERRORS)[number]

export const HttpCallAnswer = Type.Union([
  Type.Object({
    status: Type.Integer(),
    /** The response headers a flow or a reader may need (content type, location, retry-after…). */
    headers: Type.Record(AnyKey, Type.String()),
    body: Type.String(),
  }),
  Type.Object({ error: Type.Union(CALL_ERRORS.map((code) => Type.Literal(code))), message: Type.String() }),
])
export type HttpCallAnswer = Static<typeof HttpCallAnswer>

/** A call the engine made for a turn, with its answer. */
export const RecordedCall = Type.Object({
  /** The call's place among the calls of its turn, from 0. */
  index: Type.Integer({ minimum: 0 }),
  nodeId: Type.String(),
  request: HttpCallRequest,
  answer: HttpCallAnswer,
  durationMs: Type.Integer({ minimum: 0 }),
})
export type RecordedCall = Static<typeof RecordedCall>

/** A call a turn waits for: what the interpreter asks the engine to do before the turn can go on. */
export interface CallNeeded {
  status: 'calling'
  index: number
  nodeId: string
  /** With secrets as markers ({@link secretMarker}): the engine fills them in only as it sends. */
  request: HttpCallRequest
}

/**
 * Limits on calls, the same for every tenant: they keep one tenant's flow from holding the engine
 * on its API. A call past a limit is not made; the node leaves by `error` with `limit`.
 */
export const CALL_LIMITS = {
  perTurn: 10,
  perSession: 200,
  /** Time the calls of one turn may take together; a call is not started once they took this long. */
  turnWaitMs: 60_000,
  timeoutMs: { min: 100, max: 30_000, default: 10_000 },
  /** The most of a response body read and recorded; a longer one leaves by `error` with `too_large`. */
  responseBytes: 256 * 1024,
  /** The longest request body sent. */
  requestBytes: 64 * 1024,
} as const

// Secrets travel through a turn as markers from Unicode's private use area, which interpolation
// strips from every variable's value: text a person typed can never turn into a secret reference.
// The opening character says how the value is written where the marker stands.
const MARKER_OPENS = { raw: '\uE000', json: '\uE002', url: '\uE003' } as const
const MARKER_CLOSE = '\uE001'
const MARKERS = /[\uE000-\uE003]/g
const MARKED = /([\uE000\uE002\uE003])([A-Za-z0-9_]{1,64})\uE001/g

/** How a secret's value is written in place: as it is (a header), inside a JSON string, or URL-encoded. */
export type SecretEncoding = keyof typeof MARKER_OPENS

export const secretMarker = (name: string, encoding: SecretEncoding = 'raw'): string => `${MARKER_OPENS[encoding]}${name}${MARKER_CLOSE}`
export const withoutMarkers = (text: string): string => text.replace(MARKERS, '')

const encode = (value: string, open: string): string => {
  if (open === MARKER_OPENS.json) return JSON.stringify(value).slice(1, -1)
  if (open === MARKER_OPENS.url) return encodeURIComponent(value)
  return value
}

/** The secret names a marked text refers to. */
export const secretsIn = (text: string): string[] => [...text.matchAll(MARKED)].map((match) => match[2]!)

/** Replaces each marker by its secret's value, written as the marker says. */
export const fillSecrets = (text: string, value: (name: string) => string): string => text.replace(MARKED, (_marker, open: string, name: string) => encode(value(name), open))

/** The marked text as recorded: each secret written as its placeholder. */
export const redactSecrets = (text: string): string => text.replace(MARKED, (_marker, _open: string, name: string) => `{{secrets.${name}}}`)

/** The request as recorded: every secret replaced by its placeholder. */
export const redactedRequest = (request: HttpCallRequest): HttpCallRequest => ({
  ...request,
  url: redactSecrets(request.url),
  headers: request.headers.map((header) => ({ name: header.name, value: redactSecrets(header.value) })),
  body: request.body === null ? null : redactSecrets(request.body),
})

/** Every secret name a request refers to. */
export const secretsOfRequest = (request: HttpCallRequest): string[] => [
  ...new Set([request.url, ...request.headers.map((header) => header.value), request.body ?? ''].flatMap(secretsIn)),
]
