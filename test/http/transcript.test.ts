import { Value } from '@sinclair/typebox/value'
import t from 'tap'
import { Transcript } from '../../src/audit/transcript.js'
import { issueApiKey } from '../../src/commands/api-keys.js'
import { createWorkspace } from '../../src/commands/tenancy.js'
import { negotiate } from '../../src/http/routes/transcripts.js'
import { deliveryIdOf } from '../../src/webhooks/deliveries.js'
import { openTestApp } from '../helpers/app.js'
import { echoFlow } from '../helpers/flows.js'
import { apiBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

t.test('Accept negotiation: JSON by default, Markdown when preferred, nothing for neither', async (t) => {
  t.equal(negotiate(undefined), 'application/json')
  t.equal(negotiate(''), 'application/json')
  t.equal(negotiate('*/*'), 'application/json')
  t.equal(negotiate('text/markdown'), 'text/markdown')
  t.equal(negotiate('text/*'), 'text/markdown')
  t.equal(negotiate('application/json;q=0.5, text/markdown'), 'text/markdown')
  t.equal(negotiate('text/markdown;q=0.2, */*;q=0.8'), 'application/json')
  t.equal(negotiate('text/html, */*;q=0'), undefined)
  t.equal(negotiate('application/xml'), undefined)
  t.equal(negotiate('text/markdown;q=0, application/json;q=0'), undefined)
})

for (const backend of apiBackends) {
  t.test(`auditing a session over HTTP on ${backend.name}`, async (t) => {
    const { app, admin, ctx } = await openTestApp(t, backend, { engine: true })
    const headers = { 'x-api-key': admin.apiKey }
    const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
      const response = await app.inject({ method, url, headers, ...(payload ? { payload } : {}) })
      if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
      return response.json()
    }
    await call('POST', '/v1/variables', { name: 'said', type: 'string' })
    const flow = await call('POST', '/v1/flows', { name: 'Echo', definition: echoFlow })
    const { sessionId } = await call('POST', `/v1/sessions/flows/${flow.id}/create`, { externalId: 'contact-7' })
    const turnsDone = (n: number) =>
      eventually(`${n} turns`, async () => {
        const events = (await call('GET', `/v1/sessions/${sessionId}/events?size=500`)).content as { type: string }[]
        return events.filter((e) => e.type === 'TurnCompleted').length === n ? events : undefined
      })
    await turnsDone(1)
    await call('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: 'hello' } })
    await turnsDone(2)
    await call('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: 'bye' } })
    await turnsDone(3)

    await t.test('the events carry their stream, metadata and the webhook built from each turn', async (t) => {
      type Entry = { id: string; type: string; stream: string; revision: number; position: string; metadata: Record<string, unknown>; webhookDelivery: { id: string; status: string } | null }
      const events = await eventually('every turn in the outbox', async () => {
        const content = (await call('GET', `/v1/sessions/${sessionId}/events?size=500`)).content as Entry[]
        return content.filter((e) => e.type === 'TurnCompleted').every((e) => e.webhookDelivery) ? content : undefined
      })
      t.same(events.map((e) => e.type), ['SessionStarted', 'TurnCompleted', 'MessageReceived', 'TurnCompleted', 'MessageReceived', 'TurnCompleted'])
      t.same(events.map((e) => e.revision), [0, 1, 2, 3, 4, 5])
      t.ok(events.every((e) => e.stream === `session-${sessionId}` && /^\d+\/\d+$/.test(e.position)))
      t.match(events[0]!.metadata, { actor: admin.apiKeyId, workspaceId: admin.workspaceId, correlationId: String })
      const firstMessage = events[2]!
      t.match(events[3]!.metadata, { actor: 'engine', causationId: String, workspaceId: admin.workspaceId })
      t.equal(firstMessage.webhookDelivery, null, 'an inbound message makes no webhook')
      for (const turn of events.filter((e) => e.type === 'TurnCompleted')) {
        t.same(turn.webhookDelivery, { id: deliveryIdOf(turn.id), status: 'skipped' }, 'the key has no callback: the delivery is kept as skipped')
        const delivery = await call('GET', `/v1/webhooks/deliveries/${turn.webhookDelivery!.id}`)
        t.same(delivery.eventIds, [turn.id], 'and the delivery names the event back')
      }
    })

    await t.test('the transcript as JSON: in order, each outgoing message with its node and flow version', async (t) => {
      const response = await app.inject({ method: 'GET', url: `/v1/sessions/${sessionId}/transcript`, headers })
      t.equal(response.statusCode, 200)
      t.match(response.headers['content-type'], /^application\/json/)
      const transcript = response.json()
      t.ok(Value.Check(Transcript, transcript), 'the body matches the documented schema')
      t.match(transcript, { sessionId, workspaceId: admin.workspaceId, flowId: flow.id, flowVersion: 1, externalId: 'contact-7', status: 'completed' })
      const said = (e: { kind: string; message?: { text?: { body: string } }; function?: { type: string } }) => e.message?.text?.body ?? e.function?.type
      t.same(
        transcript.entries.map((e: { kind: string; nodeId?: string }) => [e.kind, e.nodeId ?? null, said(e) ?? null]),
        [
          ['started', null, null],
          ['outbound', 'ask', 'Say something'],
          ['inbound', null, 'hello'],
          ['outbound', 'say', 'You said hello'],
          ['outbound', 'ask', 'Say something'],
          ['inbound', null, 'bye'],
          ['function', 'end', 'finish'],
        ],
      )
      t.ok(transcript.entries.filter((e: { kind: string }) => e.kind === 'outbound').every((e: { flowVersion: number }) => e.flowVersion === 1))
    })

    await t.test('the transcript as Markdown with Accept: text/markdown', async (t) => {
      const response = await app.inject({ method: 'GET', url: `/v1/sessions/${sessionId}/transcript`, headers: { ...headers, accept: 'text/markdown' } })
      t.equal(response.statusCode, 200)
      t.match(response.headers['content-type'], /^text\/markdown; charset=utf-8/)
      t.match(response.headers.vary, /accept/i)
      t.match(response.body, new RegExp(`^# Session ${sessionId}\n`))
      t.match(response.body, /\*\*Bot\*\* \(v1, node `say`\): You said hello/)
      t.match(response.body, /\*\*User\*\*: bye/)
    })

    await t.test('an Accept that allows neither is 406 in the error shape', async (t) => {
      const response = await app.inject({ method: 'GET', url: `/v1/sessions/${sessionId}/transcript`, headers: { ...headers, accept: 'application/xml' } })
      t.equal(response.statusCode, 406)
      t.same(response.json(), { statusCode: 406, message: 'the transcript is available as application/json or text/markdown', error: 'Not Acceptable' })
    })

    await t.test('a session outside the key’s workspace is 404; a malformed id is 400', async (t) => {
      const other = await createWorkspace(ctx, { organizationId: admin.organizationId, name: 'Other' })
      const stranger = await issueApiKey(ctx, { organizationId: admin.organizationId, workspaceId: other.workspaceId, name: 'other', role: 'organization-admin', callbackUrl: null })
      for (const url of [`/v1/sessions/${sessionId}/transcript`, `/v1/sessions/${sessionId}/events`]) {
        const response = await app.inject({ method: 'GET', url, headers: { 'x-api-key': stranger.apiKey } })
        t.equal(response.statusCode, 404, url)
        t.same(response.json(), { statusCode: 404, message: `session ${sessionId} not found`, error: 'Not Found' })
      }
      const unknown = await app.inject({ method: 'GET', url: '/v1/sessions/00000000-0000-4000-8000-000000000000/transcript', headers })
      t.equal(unknown.statusCode, 404)
      const malformed = await app.inject({ method: 'GET', url: '/v1/sessions/nope/transcript', headers })
      t.equal(malformed.statusCode, 400)
      t.match(malformed.json(), { statusCode: 400, error: 'Bad Request' })
    })
  })
}
