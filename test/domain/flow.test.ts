import t from 'tap'
import { draftVersionOf, flow, flowStream, StaleDraftError, type FlowCommand, type FlowEvent } from '../../src/domain/flow.js'
import { startToEnd, type FlowDefinition } from '../../src/domain/flow-definition.js'
import { InvalidFlowError, type WorkspaceCatalog } from '../../src/domain/validate-flow.js'
import { NotFoundError, ConflictError } from '../../src/errors.js'
import { examples, spec } from '../helpers/decider-spec.js'

const org = '0190a0b0-0000-7000-8000-000000000001'
const ws = '0190a0b0-0000-7000-8000-000000000011'
const otherWs = '0190a0b0-0000-7000-8000-000000000012'
const flowId = '0190a0b0-0000-7000-8000-000000000601'
const sales = '0190a0b0-0000-7000-8000-000000000801'
const createdAt = '2026-01-01T00:00:00.000Z'
const now = '2026-01-02T03:04:05.678Z'

const catalog = (...sectorIds: string[]): WorkspaceCatalog => ({ sectorIds: new Set(sectorIds), pipelines: new Map(), variables: new Map() })
/** Start, then a transfer to the sector. */
const toSales = (): FlowDefinition => ({
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'hand', type: 'transfer', position: { x: 240, y: 0 }, data: { targetType: 'sector', targetId: sales } },
  ],
  edges: [{ id: 'start-hand', source: 'start', target: 'hand' }],
})

const flowCreated = (definition: FlowDefinition): FlowEvent => ({ type: 'FlowCreated', data: { flowId, workspaceId: ws, organizationId: org, name: 'Welcome', definition, createdAt } })
const created = flowCreated(startToEnd())
const published = (version: number, definition: FlowDefinition, publishedAt = createdAt): FlowEvent => ({ type: 'FlowPublished', data: { flowId, version, definition, publishedAt } })
const saved = (definition: FlowDefinition): FlowEvent => ({ type: 'FlowDraftSaved', data: { flowId, definition, savedAt: now } })
const save = (definition: unknown, data: Partial<Extract<FlowCommand, { type: 'SaveDraft' }>['data']> = {}): FlowCommand => ({
  type: 'SaveDraft',
  data: { flowId, workspaceId: ws, definition, catalog: catalog(sales), now, ...data },
})
const publish = (data: Partial<Extract<FlowCommand, { type: 'PublishFlow' }>['data']> = {}): FlowCommand => ({ type: 'PublishFlow', data: { flowId, workspaceId: ws, catalog: catalog(sales), now, ...data } })

t.test('CreateFlow', async (t) => {
  const { given } = spec(t, flow)
  const create = (definition: unknown = startToEnd(), sectors = catalog()): FlowCommand => ({
    type: 'CreateFlow',
    data: { flowId, workspaceId: ws, organizationId: org, name: 'Welcome', definition, catalog: sectors, now: createdAt },
  })
  const state = given().when(create()).then([created, published(1, startToEnd())], 'a new flow runs at once: its first draft is version 1')
  t.match(state, { status: 'active', draftVersion: 1, publishedVersion: 1, latest: { version: 1 } }, 'its draft is version 1 too')
  given(created).when(create()).thenRejects(ConflictError, 'the same id twice')
  given().when(create({ schemaVersion: 2, nodes: [], edges: [] })).thenRejects(InvalidFlowError, 'a definition the validator refuses')
  given().when(create(toSales())).thenRejects({ type: InvalidFlowError, message: /no sector/ }, 'a transfer to a sector the workspace lacks')
  given().when(create(toSales(), catalog(sales))).then(
    [flowCreated(toSales()), published(1, toSales())],
    'one the workspace has',
  )
})

t.test('SaveDraft', async (t) => {
  const { given } = spec(t, flow)
  const history = [created, published(1, startToEnd())]
  given(...history).when(save(toSales())).then([saved(toSales())], 'a changed draft is saved')
  given(...history).when(save(startToEnd())).thenNothing('the same draft again')
  const reordered = { edges: startToEnd().edges, nodes: startToEnd().nodes, schemaVersion: 1 }
  given(...history).when(save(reordered)).thenNothing('the same draft with its keys in another order (as jsonb gives it back)')
  given(...history).when(save(toSales(), { catalog: catalog() })).thenRejects(InvalidFlowError, 'validated against the workspace')
  given(...history).when(save(toSales(), { workspaceId: otherWs })).thenRejects(NotFoundError, 'a flow of another workspace')
  given().when(save(toSales())).thenRejects(NotFoundError, 'no such flow')

  given(...history).when(save(toSales(), { ifDraftVersion: 1 })).then([saved(toSales())], 'over the draft version the client read')
  given(...history, saved(toSales())).when(save(startToEnd(), { ifDraftVersion: draftVersionOf(2) })).then([saved(startToEnd())], 'a saved draft is named by its revision')
  given(...history, saved(toSales())).when(save(startToEnd(), { ifDraftVersion: 1 })).thenRejects(
    { type: StaleDraftError, message: /the draft is at version 3, not at version 1/ },
    'not over a draft changed meanwhile: a 412 naming both versions',
  )
  given(...history, { type: 'FlowRenamed', data: { flowId, name: 'Hello', renamedAt: now } }).when(save(toSales(), { ifDraftVersion: 1 })).then([saved(toSales())], 'a rename leaves the draft version as it is')
})

t.test('RenameFlow', async (t) => {
  const { given } = spec(t, flow)
  const rename = (name: string, workspaceId = ws): FlowCommand => ({ type: 'RenameFlow', data: { flowId, workspaceId, name, now } })
  given(created).when(rename('Hello')).then([{ type: 'FlowRenamed', data: { flowId, name: 'Hello', renamedAt: now } }], 'a new name')
  given(created).when(rename('Welcome')).thenNothing('the same name')
  given(created).when(rename('Hello', otherWs)).thenRejects(NotFoundError, 'a flow of another workspace')
  given().when(rename('Hello')).thenRejects(NotFoundError, 'no such flow')
})

t.test('PublishFlow', async (t) => {
  const { given } = spec(t, flow)
  const history = [created, published(1, startToEnd()), saved(toSales())]
  const state = given(...history).when(publish()).then([published(2, toSales(), now)], 'the draft becomes the next version')
  t.match(state, { publishedVersion: 2, latest: { version: 2, publishedAt: now } }, 'the newest version is the draft')
  given(...history, published(2, toSales(), now)).when(publish()).thenNothing('publishing the newest version again adds nothing')
  given(created, published(1, startToEnd())).when(publish()).thenNothing('nor does a draft that is version 1')
  given(...history).when(publish({ catalog: catalog() })).thenRejects({ type: InvalidFlowError, message: /no sector/ }, 'not once the workspace lost the sector it transfers to')
  given(...history).when(publish({ workspaceId: otherWs })).thenRejects(NotFoundError, 'a flow of another workspace')
  given().when(publish()).thenRejects(NotFoundError, 'no such flow')
  examples(t, flowStream, [['one stream per flow', [flowId], `flow-${flowId}`]])
})
