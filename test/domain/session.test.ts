import t from 'tap'
import { EventSchemaError } from '../../src/commands/handle.js'
import { startToEnd } from '../../src/domain/flow-definition.js'
import type { RecordedCall } from '../../src/domain/outside-call.js'
import { eventKey, messageKey, session, sessionStream, timerTriggerId, type SessionCommand, type SessionEvent } from '../../src/domain/session.js'
import { EVENTS_KEPT, type ConversationState, type TurnOutput } from '../../src/domain/turn.js'
import { ConflictError, NotFoundError } from '../../src/errors.js'
import { examples, spec } from '../helpers/decider-spec.js'

const sessionId = '0190a0b0-0000-7000-8000-000000000501'
const ws = '0190a0b0-0000-7000-8000-000000000011'
const otherWs = '0190a0b0-0000-7000-8000-000000000012'
const org = '0190a0b0-0000-7000-8000-000000000001'
const flowId = '0190a0b0-0000-7000-8000-000000000601'
const keyId = '0190a0b0-0000-7000-8000-000000000101'
const startId = '0190a0b0-0000-7000-8000-000000000701'
const firstId = '0190a0b0-0000-7000-8000-000000000702'
const secondId = '0190a0b0-0000-7000-8000-000000000703'

const startedAt = '2026-01-02T03:00:00.000Z'
const expiresAt = '2026-01-02T03:10:00.000Z'
const later = '2026-01-02T03:05:00.000Z'
const afterExpiry = '2026-01-02T03:12:00.000Z'

type Data<Type extends SessionEvent['type']> = Extract<SessionEvent, { type: Type }>['data']
type CommandData<Type extends SessionCommand['type']> = Extract<SessionCommand, { type: Type }>['data']

const start = (data: Partial<CommandData<'StartSession'>> = {}): SessionCommand => ({
  type: 'StartSession',
  data: { sessionId, workspaceId: ws, organizationId: org, flowId, flowVersion: 3, variables: { plan: 'pro' }, externalId: 'crm-42', apiKeyId: keyId, callbackUrl: 'https://hooks.example.com/a', ttlSeconds: 600, messageId: startId, now: startedAt, ...data },
})
const started = (data: Partial<Data<'SessionStarted'>> = {}): SessionEvent => ({
  type: 'SessionStarted',
  data: { sessionId, workspaceId: ws, organizationId: org, flowId, flowVersion: 3, variables: { plan: 'pro' }, externalId: 'crm-42', apiKeyId: keyId, callbackUrl: 'https://hooks.example.com/a', ttlSeconds: 600, messageId: startId, startedAt, expiresAt, ...data },
})
const preview = { definition: startToEnd() }

const hello = { type: 'text' as const, text: { body: 'hello' } }
const receive = (data: Partial<CommandData<'ReceiveMessage'>> = {}): SessionCommand => ({
  type: 'ReceiveMessage',
  data: { sessionId, workspaceId: ws, messageId: firstId, message: hello, idempotencyKey: 'retry-1', now: later, ...data },
})
/** What `receive` with the same overrides records: the expiry slides to ten minutes after `receivedAt`. */
const received = (data: Partial<Data<'MessageReceived'>> = {}): SessionEvent => ({
  type: 'MessageReceived',
  data: { sessionId, messageId: firstId, message: hello, idempotencyKey: 'retry-1', receivedAt: later, expiresAt: '2026-01-02T03:15:00.000Z', ...data },
})

const output = (status: TurnOutput['status'] = 'active', data: Partial<TurnOutput> = {}): TurnOutput => ({
  messages: [{ type: 'text', text: { body: 'Say something' }, nodeId: 'ask' }],
  functions: [],
  kanban: [],
  variables: {},
  warnings: [],
  visited: ['start', 'ask'],
  status,
  state: { waitingAt: status === 'active' ? { nodeId: 'ask', retries: 0 } : null, variables: { plan: 'pro' }, lastTimestampMicros: Date.parse(startedAt) * 1000 + 1, card: null },
  ...data,
})
const complete = (messageId = startId, turn = output(), now = startedAt): SessionCommand => ({ type: 'CompleteTurn', data: { sessionId, messageId, output: turn, now } })
const completed = (messageId = startId, turn = output(), completedAt = startedAt): SessionEvent => ({ type: 'TurnCompleted', data: { sessionId, messageId, output: turn, completedAt } })

