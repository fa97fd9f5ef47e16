import t from 'tap'
import { draftVersionOf, flow, flowStream, sharesOf, StaleDraftError, versionForNewSession, type FlowCommand, type FlowEvent, type ReleaseReason } from '../../src/domain/flow.js'
import { startToEnd, type FlowDefinition } from '../../src/domain/flow-definition.js'
import { InvalidFlowError, type WorkspaceCatalog } from '../../src/domain/validate-flow.js'
import { BadRequestError, NotFoundError, ConflictError } from '../../src/errors.js'
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
  given(...history).when(publish({ ifDraftVersion: 2 })).thenRejects(StaleDraftError, 'not a draft other than the one named')
  given(...history).when(publish({ ifDraftVersion: draftVersionOf(2) })).then([published(2, toSales(), now)], 'the draft named')
  const gradual = given(...history).when(publish({ percent: 20 })).then(
    [published(2, toSales(), now), released(1, { version: 2, percent: 20 }, 'publish')],
    'published for a share of new sessions: the live version keeps the rest',
  )
  t.match(gradual, { publishedVersion: 2, release: { liveVersion: 1, gradual: { version: 2, percent: 20 } } }, 'version 2 takes 20 %')
  given(...history).when(publish({ percent: 100 })).then([published(2, toSales(), now)], 'a share of 100 % is a publish for all')
  examples(t, flowStream, [['one stream per flow', [flowId], `flow-${flowId}`]])
})

const released = (liveVersion: number, gradual: { version: number; percent: number } | null, reason: ReleaseReason): FlowEvent => ({
  type: 'FlowReleaseChanged',
  data: { flowId, liveVersion, gradual, reason, changedAt: now },
})

t.test('RollBackFlow', async (t) => {
  const { given } = spec(t, flow)
  const rollBack = (version: number, workspaceId = ws): FlowCommand => ({ type: 'RollBackFlow', data: { flowId, workspaceId, version, now } })
  const twoVersions = [created, published(1, startToEnd()), published(2, toSales())]
  const state = given(...twoVersions).when(rollBack(1)).then([released(1, null, 'rollback')], 'version 1 is live again')
  t.match(state, { publishedVersion: 2, release: { liveVersion: 1, gradual: null } }, 'version 2 stays the newest')
  given(...twoVersions, released(1, null, 'rollback')).when(rollBack(1)).thenNothing('rolling back to the live version again adds nothing')
  given(...twoVersions, released(1, null, 'rollback')).when(rollBack(2)).then([released(2, null, 'rollback')], 'and forward to a newer one')
  given(...twoVersions, released(1, { version: 2, percent: 30 }, 'publish')).when(rollBack(1)).then([released(1, null, 'rollback')], 'a gradual release ends')
  given(...twoVersions).when(rollBack(3)).thenRejects({ type: BadRequestError, message: /versions 1 to 2/ }, 'not to a version never published')
  given(...twoVersions).when(rollBack(0)).thenRejects(BadRequestError, 'nor to version 0')
  given(...twoVersions).when(rollBack(1, otherWs)).thenRejects(NotFoundError, 'a flow of another workspace')
  given().when(rollBack(1)).thenRejects(NotFoundError, 'no such flow')
  const next = flow.evolve(state, published(3, startToEnd()))
  t.match(next, { release: { liveVersion: 3, gradual: null } }, 'a later publish goes live for all')
})

t.test('publishing the newest version again puts it out', async (t) => {
  const { given } = spec(t, flow)
  const rolledBack = [created, published(1, startToEnd()), saved(toSales()), published(2, toSales()), released(1, null, 'rollback')]
  given(...rolledBack).when(publish()).then([released(2, null, 'publish')], 'after a rollback, live for all again')
  given(...rolledBack).when(publish({ percent: 30 })).then([released(1, { version: 2, percent: 30 }, 'publish')], 'or for a share')
  given(...rolledBack, released(1, { version: 2, percent: 30 }, 'publish')).when(publish({ percent: 30 })).thenNothing('the same share again adds nothing')
  given(created, published(1, startToEnd()), saved(toSales()), published(2, toSales())).when(publish({ percent: 30 })).thenNothing('a share of the live version is no change')
})

t.test('ReleaseVersion', async (t) => {
  const { given } = spec(t, flow)
  const release = (version: number, percent: number): FlowCommand => ({ type: 'ReleaseVersion', data: { flowId, workspaceId: ws, version, percent, now } })
  const inTrial = [created, published(1, startToEnd()), published(2, toSales()), released(1, { version: 2, percent: 20 }, 'publish')]
  given(...inTrial).when(release(2, 50)).then([released(1, { version: 2, percent: 50 }, 'release')], 'the share grows')
  given(...inTrial).when(release(2, 20)).thenNothing('the same share again adds nothing')
  given(...inTrial).when(release(2, 100)).then([released(2, null, 'promote')], '100 % promotes it to live')
  given(...inTrial).when(release(2, 0)).then([released(1, null, 'halt')], '0 % ends its release')
  given(...inTrial).when(release(1, 0)).thenRejects({ type: ConflictError, message: /is live/ }, 'the live version cannot drop to 0 %')
  given(...inTrial).when(release(1, 40)).thenRejects({ type: ConflictError, message: /is live/ }, 'nor take a share: it takes the rest')
  given(created, published(1, startToEnd()), published(2, toSales())).when(release(1, 10)).then(
    [released(2, { version: 1, percent: 10 }, 'release')],
    'an older version can take a share too',
  )
  given(...inTrial).when(release(5, 10)).thenRejects(BadRequestError, 'not a version never published')
})

t.test('the version a new session starts on', async (t) => {
  const trial = { liveVersion: 1, gradual: { version: 2, percent: 20 } }
  t.equal(versionForNewSession(trial, 0), 2, 'a draw in the share takes the version in release')
  t.equal(versionForNewSession(trial, 0.1999), 2, 'up to its edge')
  t.equal(versionForNewSession(trial, 0.2), 1, 'past it, the live version')
  t.equal(versionForNewSession({ liveVersion: 3, gradual: null }, 0), 3, 'without a release, always the live one')
  t.same([...sharesOf(trial)], [[1, 80], [2, 20]], 'the shares add up to 100')
  t.same([...sharesOf({ liveVersion: 3, gradual: null })], [[3, 100]], 'the live version alone takes all')
})
