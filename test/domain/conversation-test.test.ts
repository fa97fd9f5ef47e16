import t from 'tap'
import {
  CONVERSATION_TEST_LIMITS,
  conversationTests,
  expectationOf,
  expectationProblems,
  matchesPattern,
  testOfSession,
  textMatches,
  type ConversationTestBody,
  type ConversationTestCommand,
  type ConversationTestEvent,
} from '../../src/domain/conversation-test.js'
import type { TurnOutput } from '../../src/domain/turn.js'
import type { SessionEvent } from '../../src/domain/session.js'
import { ConflictError, NotFoundError } from '../../src/errors.js'
import { examples, spec } from '../helpers/decider-spec.js'

const flowId = '0190a0b0-0000-7000-8000-000000000021'
const ws = '0190a0b0-0000-7000-8000-000000000011'
const testId = '0190a0b0-0000-7000-8000-000000000501'
const otherId = '0190a0b0-0000-7000-8000-000000000502'
const savedAt = '2026-01-01T00:00:00.000Z'
const now = '2026-01-02T03:04:05.678Z'
const body: ConversationTestBody = { name: 'Greets', start: { messages: [{ text: { contains: 'Hello' } }] }, steps: [] }

const saved = (id = testId, test = body, at = savedAt): ConversationTestEvent => ({ type: 'ConversationTestSaved', data: { flowId, workspaceId: ws, testId: id, test, savedAt: at } })
const save = (id = testId, test = body): ConversationTestCommand => ({ type: 'SaveConversationTest', data: { flowId, workspaceId: ws, testId: id, test, now } })

t.test('SaveConversationTest and DeleteConversationTest', async (t) => {
  const { given } = spec(t, conversationTests)
  const state = given().when(save()).then([saved(testId, body, now)], 'a new test')
  t.match(state.byId[testId], { ...body, id: testId, createdAt: now, updatedAt: now })
  given(saved()).when(save()).then([], 'the same test again changes nothing')
  const renamed = given(saved()).when(save(testId, { ...body, name: 'Greets twice' })).then([saved(testId, { ...body, name: 'Greets twice' }, now)], 'a test replaced whole')
  t.match(renamed.byId[testId], { name: 'Greets twice', createdAt: savedAt, updatedAt: now }, 'it keeps its creation date')
  given(saved()).when(save(otherId, { ...body, name: ' GREETS ' })).thenRejects({ type: ConflictError, message: /a test named "Greets" already/ }, "another test's name")
  const full = Array.from({ length: CONVERSATION_TEST_LIMITS.perFlow }, (_, i) => saved(`0190a0b0-0000-7000-8000-${String(600 + i).padStart(12, '0')}`, { ...body, name: `Test ${i}` }))
  given(...full).when(save(otherId, { ...body, name: 'One more' })).thenRejects({ type: ConflictError, message: /50 tests, the most it may/ }, 'a full flow')
  given(...full).when(save(full[0]!.data.testId, { ...body, name: 'Test 0', steps: [{ timer: true }] })).then([saved(full[0]!.data.testId, { ...body, name: 'Test 0', steps: [{ timer: true }] }, now)], 'a full flow still replaces its tests')
  const gone = given(saved()).when({ type: 'DeleteConversationTest', data: { flowId, workspaceId: ws, testId, now } }).then([{ type: 'ConversationTestDeleted', data: { flowId, workspaceId: ws, testId, deletedAt: now } }])
  t.same(gone.byId, {})
  given().when({ type: 'DeleteConversationTest', data: { flowId, workspaceId: ws, testId, now } }).thenRejects(NotFoundError, 'an unknown test')
})

t.test('texts are matched exactly, by what they hold, or by a pattern', async (t) => {
  examples(t, matchesPattern, [
    ['the same text', ['Hello', 'Hello'], true],
    ['* is any text', ['Your order is *', 'Your order is shipped'], true],
    ['* is no text too', ['Hi*', 'Hi'], true],
    ['? is one character', ['order ?', 'order 7'], true],
    ['? is not two', ['order ?', 'order 77'], false],
    ['stars on both sides', ['*ship*', 'we ship today'], true],
    ['a text that does not match', ['Bye*', 'Hello'], false],
    ['case counts', ['hello', 'Hello'], false],
    ['characters beyond the BMP count once', ['? ok', '🎉 ok'], true],
  ])
  t.ok(matchesPattern(`${'*a'.repeat(40)}b`, 'a'.repeat(4000)) === false, 'a hostile pattern ends')
  examples(t, textMatches, [
    ['equals', [{ equals: 'Hi' }, 'Hi'], true],
    ['equals, not contains', [{ equals: 'Hi' }, 'Hi there'], false],
    ['contains', [{ contains: 'there' }, 'Hi there'], true],
    ['pattern', [{ pattern: 'Hi *' }, 'Hi there'], true],
  ])
})