const fail = (messageId = startId, now = later): SessionCommand => ({ type: 'FailTurn', data: { sessionId, messageId, reason: 'engine_error', now } })
const failed = (messageId = startId, failedAt = later, timestamp = Date.parse(later) * 1000): SessionEvent => ({
  type: 'TurnFailed',
  data: { sessionId, messageId, reason: 'engine_error', failedAt, timestamp },
})

const expire = (now: string): SessionCommand => ({ type: 'ExpireSession', data: { sessionId, now } })
const expired = (expiredAt = expiresAt): SessionEvent => ({ type: 'SessionExpired', data: { sessionId, expiredAt } })

t.test('StartSession', async (t) => {
  const { given } = spec(t, session)
  given().when(start()).then([started()], 'a new session expires its ttl after its start')
  given().when(start({ flowVersion: 0, apiKeyId: null, callbackUrl: null, preview })).then([started({ flowVersion: 0, apiKeyId: null, callbackUrl: null, preview })], 'a preview keeps the draft it runs')
  given(started()).when(start()).thenRejects(ConflictError, 'the same session id twice')
  given().when(start({ ttlSeconds: 0 })).thenRejects({ type: EventSchemaError, message: /ttlSeconds/ }, 'a ttl under a second is refused by the event schema')

  const state = given().when(start()).then([started()])
  t.match(state, { status: 'active', pending: [{ messageId: startId, trigger: { type: 'start' } }], conversation: { variables: { plan: 'pro' }, waitingAt: null }, previewDefinition: null }, 'the start waits for its turn')
})

t.test('ReceiveMessage', async (t) => {
  const { given } = spec(t, session)
  given(started()).when(receive()).then([received()], 'an active session takes a message')
  given().when(receive()).thenRejects(NotFoundError, 'no such session')
  given(started()).when(receive({ workspaceId: otherWs })).thenRejects(NotFoundError, 'a session of another workspace')
  given(started()).when(receive({ previewsOnly: true })).thenRejects(NotFoundError, 'the editor does not reach a session of a published version')
  given(started({ preview })).when(receive({ previewsOnly: true })).then([received()], 'the editor reaches a preview')

  const expiryAfterFirst = '2026-01-02T03:15:00.000Z'
  given(started(), received()).when(receive({ messageId: secondId, idempotencyKey: 'retry-2', now: afterExpiry })).then(
    [received({ messageId: secondId, idempotencyKey: 'retry-2', receivedAt: afterExpiry, expiresAt: '2026-01-02T03:22:00.000Z' })],
    'each message moves the expiry on: one past the first expiry is taken',
  )
  given(started(), received()).when(receive({ messageId: secondId, idempotencyKey: 'retry-2', now: expiryAfterFirst })).thenRejects(ConflictError, 'not at the moved expiry')
})

t.test('ReceiveMessage once the session is over', async (t) => {
  const { given } = spec(t, session)
  given(started()).when(receive({ now: '2026-01-02T03:09:59.999Z' })).then([received({ receivedAt: '2026-01-02T03:09:59.999Z', expiresAt: '2026-01-02T03:19:59.999Z' })], 'a millisecond before the expiry')
  given(started()).when(receive({ now: expiresAt })).thenRejects({ type: ConflictError, message: /not active/ }, 'at the expiry, before the sweeper recorded it')
  given(started()).when(receive({ now: afterExpiry })).thenRejects(ConflictError, 'after the expiry')
  given(started(), expired()).when(receive({ now: startedAt })).thenRejects(ConflictError, 'expired, whatever the clock says')
  given(started(), completed(startId, output('completed'))).when(receive()).thenRejects(ConflictError, 'completed by its flow')
  given(started(), failed()).when(receive()).thenRejects(ConflictError, 'ended in error')
})

