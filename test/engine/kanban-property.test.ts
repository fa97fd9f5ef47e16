import fc from 'fast-check'
import t from 'tap'
import { assertMatchesSchema } from '../../src/commands/handle.js'
import { kanbanCommand, type SessionTurn } from '../../src/commands/session-cards.js'
import { MAX_TAGS, card, type Card, type CardCommand, type CardEvent } from '../../src/domain/card.js'
import { FIELD_VALUE_TYPES, type ActivePipeline, type Field } from '../../src/domain/pipeline.js'
import { session, type Session, type SessionEvent } from '../../src/domain/session.js'
import { toRunnable } from '../../src/engine/flow-versions.js'
import { hasPlaceholder } from '../../src/domain/interpolate.js'
import { runTurn } from '../../src/engine/interpreter.js'
import type { InboundMessage, KanbanAction } from '../../src/domain/turn.js'
import { validateFlow, type WorkspaceCatalog } from '../../src/domain/validate-flow.js'
import { playTurn } from '../../src/engine/worker.js'
import { AppError } from '../../src/errors.js'
import type { RecordedEvent } from '../../src/eventstore/port.js'
import { assertionMessage } from '../helpers/assertion-message.js'

// Whatever a flow the validator accepts holds (kanbanMove tags and values of every kind, hostile
// ones included) and whatever the contact answers, the engine's turns and the kanban actions they
// lead to never throw anything but a refusal, never write an event its schema refuses, never leave
// out a tag the flow sets unless the card is full, and never refuse a value the flow writes as it
// is (a filled-in template, or a required field the node leaves out, may be refused). People edit
// the session's card between turns (up to 50 tags of their own) and the engine may replay a turn:
// a replay writes nothing. Pure: the engine's own functions on events kept in memory; `FUZZ_SEED=n`
// replays a run.

const RUNS = 2000
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_125)

const id = (n: number) => `0190a0b0-0000-7000-8000-${String(n).padStart(12, '0')}`
const [WORKSPACE, ORGANIZATION, FLOW, API_KEY, SESSION] = [id(1), id(2), id(3), id(4), id(5)]
const UNKNOWN_FIELD = id(99)

const field = (n: number, name: string, type: Field['type'], extra: Partial<Field> = {}): Field => ({
  id: id(200 + n),
  name,
  type,
  required: false,
  isFeatured: false,
  order: n,
  options: null,
  currency: null,
  ...extra,
})
const FIELDS = [
  field(1, 'Note', 'text'),
  field(2, 'Count', 'number'),
  field(3, 'Amount', 'currency', { currency: 'BRL' }),
  field(4, 'Due', 'date'),
  field(5, 'Paid', 'boolean'),
  field(6, 'Plan', 'select', { options: ['basic', 'pro'] }),
  field(7, 'Email', 'email'),
  field(8, 'Phone', 'phone'),
]
const pipelineOf = (n: number, stageCount: number, fields: Field[]): ActivePipeline => ({
  status: 'active',
  id: id(100 + n),
  workspaceId: WORKSPACE,
  name: `Pipeline ${n}`,
  stages: Array.from({ length: stageCount }, (_, i) => ({ id: id(100 + n * 10 + i + 1), pipelineId: id(100 + n), name: `Stage ${i}`, order: i, color: '#9E9E9E' })),
  fields,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
})

