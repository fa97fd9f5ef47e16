import { existsSync } from 'node:fs'
import { sql } from 'kysely'
import t, { type Test } from 'tap'
import { openStorage, type DatabaseTarget } from '../../src/store/connect.js'
import { cliPath as CLI } from '../helpers/cli.js'
import { EXIT_TIMEOUT_MS, adminKey, answers, startService, stopGracefully, storageKinds, until, within, type Service, type Setup } from '../helpers/service-process.js'

// Acceptance: killing the process with SIGKILL during appends and starting it again loses no
// acknowledged event and projects every event exactly once.

const LOOPS = 8
const ACKS_BEFORE_KILL = 40
const LOAD_TIMEOUT_MS = 10_000
const READY_TIMEOUT_MS = 10_000
const REQUEST_TIMEOUT_MS = 5_000

interface Load {
  acknowledged: string[]
  /** Failures before the kill: none are expected. */
  unexpected: string[]
  inFlightAtKill: number
}

/**
 * Creates workspaces from several concurrent loops; once enough are acknowledged, SIGKILLs the
 * service while the other loops' requests are in flight. Only a 201 with its Location counts.
 */
async function createUntilKilled(service: Service, apiKey: string): Promise<Load> {
  const acknowledged: string[] = []
  const unexpected: string[] = []
  let killed = false
  let inFlight = 0
  let inFlightAtKill = 0
  let sequence = 0
  const deadline = Date.now() + LOAD_TIMEOUT_MS
  const stop = () => killed || Date.now() > deadline || unexpected.length >= 20

  const loop = async () => {
    while (!stop()) {
      const name = `w-${sequence++}`
      let response: Response
      inFlight++
      try {
        response = await fetch(`${service.base}/v1/workspaces`, {
          method: 'POST',
          headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ name }),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        })
      } catch (error) {
        // After the kill a failed request is simply not acknowledged.
        if (!killed) unexpected.push(`${name}: ${error instanceof Error ? `${error.message} ${String(error.cause ?? '')}` : String(error)}`)
        continue
      } finally {
        inFlight--
      }
      const location = response.headers.get('location') ?? ''
      const id = /^\/v1\/workspaces\/([0-9a-f-]{36})$/.exec(location)?.[1]
      if (response.status === 201 && id) {
        acknowledged.push(id)
        if (!killed && acknowledged.length >= ACKS_BEFORE_KILL) {
          killed = true
          inFlightAtKill = inFlight
          service.child.kill('SIGKILL')
        }
        await response.arrayBuffer().catch(() => {})
        continue
      }
      const body = await response.text().catch((error: unknown) => `(body unreadable: ${String(error)})`)
      if (!killed) unexpected.push(`${name}: ${response.status} location=${location} ${body}`)
    }
  }

  await within(Promise.all(Array.from({ length: LOOPS }, loop)), LOAD_TIMEOUT_MS + 2 * REQUEST_TIMEOUT_MS, () => 'the request loops did not end')
  if (!killed) unexpected.push(`only ${acknowledged.length} creations were acknowledged within ${LOAD_TIMEOUT_MS} ms; output:\n${service.output()}`)
  return { acknowledged, unexpected, inFlightAtKill }
}

interface Listed {
  ids: string[]
  totalElements: number[]
}

/** Every page of GET /v1/workspaces at size 100. */
async function listAllWorkspaces(service: Service, apiKey: string): Promise<Listed> {
  const ids: string[] = []
  const totalElements: number[] = []
  for (let page = 0; page < 100; page++) {
    const response = await fetch(`${service.base}/v1/workspaces?size=100&page=${page}`, {
      headers: { 'x-api-key': apiKey },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    })
    if (response.status !== 200) throw new Error(`GET /v1/workspaces page ${page}: ${response.status} ${await response.text()}`)
    const body = (await response.json()) as { content: { id: string }[]; totalElements: number; last: boolean }
    ids.push(...body.content.map((item) => item.id))
    totalElements.push(body.totalElements)
    if (body.content.length < 100) return { ids, totalElements }
  }
  throw new Error('more than 100 pages of workspaces')
}

interface Stored {
  createdEvents: number
  /** workspaceId of every WorkspaceCreated event. */
  eventWorkspaceIds: string[]
  tableIds: string[]
  /** The workspaces projection's checkpoint and the position of the newest workspace event. */
  checkpoint: string | undefined
  head: string | undefined
}