t.test('ReceiveMessage with an Idempotency-Key', async (t) => {
  const { given } = spec(t, session)
  given(started(), received()).when(receive({ messageId: secondId })).thenNothing('the same key again makes no second message')
  given(started(), received(), completed(startId), completed(firstId, output('completed'))).when(receive({ messageId: secondId })).thenNothing(
    'a retry after the session completed answers the first message, not 409',
  )
  given(started(), received(), expired('2026-01-02T03:15:00.000Z')).when(receive({ messageId: secondId, now: afterExpiry })).thenNothing('nor after it expired')
  given(started(), received()).when(receive({ messageId: secondId, workspaceId: otherWs })).thenRejects(NotFoundError, 'a known key from another workspace finds nothing')
  given(started(), received()).when(receive({ messageId: secondId, idempotencyKey: 'retry-2' })).then([received({ messageId: secondId, idempotencyKey: 'retry-2' })], 'another key is another message')
  given(started(), received({ idempotencyKey: null })).when(receive({ messageId: secondId, idempotencyKey: null })).then(
    [received({ messageId: secondId, idempotencyKey: null })],
    'without a key every request is a message',
  )
  for (const key of ['constructor', 'toString', '__proto__']) {
    given(started()).when(receive({ idempotencyKey: key })).then([received({ idempotencyKey: key })], `a first key named like an object member (${key}) is a new message`)
  }
  const state = given(started()).when(receive()).then([received()])
  t.same(state.status !== 'none' && state.idempotencyKeys, { [messageKey('retry-1')]: firstId }, 'the key names the message it made')
})

t.test('CompleteTurn', async (t) => {
  const { given } = spec(t, session)
  given(started()).when(complete()).then([completed()], 'the start\'s turn')
  given(started(), completed()).when(complete()).thenNothing('the same turn again (another worker took it)')
  given(started(), received()).when(complete(firstId)).thenNothing('not before the start\'s turn: only the oldest pending trigger')
  given(started(), received(), completed()).when(complete(firstId, output(), later)).then([completed(firstId, output(), later)], 'then the message\'s')
  given().when(complete()).thenNothing('no such session')
  const timeZone = 'America/Sao_Paulo'
  given(started())
    .when({ type: 'CompleteTurn', data: { sessionId, messageId: startId, output: output(), now: startedAt, timeZone } })
    .then([{ type: 'TurnCompleted', data: { sessionId, messageId: startId, output: output(), completedAt: startedAt, timeZone } }], 'the time zone the turn read dates in is recorded with it')

  const warned = output('active', { warnings: ['invalid reply to ask', 'another'] })
  const state = given(started(), received()).when(complete(startId, warned)).then([completed(startId, warned)])
  t.match(state, { status: 'active', pending: [{ messageId: firstId }], conversation: warned.state, warnings: 2, finishedAt: null }, 'the turn leaves its state and the triggers after it')

  const ended = given(started()).when(complete(startId, output('completed'), later)).then([completed(startId, output('completed'), later)])
  t.match(ended, { status: 'completed', finishedAt: later }, 'a turn that ends the flow completes the session')

  const afterTimeout = given(started(), expired()).when(complete(startId, output('completed'), afterExpiry)).then([completed(startId, output('completed'), afterExpiry)], 'a pending turn still completes once the session expired')
  t.match(afterTimeout, { status: 'timeout', finishedAt: expiresAt }, 'and the session stays timed out, finished at its expiry')
})

t.test('FailTurn', async (t) => {
  const { given } = spec(t, session)
  given(started()).when(fail()).then([failed()], 'the oldest pending turn fails at the clock\'s microsecond')
  const behind = output('active', { state: { ...output().state, lastTimestampMicros: Date.parse(afterExpiry) * 1000 } })
  given(started(), received(), completed(startId, behind)).when(fail(firstId)).then([failed(firstId, later, Date.parse(afterExpiry) * 1000 + 1)], 'after every earlier timestamp when the clock is behind')
  given(started(), received()).when(fail(firstId)).thenNothing('not the oldest pending trigger')
  given(started(), failed()).when(fail()).thenNothing('the same failure again')
  given().when(fail()).thenNothing('no such session')

  const state = given(started(), received()).when(fail()).then([failed()])
  t.match(state, { status: 'error', failureReason: 'engine_error', finishedAt: later, pending: [], conversation: { waitingAt: null, lastTimestampMicros: Date.parse(later) * 1000 } }, 'the session ends in error')
  given(started(), received(), failed()).when(complete(firstId)).thenNothing('no later trigger gets a turn')
})

