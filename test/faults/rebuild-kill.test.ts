import { spawn } from 'node:child_process'
import { sql, type Kysely } from 'kysely'
import pg from 'pg'
import t, { type Test } from 'tap'
import { allProjections } from '../../src/all-projections.js'
import { SHADOW_SCHEMA } from '../../src/projections/shadow.js'
import { openStorage } from '../../src/store/connect.js'
import type { Database } from '../../src/store/database.js'
import { migrateToLatest } from '../../src/store/migrate.js'
import { openTestApp } from '../helpers/app.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { childEnv, cliNodeArgs, cliPath, REBUILD_POOLS, runCli } from '../helpers/cli.js'
import { echoFlow } from '../helpers/flows.js'
import { readModelRows } from '../helpers/read-model-rows.js'
import { createTestDatabase, postgresUrl, type Backend } from '../helpers/storage.js'
import { eventually, sleep } from '../helpers/wait.js'

// `flowd projections rebuild` SIGKILLed while it replays the log into its new tables, and while
// its swap has dropped the live tables in its transaction: the live tables, their views and the
// checkpoints stay exactly as they were, and the next rebuild (which drops what the killed one
// left) succeeds. Each kill waits for its moment on a lock this test holds, never on a timer.

const SESSIONS = 6

/** A rebuild of one read model, in a child process, SIGKILLed by `kill` or at the end of `t`. */
function startRebuild(t: Test, env: Record<string, string>, projection: string) {
  const child = spawn(process.execPath, [...cliNodeArgs, cliPath, 'projections', 'rebuild', projection], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on('close', (code, signal) => resolve(signal ?? code)))
  return {
    output: () => `${stdout}\n${stderr}`,
    stdout: () => stdout,
    exited,
    kill: () => child.kill('SIGKILL'),
  }
}

/** Every read-model table's rows and identity (a swap makes new ones), the views over them, and the checkpoints. */
async function liveState(db: Kysely<Database>) {
  const tables = allProjections.flatMap((p) => p.tables)
  const rows = Object.fromEntries(await Promise.all(tables.map(async (table) => [table, await readModelRows(db, table)] as const)))
  const { rows: identities } = await sql<{ name: string; oid: number }>`
    select c.relname as name, c.oid::integer as oid from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relname = any(${tables}) order by c.relname`.execute(db)
  const { rows: views } = await sql<{ schemaname: string; viewname: string; definition: string }>`
    select schemaname, viewname, definition from pg_views where schemaname not in ('pg_catalog', 'information_schema') order by schemaname, viewname`.execute(db)
  const checkpoints = await db.selectFrom('projection_checkpoints').selectAll().orderBy('projection').execute()
  return { rows, identities, views, checkpoints }
}

/** A connection of the test's own, closed at the end of `t`. */
async function connection(t: Test, url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: 'rebuild-kill-test' })
  client.on('error', () => {})
  await client.connect()
  t.teardown(() => client.end())
  return client
}