t.test('a turn checked against an expectation: every difference, at its path', async (t) => {
  const turn: TurnOutput = {
    messages: [{ type: 'text', text: { body: 'Your order is shipped' }, nodeId: 'found' }],
    functions: [{ type: 'transfer', targetType: 'sector', targetId: 'sales', timestamp: 1 }],
    kanban: [],
    variables: { status: 'shipped' },
    warnings: [],
    visited: ['ask', 'lookup', 'found'],
    status: 'completed',
    state: { waitingAt: null, variables: { status: 'shipped', order: '7' }, lastTimestampMicros: 1, card: null },
  }
  t.same(expectationProblems({ messages: [{ type: 'text', text: { pattern: 'Your order is *' } }], transfer: { targetId: 'sales' }, variables: { order: '7' }, visits: 'lookup', waitsAt: null, status: 'completed' }, turn), [], 'what it did')
  t.same(
    expectationProblems({ messages: [{ text: { equals: 'Your order is packed' } }], transfer: { targetType: 'agent' }, finish: true, variables: { status: 'packed', missing: 1 }, visits: 'sorry', waitsAt: 'ask', status: 'active', kanban: [{ action: 'create' }] }, turn),
    [
      { at: 'messages[0].text', expected: 'Your order is packed', actual: 'Your order is shipped' },
      { at: 'transfer.targetType', expected: 'agent', actual: 'sector' },
      { at: 'finish', expected: true, actual: false },
      { at: 'variables.status', expected: 'packed', actual: 'shipped' },
      { at: 'variables.missing', expected: 1, actual: null },
      { at: 'visits', expected: 'sorry', actual: ['ask', 'lookup', 'found'] },
      { at: 'waitsAt', expected: 'ask', actual: null },
      { at: 'status', expected: 'active', actual: 'completed' },
      { at: 'kanban', expected: '1 card action(s)', actual: [] },
    ],
    'what it did not',
  )
  t.same(expectationProblems({ messages: [] }, turn), [{ at: 'messages', expected: '0 message(s)', actual: ['Your order is shipped'] }], 'no message expected')
})

t.test("a session's events as a test: its steps, what each turn did, the answers its calls got", async (t) => {
  const id = (n: number) => `0190a0b0-0000-7000-8000-${String(n).padStart(12, '0')}`
  const turn = (messageId: string, body: string, waitsAt: string | null, extra: Partial<TurnOutput> = {}): SessionEvent => ({
    type: 'TurnCompleted',
    data: {
      sessionId: id(1),
      messageId,
      completedAt: now,
      output: {
        messages: [{ type: 'text', text: { body }, nodeId: 'n' }],
        functions: [],
        kanban: [],
        variables: {},
        warnings: [],
        visited: ['n'],
        status: waitsAt ? 'active' : 'completed',
        state: { waitingAt: waitsAt ? { nodeId: waitsAt, retries: 0 } : null, variables: {}, lastTimestampMicros: 1, card: null },
        ...extra,
      },
    },
  })
  const started: SessionEvent = {
    type: 'SessionStarted',
    data: { sessionId: id(1), workspaceId: ws, organizationId: id(9), flowId, flowVersion: 1, messageId: id(2), externalId: null, apiKeyId: null, callbackUrl: null, variables: { plan: 'pro' }, ttlSeconds: 60, startedAt: now, expiresAt: now },
  } as SessionEvent
  const events: SessionEvent[] = [
    started,
    turn(id(2), 'Your order number?', 'ask'),
    { type: 'MessageReceived', data: { sessionId: id(1), messageId: id(3), message: { type: 'text', text: { body: '7' } }, idempotencyKey: null, receivedAt: now, expiresAt: now } },
    { type: 'OutsideCallAnswered', data: { sessionId: id(1), messageId: id(3), answeredAt: now, index: 0, nodeId: 'lookup', request: { method: 'GET', url: 'https://x', headers: [], body: null, timeoutMs: 1 }, answer: { status: 200, headers: {}, body: '{}' }, durationMs: 3 } },
    turn(id(3), 'Shipped', null, { variables: { status: 'shipped' }, functions: [{ type: 'finish', timestamp: 2 }] }),
  ]
  t.same(testOfSession('From a session', events), {
    name: 'From a session',
    variables: { plan: 'pro' },
    start: { messages: [{ type: 'text', text: { equals: 'Your order number?' } }], waitsAt: 'ask', status: 'active' },
    steps: [{ send: { type: 'text', text: { body: '7' } }, expect: { messages: [{ type: 'text', text: { equals: 'Shipped' } }], finish: true, variables: { status: 'shipped' }, waitsAt: null, status: 'completed' } }],
    answers: [{ nodeId: 'lookup', answer: { status: 200, headers: {}, body: '{}' } }],
  })
  const failed: SessionEvent = { type: 'TurnFailed', data: { sessionId: id(1), messageId: id(3), reason: 'engine_error', failedAt: now, timestamp: 3 } }
  t.same(testOfSession('Cut', [...events.slice(0, 3), failed, events[4]!]).steps, [], 'nothing after a failed turn')
  t.same(expectationOf(events[1]!.type === 'TurnCompleted' ? events[1]!.data.output : (undefined as never)).messages, [{ type: 'text', text: { equals: 'Your order number?' } }])
})
