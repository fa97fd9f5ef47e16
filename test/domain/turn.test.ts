import t from 'tap'
import { ConversationState, InboundMessage, invalidReplyWarning, KanbanAction, Trigger, TurnFunction, VariableValue } from '../../src/domain/turn.js'
import { accepts, examples } from '../helpers/decider-spec.js'

t.test('InboundMessage: what the send endpoint accepts', async (t) => {
  examples(t, accepts(InboundMessage), [
    ['text', [{ type: 'text', text: { body: 'hi' } }], true],
    ['media with a caption', [{ type: 'sticker', media: { mimeType: 'image/webp', url: 'https://cdn.example.com/s', caption: 'x' } }], true],
    ['a button reply', [{ type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: 'a', title: 'A' } } }], true],
    ['a list reply', [{ type: 'interactive', interactive: { type: 'list_reply', list_reply: { id: 'a', title: 'A' } } }], true],
    ['a media type the channel lacks', [{ type: 'location', media: { mimeType: 'x', url: 'y' } }], false],
    ['a reply of one kind carrying the other', [{ type: 'interactive', interactive: { type: 'button_reply', list_reply: { id: 'a', title: 'A' } } }], false],
    ['text without a body', [{ type: 'text', text: {} }], false],
  ])
})

t.test('Trigger', async (t) => {
  examples(t, accepts(Trigger), [
    ['start', [{ type: 'start' }], true],
    ['a message', [{ type: 'message', message: { type: 'text', text: { body: 'hi' } } }], true],
    ['a message without one', [{ type: 'message' }], false],
  ])
})

t.test('VariableValue: JSON-safe, as turn outputs are stored in events', async (t) => {
  examples(t, accepts(VariableValue), [
    ['a string', ['x'], true],
    ['a boolean', [false], true],
    ['an object', [{ a: [1] }], true],
    ['null', [null], false],
    ['an array', [[1]], false],
  ])
})

t.test('ConversationState', async (t) => {
  const state = { waitingAt: { nodeId: 'ask', retries: 0 }, variables: { plan: 'pro' }, lastTimestampMicros: 0, card: null }
  examples(t, accepts(ConversationState), [
    ['waiting at a question', [state], true],
    ['not waiting, with a card', [{ ...state, waitingAt: null, card: { cardId: 'c', pipelineId: 'p', stageId: 's' } }], true],
    ['negative retries', [{ ...state, waitingAt: { nodeId: 'ask', retries: -1 } }], false],
    ['a fractional timestamp', [{ ...state, lastTimestampMicros: 1.5 }], false],
  ])
})

t.test('TurnFunction and KanbanAction', async (t) => {
  examples(t, accepts(TurnFunction), [
    ['finish', [{ type: 'finish', timestamp: 1 }], true],
    ['a transfer to an agent', [{ type: 'transfer', targetType: 'agent', targetId: 'a', timestamp: 1 }], true],
    ['a transfer to a queue', [{ type: 'transfer', targetType: 'queue', targetId: 'a', timestamp: 1 }], false],
  ])
  const move = { action: 'move', cardId: 'c', pipelineId: 'p', stageId: 's', previousStageId: null, values: { a: 1 }, tags: [], timestamp: 1, nodeId: 'n' }
  examples(t, accepts(KanbanAction), [
    ['a move', [move], true],
    ['an object as a value', [{ ...move, values: { a: {} } }], false],
    ['a delete', [{ ...move, action: 'delete' }], false],
  ])
})

t.test('invalidReplyWarning: its wording is part of the stored turn', async (t) => {
  examples(t, invalidReplyWarning, [['names the question', ['ask'], 'invalid reply to ask']])
})
