import t from 'tap'
import { EventSchemaError } from '../../src/commands/handle.js'
import { AI_CONNECTION_LIMITS, aiConnections, aiConnectionsStream, type AiConnectionCommand, type AiConnectionEvent, type AiConnectionSettings } from '../../src/domain/ai-connection.js'
import { ConflictError, NotFoundError } from '../../src/errors.js'
import { examples, spec } from '../helpers/decider-spec.js'

const ws = '0190a0b0-0000-7000-8000-000000000011'
const id = '0190a0b0-0000-7000-8000-000000000301'
const otherId = '0190a0b0-0000-7000-8000-000000000302'
const createdAt = '2026-01-01T00:00:00.000Z'
const now = '2026-01-02T03:04:05.678Z'

const settings: AiConnectionSettings = {
  name: 'OpenAI',
  baseUrl: 'https://api.openai.com/v1',
  apiKeySecret: 'openai',
  model: 'gpt-4o-mini',
  headers: [],
  maxTokensPerCall: 1024,
  callsPerSession: 50,
}

const created = (connectionId = id, name = settings.name): AiConnectionEvent => ({ type: 'AiConnectionCreated', data: { workspaceId: ws, id: connectionId, ...settings, name, createdAt } })
const create = (connectionId = id, name = settings.name): AiConnectionCommand => ({ type: 'CreateAiConnection', data: { workspaceId: ws, id: connectionId, settings: { ...settings, name }, now } })
const change = (changes: Partial<AiConnectionSettings>, connectionId = id): AiConnectionCommand => ({ type: 'ChangeAiConnection', data: { workspaceId: ws, id: connectionId, changes, now } })

t.test('CreateAiConnection', async (t) => {
  const { given } = spec(t, aiConnections)
  given().when(create()).then([{ type: 'AiConnectionCreated', data: { workspaceId: ws, id, ...settings, createdAt: now } }], 'a new connection, created now')
  given(created()).when(create()).then([], 'the same id again changes nothing')
  given(created()).when(create(otherId, ' openai ')).thenRejects({ type: ConflictError, message: /named "OpenAI" already/ }, 'a name taken, without case and surrounding spaces')
  const full = Array.from({ length: AI_CONNECTION_LIMITS.perWorkspace }, (_, i) => created(`0190a0b0-0000-7000-8000-${String(400 + i).padStart(12, '0')}`, `Connection ${i}`))
  given(...full).when(create(otherId, 'One more')).thenRejects({ type: ConflictError, message: /holds 20 AI connections/ }, 'a full workspace')
  given()
    .when({ type: 'CreateAiConnection', data: { workspaceId: ws, id, settings: { ...settings, apiKeySecret: 'not-a-name' }, now } })
    .thenRejects({ type: EventSchemaError, message: /apiKeySecret/ }, 'the event schema refuses a secret name flows could not write')
})

t.test('ChangeAiConnection', async (t) => {
  const { given } = spec(t, aiConnections)
  const state = given(created()).when(change({ model: 'gpt-4o', headers: [{ name: 'OpenAI-Project', value: 'p' }] })).then(
    [{ type: 'AiConnectionChanged', data: { workspaceId: ws, id, ...settings, model: 'gpt-4o', headers: [{ name: 'OpenAI-Project', value: 'p' }], changedAt: now } }],
    'the settings after the change, whole',
  )
  t.match(state.byId[id], { model: 'gpt-4o', createdAt, updatedAt: now }, 'it keeps its creation date')
  const loose = [{ name: 'OpenAI-Project', value: 'p', '': [] }] as unknown as { name: string; value: string }[]
  given(created()).when(change({ headers: loose })).then(
    [{ type: 'AiConnectionChanged', data: { workspaceId: ws, id, ...settings, headers: [{ name: 'OpenAI-Project', value: 'p' }], changedAt: now } }],
    'a header keeps its name and value alone',
  )
  given(created()).when(change({ model: settings.model })).then([], 'no change, no event')
  given(created()).when(change({ model: undefined })).then([], 'an absent field is no change')
  given(created(), created(otherId, 'Ollama')).when(change({ name: 'OLLAMA' })).thenRejects(ConflictError, "another connection's name")
  given(created()).when(change({ name: 'OPENAI' })).then([{ type: 'AiConnectionChanged', data: { workspaceId: ws, id, ...settings, name: 'OPENAI', changedAt: now } }], 'its own name in other case')
  given().when(change({ model: 'x' })).thenRejects(NotFoundError, 'unknown connection')
})

t.test('DeleteAiConnection', async (t) => {
  const { given } = spec(t, aiConnections)
  const remove: AiConnectionCommand = { type: 'DeleteAiConnection', data: { workspaceId: ws, id, now } }
  const state = given(created()).when(remove).then([{ type: 'AiConnectionDeleted', data: { workspaceId: ws, id, deletedAt: now } }], 'deleted')
  t.same(state.byId, {}, 'gone from the state')
  given(created(), { type: 'AiConnectionDeleted', data: { workspaceId: ws, id, deletedAt: now } }).when(remove).thenRejects(NotFoundError, 'already deleted')
  given(created(), { type: 'AiConnectionDeleted', data: { workspaceId: ws, id, deletedAt: now } }).when(create(otherId)).then([{ type: 'AiConnectionCreated', data: { workspaceId: ws, id: otherId, ...settings, createdAt: now } }], 'its name is free again')
  examples(t, aiConnectionsStream, [['one stream per workspace', [ws], `ai-connections-${ws}`]])
})
