import t from 'tap'
import { flow, StaleDraftError, type FlowEvent } from '../../src/domain/flow.js'
import { openTestApp } from '../helpers/app.js'
import { apiBackends } from '../helpers/storage.js'

const at = { x: 0, y: 0 }
const greeter = (body: string) => ({
  schemaVersion: 1 as const,
  nodes: [
    { id: 'start', type: 'start', position: at, data: {} },
    { id: 'hi', type: 'message', position: { x: 240, y: 0 }, data: { messages: [{ type: 'text', text: { body } }] } },
  ],
  edges: [{ id: 'e1', source: 'start', target: 'hi' }],
})

t.test('the decider refuses a save based on a draft version that is no longer current', async (t) => {
  const flowId = '0190a0b0-0000-7000-8000-0000000000f1'
  const workspaceId = '0190a0b0-0000-7000-8000-0000000000a1'
  const history: FlowEvent[] = [
    { type: 'FlowCreated', data: { flowId, workspaceId, organizationId: workspaceId, name: 'F', definition: greeter('a'), createdAt: '2026-05-01T10:00:00.000Z' } },
    { type: 'FlowPublished', data: { flowId, version: 1, definition: greeter('a'), publishedAt: '2026-05-01T10:00:00.000Z' } },
    { type: 'FlowDraftSaved', data: { flowId, definition: greeter('b'), savedAt: '2026-05-01T10:01:00.000Z' } },
    { type: 'FlowRenamed', data: { flowId, name: 'G', renamedAt: '2026-05-01T10:02:00.000Z' } },
  ]
  const state = history.reduce(flow.evolve, flow.initialState)
  t.equal(state.status === 'active' && state.draftVersion, 3, 'the revision of the last draft save, plus one; a rename does not change it')
  const save = (ifDraftVersion: number) =>
    flow.decide({ type: 'SaveDraft', data: { flowId, workspaceId, definition: greeter('c'), catalog: { sectorIds: new Set(), pipelines: new Map(), variables: new Map() }, now: '2026-05-01T10:03:00.000Z', ifDraftVersion } }, state)
  t.throws(() => save(1), new StaleDraftError(flowId, 1, 3))
  t.match(save(3), [{ type: 'FlowDraftSaved' }])
})

for (const backend of apiBackends) {
  t.test(`a draft saved with If-Match on ${backend.name}`, async (t) => {
    const { app, admin } = await openTestApp(t, backend)
    const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: unknown, headers: Record<string, string> = {}) =>
      app.inject({ method, url, headers: { 'x-api-key': admin.apiKey, ...headers }, ...(payload !== undefined && { payload: payload as object }) })
    // Each subtest works on a Greeter flow of its own, its draft saved once over the first one.
    const arrangeDraft = async () => {
      const created = await call('POST', '/v1/flows', { name: 'Greeter', definition: greeter('Hi') })
      if (created.statusCode !== 201) throw new Error(`arranging the flow answered ${created.statusCode}`)
      const url = `/v1/flows/${created.json().id}`
      const firstVersion: number = created.json().draftVersion
      const saved = await call('PUT', `${url}/definition`, greeter('Hello'), { 'if-match': `"${firstVersion}"` })
      if (saved.statusCode !== 200) throw new Error(`arranging the draft answered ${saved.statusCode}`)
      const savedVersion: number = saved.json().draftVersion
      return { url, firstVersion, savedVersion }
    }

    await t.test('the draft version is answered and named in the ETag; a save based on the current draft passes', async (t) => {
      const created = await call('POST', '/v1/flows', { name: 'Greeter', definition: greeter('Hi') })
      const url = `/v1/flows/${created.json().id}`

      const first = await call('GET', url)
      const firstVersion: number = first.json().draftVersion
      t.ok(Number.isInteger(firstVersion), 'GET answers the draft version')
      t.equal(first.headers.etag, `"${firstVersion}"`, 'and names it in the ETag header')
      t.equal(created.headers.etag, `"${firstVersion}"`, 'so does the creation')

      const saved = await call('PUT', `${url}/definition`, greeter('Hello'), { 'if-match': `"${firstVersion}"` })
      t.equal(saved.statusCode, 200, 'a save based on the current draft passes')
      const savedVersion: number = saved.json().draftVersion
      t.not(savedVersion, firstVersion, 'and answers the new version')
      t.equal(saved.headers.etag, `"${savedVersion}"`)
      t.equal((await call('GET', url)).json().draftVersion, savedVersion)
    })

    await t.test('a save based on an older draft answers 412 naming both versions, and changes nothing', async (t) => {
      const { url, firstVersion, savedVersion } = await arrangeDraft()
      const stale = await call('PUT', `${url}/definition`, greeter('Mine'), { 'if-match': `"${firstVersion}"` })
      t.equal(stale.statusCode, 412)
      const body = stale.json()
      t.same(Object.keys(body).sort(), ['currentDraftVersion', 'error', 'message', 'sentDraftVersion', 'statusCode'])
      t.match(body, { statusCode: 412, error: 'Precondition Failed', sentDraftVersion: firstVersion, currentDraftVersion: savedVersion })
      t.ok(body.message.includes(`version ${firstVersion}`) && body.message.includes(`version ${savedVersion}`), 'the message names both versions')
      t.same((await call('GET', url)).json().definition, greeter('Hello'))
    })

    await t.test('renaming and publishing leave the draft version as it is', async (t) => {
      const { url, savedVersion } = await arrangeDraft()
      await call('PATCH', url, { name: 'Renamed' })
      await call('POST', `${url}/publish`)
      t.equal((await call('GET', url)).json().draftVersion, savedVersion)
      t.equal((await call('PUT', `${url}/definition`, greeter('Hello'), { 'if-match': `"${savedVersion}"` })).statusCode, 200)
    })

    await t.test('without If-Match, or with *, the save does not check the version', async (t) => {
      const { url, savedVersion } = await arrangeDraft()
      const plain = await call('PUT', `${url}/definition`, greeter('Plain'))
      t.equal(plain.statusCode, 200)
      t.ok(plain.json().draftVersion > savedVersion)
      t.equal((await call('PUT', `${url}/definition`, greeter('Any'), { 'if-match': '*' })).statusCode, 200)
    })

    await t.test('an If-Match that names no draft version answers 400', async (t) => {
      const { url } = await arrangeDraft()
      for (const ifMatch of ['3', 'W/"3"', '"abc"', '"0"', '"1", "2"']) {
        const response = await call('PUT', `${url}/definition`, greeter('x'), { 'if-match': ifMatch })
        t.equal(response.statusCode, 400, ifMatch)
        t.match(response.json(), { statusCode: 400, error: 'Bad Request', message: /if-match/ })
      }
    })

    await t.test('two saves at once based on the same draft: one passes, the other answers 412', async (t) => {
      const { url } = await arrangeDraft()
      const current: number = (await call('GET', url)).json().draftVersion
      const answers = await Promise.all(['One', 'Two'].map((body) => call('PUT', `${url}/definition`, greeter(body), { 'if-match': `"${current}"` })))
      t.same(answers.map((a) => a.statusCode).sort(), [200, 412])
      const winner = answers.find((a) => a.statusCode === 200)!.json()
      const loser = answers.find((a) => a.statusCode === 412)!.json()
      t.equal(loser.currentDraftVersion, winner.draftVersion)
      t.same((await call('GET', url)).json().definition, winner.definition)
    })
  })
}