const HOSTILE_TEXT = ['', ' ', 'a,b', ' lead', 'lead ', '\t', ',', 'x'.repeat(101), 'x'.repeat(10_001), 'a\u2028b', '\u0000', '😀']
const TAG = fc.oneof(
  { weight: 16, arbitrary: fc.constantFrom('lead', 'vip', 'hot', 'cold', 'São Paulo', '#1', 'x'.repeat(100), 'a\u2028b') },
  { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_TEXT) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 4 }) },
)
const NODE_TAGS = fc.oneof(
  { weight: 5, arbitrary: fc.uniqueArray(TAG, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.array(TAG, { maxLength: 5 }) },
  { weight: 2, arbitrary: fc.integer({ min: MAX_TAGS - 4, max: MAX_TAGS + 1 }).map((n) => Array.from({ length: n }, (_, i) => `flow-${i}`)) },
)
/** Values a field of each type takes as written; templates where it takes text (filled in, the card may still refuse them). */
const FITTING: Record<Field['type'], (string | number | boolean)[]> = {
  text: ['Ana', 'x'.repeat(10_000), '{{name}}', '{{age}} years'],
  number: [42, -1.5, 0],
  currency: [10.5, 1e21],
  date: ['2026-02-28', '{{lastMessage}}'],
  boolean: [true, false],
  select: ['pro', '{{plan}}'],
  email: ['ana@example.com', '{{name}}'],
  phone: ['+55 (11) 99999-0000', '{{lastMessage}}'],
}
const HOSTILE_VALUE = fc.oneof(
  fc.constantFrom('gold', '2026-02-30', '12', '{{vip}}', ...HOSTILE_TEXT),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
)
const VALUES = fc
  .array(fc.tuple(fc.nat(FIELDS.length), fc.nat(), fc.option(HOSTILE_VALUE, { freq: 6 })), { maxLength: 3 })
  .map((picks) =>
    Object.fromEntries(
      picks.map(([n, choice, hostile]) => {
        const target = FIELDS[n]
        if (!target) return [UNKNOWN_FIELD, hostile ?? 'x']
        const fitting = FITTING[target.type]
        return [target.id, hostile ?? fitting[choice % fitting.length]!]
      }),
    ),
  )

const node = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('kanbanMove' as const), pipeline: fc.constantFrom(0, 0, 0, 1), stage: fc.nat(2), values: VALUES, tags: NODE_TAGS }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('question' as const), input: fc.constantFrom(['text', 'name'] as const, ['number', 'age'] as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('setVariable' as const), value: fc.constantFrom('basic', 'pro', '{{lastMessage}}') }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('message' as const) }) },
)
type NodeSpec = typeof node extends fc.Arbitrary<infer N> ? N : never

const reply: fc.Arbitrary<InboundMessage> = fc.oneof(
  fc.constantFrom('Ana', '42', '1,5', 'a,b', ' lead ', 'ana@example.com', '{{name}}', ...HOSTILE_TEXT).map((body) => ({ type: 'text' as const, text: { body } })),
  fc.string({ unit: 'grapheme', maxLength: 12 }).map((body) => ({ type: 'text' as const, text: { body } })),
  fc.constant({ type: 'image' as const, media: { mimeType: 'image/png', url: 'https://example.com/a.png' } }),
)

/** A person's change to the session's card between turns: new tags (often many), a stage, or deleting it. */
const edit = fc.option(
  fc.record({
    deletes: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
    stage: fc.nat(2),
    tags: fc.oneof(
      fc.uniqueArray(fc.constantFrom('lead', 'vip', 'mine', 'hot'), { maxLength: 4 }),
      fc.integer({ min: MAX_TAGS - 8, max: MAX_TAGS }).map((n) => Array.from({ length: n }, (_, i) => `own-${i}`)),
    ),
  }),
  { freq: 2 },
)

const scenario = fc.record({
  required: fc.subarray(FIELDS.map((f) => f.id), { maxLength: 2 }),
  nodes: fc.array(node, { minLength: 1, maxLength: 6 }),
  loop: fc.boolean(),
  turns: fc.array(fc.record({ reply, edit, replay: fc.boolean() }), { maxLength: 5 }),
})
type Scenario = typeof scenario extends fc.Arbitrary<infer S> ? S : never

function definitionOf(specs: NodeSpec[], pipelines: ActivePipeline[], loop: boolean) {
  const at = { x: 0, y: 0 }
  const nodes: { id: string; type: string; position: typeof at; data: { values?: Record<string, unknown> } & Record<string, unknown> }[] = [
    { id: 'start', type: 'start', position: at, data: {} },
  ]
  const edges: { id: string; source: string; sourceHandle?: string; target: string }[] = []
  const ids = specs.map((_, i) => `n${i}`)
  specs.forEach((spec, i) => {
    const nodeId = ids[i]!
    switch (spec.kind) {
      case 'kanbanMove': {
        const pipeline = pipelines[spec.pipeline]!
        const stageId = pipeline.stages[spec.stage % pipeline.stages.length]!.id
        // Values are keyed by the fields of the first pipeline; the second has none.
        const values = pipeline.fields.length > 0 ? spec.values : {}
        nodes.push({ id: nodeId, type: 'kanbanMove', position: at, data: { pipelineId: pipeline.id, stageId, values, tags: spec.tags } })
        break
      }
      case 'question':
        nodes.push({ id: nodeId, type: 'question', position: at, data: { prompt: { type: 'text', text: { body: 'Well?' } }, input: { kind: spec.input[0] }, saveAs: spec.input[1], maxRetries: 1 } })
        break
      case 'setVariable':
        nodes.push({ id: nodeId, type: 'setVariable', position: at, data: { variable: 'plan', value: spec.value } })
        break
      case 'message':
        nodes.push({ id: nodeId, type: 'message', position: at, data: { messages: [{ type: 'text', text: { body: 'Hi {{name}}' } }] } })
        break
    }
  })
  const exits = (i: number) => (specs[i]?.kind === 'question' ? ['default', 'invalid'] : [undefined])
  const link = (from: number, target: string) => {
    const source = from < 0 ? 'start' : ids[from]!
    for (const handle of from < 0 ? [undefined] : exits(from)) edges.push({ id: `${source}:${handle ?? ''}`, source, ...(handle && { sourceHandle: handle }), target })
  }
  ids.forEach((target, i) => link(i - 1, target))
  const firstQuestion = specs.findIndex((spec) => spec.kind === 'question')
  if (loop && firstQuestion >= 0) link(specs.length - 1, ids[firstQuestion]!)
  return { schemaVersion: 1, nodes, edges }
}

