import { performance } from 'node:perf_hooks'
import type { Kysely } from 'kysely'
import pLimit, { type LimitFunction } from 'p-limit'
import { request as undiciRequest, type Agent } from 'undici'
import { recordCallAnswer } from '../commands/sessions.js'
import type { CommandContext } from '../commands/context.js'
import {
  CALL_LIMITS,
  fillSecrets,
  redactedRequest,
  secretsOfRequest,
  type CallErrorCode,
  type HttpCallAnswer,
  type HttpCallRequest,
  type RecordedCall,
} from '../domain/outside-call.js'
import type { Logger } from '../logger.js'
import { chunkText, completionChunks } from '../domain/chat-completions.js'
import type { GeneratedText } from './generated-text.js'
import type { Database } from '../store/database.js'
import { BlockedAddressError, CONNECT_TIMEOUT_MS, readCapped } from '../webhooks/agent.js'

/** Reads workspace secrets by name; a name with no secret is absent from the answer. */
export type RevealSecrets = (workspaceId: string, names: readonly string[]) => Promise<ReadonlyMap<string, string>>

/** A call a turn waits for, with whose it is. */
export interface CallJob {
  sessionId: string
  /** The trigger whose turn made the call. */
  messageId: string
  workspaceId: string
  organizationId: string
  /** Recorded on the answer's event, so that what follows the log can tell a preview's calls. */
  preview: boolean
  index: number
  nodeId: string
  /** With secrets as markers, filled in only as it is sent. */
  request: HttpCallRequest
}

export interface OutsideCallSettings {
  /** The SSRF-checking agent every outbound call goes through (src/webhooks/agent.ts). */
  agent: Agent
  revealSecrets: RevealSecrets
  /** Calls of one organization in flight at once; the rest wait for their turn. */
  perOrganization?: number
  /** Calls of one organization to one origin in flight at once. */
  perDestination?: number
  /** Where the text of a streamed AI reply goes as it arrives: the session's open streams. */
  generatedText?: GeneratedText
}

export const CALLS_PER_ORGANIZATION = 16
export const CALLS_PER_DESTINATION = 4
/** Headers of an answer recorded with it: what a flow or a person reading the session may need. */
const RECORDED_HEADERS = ['content-type', 'location', 'retry-after', 'etag', 'last-modified', 'x-request-id']

const jobKey = (job: Pick<CallJob, 'sessionId' | 'messageId' | 'index'>) => `${job.sessionId}/${job.messageId}/${job.index}`

/**
 * Makes the calls turns wait for, outside the engine's turn slots: a turn that reaches a call
 * records it here as pending (a row of `pending_calls`) and ends; the call is made in the
 * background, shared out by organization and by destination, and its answer is appended to the
 * session stream, where the engine finds it and runs the turn again. A slow or dead API holds only
 * its own organization's calls. A pending call whose process died is made again by the engine that
 * holds the session (`stalled`): a call can therefore be made twice, never answered twice.
 */
export class OutsideCalls {
  private readonly inFlight = new Map<string, Promise<void>>()
  private readonly byOrganization = new Map<string, LimitFunction>()
  private readonly byDestination = new Map<string, LimitFunction>()
  private readonly db: Kysely<Database>
  private readonly ctx: CommandContext
  private readonly settings: OutsideCallSettings
  private readonly logger: Logger

  constructor(db: Kysely<Database>, ctx: CommandContext, settings: OutsideCallSettings, logger: Logger) {
    this.db = db
    this.ctx = ctx
    this.settings = settings
    this.logger = logger
  }

  /** Whether this process is making a call for the session. */
  makes(sessionId: string): boolean {
    for (const key of this.inFlight.keys()) if (key.startsWith(`${sessionId}/`)) return true
    return false
  }

  /**
   * Makes the call unless this process is making it already; resolves once it is recorded as
   * pending, long before its answer.
   */
  async start(job: CallJob): Promise<void> {
    const key = jobKey(job)
    if (this.inFlight.has(key)) return
    await this.db
      .insertInto('pending_calls')
      .values({ session_id: job.sessionId, message_id: job.messageId, call_index: job.index, started_at: new Date() })
      .onConflict((conflict) => conflict.columns(['session_id', 'message_id', 'call_index']).doUpdateSet({ started_at: new Date() }))
      .execute()
    const work = this.queued(job)
      .then((call) => recordCallAnswer(this.ctx, job, call))
      .then(() => this.db.deleteFrom('pending_calls').where('session_id', '=', job.sessionId).where('message_id', '=', job.messageId).where('call_index', '=', job.index).execute())
      .then(() => {})
      .catch((error: unknown) => this.logger.warn({ err: error, sessionId: job.sessionId, nodeId: job.nodeId }, 'the answer of a call was not recorded; the call is made again later'))
      .finally(() => this.inFlight.delete(key))
    this.inFlight.set(key, work)
  }

