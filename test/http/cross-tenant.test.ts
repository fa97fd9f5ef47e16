import { randomUUID } from 'node:crypto'
import t from 'tap'
import { issueApiKey } from '../../src/commands/api-keys.js'
import { createOrganization, createWorkspace } from '../../src/commands/tenancy.js'
import { openTestApp } from '../helpers/app.js'
import { withRoutes } from '../helpers/routes.js'
import { apiBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// Every route that takes the id of a record answers 404 to a key of another organization, and to a
// workspace key of another workspace of the same organization, never 403 and never the record,
// and changes nothing. The routes come from the OpenAPI document the app serves (and from the
// routes it registered, should one be left out of the document); a by-id route this file cannot
// build a request for fails the test, so a new one cannot slip past the check.

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

interface Ids {
  workspaceId: string
  clientId: string
  apiKeyId: string
  sectorId: string
  flowId: string
  testId: string
  replayId: string
  variableId: string
  secretName: string
  aiConnectionId: string
  sessionId: string
  pipelineId: string
  stageId: string
  cardId: string
  deliveryId: string
}

interface Built {
  url: string
  payload?: unknown
}

const greeter = {
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'hi', type: 'message', position: { x: 200, y: 0 }, data: { messages: [{ type: 'text', text: { body: 'Hi' } }] } },
  ],
  edges: [{ id: 'a', source: 'start', target: 'hi' }],
}

