import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { card, cardStream, type CardEvent } from '../../src/domain/card.js'
import { loadConfig } from '../../src/config.js'
import { openTestApp } from '../helpers/app.js'
import { echoFlow } from '../helpers/flows.js'
import { startHttpsReceiver } from '../helpers/https-receiver.js'
import { reachableBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// Invariants under concurrency and outages: parallel card moves leave a
// card in one of the requested stages with a history that agrees; a receiver that is down for a
// while gets everything once it is back, in order per session.

for (const backend of reachableBackends) {
  t.test(`races and outages on ${backend.name}`, async (t) => {
    // One app for both: the engine and the deliveries it runs for the second leave the first's card
    // alone (a card of no session sends no webhook).
    const receiver = await startHttpsReceiver()
    t.teardown(() => receiver.close())
    const loopback = ['127.0.0.1/32']
    const { app, admin, store } = await openTestApp(t, backend, {
      config: loadConfig({ WEBHOOK_ALLOWED_PRIVATE_CIDRS: loopback.join(',') }),
      engine: true,
      webhooks: { allowedPrivateCidrs: loopback, caFile: receiver.caFile, retrySchedule: [0, 0.2, 0.4, 0.8, 1, 1, 1, 1, 1, 1, 1, 1], health: { failuresBeforeFailing: 5, probeSchedule: [0.5] } },
    })

    await t.test('20 parallel moves of one card: it ends in a requested stage and its history agrees', async (t) => {
      const headers = { 'x-api-key': admin.apiKey }
      const stages = Array.from({ length: 20 }, (_, i) => ({ name: `S${i}`, color: '#2196F3' }))
      const pipeline = (await app.inject({ method: 'POST', url: '/v1/kanban/pipelines', headers, payload: { name: 'Race', stages, fields: [] } })).json()
      const stageIds: string[] = pipeline.stages.map((s: { id: string }) => s.id)
      const created = (await app.inject({ method: 'POST', url: `/v1/kanban/pipelines/${pipeline.id}/cards`, headers, payload: { stageId: stageIds[0] } })).json()
      const requested = stageIds.slice(1)
      const answers = await Promise.all(requested.map((stageId) => app.inject({ method: 'PATCH', url: `/v1/kanban/cards/${created.id}`, headers, payload: { stageId } })))
      t.same(answers.map((a) => a.statusCode), requested.map(() => 200), 'every move is accepted')

      const history = (await store.readStream(cardStream(created.id))).map((e) => ({ type: e.type, data: e.data }) as CardEvent)
      const moves = history.filter((e) => e.type === 'CardStageChanged')
      t.equal(moves.length, requested.length, 'each move is one event')
      t.same(new Set(moves.map((m) => m.data.stageId)), new Set(requested), 'every requested stage was reached once')
      let stage = stageIds[0]
      for (const move of moves) {
        t.equal(move.data.previousStageId, stage, 'each move starts where the previous one ended')
        stage = move.data.stageId
      }
      const folded = history.reduce(card.evolve, card.initialState)
      const final = (await app.inject({ method: 'GET', url: `/v1/kanban/cards/${created.id}`, headers })).json()
      t.equal(final.stageId, stage, 'the read model shows the last move')
      t.equal(folded.status === 'active' && folded.stageId, stage, 'and so does the event history')
      t.ok(requested.includes(final.stageId), 'a requested stage')
    })

    await t.test('a receiver down for a while gets everything once back, in order per session', async (t) => {
      const created = await app.inject({ method: 'POST', url: '/v1/api-keys', headers: { 'x-api-key': admin.apiKey }, payload: { name: 'bot', callbackUrl: `${receiver.url}/hooks` } })
      const { apiKey, signingSecret } = created.json()
      const headers = { 'x-api-key': apiKey }
      const post = async (url: string, payload?: object) => (await app.inject({ method: 'POST', url, headers, ...(payload ? { payload } : {}) })).json()
      await post('/v1/variables', { name: 'said', type: 'string' })
      const flow = await post('/v1/flows', { name: 'Echo', definition: echoFlow })

      await receiver.down()
      const sent = new Map<string, string[]>()
      for (let s = 0; s < 5; s++) {
        const { sessionId } = await post(`/v1/sessions/flows/${flow.id}/create`)
        sent.set(sessionId, [])
        for (let m = 0; m < 3; m++) sent.get(sessionId)!.push((await post(`/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: `m${m}` } })).messageId)
      }
      // Five refused attempts in a row make the destination failing: its deliveries then wait behind one probe at a time.
      await eventually('the destination failing while the receiver is down', async () => {
        const failing = (await app.inject({ method: 'GET', url: '/v1/webhooks/destinations?state=failing', headers })).json()
        return failing.totalElements >= 1 ? failing : undefined
      })
      t.equal(receiver.requests.length, 0)
      await receiver.up()

      const expected = 5 * 4
      await eventually(`${expected} webhooks after the receiver came back`, () => (new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size >= expected ? true : undefined), 30_000)
      const bodies = receiver.requests.map((r) => {
        const verified = new Webhook(signingSecret).verify(r.body, Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)])))
        return verified as { sessionId: string; messageId: string }
      })
      for (const [sessionId, messageIds] of sent) {
        const arrived = bodies.filter((b) => b.sessionId === sessionId).map((b) => b.messageId)
        t.same([...new Set(arrived)].slice(1), messageIds, `session ${sessionId.slice(0, 8)}: the start turn, then each message in order`)
      }
      const dead = (await app.inject({ method: 'GET', url: '/v1/webhooks/deliveries?status=dead', headers })).json()
      t.equal(dead.totalElements, 0, 'nothing gave up')
    })
  })
}