interface Stats {
  accepted: number
  actions: number
  applied: number
  refused: number
  fullCards: number
  replaysAfterEdits: number
}

/** Runs one scenario; throws on anything the property forbids. */
function play(s: Scenario, stats: Stats): void {
  const fields = FIELDS.map((f) => ({ ...f, required: s.required.includes(f.id) }))
  const pipelines = [pipelineOf(1, 3, fields), pipelineOf(2, 1, [])]
  const catalog: WorkspaceCatalog = {
    sectorIds: new Set(),
    pipelines: new Map(pipelines.map((p) => [p.id, { stageIds: new Set(p.stages.map((stage) => stage.id)), fields: p.fields }])),
    variables: new Map([
      ['name', 'string'],
      ['age', 'number'],
      ['vip', 'boolean'],
      ['plan', 'string'],
    ]),
  }
  const definition = definitionOf(s.nodes, pipelines, s.loop)
  if (validateFlow(definition, catalog).length > 0) return
  stats.accepted++
  const flow = toRunnable(definition as Parameters<typeof toRunnable>[0])
  if (typeof flow === 'string') throw new Error(`the engine cannot run a flow the validator accepts: ${flow}`)

  let position = 0n
  let second = 0
  const now = () => new Date(Date.UTC(2026, 0, 1, 12, 0, second++))
  const nextPosition = () => ({ commit: ++position, prepare: position })
  const cards = new Map<string, RecordedEvent[]>()
  const fold = (events: readonly RecordedEvent[]): Card => events.reduce((state, e) => card.evolve(state, { type: e.type, data: e.data } as CardEvent), card.initialState)
  const pipelineState = (pipelineId: string) => pipelines.find((p) => p.id === pipelineId) ?? { status: 'none' as const }
  const cardEventCount = () => [...cards.values()].reduce((sum, events) => sum + events.length, 0)

  /** Decides a card command and appends its events, each checked as an append checks it; a refusal appends nothing. */
  const decideCard = (cardId: string, command: () => CardCommand | undefined, metadata: Record<string, unknown>, allowed: (refusal: AppError) => boolean = () => true): void => {
    const recorded = cards.get(cardId) ?? []
    let events: CardEvent[]
    try {
      const decided = command()
      if (!decided) return
      events = card.decide(decided, fold(recorded))
    } catch (error) {
      if (!(error instanceof AppError)) throw error
      if (!allowed(error)) throw new Error('the card refused a value written in a flow the validator accepted')
      stats.refused++
      return
    }
    for (const event of events) {
      assertMatchesSchema(event, card.eventSchemas)
      recorded.push({ id: id(0), type: event.type, data: event.data, metadata, stream: cardId, revision: BigInt(recorded.length), position: nextPosition(), createdAt: now().toISOString() })
    }
    cards.set(cardId, recorded)
  }

  const applyTurn = (turn: SessionTurn, actions: readonly KanbanAction[]) =>
    actions.forEach((action, index) =>
      decideCard(
        action.cardId,
        () => {
          const current = fold(cards.get(action.cardId) ?? [])
          const pipeline = pipelineState(current.status === 'active' ? current.pipelineId : action.pipelineId)
          const next = kanbanCommand({ turn, action, index, recorded: cards.get(action.cardId) ?? [], pipeline, now: now().toISOString() })
          if (!next) return undefined
          stats.applied++
          const tags = next.command.type === 'DeleteCard' ? [] : (next.command.data.tags ?? [])
          if (next.droppedTags.length > 0 && tags.length !== MAX_TAGS) throw new Error('a tag the flow sets was left out of a card that is not full')
          if (next.droppedTags.length > 0) stats.fullCards++
          return next.command
        },
        { actor: 'engine', causationId: turn.messageId, kanbanAction: index },
        (refusal) => {
          const [, fieldId] = /^values\/([^:]+): /.exec(refusal.message) ?? []
          if (fieldId === undefined || refusal.message.endsWith('is required')) return true
          const written = definition.nodes.find((n) => n.id === action.nodeId)?.data.values?.[fieldId]
          const target = FIELDS.find((f) => f.id === fieldId)
          // Filled in, a template is text: only a field that takes text may refuse it for what it holds.
          return typeof written === 'string' && hasPlaceholder(written) && target !== undefined && FIELD_VALUE_TYPES[target.type] === 'string'
        },
      ),
    )

  let state: Session = session.initialState
  const record = (event: SessionEvent | undefined) => {
    if (!event) throw new Error('the session decided nothing')
    assertMatchesSchema(event, session.eventSchemas)
    state = session.evolve(state, event)
    return event
  }
  const startedAt = now().toISOString()
  record(
    session.decide(
      {
        type: 'StartSession',
        data: { sessionId: SESSION, workspaceId: WORKSPACE, organizationId: ORGANIZATION, flowId: FLOW, flowVersion: 1, variables: {}, externalId: null, apiKeyId: API_KEY, callbackUrl: null, ttlSeconds: 1800, messageId: id(1000), now: startedAt },
      },
      state,
    )[0],
  )

  for (const [i, step] of [{ reply: undefined, edit: null, replay: false }, ...s.turns].entries()) {
    if (state.status !== 'active') break
    if (step.reply) {
      record(session.decide({ type: 'ReceiveMessage', data: { sessionId: SESSION, workspaceId: WORKSPACE, messageId: id(1000 + i), message: step.reply, idempotencyKey: null, now: now().toISOString() } }, state)[0])
    }
    const pending = state.pending[0]
    if (!pending) throw new Error('no pending trigger')
    const at = now()
    const output = playTurn(runTurn, flow, state, pending, at)
    if (output.status === 'calling') throw new Error('a kanban flow makes no calls')
    record(session.decide({ type: 'CompleteTurn', data: { sessionId: SESSION, messageId: pending.messageId, output, now: at.toISOString() } }, state)[0])
    const turn: SessionTurn = { sessionId: SESSION, workspaceId: WORKSPACE, organizationId: ORGANIZATION, messageId: pending.messageId, position: nextPosition() }
    stats.actions += output.kanban.length
    applyTurn(turn, output.kanban)

    const cardId = state.conversation.card?.cardId
    if (step.edit && cardId) {
      const { deletes, stage, tags } = step.edit
      decideCard(
        cardId,
        () => {
          const current = fold(cards.get(cardId) ?? [])
          if (current.status !== 'active') return undefined
          const pipeline = pipelineState(current.pipelineId)
          if (deletes) return { type: 'DeleteCard', data: { cardId, workspaceId: WORKSPACE, now: now().toISOString() } }
          const stageId = pipeline.status === 'active' ? pipeline.stages[stage % pipeline.stages.length]!.id : undefined
          return { type: 'UpdateCard', data: { cardId, workspaceId: WORKSPACE, pipeline, stageId, tags, now: now().toISOString() } }
        },
        { actor: API_KEY },
      )
    }
    if (step.replay) {
      const before = cardEventCount()
      applyTurn(turn, output.kanban)
      if (cardEventCount() !== before) throw new Error('replaying a turn wrote card events')
      if (step.edit && output.kanban.length > 0) stats.replaysAfterEdits++
    }
  }
}

t.test('accepted flows, any replies, people editing the card, replays: no throw, no event its schema refuses', async (t) => {
  const stats: Stats = { accepted: 0, actions: 0, applied: 0, refused: 0, fullCards: 0, replaysAfterEdits: 0 }
  const details = fc.check(
    fc.property(scenario, (s) => play(s, stats)),
    { numRuns: RUNS, seed: SEED },
  )
  t.comment(`FUZZ_SEED=${SEED}: ${JSON.stringify(stats)}`)
  if (details.failed) {
    t.comment(assertionMessage(fc.defaultReportMessage(details) ?? '', { keepLineBreaks: true, maxLength: Infinity }))
  }
  t.notOk(details.failed, 'every scenario holds')
  t.ok(stats.accepted >= RUNS / 5, 'at least a fifth of the flows are accepted')
  t.ok(stats.applied >= RUNS / 4, 'kanban actions were carried out')
  t.ok(stats.fullCards > 0, 'some cards were full when a flow added tags')
  t.ok(stats.replaysAfterEdits > 0, 'some turns were replayed after a person edited their card')
})