  /**
   * Sessions with a pending call started before `startedBefore` (epoch milliseconds) that this
   * process is not making: its process died, or a partition moved. The engine drives them, and their
   * turn asks for the call again.
   */
  async stalled(startedBefore: number): Promise<string[]> {
    const before = new Date(startedBefore)
    const rows = await this.db.selectFrom('pending_calls').select('session_id').distinct().where('started_at', '<=', before).limit(500).execute()
    return rows.map((row) => row.session_id).filter((sessionId) => !this.makes(sessionId))
  }

  /** Drops the rows of calls that a session's turn no longer waits for (it completed, failed or expired). */
  async forget(sessionId: string): Promise<void> {
    await this.db.deleteFrom('pending_calls').where('session_id', '=', sessionId).execute()
  }

  /** Waits for the calls in flight to be answered and recorded. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight.values()])
  }

  private queued(job: CallJob): Promise<RecordedCall> {
    const organization = this.limiter(this.byOrganization, job.organizationId, this.settings.perOrganization ?? CALLS_PER_ORGANIZATION)
    const destination = this.limiter(this.byDestination, `${job.organizationId} ${originOf(job.request.url)}`, this.settings.perDestination ?? CALLS_PER_DESTINATION)
    const generated = this.settings.generatedText
    const onText = job.request.streamsText && generated ? (text: string) => generated.publish({ sessionId: job.sessionId, messageId: job.messageId, nodeId: job.nodeId, text }) : undefined
    return organization(() => destination(() => makeCall(this.settings, job, this.logger, onText)))
  }

  private limiter(limiters: Map<string, LimitFunction>, key: string, concurrency: number): <T>(fn: () => Promise<T>) => Promise<T> {
    let found = limiters.get(key)
    if (!found) limiters.set(key, (found = pLimit(concurrency)))
    const limit = found
    // A limiter with nothing queued or running is dropped, so idle keys do not pile up.
    return <T>(fn: () => Promise<T>) =>
      limit(fn).finally(() => {
        if (limit.activeCount === 0 && limit.pendingCount === 0) limiters.delete(key)
      })
  }
}

/**
 * Makes one call: fills in the secrets it names (a missing one answers `secret` and sends
 * nothing), sends it through the agent, and answers it as recorded: the request with each secret
 * as its placeholder, the answer with every secret value used replaced the same way. A streamed
 * answer's text goes to `onText` piece by piece as it arrives.
 */
export async function makeCall(
  settings: Pick<OutsideCallSettings, 'agent' | 'revealSecrets'>,
  job: Pick<CallJob, 'workspaceId' | 'index' | 'nodeId' | 'request'>,
  logger: Pick<Logger, 'error'>,
  onText?: (text: string) => void,
): Promise<RecordedCall> {
  const recorded = (answer: HttpCallAnswer, durationMs: number): RecordedCall => ({ index: job.index, nodeId: job.nodeId, request: redactedRequest(job.request), answer, durationMs })
  const names = secretsOfRequest(job.request)
  let secrets: ReadonlyMap<string, string> = new Map()
  try {
    if (names.length > 0) secrets = await settings.revealSecrets(job.workspaceId, names)
  } catch (error) {
    logger.error({ err: error, workspaceId: job.workspaceId }, "a flow's secrets could not be read: is SECRETS_KEY the same on every process?")
    return recorded({ error: 'secret', message: `the secrets ${names.join(', ')} could not be read` }, 0)
  }
  const missing = names.filter((name) => !secrets.has(name))
  if (missing.length > 0) return recorded({ error: 'secret', message: `no secret ${missing.join(', ')} in this workspace` }, 0)
  const inHeader = job.request.headers.flatMap((header) => secretsOfRequest({ ...job.request, url: '', body: null, headers: [header] }))
  const broken = inHeader.find((name) => /[\r\n\0]/.test(secrets.get(name)!))
  if (broken) return recorded({ error: 'secret', message: `the secret ${broken} holds a line break and cannot go in a header` }, 0)
  const fill = (text: string) => fillSecrets(text, (name) => secrets.get(name)!)
  const started = performance.now()
  const answer = await send(
    settings.agent,
    {
      ...job.request,
      url: fill(job.request.url),
      headers: job.request.headers.map((header) => ({ name: header.name, value: fill(header.value) })),
      body: job.request.body === null ? null : fill(job.request.body),
    },
    onText,
  )
  return recorded(redactAnswer(answer, secrets), Math.round(performance.now() - started))
}

const originOf = (url: string): string => {
  try {
    return new URL(url.replace(/[\uE000-\uE003]/g, '')).origin
  } catch {
    return url
  }
}

/** An API that echoes a secret back must not get it recorded: each value used is replaced by its placeholder. */
function redactAnswer(answer: HttpCallAnswer, secrets: ReadonlyMap<string, string>): HttpCallAnswer {
  if (secrets.size === 0) return answer
  const redact = (text: string) => {
    let redacted = text
    for (const [name, value] of secrets) if (value.length > 0) redacted = redacted.split(value).join(`{{secrets.${name}}}`)
    return redacted
  }
  if ('error' in answer) return { ...answer, message: redact(answer.message) }
  return { status: answer.status, headers: Object.fromEntries(Object.entries(answer.headers).map(([name, value]) => [name, redact(value)])), body: redact(answer.body) }
}

/** One request through the agent: redirects are not followed, the whole exchange is bounded by its timeout. */
async function send(agent: Agent, request: HttpCallRequest, onText?: (text: string) => void): Promise<HttpCallAnswer> {
  const failed = (error: CallErrorCode, message: string): HttpCallAnswer => ({ error, message })
  try {
    const response = await undiciRequest(request.url, {
      dispatcher: agent,
      method: request.method,
      headers: request.headers.map((header) => [header.name, header.value]).flat(),
      body: request.body ?? undefined,
      headersTimeout: request.timeoutMs,
      bodyTimeout: request.timeoutMs,
      signal: AbortSignal.timeout(request.timeoutMs),
    })
    const streamed = onText && response.statusCode >= 200 && response.statusCode < 300
    const { text, truncated } = streamed ? await readStreamedText(response.body, CALL_LIMITS.responseBytes, onText) : await readCapped(response.body, CALL_LIMITS.responseBytes)
    if (truncated) return failed('too_large', `the answer is longer than ${CALL_LIMITS.responseBytes / 1024} KB`)
    const headers: Record<string, string> = {}
    for (const name of RECORDED_HEADERS) {
      const value = [response.headers[name]].flat()[0]
      if (typeof value === 'string') headers[name] = value
    }
    return { status: response.statusCode, headers, body: text }
  } catch (error) {
    return failed(...describe(error, request.timeoutMs))
  }
}

/**
 * Reads a streamed completion as `readCapped` reads any answer, handing each chunk's text to
 * `onText` as its server-sent event line arrives.
 */
async function readStreamedText(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number, onText: (text: string) => void): Promise<{ text: string; truncated: boolean }> {
  const decoder = new TextDecoder('utf-8')
  let text = ''
  let line = ''
  let size = 0
  for await (const chunk of body) {
    const room = limit - size
    const taken = chunk.length > room ? chunk.subarray(0, room) : chunk
    size += taken.length
    const decoded = decoder.decode(taken, { stream: true })
    text += decoded
    line += decoded
    const lines = line.split('\n')
    line = lines.pop() ?? ''
    for (const complete of lines) {
      const piece = completionChunks(complete).map(chunkText).join('')
      if (piece) onText(piece)
    }
    if (chunk.length > room) {
      body.destroy()
      return { text, truncated: true }
    }
  }
  return { text: text + decoder.decode(), truncated: false }
}

/** Why a call got no answer, in words a flow builder can act on; never a stack. */
function describe(error: unknown, timeoutMs: number): [CallErrorCode, string] {
  const cause = error instanceof Error && error.cause instanceof BlockedAddressError ? error.cause : error
  if (cause instanceof BlockedAddressError) {
    return ['refused_address', `${cause.hostname} is, or resolves to, a loopback, private or otherwise non-public address; calls reach public addresses only`]
  }
  if (error instanceof Error) {
    if (error.name === 'TimeoutError' || error.name === 'AbortError' || (error as NodeJS.ErrnoException).code === 'UND_ERR_HEADERS_TIMEOUT' || (error as NodeJS.ErrnoException).code === 'UND_ERR_BODY_TIMEOUT') {
      return ['timeout', `no complete answer within ${timeoutMs / 1000} s`]
    }
    if ((error as NodeJS.ErrnoException).code === 'UND_ERR_CONNECT_TIMEOUT') return ['timeout', `no connection within ${CONNECT_TIMEOUT_MS / 1000} s`]
    const code = (error as NodeJS.ErrnoException).code
    return ['network', code ? `${code}: ${error.message}` : error.message]
  }
  return ['network', String(error)]
}
