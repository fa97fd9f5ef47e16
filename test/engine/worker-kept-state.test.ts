import t from 'tap'
import { foldStream, rememberFolded } from '../../src/eventstore/stream-state.js'
import { session, sessionStream, type SessionEvent } from '../../src/domain/session.js'
import { FlowVersions } from '../../src/engine/flow-versions.js'
import { runTurn } from '../../src/engine/interpreter.js'
import { EngineWorker } from '../../src/engine/worker.js'
import { openTestApp, silentLogger } from '../helpers/app.js'
import { echoFlow } from '../helpers/flows.js'
import { countingReads } from '../helpers/counting-reads.js'
import { reachableBackends } from '../helpers/storage.js'

for (const backend of reachableBackends) {
  t.test(`the engine and the states it keeps, on ${backend.name}`, async (t) => {
    // No engine running: the test drives the worker itself.
    const { app, admin, store: realStore, storage } = await openTestApp(t, backend, { engine: false })
    const { store, counted } = countingReads(realStore)
    const api = async (url: string, payload: object) => {
      const response = await app.inject({ method: 'POST', url, headers: { 'x-api-key': admin.apiKey }, payload })
      if (response.statusCode >= 300) throw new Error(`${url}: ${response.statusCode} ${response.body}`)
      return response.json()
    }
    await api('/v1/variables', { name: 'said', type: 'string' })
    const flow = await api('/v1/flows', { name: 'Echo', definition: echoFlow })
    const { sessionId } = await api(`/v1/sessions/flows/${flow.id}/create`, {})
    const stream = sessionStream(sessionId as string)
    const worker = new EngineWorker(storage.db, store, new FlowVersions(realStore), runTurn, async () => {}, silentLogger)
    const turns = async () => (await realStore.readStream(stream)).filter((e) => e.type === 'TurnCompleted') as unknown as Extract<SessionEvent, { type: 'TurnCompleted' }>[]

    await t.test('a state kept as far as the batch read is used without reading the stream', async (t) => {
      await foldStream(store, session, stream)
      counted.reads = 0
      const kept = await foldStream(store, session, stream, { alreadyReadThrough: 0n })
      t.equal(kept.revision, 0n)
      t.equal(counted.reads, 0, 'no read')
      await foldStream(store, session, stream, { alreadyReadThrough: 1n })
      t.equal(counted.reads, 1, 'a batch that read further than the kept state: read')
    })

    await t.test('a kept state that misses newer events costs a conflict and a read, and every turn runs once', async (t) => {
      await worker.drive(sessionId, 0n)
      t.equal((await turns()).length, 1, 'the start turn')
      await api(`/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: 'one' } })
      const afterFirst = await foldStream(realStore, session, stream)
      // Another process appends a second message; this process's kept state does not know it.
      await api(`/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: 'two' } })
      rememberFolded(store, session, stream, afterFirst)
      counted.reads = 0
      await worker.drive(sessionId, afterFirst.revision)
      t.ok(counted.reads >= 1, 'the conflict made it read the stream')
      const texts = (await turns()).map((turn) => turn.data.output.messages.map((m) => ('text' in m ? m.text.body : '')).join(' | '))
      t.equal(texts.length, 3, 'one turn for each message, none twice')
      t.match(texts[1], /You said one/)
      t.match(texts[2], /You said two/)
    })
  })
}
