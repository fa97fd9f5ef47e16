import t from 'tap'
import { sector, sectorNameKey, sectorStream, type SectorCommand, type SectorEvent } from '../../src/domain/sector.js'
import { ConflictError, NotFoundError } from '../../src/errors.js'
import { examples, spec } from '../helpers/decider-spec.js'

const org = '0190a0b0-0000-7000-8000-000000000001'
const ws = '0190a0b0-0000-7000-8000-000000000011'
const otherWs = '0190a0b0-0000-7000-8000-000000000012'
const sectorId = '0190a0b0-0000-7000-8000-000000000801'
const createdAt = '2026-01-01T00:00:00.000Z'
const now = '2026-01-02T03:04:05.678Z'

const created: SectorEvent = { type: 'SectorCreated', data: { sectorId, workspaceId: ws, organizationId: org, name: 'Sales', createdAt } }
const renamed = (name: string): SectorEvent => ({ type: 'SectorRenamed', data: { sectorId, name, renamedAt: now } })
const deleted: SectorEvent = { type: 'SectorDeleted', data: { sectorId, deletedAt: now } }
const rename = (name: string | undefined, workspaceId = ws): SectorCommand => ({ type: 'RenameSector', data: { sectorId, workspaceId, name, now } })
const remove = (workspaceId = ws): SectorCommand => ({ type: 'DeleteSector', data: { sectorId, workspaceId, now } })

t.test('CreateSector', async (t) => {
  const { given } = spec(t, sector)
  const create: SectorCommand = { type: 'CreateSector', data: { sectorId, workspaceId: ws, organizationId: org, name: 'Sales', now: createdAt } }
  given().when(create).then([created], 'a new sector of its workspace')
  given(created).when(create).thenRejects(ConflictError, 'the same id twice')
  given(created, deleted).when(create).thenRejects(ConflictError, 'nor once deleted')
})

t.test('RenameSector', async (t) => {
  const { given } = spec(t, sector)
  given(created).when(rename('Pre-sales')).then([renamed('Pre-sales')], 'a new name')
  given(created).when(rename('Sales')).thenNothing('the same name')
  given(created).when(rename(undefined)).thenNothing('no name asked')
  given(created, renamed('Pre-sales')).when(rename('Pre-sales')).thenNothing('evolve applied the earlier rename')
  given().when(rename('x')).thenRejects(NotFoundError, 'no such sector')
  given(created).when(rename('x', otherWs)).thenRejects(NotFoundError, 'a sector of another workspace')
  given(created, deleted).when(rename('x')).thenRejects(NotFoundError, 'a deleted sector')
})

t.test('DeleteSector', async (t) => {
  const { given } = spec(t, sector)
  const state = given(created).when(remove()).then([deleted], 'its workspace deletes it')
  t.match(state, { status: 'deleted', name: 'Sales' }, 'a deleted sector keeps its name')
  given(created, deleted).when(remove()).thenRejects(NotFoundError, 'deleted already')
  given(created).when(remove(otherWs)).thenRejects(NotFoundError, 'a sector of another workspace')
  given().when(remove()).thenRejects(NotFoundError, 'no such sector')
})

t.test('sectorNameKey', async (t) => {
  examples(t, sectorNameKey, [
    ['case and surrounding blanks do not count', ['  Sales '], 'sales'],
    ['composed and decomposed accents are one name', ['Vend\u0061\u0301s'], 'vendás'],
    ['inner blanks count', ['Pre sales'], 'pre sales'],
  ])
  examples(t, sectorStream, [['one stream per sector', [sectorId], `sector-${sectorId}`]])
})
