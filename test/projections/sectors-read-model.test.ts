import t from 'tap'
import { sector, sectorStream, type SectorEvent } from '../../src/domain/sector.js'
import { sectorsProjection } from '../../src/projections/sectors.js'
import { projectionSpec } from '../helpers/projection-spec.js'

const org = '0190a0b0-0000-7000-8000-000000000001'
const ws = '0190a0b0-0000-7000-8000-000000000011'
const otherWs = '0190a0b0-0000-7000-8000-000000000012'
const sales = '0190a0b0-0000-7000-8000-000000000801'
const support = '0190a0b0-0000-7000-8000-000000000802'
const createdAt = '2026-01-01T00:00:00.000Z'

const created = (sectorId: string, name: string, workspaceId = ws): SectorEvent => ({ type: 'SectorCreated', data: { sectorId, workspaceId, organizationId: org, name, createdAt } })
const renamed = (sectorId: string, name: string, renamedAt: string): SectorEvent => ({ type: 'SectorRenamed', data: { sectorId, name, renamedAt } })
const deleted = (sectorId: string): SectorEvent => ({ type: 'SectorDeleted', data: { sectorId, deletedAt: '2026-01-03T00:00:00.000Z' } })

t.test('the sectors read model', async (t) => {
  const { given } = projectionSpec(t, sectorsProjection, { streamOf: (event: SectorEvent) => sectorStream(event.data.sectorId), schemas: sector.eventSchemas })

  await given(created(sales, 'Sales')).then(
    { sectors: [{ id: sales, workspace_id: ws, organization_id: org, name: 'Sales', created_at: createdAt, updated_at: createdAt }] },
    'a created sector is a row of its workspace, updated when it was created',
  )
  await given(created(sales, 'Sales'), renamed(sales, 'Pre-sales', '2026-01-02T10:00:00.000Z')).then(
    { sectors: [{ id: sales, name: 'Pre-sales', created_at: createdAt, updated_at: '2026-01-02T10:00:00.000Z' }] },
    'a rename replaces the name and moves updated_at, and keeps created_at',
  )
  await given(created(sales, 'Sales'), renamed(sales, 'Pre-sales', '2026-01-02T10:00:00.000Z'), renamed(sales, 'Inside sales', '2026-01-02T11:00:00.000Z')).then(
    { sectors: [{ id: sales, name: 'Inside sales', updated_at: '2026-01-02T11:00:00.000Z' }] },
    'the latest rename wins',
  )
  await given(created(sales, 'Sales'), deleted(sales)).then({ sectors: [] }, 'a deleted sector leaves no row')
  await given(created(sales, 'Sales'), created(support, 'Support', otherWs), renamed(support, 'Help desk', '2026-01-02T10:00:00.000Z'), deleted(sales)).then(
    { sectors: [{ id: support, workspace_id: otherWs, name: 'Help desk' }] },
    'each event changes its own sector only',
  )
})
