import createClient, { type Client, type ClientPathsWithMethod, type MethodResponse, type Middleware } from 'openapi-fetch'
import type { paths } from '../../../client/src/schema'
import type { FlowDefinition, Problem } from './flow-definition'

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

/** A save based on a draft that someone else has replaced since (412): both versions, as the service named them. */
export class StaleDraftError extends ApiError {
  constructor(
    message: string,
    readonly sentDraftVersion: number,
    readonly currentDraftVersion: number,
  ) {
    super(412, message)
  }
}

/** A publish refused because the flow publishes only when its tests pass (409): the tests that fail against the draft. */
export class TestsFailedError extends ApiError {
  constructor(
    message: string,
    readonly failingTests: FailingTest[],
  ) {
    super(409, message)
  }
}

// ---------------------------------------------------------------------------------------------
// The resources the editor uses (all in the client's workspace), as the service's OpenAPI document
// describes them: a change there breaks the editor's build.

type Api = Client<paths>
/** The body a successful call answers, as the client reads the schema. */
type Answer<Method extends 'get' | 'post' | 'put', Path extends ClientPathsWithMethod<Api, Method>> = MethodResponse<Api, Method, Path>
/** One item of a list endpoint's page. */
type Item<Path extends ClientPathsWithMethod<Api, 'get'>> = Answer<'get', Path> extends { content: (infer One)[] } ? One : never
/** The JSON body a call takes. */
type Input<Path extends keyof paths, Method extends 'post' | 'patch'> = paths[Path][Method] extends {
  requestBody: { content: { 'application/json': infer Body } }
}
  ? Body
  : never

type FlowAnswer = Answer<'get', '/v1/flows/{id}'>
/** A flow, its draft read as the editor's flow model (see `asFlowDetail`). */
export type FlowDetail = Omit<FlowAnswer, 'definition'> & { definition: FlowDefinition }
/** A flow of the workspace that a runFlow node may run, with its newest published version. */
export type FlowChoice = Pick<FlowDetail, 'id' | 'name' | 'publishedVersion'>
export type Sector = Item<'/v1/sectors'>
export type Variable = Item<'/v1/variables'>
export type VariableType = Variable['type']
export type VariableValue = NonNullable<Variable['defaultValue']>
export type NewVariable = Input<'/v1/variables', 'post'>
/** What the editor changes of a variable (its name and type stay as created). */
export type VariableChange = Pick<Input<'/v1/variables/{id}', 'patch'>, 'description' | 'defaultValue'>
export type Pipeline = Item<'/v1/kanban/pipelines'>
export type PipelineField = Pipeline['fields'][number]
export type Published = Answer<'post', '/v1/flows/{id}/publish'>
/** The version new sessions start on, and the one in gradual release with its share of them. */
export type Release = FlowDetail['release']
/** A test that failed against the draft when a publish ran the flow's tests. */
export type FailingTest = paths['/v1/flows/{id}/publish']['post']['responses'][409]['content']['application/json']['failingTests'][number]
export type PublishedVersion = Item<'/v1/flows/{id}/versions'>
export type Validation = Answer<'post', '/v1/flows/validate'>
export type PreviewSession = Answer<'post', '/v1/flows/{flowId}/preview-sessions'>
/** A message the person sends into a session (spec §6.2). */
export type InboundMessage = Input<'/v1/sessions/{sessionId}/message', 'post'>
/** An outside event posted into a session, which a waitForEvent node waits for. */
export type OutsideEvent = Input<'/v1/sessions/{sessionId}/events', 'post'>
/** An httpRequest node's data and sample values of the variables its templates read, for its "Try it". */
export type TryRequestBody = Input<'/v1/http-requests/try', 'post'>
/** The request as the service sent it (secrets as their placeholders), what came back, and how long it took. */
export type TriedCall = Answer<'post', '/v1/http-requests/try'>
/** A workspace's AI connection, which an ai node calls (its key stays in the secret it names). */
export type AiConnection = Item<'/v1/ai-connections'>
/** An ai node's data, a sample message of the contact and sample values of the variables it reads, for its "Try it". */
export type TryAiStepBody = Input<'/v1/ai-steps/try', 'post'>
/** The exit the step took on the sample, what it sent and filled, the call (key as its placeholder) and the tokens spent. */
export type TriedAiStep = Answer<'post', '/v1/ai-steps/try'>
/** A conversation test kept with the flow, with its id and dates. */
export type ConversationTest = Item<'/v1/flows/{id}/tests'>
/** A conversation test as written: its name, its steps and what each turn must do. */
export type ConversationTestBody = Input<'/v1/flows/{id}/tests', 'post'>
/** A run of the flow's tests: per test, per turn, what differs from what the test expects. */
export type TestRun = Answer<'post', '/v1/flows/{id}/test-runs'>
type Tokens = Answer<'post', '/auth/exchange'>

