import { randomBytes, randomUUID } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import pg from 'pg'
import t, { type Test } from 'tap'
import { allProjections } from '../../src/all-projections.js'
import { ANALYST_GROUP_ROLE, grantReader } from '../../src/cli/analytics.js'
import { bootstrap } from '../../src/commands/tenancy.js'
import { ExitCode } from '../../src/cli/usage.js'
import { rebuildProjections } from '../../src/projections/rebuild.js'
import type { Database } from '../../src/store/database.js'
import { down as unscopeReaders, up as scopeReaders } from '../../migrations/0026_scope_analysts_by_organization.js'
import { runCli } from '../helpers/cli.js'
import { postgresBackend, postgresUrl } from '../helpers/storage.js'
import { NOW, addDataSet, buildDataSet, waitForAll } from './data-set.js'

// Roles exist on Postgres only: PGlite is one user in one process.
const skip = postgresUrl ? false : 'roles need Postgres: set DATABASE_URL'

/** A connection to the test's database, as `role` when given, closed with the test. */
async function connect(t: Test, url: string, role?: { role: string; password: string }): Promise<pg.Client> {
  const address = new URL(url)
  if (role) {
    address.username = role.role
    address.password = role.password
  }
  const client = new pg.Client({ connectionString: address.toString() })
  await client.connect()
  t.teardown(() => client.end())
  return client
}

/**
 * Every row of an analytics relation, as JSON, sorted; and the organization of each (its
 * `organization_id`, else its workspace's). What the database's clock puts in a view (an open
 * stay's `last_day`, the days after the data set's last) is left out, as in rebuild.test.ts.
 */
async function rowsOf(client: pg.Client, relation: string, organizationOf: (row: Record<string, unknown>) => string | undefined) {
  const { rows } = await client.query<{ row: Record<string, unknown> }>(
    `select to_jsonb(r) - 'last_day' as row from analytics.${relation} r where coalesce((to_jsonb(r) ->> 'day')::date <= $1, true)`,
    [NOW.toISOString().slice(0, 10)],
  )
  return rows.map(({ row }) => ({ json: JSON.stringify(row), organization: organizationOf(row) })).sort((a, b) => a.json.localeCompare(b.json))
}