t.test('ExpireSession', async (t) => {
  const { given } = spec(t, session)
  given(started()).when(expire(expiresAt)).then([expired()], 'at its expiry')
  given(started()).when(expire(afterExpiry)).then([expired(afterExpiry)], 'after it, recorded when the sweeper came')
  given(started()).when(expire('2026-01-02T03:09:59.999Z')).thenNothing('not a millisecond before')
  given(started(), received()).when(expire(afterExpiry)).thenNothing('not at a time a later message moved past')
  given(started(), expired()).when(expire(afterExpiry)).thenNothing('expired already')
  given(started(), completed(startId, output('completed'))).when(expire(afterExpiry)).thenNothing('a completed session does not time out')
  given(started(), failed()).when(expire(afterExpiry)).thenNothing('nor one ended in error')
  given().when(expire(afterExpiry)).thenNothing('no such session')

  const state = given(started()).when(expire(afterExpiry)).then([expired(afterExpiry)])
  t.match(state, { status: 'timeout', finishedAt: afterExpiry }, 'the session times out')
})

t.test('sessionStream', async (t) => {
  examples(t, sessionStream, [['one stream per session', [sessionId], `session-${sessionId}`]])
})

const eventId = '0190a0b0-0000-7000-8000-000000000801'
const timerId = '0190a0b0-0000-7000-8000-000000000802'
const posted = { name: 'payment.confirmed', data: { amount: 10 } }
/** A distinct trigger id for the n-th of many. */
const nthId = (n: number) => `0190a0b0-0000-7000-8000-${String(900 + n).padStart(12, '0')}`

const receiveEvent = (data: Partial<CommandData<'ReceiveEvent'>> = {}): SessionCommand => ({
  type: 'ReceiveEvent',
  data: { sessionId, workspaceId: ws, messageId: eventId, event: posted, idempotencyKey: 'event-1', now: later, ...data },
})
const eventReceived = (data: Partial<Data<'OutsideEventReceived'>> = {}): SessionEvent => ({
  type: 'OutsideEventReceived',
  data: { sessionId, messageId: eventId, event: posted, idempotencyKey: 'event-1', receivedAt: later, ...data },
})

/** A turn that leaves the conversation as `state` says, the rest as `output` makes it. */
const leaving = (state: Partial<ConversationState>, status: TurnOutput['status'] = 'active'): TurnOutput => output(status, { messages: [], visited: ['start', 'wait'], state: { ...output().state, waitingAt: null, ...state } })
/** A session waiting at `wait` for the event until `until`: its start's turn completed so. */
const until = '2026-01-02T04:00:00.000Z'
const waitingUntil = (at = until, nodeId = 'wait') => leaving({ waitingAt: { nodeId, retries: 0, event: 'payment.confirmed', until: at } })
const completedWaiting = (at = until, nodeId = 'wait'): SessionEvent => ({
  type: 'TurnCompleted',
  data: { sessionId, messageId: startId, output: waitingUntil(at, nodeId), completedAt: startedAt, expiresAt: new Date(Date.parse(at) + 600_000).toISOString() },
})

t.test('ReceiveEvent', async (t) => {
  const { given } = spec(t, session)
  given(started()).when(receiveEvent()).then([eventReceived()], 'an active session takes an outside event')
  given().when(receiveEvent()).thenRejects(NotFoundError, 'no such session')
  given(started()).when(receiveEvent({ workspaceId: otherWs })).thenRejects(NotFoundError, 'a session of another workspace')
  given(started()).when(receiveEvent({ previewsOnly: true })).thenRejects(NotFoundError, 'the editor does not reach a session of a published version')
  given(started({ preview })).when(receiveEvent({ previewsOnly: true })).then([eventReceived()], 'the editor reaches a preview')
  given(started()).when(receiveEvent({ idempotencyKey: null })).then([eventReceived({ idempotencyKey: null })], 'without a key')

  const state = given(started(), received()).when(receiveEvent()).then([eventReceived()])
  t.match(
    state,
    { status: 'active', expiresAt: '2026-01-02T03:15:00.000Z', pending: [{ messageId: startId }, { messageId: firstId }, { messageId: eventId, trigger: { type: 'event', event: posted } }] },
    'the event waits for its turn after the triggers before it, and does not move the expiry',
  )
  t.same(state.status !== 'none' && state.idempotencyKeys, { [messageKey('retry-1')]: firstId, [eventKey('event-1')]: eventId }, 'its key names it, apart from the message keys')
})

