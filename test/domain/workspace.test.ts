import t from 'tap'
import { workspace, workspaceStream, type WorkspaceCommand, type WorkspaceEvent } from '../../src/domain/workspace.js'
import { ConflictError, NotFoundError } from '../../src/errors.js'
import { examples, spec } from '../helpers/decider-spec.js'

const org = '0190a0b0-0000-7000-8000-000000000001'
const ws = '0190a0b0-0000-7000-8000-000000000011'
const now = '2026-01-02T03:04:05.678Z'

const create = (data: Partial<Extract<WorkspaceCommand, { type: 'CreateWorkspace' }>['data']> = {}): WorkspaceCommand => ({
  type: 'CreateWorkspace',
  data: { workspaceId: ws, organizationId: org, name: 'Support', timezone: 'America/Sao_Paulo', now, ...data },
})
const created: WorkspaceEvent = { type: 'WorkspaceCreated', data: { workspaceId: ws, organizationId: org, name: 'Support', timezone: 'America/Sao_Paulo', createdAt: now } }

t.test('CreateWorkspace', async (t) => {
  const { given } = spec(t, workspace)
  const state = given().when(create()).then([created], 'a new workspace of its organization')
  t.same(state, { status: 'active', workspaceId: ws, organizationId: org, name: 'Support', timezone: 'America/Sao_Paulo' }, 'its state names it and its timezone')
  given().when(create({ timezone: null })).then([{ type: 'WorkspaceCreated', data: { ...created.data, timezone: null } }], 'without a timezone')
  given(created).when(create()).thenRejects(ConflictError, 'the same id twice')
  given().when(create({ name: '' })).thenRejects(/name/, 'the event schema wants a name')
  examples(t, workspaceStream, [['one stream per workspace', [ws], `workspace-${ws}`]])
})

t.test('ChangeWorkspace', async (t) => {
  const { given } = spec(t, workspace)
  const change = (data: { name?: string; timezone?: string | null; organizationId?: string }): WorkspaceCommand => ({
    type: 'ChangeWorkspace',
    data: { workspaceId: ws, organizationId: org, now, ...data },
  })
  const renamed: WorkspaceEvent = { type: 'WorkspaceChanged', data: { workspaceId: ws, name: 'Help desk', changedAt: now } }
  const state = given(created).when(change({ name: 'Help desk' })).then([renamed], 'a new name alone')
  t.same(state, { status: 'active', workspaceId: ws, organizationId: org, name: 'Help desk', timezone: 'America/Sao_Paulo' }, 'the time zone stays')
  given(created).when(change({ timezone: null })).then([{ type: 'WorkspaceChanged', data: { workspaceId: ws, timezone: null, changedAt: now } }], 'back to UTC')
  given(created).when(change({ name: 'Help desk', timezone: 'Asia/Tokyo' })).then(
    [{ type: 'WorkspaceChanged', data: { workspaceId: ws, name: 'Help desk', timezone: 'Asia/Tokyo', changedAt: now } }],
    'both at once',
  )
  given(created).when(change({ name: 'Help desk', timezone: 'America/Sao_Paulo' })).then([{ ...renamed }], 'only what changed is recorded')
  given(created).when(change({ name: 'Support', timezone: 'America/Sao_Paulo' })).thenNothing('nothing new: nothing appended')
  given(created).when(change({})).thenNothing('an empty change')
  given().when(change({ name: 'Help desk' })).thenRejects(NotFoundError, 'no such workspace')
  given(created).when(change({ name: 'Help desk', organizationId: '0190a0b0-0000-7000-8000-000000000002' })).thenRejects(NotFoundError, "another organization's workspace")
  given(created).when(change({ name: '' })).thenRejects(/name/, 'the event schema wants a name')
})