t.test('an analyst of one organization reads its rows in every analytics view and nothing else (postgres)', { skip }, async (t) => {
  const { test } = await buildDataSet(t, postgresBackend)
  if (test.storage.target.kind !== 'postgres') throw new Error('a Postgres backend')
  const url = test.storage.target.url
  const other = await bootstrap(test.ctx, { organization: 'Globex', workspace: 'Main', callbackUrl: null })
  await waitForAll(test, (await addDataSet(test, other)).last)
  const mine = test.admin.organizationId
  const theirs = other.organizationId
  const workspaces = new Map([[test.admin.workspaceId, mine], [other.workspaceId, theirs]])
  const organizationOf = (row: Record<string, unknown>) =>
    typeof row.organization_id === 'string' ? row.organization_id : typeof row.workspace_id === 'string' ? workspaces.get(row.workspace_id) : undefined

  const suffix = randomBytes(4).toString('hex')
  const reader = { role: `analyst_${suffix}`, password: randomBytes(12).toString('hex') }
  const everyOrganization = { role: `operator_${suffix}`, password: randomBytes(12).toString('hex') }
  const admin = new pg.Client({ connectionString: postgresUrl })
  await admin.connect()
  t.teardown(async () => {
    await admin.query(`drop role if exists ${reader.role}`)
    await admin.query(`drop role if exists ${everyOrganization.role}`)
    await admin.end()
  })
  t.match(await grantReader(test.storage.db, reader.role, reader.password, mine), { role: reader.role, created: true, organizationId: mine })
  t.match(await grantReader(test.storage.db, everyOrganization.role, everyOrganization.password), { created: true, organizationId: null })
  const owner = await connect(t, url)
  const analyst = await connect(t, url, reader)
  const operator = await connect(t, url, everyOrganization)
  const leaked: string[] = []
  analyst.on('notice', (notice) => leaked.push(notice.message ?? ''))

  // Every relation of the schema, views to come included: each must keep to the analyst's organization.
  const { rows: relations } = await owner.query<{ name: string }>(
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'analytics' and c.relkind in ('r', 'v', 'm', 'p', 'f') order by 1`,
  )
  t.ok(relations.length >= 10, `the analytics schema's relations: ${relations.map((r) => r.name).join(', ')}`)
  await analyst.query(`create function pg_temp.leak(value text) returns boolean language plpgsql cost 0.0000001 as $$ begin raise notice '%', value; return true; end $$`)

  const readEveryView = async (when: string) => {
    for (const { name } of relations) {
      const all = await rowsOf(owner, name, organizationOf)
      if (all.some((row) => row.organization === undefined)) {
        t.fail(`analytics.${name} has rows with neither organization_id nor a known workspace_id: an analyst's cannot be told apart`)
        continue
      }
      const ofMine = all.filter((row) => row.organization === mine)
      t.ok(ofMine.length > 0 && ofMine.length < all.length, `analytics.${name} has rows of both organizations ${when}`)
      const seen = await rowsOf(analyst, name, organizationOf)
      t.equal(seen.filter((row) => row.organization !== mine).length, 0, `analytics.${name}: no row of another organization ${when}`)
      t.same(seen, ofMine, `analytics.${name}: the analyst reads every row of its organization ${when}`)
      t.same(await rowsOf(operator, name, organizationOf), all, `analytics.${name}: the operator-wide reader reads every organization's ${when}`)

      // Its own function in the WHERE clause, made cheap so the planner would run it first, sees no other row.
      leaked.length = 0
      await analyst.query(`select count(*) from analytics.${name} where pg_temp.leak(workspace_id::text)`)
      t.ok(leaked.length > 0, `analytics.${name}: the analyst's function ran ${when}`)
      t.same(leaked.filter((value) => value !== test.admin.workspaceId), [], `analytics.${name}: the analyst's function saw only its workspace ${when}`)
    }

    for (const statement of [
      'select * from events',
      'select * from public.workspaces',
      'select * from public.analytics_sessions',
      'select * from analytics_readers',
      `update analytics_readers set organization_id = null`,
      `insert into analytics_readers (role_name, organization_id) values (current_user, null)`,
      'create table analytics.mine (id int)',
    ]) {
      await t.rejects(analyst.query(statement), { code: '42501' }, `refused ${when}: ${statement}`)
    }
    // The one role it may become sees no row: it has no scope.
    await analyst.query(`set role ${ANALYST_GROUP_ROLE}`)
    for (const { name } of relations) {
      const { rows } = await analyst.query(`select count(*)::integer as n from analytics.${name}`)
      t.same(rows, [{ n: 0 }], `analytics.${name}: as ${ANALYST_GROUP_ROLE}, no row ${when}`)
    }
    await analyst.query('reset role')
  }

  await readEveryView('before a rebuild')
  // The rebuild swaps new tables in under the views and makes the views again, as they were: a view
  // of another owner stays that owner's.
  const viewOwner = `views_${suffix}`
  await owner.query(`create role ${viewOwner} nologin`)
  t.teardown(async () => {
    await owner.query(`drop owned by ${viewOwner}`)
    await admin.query(`drop role ${viewOwner}`)
  })
  await owner.query(`grant select on analytics.node_visits to ${viewOwner}`)
  await owner.query(`alter view analytics.node_funnel owner to ${viewOwner}`)
  await rebuildProjections(test.storage, test.store, allProjections, { concurrency: 2 })
  const { rows: owners } = await owner.query(`select pg_get_userbyid(relowner) as owner from pg_class where oid = 'analytics.node_funnel'::regclass`)
  t.same(owners, [{ owner: viewOwner }], 'a view keeps its owner')
  await readEveryView('after a rebuild')
})

t.test('grant-reader sets the scope of a role, refuses an unknown organization and a reader that could read more (postgres)', { skip }, async (t) => {
  const { test } = await buildDataSet(t, postgresBackend)
  const role = `analyst_${randomBytes(4).toString('hex')}`
  const wider = `${role}_group`
  const admin = new pg.Client({ connectionString: postgresUrl })
  await admin.connect()
  t.teardown(async () => {
    await admin.query(`drop role if exists ${role}`)
    await admin.query(`drop role if exists ${wider}`)
    await admin.end()
  })
  const scopeOf = (name: string) => scopeIn(test.storage.db, name)
  const { organizationId } = test.admin

  await t.rejects(grantReader(test.storage.db, role, undefined, randomUUID()), { name: 'NotFoundError', message: /no organization/ }, 'an organization that does not exist')
  t.same(await scopeOf(role), undefined, 'and nothing was made')
  t.match(await grantReader(test.storage.db, role, undefined, organizationId), { created: true, organizationId })
  t.match(await grantReader(test.storage.db, role, undefined), { created: false, organizationId: null, password: undefined }, 'without --organization: every organization')
  t.same(await scopeOf(role), null)
  t.match(await grantReader(test.storage.db, role, undefined, organizationId), { created: false, organizationId, password: undefined }, 'and back to one')
  t.same(await scopeOf(role), organizationId)

  // A reader of one organization in a group that reads every one could `set role` to it.
  await admin.query(`create role ${wider} nologin`)
  await admin.query(`grant ${wider} to ${role}`)
  await t.rejects(grantReader(test.storage.db, wider, undefined), { name: 'ConflictError', message: new RegExp(`${role} may set role ${wider}`) }, 'a group of a reader of one organization')
  t.same(await scopeOf(wider), undefined, 'is left without a scope')
  await t.rejects(grantReader(test.storage.db, 'postgres', undefined, organizationId), { name: 'ConflictError', message: /postgres may read the tables themselves/ }, 'a superuser')

  // The command: its exit codes and what it says.
  if (test.storage.target.kind !== 'postgres') throw new Error('a Postgres backend')
  const env = { DATABASE_URL: test.storage.target.url }
  const malformed = await runCli(['analytics', 'grant-reader', '--role', role, '--organization', 'acme'], env)
  t.match(malformed, { code: ExitCode.usage, stderr: /--organization must be a UUID/ }, 'an organization that is not a UUID')
  const unknown = await runCli(['analytics', 'grant-reader', '--role', role, '--organization', randomUUID()], env)
  t.match(unknown, { code: ExitCode.notFound, stderr: /no organization/ }, 'an organization that does not exist')
  const everyOne = await runCli(['analytics', 'grant-reader', '--role', role], env)
  t.match(everyOne, { code: ExitCode.ok, stdout: /reads every organization; its password is unchanged/ })
  const one = await runCli(['analytics', 'grant-reader', '--role', role, '--organization', organizationId, '--json'], env)
  t.match(one, { code: ExitCode.ok })
  t.same(JSON.parse(one.stdout), { role, created: false, organizationId })
  const refused = await runCli(['analytics', 'grant-reader', '--role', wider], env)
  t.match(refused, { code: ExitCode.refused, stderr: new RegExp(`${role} may set role ${wider}`) }, 'a wider role is refused with exit code 4')
})

/** The organization a role reads (null: every one), or undefined when it has no scope. */
async function scopeIn(db: Kysely<Database>, role: string): Promise<string | null | undefined> {
  const { rows } = await sql<{ organizationId: string | null }>`select organization_id as "organizationId" from analytics_readers where role_name = ${role}`.execute(db)
  return rows[0]?.organizationId
}

t.test('readers made before scopes existed keep reading every organization (postgres)', { skip }, async (t) => {
  const storage = await postgresBackend.open(t)
  const role = `analyst_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: postgresUrl })
  await admin.connect()
  t.teardown(async () => {
    await admin.query(`drop role if exists ${role}`)
    await admin.end()
  })
  await unscopeReaders(storage.db)
  const { rows: [undone] } = await sql<{ options: string[] | null; scopes: string | null }>`
    select (select reloptions from pg_class where oid = 'analytics.sessions'::regclass) as options, to_regclass('public.analytics_readers')::text as scopes`.execute(storage.db)
  t.same(undone, { options: null, scopes: null }, 'down: the views without the scope, no table of scopes')
  await grantReaderBeforeScopes(admin, role)
  await scopeReaders(storage.db)
  t.equal(await scopeIn(storage.db, role), null, 'its scope: every organization')
})

/** What grant-reader did before scopes existed: a login in the group role. */
async function grantReaderBeforeScopes(admin: pg.Client, role: string): Promise<void> {
  await admin.query(`do $$ begin if not exists (select from pg_roles where rolname = '${ANALYST_GROUP_ROLE}') then create role ${ANALYST_GROUP_ROLE} nologin; end if; end $$`)
  await admin.query(`create role ${role} login in role ${ANALYST_GROUP_ROLE}`)
}