t.test('ReceiveEvent once the session is over', async (t) => {
  const { given } = spec(t, session)
  given(started()).when(receiveEvent({ now: '2026-01-02T03:09:59.999Z' })).then([eventReceived({ receivedAt: '2026-01-02T03:09:59.999Z' })], 'a millisecond before the expiry')
  given(started()).when(receiveEvent({ now: expiresAt })).thenRejects({ type: ConflictError, message: /not active/ }, 'at the expiry, before the sweeper recorded it')
  given(started(), expired()).when(receiveEvent({ now: startedAt })).thenRejects(ConflictError, 'expired')
  given(started(), completed(startId, output('completed'))).when(receiveEvent()).thenRejects(ConflictError, 'completed by its flow')
  given(started(), failed()).when(receiveEvent()).thenRejects(ConflictError, 'ended in error')
  given(started(), eventReceived({ receivedAt: startedAt })).when(receiveEvent({ messageId: secondId, idempotencyKey: 'event-2', now: afterExpiry })).thenRejects(ConflictError, 'an event does not move the expiry on')
})

t.test('ReceiveEvent with an Idempotency-Key', async (t) => {
  const { given } = spec(t, session)
  given(started(), eventReceived()).when(receiveEvent({ messageId: secondId })).thenNothing('the same key again makes no second event')
  given(started(), eventReceived(), completed(startId, output('completed'))).when(receiveEvent({ messageId: secondId })).thenNothing('nor after the session completed: a retry, not 409')
  given(started(), eventReceived()).when(receiveEvent({ messageId: secondId, workspaceId: otherWs })).thenRejects(NotFoundError, 'a known key from another workspace finds nothing')
  given(started(), eventReceived()).when(receiveEvent({ messageId: secondId, idempotencyKey: 'event-2' })).then([eventReceived({ messageId: secondId, idempotencyKey: 'event-2' })], 'another key is another event')
  given(started(), received({ idempotencyKey: 'shared' })).when(receiveEvent({ idempotencyKey: 'shared' })).then([eventReceived({ idempotencyKey: 'shared' })], "a message's key does not dedup an event")
  given(started(), eventReceived({ idempotencyKey: 'shared' })).when(receive({ idempotencyKey: 'shared' })).then([received({ idempotencyKey: 'shared' })], "nor an event's key a message")
  for (const key of ['constructor', '__proto__']) {
    given(started()).when(receiveEvent({ idempotencyKey: key })).then([eventReceived({ idempotencyKey: key })], `a first key named like an object member (${key}) is a new event`)
  }
})

t.test(`ReceiveEvent keeps at most ${EVENTS_KEPT} events no node has taken`, async (t) => {
  const { given } = spec(t, session)
  const inbox = (count: number) => Array.from({ length: count }, (_, i) => ({ eventId: `kept-${i}`, name: 'other', data: {} }))
  const keeping = (count: number) => completed(startId, leaving({ waitingAt: { nodeId: 'wait', retries: 0, event: 'payment.confirmed', until }, inbox: inbox(count) }))
  const pendingEvents = (count: number) => Array.from({ length: count }, (_, i) => eventReceived({ messageId: nthId(i), idempotencyKey: `pending-${i}` }))
  given(started(), keeping(EVENTS_KEPT - 1)).when(receiveEvent()).then([eventReceived()], `${EVENTS_KEPT - 1} kept: one more is taken`)
  given(started(), keeping(EVENTS_KEPT)).when(receiveEvent()).thenRejects({ type: ConflictError, message: new RegExp(`holds ${EVENTS_KEPT} events`) }, `${EVENTS_KEPT} kept: 409`)
  given(started(), ...pendingEvents(EVENTS_KEPT)).when(receiveEvent()).thenRejects(ConflictError, `${EVENTS_KEPT} posted and not yet taken by a turn: 409`)
  given(started(), keeping(EVENTS_KEPT - 1), ...pendingEvents(1)).when(receiveEvent()).thenRejects(ConflictError, 'kept and pending count together')
  given(started(), received({ idempotencyKey: null }), ...pendingEvents(EVENTS_KEPT - 1)).when(receiveEvent()).then([eventReceived()], 'pending messages do not count')
  given(started(), ...pendingEvents(EVENTS_KEPT)).when(receiveEvent({ idempotencyKey: 'pending-3' })).thenNothing('a repeat of a known key is no new event, even at the cap')
})