/** How to reach each by-id route with the ids of one organization's records, keyed `METHOD /path/{param}`. */
const requests: Record<string, (ids: Ids) => Built> = {
  'GET /v1/workspaces/{id}': (ids) => ({ url: `/v1/workspaces/${ids.workspaceId}` }),
  'PATCH /v1/workspaces/{id}': (ids) => ({ url: `/v1/workspaces/${ids.workspaceId}`, payload: { name: 'Renamed' } }),
  'DELETE /v1/clients/{clientId}': (ids) => ({ url: `/v1/clients/${ids.clientId}` }),
  'PATCH /v1/api-keys/{id}': (ids) => ({ url: `/v1/api-keys/${ids.apiKeyId}`, payload: { name: 'renamed' } }),
  'DELETE /v1/api-keys/{id}': (ids) => ({ url: `/v1/api-keys/${ids.apiKeyId}` }),
  'PATCH /v1/sectors/{id}': (ids) => ({ url: `/v1/sectors/${ids.sectorId}`, payload: { name: 'Renamed' } }),
  'DELETE /v1/sectors/{id}': (ids) => ({ url: `/v1/sectors/${ids.sectorId}` }),
  'GET /v1/flows/{id}': (ids) => ({ url: `/v1/flows/${ids.flowId}` }),
  'PATCH /v1/flows/{id}': (ids) => ({ url: `/v1/flows/${ids.flowId}`, payload: { name: 'Renamed' } }),
  'PUT /v1/flows/{id}/definition': (ids) => ({ url: `/v1/flows/${ids.flowId}/definition`, payload: greeter }),
  'POST /v1/flows/{id}/publish': (ids) => ({ url: `/v1/flows/${ids.flowId}/publish` }),
  'GET /v1/flows/{id}/versions': (ids) => ({ url: `/v1/flows/${ids.flowId}/versions` }),
  'GET /v1/flows/{id}/versions/{version}': (ids) => ({ url: `/v1/flows/${ids.flowId}/versions/1` }),
  'GET /v1/flows/{id}/analytics': (ids) => ({ url: `/v1/flows/${ids.flowId}/analytics` }),
  'GET /v1/flows/{id}/analytics/versions': (ids) => ({ url: `/v1/flows/${ids.flowId}/analytics/versions` }),
  'GET /v1/flows/{id}/releases': (ids) => ({ url: `/v1/flows/${ids.flowId}/releases` }),
  'POST /v1/flows/{id}/rollback': (ids) => ({ url: `/v1/flows/${ids.flowId}/rollback`, payload: { version: 1 } }),
  'POST /v1/flows/{id}/release': (ids) => ({ url: `/v1/flows/${ids.flowId}/release`, payload: { version: 1, percent: 100 } }),
  'GET /v1/flows/{id}/tests': (ids) => ({ url: `/v1/flows/${ids.flowId}/tests` }),
  'POST /v1/flows/{id}/tests': (ids) => ({ url: `/v1/flows/${ids.flowId}/tests`, payload: { name: 'Another', steps: [] } }),
  'GET /v1/flows/{id}/tests/{testId}': (ids) => ({ url: `/v1/flows/${ids.flowId}/tests/${ids.testId}` }),
  'PUT /v1/flows/{id}/tests/{testId}': (ids) => ({ url: `/v1/flows/${ids.flowId}/tests/${ids.testId}`, payload: { name: 'Renamed', steps: [] } }),
  'DELETE /v1/flows/{id}/tests/{testId}': (ids) => ({ url: `/v1/flows/${ids.flowId}/tests/${ids.testId}` }),
  'POST /v1/flows/{id}/test-runs': (ids) => ({ url: `/v1/flows/${ids.flowId}/test-runs`, payload: {} }),
  'POST /v1/flows/{id}/replays': (ids) => ({ url: `/v1/flows/${ids.flowId}/replays`, payload: {} }),
  'GET /v1/flows/{id}/replays': (ids) => ({ url: `/v1/flows/${ids.flowId}/replays` }),
  'GET /v1/flows/{id}/replays/{replayId}': (ids) => ({ url: `/v1/flows/${ids.flowId}/replays/${ids.replayId}` }),
  'PATCH /v1/variables/{id}': (ids) => ({ url: `/v1/variables/${ids.variableId}`, payload: { description: 'changed' } }),
  'DELETE /v1/variables/{id}': (ids) => ({ url: `/v1/variables/${ids.variableId}` }),
  'DELETE /v1/secrets/{name}': (ids) => ({ url: `/v1/secrets/${ids.secretName}` }),
  'GET /v1/ai-connections/{id}': (ids) => ({ url: `/v1/ai-connections/${ids.aiConnectionId}` }),
  'PATCH /v1/ai-connections/{id}': (ids) => ({ url: `/v1/ai-connections/${ids.aiConnectionId}`, payload: { model: 'gpt-4o' } }),
  'DELETE /v1/ai-connections/{id}': (ids) => ({ url: `/v1/ai-connections/${ids.aiConnectionId}` }),
  // The test app's DNS knows no names: its owner's check answers at once that the endpoint could not be reached.
  'POST /v1/ai-connections/{id}/check': (ids) => ({ url: `/v1/ai-connections/${ids.aiConnectionId}/check` }),
  'POST /v1/sessions/flows/{flowId}/create': (ids) => ({ url: `/v1/sessions/flows/${ids.flowId}/create`, payload: {} }),
  'POST /v1/sessions/{sessionId}/message': (ids) => ({ url: `/v1/sessions/${ids.sessionId}/message`, payload: { type: 'text', text: { body: 'hello' } } }),
  'POST /v1/sessions/{sessionId}/events': (ids) => ({ url: `/v1/sessions/${ids.sessionId}/events`, payload: { name: 'payment.confirmed' } }),
  'POST /v1/sessions/{sessionId}/timer/fire': (ids) => ({ url: `/v1/sessions/${ids.sessionId}/timer/fire` }),
  'GET /v1/sessions/{sessionId}/test': (ids) => ({ url: `/v1/sessions/${ids.sessionId}/test` }),
  'POST /v1/flows/{flowId}/preview-sessions': (ids) => ({ url: `/v1/flows/${ids.flowId}/preview-sessions`, payload: {} }),
  'GET /v1/sessions/{sessionId}': (ids) => ({ url: `/v1/sessions/${ids.sessionId}` }),
  'GET /v1/sessions/{sessionId}/events': (ids) => ({ url: `/v1/sessions/${ids.sessionId}/events` }),
  // The session has ended, so its owner's stream replays its turns and closes.
  'GET /v1/sessions/{sessionId}/stream': (ids) => ({ url: `/v1/sessions/${ids.sessionId}/stream` }),
  'GET /v1/sessions/{sessionId}/transcript': (ids) => ({ url: `/v1/sessions/${ids.sessionId}/transcript` }),
  'GET /v1/kanban/pipelines/{id}': (ids) => ({ url: `/v1/kanban/pipelines/${ids.pipelineId}` }),
  'PATCH /v1/kanban/pipelines/{id}': (ids) => ({ url: `/v1/kanban/pipelines/${ids.pipelineId}`, payload: { name: 'Renamed' } }),
  'POST /v1/kanban/pipelines/{pipelineId}/cards': (ids) => ({ url: `/v1/kanban/pipelines/${ids.pipelineId}/cards`, payload: { stageId: ids.stageId } }),
  'GET /v1/kanban/pipelines/{pipelineId}/cards': (ids) => ({ url: `/v1/kanban/pipelines/${ids.pipelineId}/cards` }),
  'GET /v1/kanban/cards/{id}': (ids) => ({ url: `/v1/kanban/cards/${ids.cardId}` }),
  'PATCH /v1/kanban/cards/{id}': (ids) => ({ url: `/v1/kanban/cards/${ids.cardId}`, payload: { tags: ['seen'] } }),
  'DELETE /v1/kanban/cards/{id}': (ids) => ({ url: `/v1/kanban/cards/${ids.cardId}` }),
  'GET /v1/webhooks/deliveries/{deliveryId}': (ids) => ({ url: `/v1/webhooks/deliveries/${ids.deliveryId}` }),
  'POST /v1/webhooks/deliveries/{deliveryId}/retry': (ids) => ({ url: `/v1/webhooks/deliveries/${ids.deliveryId}/retry` }),
}

