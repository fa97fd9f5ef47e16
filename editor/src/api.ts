import type { FieldType, FlowDefinition, Problem } from './flow/types'

/** A failed call: the service's `{statusCode, message, error}`, plus `problems` for an invalid flow. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly problems: Problem[] = [],
  ) {
    super(message)
  }
}

interface TokenResponse {
  access_token: string
  refresh_token: string
  token_type: 'Bearer'
  expires_in: number
}

const isTokenResponse = (body: unknown): body is TokenResponse => {
  const b = body as Partial<TokenResponse> | null
  return typeof b?.access_token === 'string' && typeof b.refresh_token === 'string' && typeof b.expires_in === 'number'
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text()
  if (!text) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

function errorOf(status: number, body: unknown): ApiError {
  const b = body as { message?: unknown; problems?: unknown } | undefined
  const message = typeof b?.message === 'string' ? b.message : `HTTP ${status}`
  const problems = Array.isArray(b?.problems) ? (b.problems as Problem[]) : []
  return new ApiError(status, message, problems)
}

/**
 * The editor's authenticated session with the service (same origin). Tokens live in this object
 * only: never in storage, never in a message to the host. The access token is renewed a minute
 * before it expires, and once more on a 401.
 */
export class EditorSession {
  #access: string | undefined
  #refresh: string | undefined
  #expiresAt = 0
  #timer: ReturnType<typeof setTimeout> | undefined
  #renewing: Promise<void> | undefined
  #onExpired: () => void = () => {}

  constructor(private readonly base: string) {}

  set onExpired(handler: () => void) {
    this.#onExpired = handler
  }

  get authenticated(): boolean {
    return this.#access !== undefined
  }

  /** Trades the host's one-time token for tokens; throws ApiError when refused. */
  async exchange(ott: string): Promise<void> {
    await this.#obtain('/auth/exchange', { ott })
  }

  dispose(): void {
    clearTimeout(this.#timer)
    this.#access = this.#refresh = undefined
  }

  async #obtain(path: string, body: unknown): Promise<void> {
    const response = await fetch(this.base + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      credentials: 'omit',
    })
    const payload = await readBody(response)
    if (!response.ok) throw errorOf(response.status, payload)
    if (!isTokenResponse(payload)) throw new ApiError(response.status, 'unexpected token response')
    this.#access = payload.access_token
    this.#refresh = payload.refresh_token
    this.#expiresAt = Date.now() + payload.expires_in * 1000
    clearTimeout(this.#timer)
    // A minute early, or halfway for short-lived tokens.
    const renewIn = payload.expires_in > 120 ? payload.expires_in - 60 : payload.expires_in / 2
    this.#timer = setTimeout(() => void this.renew().catch(() => {}), renewIn * 1000)
  }

  /** Renews the tokens once (concurrent callers share the call); on failure the session is over. */
  renew(): Promise<void> {
    this.#renewing ??= (async () => {
      try {
        const refreshToken = this.#refresh
        if (!refreshToken) throw new ApiError(401, 'not authenticated')
        await this.#obtain('/auth/refresh', { refresh_token: refreshToken })
      } catch (error) {
        this.dispose()
        this.#onExpired()
        throw error
      } finally {
        this.#renewing = undefined
      }
    })()
    return this.#renewing
  }

  /** A JSON call to the API with the access token; answers the body and the response headers. */
  async call<T>(method: string, path: string, body?: unknown): Promise<{ body: T; headers: Headers }> {
    if (this.#access && Date.now() > this.#expiresAt - 10_000) await this.renew()
    let response = await this.#send(method, path, body)
    if (response.status === 401 && this.#refresh) {
      await this.renew()
      response = await this.#send(method, path, body)
    }
    const payload = await readBody(response)
    if (!response.ok) throw errorOf(response.status, payload)
    return { body: payload as T, headers: response.headers }
  }

  #send(method: string, path: string, body: unknown): Promise<Response> {
    if (!this.#access) return Promise.reject(new ApiError(401, 'not authenticated'))
    const headers: Record<string, string> = { authorization: `Bearer ${this.#access}` }
    if (body !== undefined) headers['content-type'] = 'application/json'
    return fetch(this.base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit' })
  }
}

// ---------------------------------------------------------------------------------------------
// The resources the editor uses (all in the client's workspace).

export interface FlowDetail {
  id: string
  name: string
  updatedAt: string
  publishedVersion: number
  definition: FlowDefinition
}

export interface Sector {
  id: string
  name: string
}

export type VariableType = 'string' | 'number' | 'boolean' | 'object'
export type VariableValue = string | number | boolean | Record<string, unknown>

export interface Variable {
  id: string
  name: string
  type: VariableType
  description: string | null
  defaultValue: VariableValue | null
}

export interface Stage {
  id: string
  name: string
  order: number
  color: string
}

export interface PipelineField {
  id: string
  name: string
  type: FieldType
  required: boolean
  order: number
  /** The code of a `currency` field (BRL); null for the other types. */
  currency: string | null
}

export interface Pipeline {
  id: string
  name: string
  stages: Stage[]
  fields: PipelineField[]
}

interface Page<T> {
  content: T[]
  last: boolean
}

export class FlowApi {
  constructor(private readonly session: EditorSession) {}

  private async all<T>(path: string): Promise<T[]> {
    const items: T[] = []
    for (let page = 0; page < 100; page++) {
      const { body } = await this.session.call<Page<T>>('GET', `${path}?page=${page}&size=100`)
      items.push(...body.content)
      if (body.last || body.content.length === 0) break
    }
    return items
  }

  flow = async (id: string) => (await this.session.call<FlowDetail>('GET', `/v1/flows/${id}`)).body
  saveDraft = async (id: string, definition: FlowDefinition) => (await this.session.call<FlowDetail>('PUT', `/v1/flows/${id}/definition`, definition)).body
  publish = async (id: string) => (await this.session.call<{ version: number; publishedAt: string }>('POST', `/v1/flows/${id}/publish`)).body
  validate = async (definition: FlowDefinition) =>
    (await this.session.call<{ valid: boolean; problems: Problem[] }>('POST', '/v1/flows/validate', { definition })).body

  sectors = () => this.all<Sector>('/v1/sectors')
  /** Creates a sector and answers its id (from the Location header; the body is empty). */
  createSector = async (name: string): Promise<string> => {
    const { headers } = await this.session.call<undefined>('POST', '/v1/sectors', { name })
    const id = headers.get('location')?.split('/').pop()
    if (!id) throw new ApiError(500, 'the new sector has no Location')
    return id
  }

  variables = () => this.all<Variable>('/v1/variables')
  createVariable = async (input: { name: string; type: VariableType; description?: string; defaultValue?: VariableValue }) =>
    (await this.session.call<Variable>('POST', '/v1/variables', input)).body
  updateVariable = async (id: string, input: { description?: string | null; defaultValue?: VariableValue | null }) =>
    (await this.session.call<Variable>('PATCH', `/v1/variables/${id}`, input)).body

  pipelines = () => this.all<Pipeline>('/v1/kanban/pipelines')
}
