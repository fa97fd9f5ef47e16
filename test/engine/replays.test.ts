import t from 'tap'
import { bootstrap } from '../../src/commands/tenancy.js'
import { sessionStream } from '../../src/domain/session.js'
import { FlowVersions } from '../../src/engine/flow-versions.js'
import { ReplayRunner } from '../../src/engine/replays.js'
import type { EventStore } from '../../src/eventstore/port.js'
import { openTestApp, silentLogger } from '../helpers/app.js'
import { echoFlow } from '../helpers/flows.js'
import { pgliteBackend } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// One organization's replay that cannot go on (a session it cannot read) is tried again round after
// round, and holds back no other organization's replay.

t.test("a failing replay holds back only itself", async (t) => {
  const { app, admin, ctx, store, storage, conversations } = await openTestApp(t, pgliteBackend, { engine: true })
  const other = await bootstrap(ctx, { organization: 'Other', workspace: 'Main', callbackUrl: null })
  const call = async (apiKey: string, method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => {
    const response = await app.inject({ method, url, headers: { 'x-api-key': apiKey }, ...(payload ? { payload } : {}) })
    if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
    return response.json()
  }
  /** A flow of the key's organization with two sessions that said hi, and its draft changed. */
  const arrange = async (apiKey: string): Promise<{ flowId: string; sessionIds: string[] }> => {
    await call(apiKey, 'POST', '/v1/variables', { name: 'said', type: 'string' })
    const flowId = (await call(apiKey, 'POST', '/v1/flows', { name: 'Echo', definition: echoFlow })).id as string
    const sessionIds: string[] = []
    for (let i = 0; i < 2; i++) {
      const { sessionId } = await call(apiKey, 'POST', `/v1/sessions/flows/${flowId}/create`)
      await call(apiKey, 'POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: 'hi' } })
      await eventually('the answer', async () => ((await call(apiKey, 'GET', `/v1/sessions/${sessionId}`)).pendingMessages === 0 ? true : undefined))
      sessionIds.push(sessionId)
    }
    await eventually('the analytics', async () => ((await call(apiKey, 'GET', `/v1/flows/${flowId}/analytics/versions`)).versions[0]?.sessions.total === 2 ? true : undefined))
    await call(apiKey, 'PUT', `/v1/flows/${flowId}/definition`, { ...echoFlow, nodes: echoFlow.nodes.map((node) => (node.id === 'say' ? { ...node, data: { messages: [{ type: 'text', text: { body: 'Heard {{said}}' } }] } } : node)) })
    return { flowId, sessionIds }
  }
  const acme = await arrange(admin.apiKey)
  const theirs = await arrange(other.apiKey)
  // This test drives the replays itself.
  await conversations!.replays.stop()

  const ask = async (apiKey: string, flowId: string) => (await call(apiKey, 'POST', `/v1/flows/${flowId}/replays`)).replayId as string
  const acmeReplay = await ask(admin.apiKey, acme.flowId)
  const theirReplay = await ask(other.apiKey, theirs.flowId)
  const unreadable = sessionStream(acme.sessionIds[0]!)
  const failing = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'readStream') return async (stream: string) => (stream === unreadable ? Promise.reject(new Error('the disk is gone')) : target.readStream(stream))
      return Reflect.get(target, property, receiver) as unknown
    },
  }) as EventStore
  const flows = new FlowVersions(store)
  await new ReplayRunner(storage.db, { ...ctx, store: failing }, flows, silentLogger).round()

  const shown = (apiKey: string, flowId: string, replayId: string) => call(apiKey, 'GET', `/v1/flows/${flowId}/replays/${replayId}`)
  t.match(await shown(other.apiKey, theirs.flowId, theirReplay), { status: 'finished', checked: 2, differingCount: 2 }, "the other organization's replay finishes")
  t.match(await shown(admin.apiKey, acme.flowId, acmeReplay), { status: 'running', checked: 0 }, 'the failing one records nothing')

  await new ReplayRunner(storage.db, ctx, flows, silentLogger).round()
  t.match(await shown(admin.apiKey, acme.flowId, acmeReplay), { status: 'finished', checked: 2, differingCount: 2 }, 'once the session can be read, it finishes')
})