t.test('FireTimer', async (t) => {
  const { given } = spec(t, session)
  const fire = (data: Partial<CommandData<'FireTimer'>> = {}): SessionCommand => ({ type: 'FireTimer', data: { sessionId, messageId: timerId, nodeId: 'wait', until, now: until, ...data } })
  const fired = (data: Partial<Data<'TimerFired'>> = {}): SessionEvent => ({ type: 'TimerFired', data: { sessionId, messageId: timerId, nodeId: 'wait', until, firedAt: until, ...data } })
  const waiting = [started(), completedWaiting()] as const
  given(...waiting).when(fire()).then([fired()], 'at its time, the session still waiting there')
  given(...waiting).when(fire({ now: '2026-01-02T04:03:00.000Z' })).then([fired({ firedAt: '2026-01-02T04:03:00.000Z' })], 'late, recorded when the sweeper came')
  given(...waiting).when(fire({ now: '2026-01-02T03:59:59.999Z' })).thenNothing('not a millisecond before its time')
  given(...waiting).when(fire({ until: '2026-01-02T03:30:00.000Z', now: until })).thenNothing('a timer of another wait (another until)')
  given(...waiting).when(fire({ nodeId: 'other' })).thenNothing('a timer of another node')
  given(...waiting, fired()).when(fire()).thenNothing('only once: it fired already')
  given(...waiting, fired(), completed(timerId, leaving({}, 'completed'), until)).when(fire()).thenNothing('nor once its turn ended the wait')
  given(started(), completed()).when(fire()).thenNothing('a session waiting at a question has no timer')
  given(...waiting, expired('2026-01-02T04:10:00.000Z')).when(fire({ now: '2026-01-02T04:11:00.000Z' })).thenNothing('an expired session')
  given(...waiting, failed(startId, later)).when(fire()).thenNothing('a session ended in error')
  given().when(fire()).thenNothing('no such session')

  const state = given(...waiting, received({ receivedAt: '2026-01-02T03:30:00.000Z', expiresAt: '2026-01-02T03:40:00.000Z' })).when(fire()).then([fired()])
  t.match(state, { pending: [{ messageId: firstId }, { messageId: timerId, trigger: { type: 'timer', nodeId: 'wait', until } }] }, 'its trigger waits for its turn after the ones before it')
})

t.test('FireTimerNow', async (t) => {
  const { given } = spec(t, session)
  const now = '2026-01-02T03:06:00.000Z'
  const fireNow = (data: Partial<CommandData<'FireTimerNow'>> = {}): SessionCommand => ({ type: 'FireTimerNow', data: { sessionId, workspaceId: ws, now, ...data } })
  const firedNow = (): SessionEvent => ({ type: 'TimerFired', data: { sessionId, messageId: timerTriggerId(sessionId, 'wait', until), nodeId: 'wait', until, firedAt: now } })
  const previewWaiting = [started({ preview }), completedWaiting()] as const
  given(...previewWaiting).when(fireNow()).then([firedNow()], "a preview's pending timer, before it is due, with the id the sweeper would give it")
  given(...previewWaiting).when(fireNow({ previewsOnly: true })).then([firedNow()], 'by the editor')
  given(...previewWaiting, firedNow()).when(fireNow()).thenNothing('once: it fired already')
  given(started(), completedWaiting()).when(fireNow()).thenRejects({ type: ConflictError, message: /preview/ }, 'a live session: 409')
  given(started(), completedWaiting()).when(fireNow({ previewsOnly: true })).thenRejects(NotFoundError, 'a live session for the editor: not found')
  given(started({ preview }), completed()).when(fireNow()).thenRejects({ type: ConflictError, message: /^the session has no pending timer$/ }, 'no timer pending')
  given(...previewWaiting).when(fireNow({ workspaceId: otherWs })).thenRejects(NotFoundError, 'from another workspace')
  given(...previewWaiting, failed(startId, later)).when(fireNow()).thenRejects(ConflictError, 'a session that ended')
  given().when(fireNow()).thenRejects(NotFoundError, 'no such session')
})

