import t from 'tap'
import type { TurnOutput } from '../../src/domain/turn.js'
import { turnWebhookBody } from '../../src/webhooks/body.js'

const quiet: TurnOutput = {
  messages: [],
  functions: [],
  kanban: [],
  variables: {},
  warnings: [],
  visited: [],
  status: 'active',
  state: { waitingAt: null, variables: {}, lastTimestampMicros: 0, card: null },
}
const ids = { session: '01a20100-0000-7000-8000-000000000001', message: '01a20100-0000-7000-8000-000000000002' }
const [pipeline, stageA, stageB, card] = ['p', 'a', 'b', 'c'].map((c) => `01a20100-0000-7000-8000-00000000000${c}`)

t.test('a turn with messages, a transfer and kanban actions: three changes in order', async (t) => {
  const body = turnWebhookBody(ids.session, ids.message, {
    ...quiet,
    messages: [
      { type: 'text', text: { body: 'Hi Ana!' }, tags: ['greeting'], nodeId: 'hello' },
      { type: 'interactive', interactive: { type: 'button', body: { text: 'Plan?' }, action: { buttons: [{ id: 'pro', title: 'Pro' }] } }, nodeId: 'ask' },
    ],
    functions: [{ type: 'transfer', targetType: 'sector', targetId: stageA!, timestamp: 1_700_000_000_000_003 }],
    kanban: [
      { action: 'create', cardId: card!, pipelineId: pipeline!, stageId: stageA!, previousStageId: null, values: {}, tags: [], timestamp: 1_700_000_000_000_001, nodeId: 'lead' },
      { action: 'move', cardId: card!, pipelineId: pipeline!, stageId: stageB!, previousStageId: stageA!, values: {}, tags: [], timestamp: 1_700_000_000_000_002, nodeId: 'qualify' },
      { action: 'move', cardId: card!, pipelineId: pipeline!, stageId: stageB!, previousStageId: stageB!, values: { x: 1 }, tags: [], timestamp: 1_700_000_000_000_004, nodeId: 'again' },
    ],
  })
  t.same(body, {
    sessionId: ids.session,
    messageId: ids.message,
    changes: [
      {
        field: 'messages',
        value: {
          messages: [
            { type: 'text', text: { body: 'Hi Ana!' }, tags: ['greeting'] },
            { type: 'interactive', interactive: { type: 'button', body: { text: 'Plan?' }, action: { buttons: [{ id: 'pro', title: 'Pro' }] } } },
          ],
        },
      },
      { field: 'function', value: { functions: [{ type: 'transfer', targetType: 'sector', targetId: stageA, timestamp: 1_700_000_000_000_003 }] } },
      {
        field: 'event',
        value: {
          events: [
            { domain: 'kanban', type: 'card.created', payload: { cardId: card, pipelineId: pipeline, stageId: stageA }, timestamp: 1_700_000_000_000_001 },
            { domain: 'kanban', type: 'card.stage.changed', payload: { cardId: card, pipelineId: pipeline, stageId: stageB, previousStageId: stageA }, timestamp: 1_700_000_000_000_002 },
          ],
        },
      },
    ],
  })
})

t.test('only non-empty changes; a turn with nothing to tell has no webhook', async (t) => {
  const finish = turnWebhookBody(ids.session, ids.message, { ...quiet, functions: [{ type: 'finish', timestamp: 5 }] })
  t.same(finish?.changes.map((c) => c.field), ['function'])
  t.equal(turnWebhookBody(ids.session, ids.message, { ...quiet, warnings: ['message ignored'] }), undefined)
})
