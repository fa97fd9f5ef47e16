import t from 'tap'
import { startToEnd, type FlowDefinition } from '../../src/domain/flow-definition.js'
import { flow, flowStream, type FlowEvent } from '../../src/domain/flow.js'
import { flowsProjection } from '../../src/projections/flows.js'
import { projectionSpec } from '../helpers/projection-spec.js'

const org = '0190a0b0-0000-7000-8000-000000000001'
const ws = '0190a0b0-0000-7000-8000-000000000011'
const welcome = '0190a0b0-0000-7000-8000-000000000601'
const survey = '0190a0b0-0000-7000-8000-000000000602'
const createdAt = '2026-01-01T00:00:00.000Z'
const day = (n: number) => `2026-01-0${n}T09:00:00.000Z`

const first = startToEnd()
/** Another draft: the same graph, sessions of it expiring sooner. */
const second: FlowDefinition = { ...startToEnd(), settings: { sessionTtlSeconds: 600 } }

const created = (flowId = welcome, name = 'Welcome'): FlowEvent => ({ type: 'FlowCreated', data: { flowId, workspaceId: ws, organizationId: org, name, definition: first, createdAt } })
const saved = (definition: FlowDefinition, savedAt: string, flowId = welcome): FlowEvent => ({ type: 'FlowDraftSaved', data: { flowId, definition, savedAt } })
const published = (version: number, definition: FlowDefinition, publishedAt: string): FlowEvent => ({ type: 'FlowPublished', data: { flowId: welcome, version, definition, publishedAt } })
const renamed = (name: string, renamedAt: string): FlowEvent => ({ type: 'FlowRenamed', data: { flowId: welcome, name, renamedAt } })

t.test('the flows read model', async (t) => {
  const { given } = projectionSpec(t, flowsProjection, { streamOf: (event: FlowEvent) => flowStream(event.data.flowId), schemas: flow.eventSchemas })

  await given(created()).then(
    {
      flows: [{ id: welcome, workspace_id: ws, organization_id: org, name: 'Welcome', draft: first, draft_version: 1, published_version: 0, created_at: createdAt, updated_at: createdAt }],
      flow_versions: [],
    },
    'a created flow is its first draft, draft version 1, nothing published',
  )
  await given(created(), saved(second, day(2))).then(
    { flows: [{ id: welcome, draft: second, draft_version: 2, published_version: 0, created_at: createdAt, updated_at: day(2) }] },
    'a saved draft replaces the draft, and its version is one more than the revision that wrote it',
  )
  await given(created(), published(1, first, day(2))).then(
    {
      flows: [{ id: welcome, draft: first, draft_version: 1, published_version: 1, updated_at: day(2) }],
      flow_versions: [{ flow_id: welcome, version: 1, definition: first, published_at: day(2) }],
    },
    'a publish keeps the version and moves the flow to it, leaving the draft as it was',
  )
  await given(created(), published(1, first, day(2)), saved(second, day(3)), published(2, second, day(4)), saved(first, day(5))).then(
    {
      flows: [{ id: welcome, draft: first, draft_version: 5, published_version: 2, updated_at: day(5) }],
      flow_versions: [
        { flow_id: welcome, version: 1, definition: first, published_at: day(2) },
        { flow_id: welcome, version: 2, definition: second, published_at: day(4) },
      ],
    },
    'every published version stays as published; the flow points at the latest, the draft at the latest save',
  )
  await given(created(), renamed('Greeting', day(2))).then(
    { flows: [{ id: welcome, name: 'Greeting', draft_version: 1, created_at: createdAt, updated_at: day(2) }] },
    'a rename replaces the name and moves updated_at only',
  )
  await given(created(), created(survey, 'Survey'), saved(second, day(2), survey)).then(
    {
      flows: [
        { id: welcome, name: 'Welcome', draft: first, draft_version: 1 },
        { id: survey, name: 'Survey', draft: second, draft_version: 2 },
      ],
    },
    'each flow counts its draft versions on its own stream',
  )
})