t.test('RecordCallAnswer', async (t) => {
  const { given } = spec(t, session)
  const call = (index: number): RecordedCall => ({
    index,
    nodeId: 'call',
    request: { method: 'GET', url: `https://api.example.com/orders/${index}`, headers: [{ name: 'authorization', value: 'Bearer {{secrets.key}}' }], body: null, timeoutMs: 10000 },
    answer: index === 1 ? { error: 'timeout', message: 'no answer in 10 s' } : { status: 200, headers: { 'content-type': 'application/json' }, body: '{}' },
    durationMs: 35,
  })
  const record = (index: number, messageId = startId): SessionCommand => ({ type: 'RecordCallAnswer', data: { sessionId, messageId, call: call(index), now: later } })
  const answered = (index: number, messageId = startId): SessionEvent => ({ type: 'OutsideCallAnswered', data: { sessionId, messageId, answeredAt: later, ...call(index) } })

  given(started()).when(record(0)).then([answered(0)], "the first call of the oldest pending trigger's turn")
  given(started(), answered(0)).when(record(1)).then([answered(1)], 'then the next')
  given(started(), answered(0)).when(record(0)).thenNothing('the same call answered again (a repeated try)')
  given(started()).when(record(1)).thenNothing('not a call past the next index')
  given(started(), received()).when(record(0, firstId)).thenNothing('not for a trigger behind the oldest')
  given(started(), completed()).when(record(0)).thenNothing('not once its turn completed')
  given(started(), failed()).when(record(0)).thenNothing('not once the session ended in error')
  given(started(), expired()).when(record(0)).then([answered(0)], 'a pending turn still gets its answers once the session expired')
  given().when(record(0)).thenNothing('no such session')

  const two = given(started(), answered(0)).when(record(1)).then([answered(1)])
  t.same(two.status !== 'none' && two.calls, [call(0), call(1)], 'the calls so far, in order, for the turn run again')
  const afterTurn = given(started(), answered(0), answered(1), received()).when(complete()).then([completed()])
  t.same(afterTurn.status !== 'none' && afterTurn.calls, [], 'a completed turn clears them')
  given(started(), answered(0), completed(), received()).when(record(0, firstId)).then([answered(0, firstId)], "the next trigger's turn counts its calls from 0")
  const afterFailure = given(started(), answered(0)).when(fail()).then([failed()])
  t.same(afterFailure.status !== 'none' && afterFailure.calls, [], 'a failed turn clears them')
})

t.test('CompleteTurn of a turn that waits with a timer', async (t) => {
  const { given } = spec(t, session)
  const turnCompleted = (turn: TurnOutput, extra: { expiresAt?: string } = {}): SessionEvent => ({ type: 'TurnCompleted', data: { sessionId, messageId: startId, output: turn, completedAt: startedAt, ...extra } })
  const state = given(started()).when(complete(startId, waitingUntil())).then([turnCompleted(waitingUntil(), { expiresAt: '2026-01-02T04:10:00.000Z' })], 'the session expires a ttl after the timer, not before it fires')
  t.match(state, { status: 'active', expiresAt: '2026-01-02T04:10:00.000Z' }, 'evolve takes the new expiry')

  const soon = waitingUntil('2026-01-02T03:00:05.000Z')
  given(started()).when(complete(startId, soon)).then([turnCompleted(soon, { expiresAt: '2026-01-02T03:10:05.000Z' })], 'even a few seconds later')
  const early = waitingUntil('2026-01-02T03:04:00.000Z')
  given(started(), received()).when(complete(startId, early)).then([turnCompleted(early)], 'no expiry when the current one is later than until + ttl')
  const exact = waitingUntil('2026-01-02T03:05:00.000Z')
  given(started(), received()).when(complete(startId, exact)).then([turnCompleted(exact)], 'nor when it is the same')
  const ended: TurnOutput = { ...waitingUntil(), status: 'completed' }
  given(started()).when(complete(startId, ended)).then([turnCompleted(ended)], 'nor for a turn that did not end waiting')

  given(started(), completedWaiting()).when(expire(afterExpiry)).thenNothing('the session does not expire at its old expiry')
  given(started(), completedWaiting()).when(receive({ now: afterExpiry })).then([received({ receivedAt: afterExpiry, expiresAt: '2026-01-02T04:10:00.000Z' })], 'and takes messages past it')
  given(started(), completedWaiting()).when(expire('2026-01-02T04:10:00.000Z')).then([expired('2026-01-02T04:10:00.000Z')], 'it expires at the new one')
  given(started(), completedWaiting()).when(receive()).then([received({ expiresAt: '2026-01-02T04:10:00.000Z' })], 'a message while it waits does not bring the expiry back before the timer')
  given(started(), completedWaiting(), received({ expiresAt: '2026-01-02T04:10:00.000Z' })).when(expire('2026-01-02T03:15:00.000Z')).thenNothing('so the session is still there when the timer fires')
  given(started(), completedWaiting()).when(receive({ now: '2026-01-02T04:05:00.000Z' })).then([received({ receivedAt: '2026-01-02T04:05:00.000Z', expiresAt: '2026-01-02T04:15:00.000Z' })], 'a message later than that moves it on as usual')
})
