import t from 'tap'
import { REPLAY_LIMITS, replay, replayStream, type DifferingSession, type ReplayCommand, type ReplayEvent } from '../../src/domain/replay.js'
import { startToEnd } from '../../src/domain/flow-definition.js'
import { ConflictError } from '../../src/errors.js'
import { examples, spec } from '../helpers/decider-spec.js'

const replayId = '0190a0b0-0000-7000-8000-000000000901'
const flowId = '0190a0b0-0000-7000-8000-000000000601'
const ws = '0190a0b0-0000-7000-8000-000000000011'
const org = '0190a0b0-0000-7000-8000-000000000001'
const now = '2026-01-02T03:04:05.678Z'
const sessions = ['0190a0b0-0000-7000-8000-000000000a01', '0190a0b0-0000-7000-8000-000000000a02', '0190a0b0-0000-7000-8000-000000000a03']

const request = { replayId, flowId, workspaceId: ws, organizationId: org, version: 1, draftVersion: 4, definition: startToEnd(), selection: { last: 3 }, sessionIds: sessions }
const ask = (sessionIds = sessions): ReplayCommand => ({ type: 'RequestReplay', data: { ...request, sessionIds, now } })
const requested: ReplayEvent = { type: 'ReplayRequested', data: { ...request, requestedAt: now } }
const differs = (sessionId: string): DifferingSession => ({
  sessionId,
  turn: 1,
  trigger: { kind: 'message', text: 'hi' },
  recorded: { said: ['Hello'], functions: [], waitsAt: 'ask', status: 'active' },
  replayed: { said: ['Hi there'], functions: [], waitsAt: 'ask', status: 'active' },
})
const record = (from: number, played: number, differing: DifferingSession[] = []): ReplayCommand => ({ type: 'RecordReplayProgress', data: { replayId, from, played, differing, now } })
const progressed = (from: number, checked: number, differing: DifferingSession[] = []): ReplayEvent => ({ type: 'ReplayProgressed', data: { replayId, from, checked, differing, at: now } })
const finished: ReplayEvent = { type: 'ReplayFinished', data: { replayId, finishedAt: now } }

t.test('RequestReplay', async (t) => {
  const { given } = spec(t, replay)
  const state = given().when(ask()).then([requested], 'a replay of three sessions is asked')
  t.match(state, { status: 'running', checked: 0, differingCount: 0 })
  given().when(ask([])).then([{ ...requested, data: { ...requested.data, sessionIds: [] } }, finished], 'with no session to play it is done at once')
  given(requested).when(ask()).thenRejects(ConflictError, 'an id asked twice')
  examples(t, replayStream, [['one stream per replay', [replayId], `replay-${replayId}`]])
})

t.test('RecordReplayProgress', async (t) => {
  const { given } = spec(t, replay)
  const state = given(requested).when(record(0, 2, [differs(sessions[1]!)])).then([progressed(0, 2, [differs(sessions[1]!)])], 'a batch of two, one differing')
  t.match(state, { status: 'running', checked: 2, differingCount: 1, differing: [{ sessionId: sessions[1] }] })
  const done = given(requested, progressed(0, 2)).when(record(2, 1)).then([progressed(2, 3), finished], 'the last batch finishes it')
  t.match(done, { status: 'finished', checked: 3, finishedAt: now })
  given(requested, progressed(0, 2)).when(record(0, 2)).thenNothing('a batch recorded already (another runner, a restart) adds nothing')
  given(requested, progressed(0, 2), progressed(2, 3), finished).when(record(2, 1)).thenNothing('nor once it finished')
  given().when(record(0, 1)).thenNothing('nor for a replay never asked')
})

t.test('differing sessions past the cap are counted, not kept', async (t) => {
  const { given } = spec(t, replay)
  const many = Array.from({ length: REPLAY_LIMITS.differingKept + 2 }, (_, i) => `0190a0b0-0000-7000-8000-${String(i).padStart(12, '0')}`)
  const big = { ...requested, data: { ...requested.data, sessionIds: many } }
  const found = many.map(differs)
  const state = given(big).when({ type: 'RecordReplayProgress', data: { replayId, from: 0, played: many.length, differing: found, now } }).then(
    [{ type: 'ReplayProgressed', data: { replayId, from: 0, checked: many.length, differing: found.slice(0, REPLAY_LIMITS.differingKept), pastKept: 2, at: now } }, finished],
    `the first ${REPLAY_LIMITS.differingKept} kept`,
  )
  t.match(state, { differingCount: many.length }, 'every one counted')
  t.equal(state.status === 'none' ? 0 : state.differing.length, REPLAY_LIMITS.differingKept)
})
