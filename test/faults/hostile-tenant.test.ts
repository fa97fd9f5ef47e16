import t from 'tap'
import { bootstrap } from '../../src/commands/tenancy.js'
import { MAX_TAGS } from '../../src/domain/card.js'
import { listParked } from '../../src/processors/parked-streams.js'
import { openTestApp } from '../helpers/app.js'
import { echoFlow } from '../helpers/flows.js'
import { reachableBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// Acceptance: one organization's odd kanban tags never stop another's conversations. Each odd tag
// is refused when its flow is saved, naming the node and the rule; a flow that adds tags to a card
// people already filled runs within the card's rules; and 150 sessions of another organization
// started afterwards all get their turns and webhooks.

const OTHER_SESSIONS = 150

const node = (id: string, type: string, data: object) => ({ id, type, position: { x: 0, y: 0 }, data })

for (const backend of reachableBackends) {
  t.test(`a hostile tenant's tags stop nobody, on ${backend.name}`, async (t) => {
    const { app, admin, ctx, storage } = await openTestApp(t, backend, { engine: true })
    const call = async (apiKey: string, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) => {
      const response = await app.inject({ method, url, headers: { 'x-api-key': apiKey }, ...(payload && { payload }) })
      return { status: response.statusCode, body: response.json() }
    }
    const created = async (apiKey: string, url: string, payload: object) => {
      const reply = await call(apiKey, 'POST', url, payload)
      if (reply.status !== 201) throw new Error(`${url}: ${reply.status} ${JSON.stringify(reply.body)}`)
      return reply.body
    }
    const hostile = admin.apiKey
    const pipeline = await created(hostile, '/v1/kanban/pipelines', { name: 'Leads', stages: [{ name: 'New' }, { name: 'Done' }] })
    const [stageNew, stageDone] = pipeline.stages.map((s: { id: string }) => s.id)
    const moveFlow = (tags: string[]) => ({
      schemaVersion: 1,
      nodes: [node('start', 'start', {}), node('move', 'kanbanMove', { pipelineId: pipeline.id, stageId: stageNew, tags }), node('end', 'end', {})],
      edges: [
        { id: 'a', source: 'start', target: 'move' },
        { id: 'b', source: 'move', target: 'end' },
      ],
    })

    const odd: [string, string[], RegExp][] = [
      ['a comma', ['a,b'], /^nodes\[1\]\.data\.tags\[0\]: must have no commas/],
      ['101 characters', ['x'.repeat(101)], /^nodes\[1\]\.data\.tags\[0\]: longer than 100 characters/],
      ['a duplicate', ['vip', 'vip'], /^nodes\[1\]\.data\.tags: must not repeat an item/],
      [`more than ${MAX_TAGS}`, Array.from({ length: MAX_TAGS + 1 }, (_, i) => `t${i}`), /^nodes\[1\]\.data\.tags: more than 50 items/],
      ['blanks at the ends', [' padded '], /^nodes\[1\]\.data\.tags\[0\]: must have no commas and no blanks at either end/],
    ]
    for (const [what, tags, rule] of odd) {
      const reply = await call(hostile, 'POST', '/v1/flows', { name: `Odd ${what}`, definition: moveFlow(tags) })
      t.equal(reply.status, 400, `a tag with ${what} is refused`)
      t.match(reply.body.problems?.[0]?.path ?? '', /^nodes\[1\]\.data\.tags/, 'naming the node')
      t.match(`${reply.body.problems?.[0]?.path}: ${reply.body.problems?.[0]?.message}`, rule, 'and the rule')
    }

    // A flow that adds ten tags to its session's card, once people have given the card 45.
    await created(hostile, '/v1/variables', { name: 'said', type: 'string' })
    const tenMore = Array.from({ length: 10 }, (_, i) => `flow-${i}`)
    const adding = await created(hostile, '/v1/flows', {
      name: 'Adds tags',
      definition: {
        schemaVersion: 1,
        nodes: [
          node('start', 'start', {}),
          node('create', 'kanbanMove', { pipelineId: pipeline.id, stageId: stageNew, tags: ['lead'] }),
          node('ask', 'question', { prompt: { type: 'text', text: { body: 'Anything else?' } }, input: { kind: 'text' }, saveAs: 'said' }),
          node('add', 'kanbanMove', { pipelineId: pipeline.id, stageId: stageDone, tags: tenMore }),
          node('end', 'end', {}),
        ],
        edges: [
          { id: 'a', source: 'start', target: 'create' },
          { id: 'b', source: 'create', target: 'ask' },
          { id: 'c', source: 'ask', sourceHandle: 'default', target: 'add' },
          { id: 'd', source: 'add', target: 'end' },
        ],
      },
    })
    const { sessionId } = await created(hostile, `/v1/sessions/flows/${adding.id}/create`, {})
    const cardOfSession = async () => (await call(hostile, 'GET', `/v1/kanban/pipelines/${pipeline.id}/cards?size=50`)).body.content?.find((c: { sessionId?: string }) => c.sessionId === sessionId)
    const card = await eventually('the flow creates its card', cardOfSession)
    const peoples = Array.from({ length: MAX_TAGS - 5 }, (_, i) => `person-${i}`)
    t.equal((await call(hostile, 'PATCH', `/v1/kanban/cards/${card.id}`, { tags: peoples })).status, 200, 'people give the card 45 tags')
    t.equal((await call(hostile, 'POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: 'no' } })).status, 202)
    const done = await eventually('the flow moves the card', async () => {
      const now = await cardOfSession()
      return now?.stageId === stageDone ? now : undefined
    })
    t.same(done.tags, [...peoples, ...tenMore.slice(0, 5)], 'the card keeps its own tags and takes new ones up to the limit')
    t.equal((await call(hostile, 'GET', `/v1/sessions/${sessionId}`)).body.status, 'completed', 'and the session ends as its flow says')

    // Another organization, afterwards: every session gets its turn and its webhook.
    const other = await bootstrap(ctx, { organization: 'Other', workspace: 'Main', callbackUrl: 'https://hooks.example.com/other' })
    await created(other.apiKey, '/v1/variables', { name: 'said', type: 'string' })
    const echo = await created(other.apiKey, '/v1/flows', { name: 'Echo', definition: echoFlow })
    // Started at once, so that their starts go in a few group commits rather than 150 transactions.
    const sessions: string[] = await Promise.all(
      Array.from({ length: OTHER_SESSIONS }, async () => (await created(other.apiKey, `/v1/sessions/flows/${echo.id}/create`, {})).sessionId),
    )
    const served = async () => {
      const row = await storage.db.selectFrom('webhook_deliveries').select((eb) => eb.fn.count<number>('session_id').distinct().as('n')).where('session_id', 'in', sessions).executeTakeFirst()
      return Number(row?.n ?? 0)
    }
    await eventually(`webhooks for all ${OTHER_SESSIONS} sessions`, async () => ((await served()) === OTHER_SESSIONS ? true : undefined), 60_000)
    t.equal(await served(), OTHER_SESSIONS, `all ${OTHER_SESSIONS} sessions of the other organization got their turn and webhook`)
    t.same(await listParked(storage.db), [], 'nothing parked')
  })
}