async function readStore(target: DatabaseTarget): Promise<Stored> {
  const storage = await openStorage(target)
  try {
    const { rows: counted } = await sql<{ count: string | number }>`select count(*) as count from events where event_type = 'WorkspaceCreated'`.execute(storage.db)
    const { rows: events } = await sql<{ id: string }>`select data->>'workspaceId' as id from events where event_type = 'WorkspaceCreated'`.execute(storage.db)
    const { rows: table } = await sql<{ id: string }>`select id from workspaces`.execute(storage.db)
    const { rows: checkpoint } = await sql<{ at: string }>`
      select position_commit || '/' || position_prepare as at from projection_checkpoints where projection = 'workspaces'`.execute(storage.db)
    const { rows: head } = await sql<{ at: string }>`
      select transaction_id || '/' || global_position as at from events where starts_with(stream_id, 'workspace-')
      order by transaction_id desc, global_position desc limit 1`.execute(storage.db)
    return {
      createdEvents: Number(counted[0]?.count ?? -1),
      eventWorkspaceIds: events.map((row) => row.id),
      tableIds: table.map((row) => row.id),
      checkpoint: checkpoint[0]?.at,
      head: head[0]?.at,
    }
  } finally {
    await storage.close()
  }
}

const duplicates = (ids: string[]) => ids.filter((id, index) => ids.indexOf(id) !== index)
const sorted = (ids: Iterable<string>) => [...ids].sort()

async function killDuringAppends(t: Test, setup: Setup) {
  const first = await startService(t, setup.env)
  const apiKey = await adminKey(setup, first)

  const load = await createUntilKilled(first, apiKey)
  t.same(load.unexpected, [], 'every request before the kill was acknowledged with 201 and a Location')
  t.ok(load.acknowledged.length >= ACKS_BEFORE_KILL, `at least ${ACKS_BEFORE_KILL} creations were acknowledged (${load.acknowledged.length})`)
  t.ok(load.inFlightAtKill > 0, `requests were in flight at the kill (${load.inFlightAtKill})`)
  t.same(duplicates(load.acknowledged), [], 'no id was acknowledged twice')
  const killedExit = await within(first.exited, EXIT_TIMEOUT_MS, () => 'no exit after SIGKILL')
  t.equal(killedExit.signal, 'SIGKILL', 'the first process died of SIGKILL')

  const second = await startService(t, setup.env)
  await until(second, 'GET /readyz to answer 200 (read models caught up)', READY_TIMEOUT_MS, () => answers(`${second.base}/readyz`, 200))
  const listed = await listAllWorkspaces(second, apiKey)
  const exit = await stopGracefully(second)
  t.same(exit, { code: 0, signal: null }, 'the restarted service stops cleanly on SIGTERM', { output: second.output() })
  t.notMatch(second.stdout(), /X-Api-Key\s+wh_/, 'the restart did not bootstrap again')

  const stored = await readStore(setup.target)
  const listedIds = new Set(listed.ids)
  t.same(
    load.acknowledged.filter((id) => !listedIds.has(id)),
    [],
    'every acknowledged workspace is listed after the restart',
  )
  t.same(duplicates(listed.ids), [], 'no workspace is listed twice')
  t.ok(stored.createdEvents > load.acknowledged.length, `the store holds the acknowledged WorkspaceCreated events and the bootstrap one (${stored.createdEvents})`)
  t.equal(listed.ids.length, stored.createdEvents, 'the list shows one workspace per WorkspaceCreated event')
  t.same(new Set(listed.totalElements), new Set([stored.createdEvents]), 'totalElements counts one per WorkspaceCreated event on every page')
  t.equal(stored.tableIds.length, stored.createdEvents, 'the workspaces table has one row per WorkspaceCreated event')
  t.same(duplicates(stored.eventWorkspaceIds), [], 'no workspace was created by two events')
  t.same(sorted(stored.tableIds), sorted(stored.eventWorkspaceIds), 'the table rows are exactly the workspaces of the events')
  t.same(sorted(listed.ids), sorted(stored.eventWorkspaceIds), 'the list shows exactly the workspaces of the events')
  t.equal(stored.checkpoint, stored.head, "the workspaces projection's checkpoint is at the newest workspace event")
  t.comment(
    `acknowledged ${load.acknowledged.length}, stored ${stored.createdEvents} (incl. bootstrap), ` +
      `committed but unacknowledged ${stored.createdEvents - 1 - load.acknowledged.length}, in flight at kill ${load.inFlightAtKill}`,
  )
}

t.before(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' first`)
})

for (const storage of storageKinds) {
  t.test(`SIGKILL during appends on ${storage.name}: no acknowledged event lost, each projected once`, async (t) => {
    await killDuringAppends(t, await storage.prepare(t))
  })
}
