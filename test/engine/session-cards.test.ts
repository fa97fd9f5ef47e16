import { randomUUID } from 'node:crypto'
import t from 'tap'
import type { CommandContext } from '../../src/commands/context.js'
import { loadState } from '../../src/commands/handle.js'
import { createCard, createPipeline, updateCard } from '../../src/commands/kanban.js'
import { applySessionKanban, type SessionTurn } from '../../src/commands/session-cards.js'
import { MAX_TAGS, Tags, card, cardStream } from '../../src/domain/card.js'
import { sessionStream, type SessionEvent } from '../../src/domain/session.js'
import type { KanbanAction } from '../../src/domain/turn.js'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { openTestApp } from '../helpers/app.js'
import { reachableBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// The engine applies a turn's kanban actions after its TurnCompleted, and may apply them again
// after a crash (its checkpoint is saved lazily). Whatever people did to the card in between stays.

const tagsCheck = TypeCompiler.Compile(Tags)

for (const backend of reachableBackends) {
  t.test(`a turn's kanban actions on ${backend.name}`, async (t) => {
    const { app, ctx, admin, store, storage, conversations } = await openTestApp(t, backend, { engine: true })
    const scope = { workspaceId: admin.workspaceId, organizationId: admin.organizationId }
    const warnings: string[] = []
    const logger: CommandContext['logger'] = {
      ...ctx.logger,
      warn: (...args: unknown[]) => {
        warnings.push(String(args[1]))
      },
    }
    const engine: CommandContext = { ...ctx, logger, metadata: { actor: 'engine' } }
    const person: CommandContext = { ...ctx, metadata: { actor: admin.apiKeyId } }
    const deals = await createPipeline({ ...ctx, db: storage.db }, scope, {
      name: 'Deals',
      stages: [{ name: 'New' }, { name: 'Won' }, { name: 'Lost' }],
      fields: [{ name: 'Note', type: 'text' }],
    })
    const [NEW, WON, LOST] = deals.stages.map((s) => s.id) as [string, string, string]
    const note = deals.fields[0]!.id
    const sessionId = randomUUID()

    let clock = 1_767_225_600_000_000
    /** A turn that just completed: a fresh messageId, at the head of the log. */
    const completedTurn = async (): Promise<SessionTurn> => ({ sessionId, ...scope, messageId: randomUUID(), position: await store.headPosition() })
    const act = (cardId: string, action: 'create' | 'move', stageId: string, more: Partial<KanbanAction> = {}): KanbanAction => ({
      action,
      cardId,
      pipelineId: deals.id,
      stageId,
      previousStageId: null,
      values: {},
      tags: [],
      timestamp: clock++,
      nodeId: 'k',
      ...more,
    })
    const cardNow = async (cardId: string) => {
      const state = await loadState(store, card, cardStream(cardId))
      return state.status === 'active' ? { stageId: state.stageId, values: state.values, tags: state.tags } : state
    }
    const eventCount = async (cardId: string) => (await store.readStream(cardStream(cardId))).length

    await t.test('a replayed turn leaves a person’s later edit: its create does nothing, its moves are not made again', async (t) => {
      const cardId = randomUUID()
      const turn = await completedTurn()
      const actions = [
        act(cardId, 'create', NEW, { values: { [note]: 'from the flow' }, tags: ['lead'] }),
        act(cardId, 'move', WON, { values: { [note]: 'qualified' }, tags: ['hot'] }),
        act(cardId, 'move', LOST, { tags: ['cold'] }),
      ]
      await applySessionKanban(engine, turn, actions)
      t.same(await cardNow(cardId), { stageId: LOST, values: { [note]: 'qualified' }, tags: ['lead', 'hot', 'cold'] })
      await updateCard(person, scope, cardId, { stageId: NEW, values: { [note]: 'by a person' }, tags: ['mine'] })
      const before = await eventCount(cardId)

      await applySessionKanban(engine, turn, actions)
      t.same(await cardNow(cardId), { stageId: NEW, values: { [note]: 'by a person' }, tags: ['mine'] }, 'the person’s edit stays')
      t.equal(await eventCount(cardId), before, 'no event written')
    })

    await t.test('a turn applied twice at once is applied once, without a refusal', async (t) => {
      const cardId = randomUUID()
      const turn = await completedTurn()
      const actions = [act(cardId, 'create', NEW, { tags: ['lead'] }), act(cardId, 'move', WON)]
      warnings.length = 0
      await Promise.all([applySessionKanban(engine, turn, actions), applySessionKanban(engine, turn, actions)])
      t.same((await store.readStream(cardStream(cardId))).map((e) => e.type), ['CardCreated', 'CardStageChanged'])
      t.same(warnings, [])
    })

    await t.test('a replayed move that changed nothing leaves a person’s later edit', async (t) => {
      const cardId = randomUUID()
      await applySessionKanban(engine, await completedTurn(), [act(cardId, 'create', NEW, { tags: ['lead'] })])
      const again = await completedTurn()
      const sameStage = [act(cardId, 'move', NEW, { tags: ['lead'] })]
      await applySessionKanban(engine, again, sameStage)
      t.equal(await eventCount(cardId), 1, 'the move changed nothing')
      await updateCard(person, scope, cardId, { stageId: WON, tags: [] })

      await applySessionKanban(engine, again, sameStage)
      t.same(await cardNow(cardId), { stageId: WON, values: {}, tags: [] }, 'the person’s edit stays')
    })

    await t.test('a turn cut short is finished on replay, over a person’s edit made meanwhile', async (t) => {
      const cardId = randomUUID()
      const turn = await completedTurn()
      const actions = [act(cardId, 'create', NEW, { tags: ['lead'] }), act(cardId, 'move', WON, { tags: ['hot'] })]
      await applySessionKanban(engine, turn, actions.slice(0, 1))
      await updateCard(person, scope, cardId, { values: { [note]: 'by a person' } })

      await applySessionKanban(engine, turn, actions)
      t.same(await cardNow(cardId), { stageId: WON, values: { [note]: 'by a person' }, tags: ['lead', 'hot'] }, 'the move the turn had not made yet is made')
    })

    await t.test('tags added to a card keep within its rules: the card’s own first, then new ones up to the limit', async (t) => {
      const own = Array.from({ length: MAX_TAGS - 5 }, (_, i) => `own-${i}`)
      const created = await createCard(person, scope, deals.id, { stageId: NEW, tags: own, sessionId })
      const added = ['own-3', 'a,b', ' padded', ...Array.from({ length: 8 }, (_, i) => `flow-${i}`)]
      await applySessionKanban(engine, await completedTurn(), [act(created.id, 'move', WON, { tags: added })])
      t.same(await cardNow(created.id), { stageId: WON, values: {}, tags: [...own, 'flow-0', 'flow-1', 'flow-2', 'flow-3', 'flow-4'] })

      const cardId = randomUUID()
      const many = [...Array.from({ length: MAX_TAGS + 3 }, (_, i) => `t-${i}`), 't-0', 'x'.repeat(101)]
      await applySessionKanban(engine, await completedTurn(), [act(cardId, 'create', NEW, { tags: many })])
      const fresh = await cardNow(cardId)
      t.ok('tags' in fresh && tagsCheck.Check(fresh.tags), 'a new card’s tags pass Tags')
      t.same(fresh, { stageId: NEW, values: {}, tags: many.slice(0, MAX_TAGS) })
    })

    await t.test('the engine replaying its turns after losing its checkpoint leaves a person’s edit', async (t) => {
      const call = async (method: 'POST' | 'PATCH', url: string, payload?: object) => {
        const response = await app.inject({ method, url, headers: { 'x-api-key': admin.apiKey }, ...(payload && { payload }) })
        t.ok(response.statusCode < 300, `${method} ${url}`)
        return response.json()
      }
      const at = { x: 0, y: 0 }
      const flow = await call('POST', '/v1/flows', {
        name: 'Lead',
        definition: {
          schemaVersion: 1,
          nodes: [
            { id: 'start', type: 'start', position: at, data: {} },
            { id: 'lead', type: 'kanbanMove', position: at, data: { pipelineId: deals.id, stageId: NEW, tags: ['lead'] } },
            { id: 'ask', type: 'question', position: at, data: { prompt: { type: 'text', text: { body: 'Name?' } }, input: { kind: 'text' } } },
            { id: 'won', type: 'kanbanMove', position: at, data: { pipelineId: deals.id, stageId: WON, tags: ['hot'] } },
          ],
          edges: [
            { id: 'a', source: 'start', target: 'lead' },
            { id: 'b', source: 'lead', target: 'ask' },
            { id: 'c', source: 'ask', sourceHandle: 'default', target: 'won' },
          ],
        },
      })
      const startSession = async () => (await call('POST', `/v1/sessions/flows/${flow.id}/create`)).sessionId as string
      /** The session's card once the engine has applied its turns through the `turns`th. */
      const cardOf = async (sessionId: string, turns: number) => {
        const cardId = await eventually('the session’s card', async () => {
          const done = (await store.readStream(sessionStream(sessionId))).map((e) => e as unknown as SessionEvent).filter((e) => e.type === 'TurnCompleted')
          return done.length >= turns && done[0]?.type === 'TurnCompleted' ? done[0].data.output.kanban[0]?.cardId : undefined
        })
        await eventually('the card’s events', async () => ((await eventCount(cardId)) >= turns ? true : undefined))
        return cardId
      }

      const first = await startSession()
      await call('POST', `/v1/sessions/${first}/message`, { type: 'text', text: { body: 'Ana' } })
      const cardId = await cardOf(first, 2)
      t.same(await cardNow(cardId), { stageId: WON, values: {}, tags: ['lead', 'hot'] })
      await call('PATCH', `/v1/kanban/cards/${cardId}`, { stageId: LOST, tags: ['mine'] })

      await conversations!.stop()
      await storage.db.deleteFrom('projection_checkpoints').where('projection', 'like', 'engine-%').execute()
      await conversations!.start()
      // The engine goes through the log in order: a later session's card means it is past the first's turns.
      await cardOf(await startSession(), 1)
      t.same(await cardNow(cardId), { stageId: LOST, values: {}, tags: ['mine'] }, 'the person’s edit stays')
    })
  })
}
