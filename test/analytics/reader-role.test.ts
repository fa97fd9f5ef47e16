import { randomBytes } from 'node:crypto'
import pg from 'pg'
import t from 'tap'
import { ANALYST_GROUP_ROLE, grantReader } from '../../src/cli/analytics.js'
import { allProjections } from '../../src/all-projections.js'
import { rebuildProjections } from '../../src/projections/rebuild.js'
import { postgresBackend, postgresUrl } from '../helpers/storage.js'
import { buildDataSet } from './data-set.js'
import { EXPECTED, documentedQueries, rowsOf } from './examples.js'

// Roles exist on Postgres only: PGlite is one user in one process.
t.test('an analyst login reads the analytics schema and nothing else (postgres)', { skip: postgresUrl ? false : 'roles need Postgres: set DATABASE_URL' }, async (t) => {
  const { test } = await buildDataSet(t, postgresBackend)
  const target = test.storage.target
  if (target.kind !== 'postgres') throw new Error('a Postgres backend')
  const role = `analyst_${randomBytes(4).toString('hex')}`
  const password = randomBytes(12).toString('hex')
  const admin = new pg.Client({ connectionString: postgresUrl })
  await admin.connect()
  t.teardown(async () => {
    await admin.query(`drop role if exists ${role}`)
    await admin.end()
  })

  t.match(await grantReader(test.storage.db, role, password), { role, created: true, password })
  t.match(await grantReader(test.storage.db, role, undefined), { role, created: false, password: undefined }, 'a second grant keeps the role and its password')
  const { rows } = await admin.query('select r.rolcanlogin, pg_has_role(r.rolname, $2, $3) as member from pg_roles r where r.rolname = $1', [role, ANALYST_GROUP_ROLE, 'member'])
  t.same(rows, [{ rolcanlogin: true, member: true }], `a login role in ${ANALYST_GROUP_ROLE}`)
  await t.rejects(grantReader(test.storage.db, 'Robert"; drop table events; --', undefined), /--role must be a lower-case name/, 'a name that is not a plain identifier')

  const url = new URL(target.url)
  url.username = role
  url.password = password
  const analyst = new pg.Client({ connectionString: url.toString() })
  await analyst.connect()
  t.teardown(() => analyst.end())

  for (const [i, query] of documentedQueries().entries()) {
    t.same(await rowsOf(analyst, query), EXPECTED[i], `example ${i + 1} as the analyst`)
  }
  for (const statement of [
    'select * from session_logs',
    'select * from events',
    'select * from api_keys',
    'select * from public.analytics_sessions',
    "update public.analytics_sessions set status = 'completed'",
    'create table analytics.mine (id int)',
  ]) {
    await t.rejects(analyst.query(statement), { code: '42501' }, `refused: ${statement}`)
  }

  // A rebuild swaps new tables in under the views and makes the views again: the grants come with them.
  await rebuildProjections(test.storage, test.store, allProjections, { concurrency: 2 })
  for (const [i, query] of documentedQueries().entries()) {
    t.same(await rowsOf(analyst, query), EXPECTED[i], `example ${i + 1} as the analyst, after a rebuild`)
  }
  await t.rejects(analyst.query('select * from public.analytics_sessions'), { code: '42501' }, 'and still nothing else')
})