/**
 * The schema describes a draft by the properties the format names only; the format keeps any
 * others as they are (docs/flow-definition.md), and so does the editor's model (`FlowDefinition`
 * has an index signature). The schema's type is the narrower one, so it reads as the editor's
 * without a check.
 */
function asFlowDetail(flow: FlowAnswer): FlowDetail {
  const definition: FlowDefinition = flow.definition
  return { ...flow, definition }
}

// ---------------------------------------------------------------------------------------------
// Answers and failures.

type Result<T> = { data?: T; error?: unknown; response: Response }

/**
 * The failure the service answered. Its body is read defensively: it may be no JSON at all (a
 * proxy's page); only a flow's save and publish carry `problems`, and a refused publish `failingTests`.
 */
function failure(response: Response, body: unknown): ApiError {
  const b = typeof body === 'object' && body !== null ? (body as { message?: unknown; problems?: unknown; sentDraftVersion?: unknown; currentDraftVersion?: unknown; failingTests?: unknown }) : {}
  const message = typeof b.message === 'string' ? b.message : `HTTP ${response.status}`
  if (response.status === 412 && typeof b.sentDraftVersion === 'number' && typeof b.currentDraftVersion === 'number') {
    return new StaleDraftError(message, b.sentDraftVersion, b.currentDraftVersion)
  }
  if (response.status === 409 && Array.isArray(b.failingTests)) {
    const named = (test: unknown): test is FailingTest => typeof test === 'object' && test !== null && typeof (test as FailingTest).id === 'string' && typeof (test as FailingTest).name === 'string'
    return new TestsFailedError(message, b.failingTests.filter(named).map(({ id, name }) => ({ id, name })))
  }
  const problems = Array.isArray(b.problems) ? (b.problems as Problem[]) : []
  return new ApiError(response.status, message, problems)
}

/** The body of a successful call; an ApiError otherwise. */
async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  const { data, error, response } = await call
  if (!response.ok) throw failure(response, error)
  return data as T
}

/** The id a create answered in `Location` (the spec's creates without a body). */
async function createdId(call: Promise<Result<unknown>>): Promise<string> {
  const { error, response } = await call
  if (!response.ok) throw failure(response, error)
  const id = response.headers.get('location')?.split('/').pop()
  if (!id) throw new ApiError(response.status, 'the answer named no new resource')
  return id
}

// ---------------------------------------------------------------------------------------------

/**
 * The editor's authenticated session with the service (same origin, no cookies). Tokens live in
 * this object only: never in storage, never in a message to the host. The access token is renewed
 * a minute before it expires, and once more on a 401 (the call is then sent again, once).
 */
export class EditorSession {
  /** The API, typed from the service's OpenAPI document; every call carries the access token. */
  readonly client: Api
  /** The token endpoints, which take no access token. */
  readonly #tokens: Api
  #access: string | undefined
  #refresh: string | undefined
  #expiresAt = 0
  #timer: ReturnType<typeof setTimeout> | undefined
  #renewing: Promise<void> | undefined
  #onExpired: () => void = () => {}
  /** Each call in flight, as it can be sent again after a renewal (a sent request's body is spent). */
  readonly #resendable = new Map<string, Request>()