/** Polls `probe` every few milliseconds (a swap attempt waits 100 ms for a lock) until it holds. */
async function soon(what: string, probe: () => Promise<boolean>, rebuild: { output(): string }, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs
  while (!(await probe())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}; the rebuild printed: ${assertionMessage(rebuild.output().slice(-600))}`)
    await sleep(3)
  }
}

t.test('flowd projections rebuild SIGKILLed during its replay and during its swap leaves the live read models as they were', { skip: postgresUrl ? false : 'needs DATABASE_URL' }, async (t) => {
  const database = await createTestDatabase()
  t.teardown(() => database.drop())
  const env = { DATABASE_URL: database.url, ...REBUILD_POOLS }
  const storage = await openStorage({ kind: 'postgres', url: database.url })
  t.teardown(() => storage.close())
  await migrateToLatest(storage.db)
  const onThisDatabase: Backend = {
    name: 'postgres',
    async open(t) {
      const opened = await openStorage({ kind: 'postgres', url: database.url })
      t.teardown(() => opened.close())
      return opened
    },
  }

  await t.test('history: sessions that ran turns, every read model caught up', async (t) => {
    const { app, admin, readModels } = await openTestApp(t, onThisDatabase, { engine: true })
    const as = { 'x-api-key': admin.apiKey }
    t.equal((await app.inject({ method: 'POST', url: '/v1/variables', headers: as, payload: { name: 'said', type: 'string' } })).statusCode, 201)
    const flow = (await app.inject({ method: 'POST', url: '/v1/flows', headers: as, payload: { name: 'Echo', definition: echoFlow } })).json()
    for (let i = 0; i < SESSIONS; i++) {
      const { sessionId } = (await app.inject({ method: 'POST', url: `/v1/sessions/flows/${flow.id}/create`, headers: as })).json()
      t.equal((await app.inject({ method: 'POST', url: `/v1/sessions/${sessionId}/message`, headers: as, payload: { type: 'text', text: { body: `hello ${i}` } } })).statusCode, 202)
    }
    await eventually('the turns of every start and message', async () => {
      const { n } = await storage.db.selectFrom('events').select((eb) => eb.fn.countAll<string>().as('n')).where('event_type', '=', 'TurnCompleted').executeTakeFirstOrThrow()
      return Number(n) >= SESSIONS * 2 ? true : undefined
    })
    await eventually('every read model caught up', async () => ((await readModels.status(0)).every((s) => s.caughtUp) ? true : undefined))
  })
  const before = await liveState(storage.db)
  t.ok(before.rows.session_logs!.length === SESSIONS && before.rows.analytics_sessions!.length === SESSIONS, 'rows to lose')

  await t.test('killed during the replay, with a window of the log read and being written', async (t) => {
    const projection = 'session-logs'
    const gate = await connection(t, database.url)
    const holder = await connection(t, database.url)
    // Asked outside any transaction: one holds what pg_stat_activity showed at its start.
    const observer = await connection(t, database.url)
    const pidOf = async (client: pg.Client) => (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid
    const blockedBy = async (pid: number) => (await observer.query('select 1 from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [pid])).rowCount! > 0
    const [gatePid, holderPid] = [await pidOf(gate), await pidOf(holder)]
    // The rebuild stops on this lock after it made its new tables and their checkpoint, before it reads the log.
    await gate.query('begin')
    await gate.query('lock table public.parked_streams in access exclusive mode')
    const rebuild = startRebuild(t, env, projection)
    await soon('the rebuild to wait for the parked streams', () => blockedBy(gatePid), rebuild)
    // Its window's write waits on its checkpoint's row, in the transaction that writes the window.
    await holder.query('begin')
    const held = await holder.query(`select 1 from ${SHADOW_SCHEMA}.projection_checkpoints where projection = $1 for update`, [projection])
    t.equal(held.rowCount, 1, "the rebuild's own checkpoint, beside its new tables")
    await gate.query('rollback')
    await soon("the rebuild's first window to wait to be written", () => blockedBy(holderPid), rebuild)
    rebuild.kill()
    t.equal(await rebuild.exited, 'SIGKILL')
    await holder.query('rollback')

    t.same(await liveState(storage.db), before, 'the live tables, views and checkpoints as they were')
  })

  await t.test('killed during the swap, with the live tables dropped in its transaction', async (t) => {
    const projection = 'analytics-sessions'
    const [table] = allProjections.find((p) => p.name === projection)!.tables
    const liveOid = before.identities.find((i) => i.name === table)!.oid
    const checkpoint = await connection(t, database.url)
    const shadow = await connection(t, database.url)
    // The swap locks the live checkpoint's row first: held here, every attempt gives up and tries again.
    await checkpoint.query('begin')
    await checkpoint.query('select 1 from public.projection_checkpoints where projection = $1 for share', [projection])
    const rebuild = startRebuild(t, env, projection)
    await soon('the swap to wait', async () => rebuild.stdout().includes(`${projection}: swap waiting`), rebuild)
    // The next attempt drops the live tables and then waits to move its new table in under this lock.
    await shadow.query('begin')
    await shadow.query(`lock table ${SHADOW_SCHEMA}.${table} in access share mode`)
    await checkpoint.query('rollback')
    // Only the move of its new table into public waits on that lock, after the drop of the live ones.
    const swapWaiting = async () =>
      (
        await shadow.query<{ holdsDropped: boolean }>(
          `select exists (select 1 from pg_locks d where d.pid = w.pid and d.relation = $2 and d.mode = 'AccessExclusiveLock' and d.granted) as "holdsDropped"
           from pg_locks w where w.relation = $1::regclass and not w.granted`,
          [`${SHADOW_SCHEMA}.${table}`, liveOid],
        )
      ).rows[0]
    let seen: { holdsDropped: boolean } | undefined
    await soon('the swap to wait to move its new table in', async () => (seen = await swapWaiting()) !== undefined, rebuild)
    rebuild.kill()
    t.ok(seen!.holdsDropped, 'killed while its transaction held the live table it dropped')
    t.equal(await rebuild.exited, 'SIGKILL')
    await shadow.query('rollback')

    t.same(await liveState(storage.db), before, 'the live tables, views and checkpoints as they were')
  })

  await t.test('the next rebuild drops what the killed ones left and succeeds', async (t) => {
    const rebuilt = await runCli(['projections', 'rebuild'], env, 120_000)
    t.equal(rebuilt.code, 0, assertionMessage(rebuilt.stderr.slice(-600)))
    const after = await liveState(storage.db)
    t.same(after.rows, before.rows, 'the same rows')
    t.same(after.views, before.views, 'the same views')
    const { rows } = await sql<{ schema: string | null }>`select to_regnamespace(${SHADOW_SCHEMA})::text as schema`.execute(storage.db)
    t.equal(rows[0]!.schema, null, 'no rebuild schema left behind')
  })
})
