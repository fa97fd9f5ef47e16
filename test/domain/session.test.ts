import t from 'tap'
import { EventSchemaError } from '../../src/commands/handle.js'
import { startToEnd } from '../../src/domain/flow-definition.js'
import { session, sessionStream, type SessionCommand, type SessionEvent } from '../../src/domain/session.js'
import type { TurnOutput } from '../../src/domain/turn.js'
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
  t.same(state.status !== 'none' && state.idempotencyKeys, { 'retry-1': firstId }, 'the key names the message it made')
})

t.test('CompleteTurn', async (t) => {
  const { given } = spec(t, session)
  given(started()).when(complete()).then([completed()], 'the start\'s turn')
  given(started(), completed()).when(complete()).thenNothing('the same turn again (another worker took it)')
  given(started(), received()).when(complete(firstId)).thenNothing('not before the start\'s turn: only the oldest pending trigger')
  given(started(), received(), completed()).when(complete(firstId, output(), later)).then([completed(firstId, output(), later)], 'then the message\'s')
  given().when(complete()).thenNothing('no such session')

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