  constructor(base: string) {
    this.#tokens = createClient<paths>({ baseUrl: base, credentials: 'omit' })
    this.client = createClient<paths>({ baseUrl: base, credentials: 'omit' })
    this.client.use(this.#bearer)
  }

  set onExpired(handler: () => void) {
    this.#onExpired = handler
  }

  get authenticated(): boolean {
    return this.#access !== undefined
  }

  /** Trades the host's one-time token for tokens; throws ApiError when refused. */
  async exchange(ott: string): Promise<void> {
    this.#keep(await unwrap(this.#tokens.POST('/auth/exchange', { body: { ott } })))
  }

  dispose(): void {
    clearTimeout(this.#timer)
    this.#access = this.#refresh = undefined
  }

  #keep(tokens: Tokens): void {
    this.#access = tokens.access_token
    this.#refresh = tokens.refresh_token
    this.#expiresAt = Date.now() + tokens.expires_in * 1000
    clearTimeout(this.#timer)
    // A minute early, or halfway for short-lived tokens.
    const renewIn = tokens.expires_in > 120 ? tokens.expires_in - 60 : tokens.expires_in / 2
    this.#timer = setTimeout(() => void this.renew().catch(() => {}), renewIn * 1000)
  }

  /** Renews the tokens once (concurrent callers share the call); on failure the session is over. */
  renew(): Promise<void> {
    this.#renewing ??= (async () => {
      try {
        const refreshToken = this.#refresh
        if (!refreshToken) throw new ApiError(401, 'not authenticated')
        this.#keep(await unwrap(this.#tokens.POST('/auth/refresh', { body: { refresh_token: refreshToken } })))
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

  #authorize(request: Request): Request {
    if (!this.#access) throw new ApiError(401, 'not authenticated')
    request.headers.set('authorization', `Bearer ${this.#access}`)
    return request
  }

  readonly #bearer: Middleware = {
    onRequest: async ({ request, id }) => {
      if (this.#access && Date.now() > this.#expiresAt - 10_000) await this.renew()
      this.#authorize(request)
      this.#resendable.set(id, request.clone())
      return request
    },
    onResponse: async ({ response, id }) => {
      const resend = this.#resendable.get(id)
      this.#resendable.delete(id)
      if (response.status !== 401 || !resend || !this.#refresh) return response
      await this.renew()
      return fetch(this.#authorize(resend))
    },
    onError: ({ id }) => {
      this.#resendable.delete(id)
    },
  }
}

/** The calls the editor makes. */
export class FlowApi {
  readonly #client: Api

  constructor(session: EditorSession) {
    this.#client = session.client
  }

  flow = async (id: string) => asFlowDetail(await unwrap(this.#client.GET('/v1/flows/{id}', { params: { path: { id } } })))
  /**
   * Saves over the draft at `draftVersion` only (If-Match): a StaleDraftError when someone saved
   * meanwhile. The service takes the draft as any JSON and answers its problems; the editor sends its model.
   */
  saveDraft = async (id: string, definition: FlowDefinition, draftVersion: number) =>
    asFlowDetail(await unwrap(this.#client.PUT('/v1/flows/{id}/definition', { params: { path: { id }, header: { 'if-match': `"${draftVersion}"` } }, body: definition })))
  /** Publishes the draft for every new session; a TestsFailedError when the flow's tests must pass first and some fail. */
  publish = (id: string): Promise<Published> => unwrap(this.#client.POST('/v1/flows/{id}/publish', { params: { path: { id } } }))
  /** Makes a published version the one new sessions start on, at once; any gradual release ends. */
  rollBack = (id: string, version: number): Promise<Release> => unwrap(this.#client.POST('/v1/flows/{id}/rollback', { params: { path: { id } }, body: { version } }))
  versions = (id: string) => everyPage((page) => this.#client.GET('/v1/flows/{id}/versions', { params: { path: { id }, query: page } }))
  version = async (id: string, version: number): Promise<FlowDefinition> =>
    (await unwrap(this.#client.GET('/v1/flows/{id}/versions/{version}', { params: { path: { id, version } } }))).definition
  validate = (definition: FlowDefinition): Promise<Validation> => unwrap(this.#client.POST('/v1/flows/validate', { body: { definition } }))

  /**
   * The workspace's flows by name. A list item has the spec's fields only, without the newest
   * version: each flow's versions are asked for it, newest first.
   */
  flows = async (): Promise<FlowChoice[]> => {
    const flows = await everyPage((page) => this.#client.GET('/v1/flows', { params: { query: { ...page, orderBy: 'name' } } }))
    return Promise.all(
      flows.map(async ({ id, name }) => {
        const [newest] = (await unwrap(this.#client.GET('/v1/flows/{id}/versions', { params: { path: { id }, query: { page: 0, size: 1 } } }))).content
        return { id, name, publishedVersion: newest?.version ?? 1 }
      }),
    )
  }

  sectors = () => everyPage((page) => this.#client.GET('/v1/sectors', { params: { query: page } }))
  /** Creates a sector and answers its id (from the Location header; the body is empty). */
  createSector = (name: string): Promise<string> => createdId(this.#client.POST('/v1/sectors', { body: { name } }))

  variables = () => everyPage((page) => this.#client.GET('/v1/variables', { params: { query: page } }))
  createVariable = (input: NewVariable): Promise<Variable> => unwrap(this.#client.POST('/v1/variables', { body: input }))
  updateVariable = (id: string, input: VariableChange): Promise<Variable> =>
    unwrap(this.#client.PATCH('/v1/variables/{id}', { params: { path: { id } }, body: input }))

  pipelines = () => everyPage((page) => this.#client.GET('/v1/kanban/pipelines', { params: { query: page } }))
  /** The names of the workspace's secrets (never their values). */
  secretNames = async (): Promise<string[]> => (await everyPage((page) => this.#client.GET('/v1/secrets', { params: { query: page } }))).map((secret) => secret.name)
  /** Sends an httpRequest node's call once, with sample values for its variables, and answers what came back. */
  tryHttpRequest = (body: TryRequestBody): Promise<TriedCall> => unwrap(this.#client.POST('/v1/http-requests/try', { body }))
  aiConnections = () => everyPage((page) => this.#client.GET('/v1/ai-connections', { params: { query: page } }))
  /** Runs an ai node once on a sample message, as a turn would, and answers what it did; nothing is recorded. */
  tryAiStep = (body: TryAiStepBody): Promise<TriedAiStep> => unwrap(this.#client.POST('/v1/ai-steps/try', { body }))

  // The flow's conversation tests, run against its saved draft.
  tests = (flowId: string) => everyPage((page) => this.#client.GET('/v1/flows/{id}/tests', { params: { path: { id: flowId }, query: page } }))
  /** Adds a test to the flow and answers its id (from the Location header; the body is empty). */
  createTest = (flowId: string, body: ConversationTestBody): Promise<string> => createdId(this.#client.POST('/v1/flows/{id}/tests', { params: { path: { id: flowId } }, body }))
  deleteTest = async (flowId: string, testId: string): Promise<void> => {
    await unwrap(this.#client.DELETE('/v1/flows/{id}/tests/{testId}', { params: { path: { id: flowId, testId } } }))
  }
  /** Runs the flow's tests (those of `testIds`, else all) against its saved draft. */
  runTests = (flowId: string, testIds?: string[]): Promise<TestRun> =>
    unwrap(this.#client.POST('/v1/flows/{id}/test-runs', { params: { path: { id: flowId } }, body: testIds ? { testIds } : {} }))

  // The test panel: a preview session of the saved draft, talked to and followed as it runs.
  startPreview = (flowId: string, variables: Record<string, VariableValue>): Promise<PreviewSession> =>
    unwrap(this.#client.POST('/v1/flows/{flowId}/preview-sessions', { params: { path: { flowId } }, body: { variables } }))
  sendMessage = async (sessionId: string, message: InboundMessage): Promise<void> => {
    await unwrap(this.#client.POST('/v1/sessions/{sessionId}/message', { params: { path: { sessionId } }, body: message }))
  }
  postEvent = async (sessionId: string, event: OutsideEvent): Promise<void> => {
    await unwrap(this.#client.POST('/v1/sessions/{sessionId}/events', { params: { path: { sessionId } }, body: event }))
  }
  /** Fires the preview's pending timer now (a reminder, a timeout, a delay's end); its turn comes on the stream. */
  fireTimer = async (sessionId: string): Promise<void> => {
    await unwrap(this.#client.POST('/v1/sessions/{sessionId}/timer/fire', { params: { path: { sessionId } } }))
  }
  /** The preview's conversation so far as a conversation test, to edit and save with the flow. */
  sessionAsTest = async (sessionId: string): Promise<ConversationTestBody> =>
    (await unwrap(this.#client.GET('/v1/sessions/{sessionId}/test', { params: { path: { sessionId } } }))).test
  /** The session's Server-Sent Events with its debug events, resumed after `lastEventId`: a body to read. */
  streamSession = async (sessionId: string, lastEventId: string | undefined, signal: AbortSignal): Promise<ReadableStream<Uint8Array>> => {
    const header = lastEventId === undefined ? {} : { 'last-event-id': lastEventId }
    const { error, response } = await this.#client.GET('/v1/sessions/{sessionId}/stream', {
      params: { path: { sessionId }, query: { debug: true }, header },
      parseAs: 'stream',
      signal,
    })
    if (!response.ok) throw failure(response, error)
    if (!response.body) throw new ApiError(response.status, 'the stream has no body')
    return response.body
  }
}

/** Every item of a list endpoint, page by page (at most 100 pages of 100). */
async function everyPage<T>(call: (page: { page: number; size: number }) => Promise<Result<{ content: T[]; last: boolean }>>): Promise<T[]> {
  const items: T[] = []
  for (let page = 0; page < 100; page++) {
    const { content, last } = await unwrap(call({ page, size: 100 }))
    items.push(...content)
    if (last || content.length === 0) break
  }
  return items
}