/**
 * Routes whose parameter names a record of the caller's own workspace rather than one to find:
 * `PUT /v1/secrets/{name}` creates the name where it is missing, so another tenant's PUT makes a
 * secret of its own (test/http/secrets.test.ts shows the owner's is untouched).
 */
const OWN_WORKSPACE_ONLY = new Set(['PUT /v1/secrets/{name}'])

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const
const isApi = (path: string) => /^\/(v1|auth)\//.test(path)

for (const backend of apiBackends) {
  t.test(`every by-id route answers 404 across organizations and workspaces, on ${backend.name}`, async (t) => {
    const { app, admin, ctx, storage, routes } = await withRoutes(() => openTestApp(t, backend, { engine: true }))
    const send = (key: string, method: Method, { url, payload }: Built) =>
      app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload === undefined ? {} : { payload: payload as object }) })
    const created = async (url: string, payload: object) => {
      const response = await send(admin.apiKey, 'POST', { url, payload })
      if (response.statusCode !== 201) throw new Error(`POST ${url} answered ${response.statusCode}`)
      // Some creations answer only a Location.
      return response.body === '' ? { id: String(response.headers.location).split('/').at(-1) } : response.json()
    }

    const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> }
    const documented = Object.entries(document.paths).flatMap(([path, item]) =>
      METHODS.filter((m) => m in item).map((m) => `${m.toUpperCase()} ${path}`),
    )
    const registered = routes.map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}')}`)
    const byId = [...new Set([...documented, ...registered])].filter((route) => isApi(route.split(' ')[1]!) && route.includes('{') && !OWN_WORKSPACE_ONLY.has(route)).sort()
    t.ok(byId.length >= 30, `${byId.length} by-id routes`)
    t.same(
      byId.filter((route) => !Object.hasOwn(requests, route)),
      [],
      'every by-id route of the app has a request here',
    )
    t.same(
      Object.keys(requests).filter((route) => !byId.includes(route)),
      [],
      'every request here is of a route the app has',
    )

    // One record of every kind in the first organization.
    const client = await created('/v1/clients', { name: 'Portal' })
    const apiKey = await created('/v1/api-keys', { name: 'bot', callbackUrl: 'https://hooks.example.com/bot' })
    const sector = await created('/v1/sectors', { name: 'Sales' })
    const variable = await created('/v1/variables', { name: 'plan', type: 'string' })
    const secretName = 'shop_token'
    if ((await send(admin.apiKey, 'PUT', { url: `/v1/secrets/${secretName}`, payload: { value: 'sk_test_123' } })).statusCode !== 201) throw new Error('PUT /v1/secrets answered otherwise than 201')
    const aiConnection = await created('/v1/ai-connections', { name: 'Models', baseUrl: 'https://models.example.com/v1', apiKeySecret: secretName, model: 'gpt-4o-mini' })
    const flow = await created('/v1/flows', { name: 'Greeter', definition: greeter })
    const test = await created(`/v1/flows/${flow.id}/tests`, { name: 'Greets', start: { messages: [{ text: { equals: 'Hi' } }] }, steps: [] })
    const pipeline = await created('/v1/kanban/pipelines', { name: 'Leads', stages: [{ name: 'New' }] })
    const card = await created(`/v1/kanban/pipelines/${pipeline.id}/cards`, { stageId: pipeline.stages[0].id })
    const session = await created(`/v1/sessions/flows/${flow.id}/create`, {})
    // The admin key has no callback: the delivery of the session's one turn is kept as skipped.
    const replay = (await send(admin.apiKey, 'POST', { url: `/v1/flows/${flow.id}/replays`, payload: {} })).json()
    // Finished before the checks: a replay's progress is appended in the background.
    await eventually('the replay to finish', async () => {
      const shown = (await send(admin.apiKey, 'GET', { url: `/v1/flows/${flow.id}/replays/${replay.replayId}` })).json()
      return shown.status === 'finished' ? shown : undefined
    })
    const delivery = await eventually('the delivery of the first turn', async () => {
      const page = (await send(admin.apiKey, 'GET', { url: `/v1/webhooks/deliveries?sessionId=${session.sessionId}` })).json()
      return page.content?.[0] as { id: string } | undefined
    })
    await eventually('the session to end', async () => {
      const shown = (await send(admin.apiKey, 'GET', { url: `/v1/sessions/${session.sessionId}` })).json()
      return shown.status === 'completed' ? shown : undefined
    })
    const ids: Ids = {
      workspaceId: admin.workspaceId,
      clientId: client.clientId,
      apiKeyId: apiKey.id,
      sectorId: sector.id,
      flowId: flow.id,
      testId: test.id,
      replayId: replay.replayId,
      variableId: variable.id,
      secretName,
      aiConnectionId: aiConnection.id,
      sessionId: session.sessionId,
      pipelineId: pipeline.id,
      stageId: pipeline.stages[0].id,
      cardId: card.id,
      deliveryId: delivery.id,
    }
    t.notOk(Object.values(ids).some((id) => typeof id !== 'string'), 'every record has an id')

    const other = await createOrganization(ctx, { name: 'Other' })
    const otherWorkspace = await createWorkspace(ctx, { organizationId: other.organizationId, name: 'W' })
    const foreign = await issueApiKey(ctx, { organizationId: other.organizationId, workspaceId: otherWorkspace.workspaceId, name: 'k', role: 'organization-admin', callbackUrl: null })
    const siblingWorkspace = await createWorkspace(ctx, { organizationId: admin.organizationId, name: 'Sibling' })
    const sibling = await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId: siblingWorkspace.workspaceId, name: 'sibling', role: 'workspace', callbackUrl: null })

    // Ids that name nothing: another tenant's record must be answered exactly like these.
    const unknown = Object.fromEntries(Object.keys(ids).map((k) => [k, k === 'secretName' ? `s_${randomUUID().replaceAll('-', '')}` : randomUUID()])) as unknown as Ids
    const masked = (body: { message?: unknown }, of: Ids) =>
      ({ ...body, message: Object.entries(of).reduce((text, [name, id]) => text.replaceAll(id, `<${name}>`), String(body.message)) })
    /** What a write would change: the event log (every record but deliveries is event-sourced) and the deliveries. */
    const everything = async () => ({
      events: (await storage.db.selectFrom('events').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n,
      deliveries: await storage.db.selectFrom('webhook_deliveries').selectAll().orderBy('id').execute(),
    })

    const covered = byId.filter((route) => Object.hasOwn(requests, route))
    for (const [whose, key] of [['another organization', foreign.apiKey], ['a sibling workspace', sibling.apiKey]] as const) {
      await t.test(`a key of ${whose}: 404 as for nothing, and nothing changes`, async (t) => {
        const before = await everything()
        for (const route of covered) {
          const method = route.split(' ')[0] as Method
          const response = await send(key, method, requests[route]!(ids))
          t.equal(response.statusCode, 404, `${route}: 404 to ${whose}`)
          const body = response.json()
          t.same(Object.keys(body).sort(), ['error', 'message', 'statusCode'], `${route}: the spec error shape`)
          t.match(body, { statusCode: 404, error: 'Not Found' }, `${route}: Not Found`)
          const nothing = await send(key, method, requests[route]!(unknown))
          t.equal(nothing.statusCode, 404, `${route}: 404 for an id that names nothing`)
          t.same(masked(body, ids), masked(nothing.json(), unknown), `${route}: the same answer as for an id that names nothing`)
        }
        t.same(await everything(), before, 'no event appended, no delivery changed')
      })
    }

    // The same requests reach the records with their own organization's key, so the 404s above
    // came from the tenancy check and not from a wrong id. Deletions go last.
    const ownerOrder = [...covered.filter((r) => !r.startsWith('DELETE ')), ...covered.filter((r) => r.startsWith('DELETE '))]
    for (const route of ownerOrder) {
      const method = route.split(' ')[0] as Method
      const status = (await send(admin.apiKey, method, requests[route]!(ids))).statusCode
      t.ok(status !== 404 && status < 500, `${route}: reached by its own organization (${status})`)
    }
  })
}
