import { randomBytes } from 'node:crypto'
import { text } from 'node:stream/consumers'
import { sql, type Kysely } from 'kysely'
import { storageTarget } from '../composition.js'
import { ConflictError, NotFoundError } from '../errors.js'
import { openStorage } from '../store/connect.js'
import type { Database } from '../store/database.js'
import type { CliContext } from './main.js'
import { printJson } from './operator.js'
import { parseAction, UsageError, uuidArgument } from './usage.js'

/** The analysts' group role of migration 0015: USAGE on schema analytics, SELECT on its views. */
export const ANALYST_GROUP_ROLE = 'flowd_analyst'

const HELP = `Usage:
  flowd analytics grant-reader --role NAME [--organization ID] [--password-stdin] [--json]

grant-reader  gives an analyst a Postgres login that reads the analytics schema (docs/analytics.md)
              and nothing else: creates the login role NAME in group role ${ANALYST_GROUP_ROLE} with a
              generated password, printed once (--password-stdin reads one instead). It sees the
              rows of organization ID only, or of every organization without --organization; the
              database enforces it. A role that exists already joins the group and gets that
              scope in place of the one it had; its password is not changed. A scope that the
              role's own privileges, or a role it may \`set role\` to, would widen is refused.
              Needs DATABASE_URL and a database user that may create roles; the embedded
              database has no logins.`

/** Lower-case SQL identifiers only: no quoting surprises in psql or connection strings. */
const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/

export interface GrantedReader {
  role: string
  created: boolean
  /** The one organization whose rows it reads; null: every organization. */
  organizationId: string | null
  /** Set when the role was created. */
  password: string | undefined
}

/**
 * Makes `role` an analytics reader of one organization's rows, or of every organization's
 * (`organizationId` null): the group role and its grants first (the migration skips them when its
 * user may not create roles), then the login role in it and its scope in `analytics_readers`, in
 * one transaction. Statements that take no bind parameters are built by Postgres's own `format`
 * (%I, %L), never by string concatenation.
 */
export async function grantReader(db: Kysely<Database>, role: string, password: string | undefined, organizationId: string | null = null): Promise<GrantedReader> {
  if (!ROLE_NAME.test(role) || role === ANALYST_GROUP_ROLE || role.startsWith('pg_')) {
    throw new UsageError(`--role must be a lower-case name (letters, digits, _; not ${ANALYST_GROUP_ROLE} or pg_…), got '${role}'`)
  }
  const { rows: [found] } = await sql<{ schema: boolean; scopes: boolean }>`
    select exists (select from pg_namespace where nspname = 'analytics') as schema,
           to_regclass('public.analytics_readers') is not null as scopes`.execute(db)
  if (!found!.schema || !found!.scopes) throw new NotFoundError("the database has no analytics schema or no table of reader scopes: run 'flowd migrate' first")
  if (organizationId !== null) {
    const organization = await db.selectFrom('organizations').select('id').where('id', '=', organizationId).executeTakeFirst()
    if (!organization) throw new NotFoundError(`no organization ${organizationId}`)
  }
  return db.transaction().execute(async (trx) => {
    const execute = async (template: string, ...args: string[]) => {
      const { rows } = await sql<{ statement: string }>`select format(${template}, ${sql.join(args.map((arg) => sql`${arg}::text`))}) as statement`.execute(trx)
      await sql.raw(rows[0]!.statement).execute(trx)
    }
    const exists = async (name: string) => (await sql`select 1 from pg_roles where rolname = ${name}`.execute(trx)).rows.length > 0
    if (!(await exists(ANALYST_GROUP_ROLE))) {
      await sql.raw(`create role ${ANALYST_GROUP_ROLE} nologin`).execute(trx)
    }
    await sql.raw(`grant usage on schema analytics to ${ANALYST_GROUP_ROLE}`).execute(trx)
    await sql.raw(`grant select on all tables in schema analytics to ${ANALYST_GROUP_ROLE}`).execute(trx)
    await sql.raw(`alter default privileges in schema analytics grant select on tables to ${ANALYST_GROUP_ROLE}`).execute(trx)
    const created = !(await exists(role))
    const secret = created ? (password ?? randomBytes(24).toString('base64url')) : undefined
    if (secret !== undefined) await execute(`create role %I login password %L in role ${ANALYST_GROUP_ROLE}`, role, secret)
    else await execute(`grant ${ANALYST_GROUP_ROLE} to %I`, role)
    await sql`
      insert into analytics_readers (role_name, organization_id) values (${role}, ${organizationId})
      on conflict (role_name) do update set organization_id = excluded.organization_id`.execute(trx)
    await refuseWiderRoles(trx, role)
    return { role, created, organizationId, password: secret }
  })
}

/**
 * A reader of one organization must not reach more: not by its own privileges (a superuser, the
 * tables' owner), nor by a role it may `set role` to that reads another organization, every one,
 * or the tables. Checked for `role` as the reader and as the role reached.
 */
async function refuseWiderRoles(trx: Kysely<Database>, role: string): Promise<void> {
  const { rows } = await sql<{ reader: string; wider: string }>`
    with recursive reach(reader, organization_id, reached) as (
      select r.oid, a.organization_id, r.oid from analytics_readers a join pg_roles r on r.rolname = a.role_name
      where a.organization_id is not null
      union
      select reach.reader, reach.organization_id, m.roleid from reach join pg_auth_members m on m.member = reach.reached
    )
    select pg_get_userbyid(reader) as reader, pg_get_userbyid(reached) as wider from reach
    where (pg_get_userbyid(reader) = ${role} or pg_get_userbyid(reached) = ${role})
      and (has_table_privilege(reached, 'public.analytics_readers', 'select')
           or has_table_privilege(reached, 'public.analytics_sessions', 'select')
           or exists (select from analytics_readers b where b.role_name = pg_get_userbyid(reach.reached) and b.organization_id is distinct from reach.organization_id))
    order by 1, 2`.execute(trx)
  if (rows.length === 0) return
  const reasons = rows.map(({ reader, wider }) => (reader === wider ? `${reader} may read the tables themselves` : `${reader} may set role ${wider}, which reads more`))
  throw new ConflictError(`refused: a reader of one organization would read more (${reasons.join('; ')})`)
}

export async function analyticsCommand({ config, args }: CliContext): Promise<number> {
  const parsed = parseAction(
    args,
    { role: { type: 'string' }, organization: { type: 'string' }, 'password-stdin': { type: 'boolean' }, json: { type: 'boolean' } },
    HELP,
  )
  if (parsed.exit !== undefined) return parsed.exit
  const { action, values, rest } = parsed
  if (action !== 'grant-reader') throw new UsageError(`unknown action '${action}'\n\n${HELP}`)
  if (rest.length > 0) throw new UsageError(`unexpected argument '${rest[0]}'\n\n${HELP}`)
  if (!values.role) throw new UsageError(`--role is required\n\n${HELP}`)
  const organizationId = values.organization === undefined ? null : uuidArgument(values.organization, '--organization', HELP)
  if (!config.databaseUrl) {
    throw new UsageError('the embedded database (PGlite) has no logins or roles: grant-reader needs Postgres (DATABASE_URL)')
  }
  const password = values['password-stdin'] ? (await text(process.stdin)).replace(/\r?\n$/, '') : undefined
  if (password === '') throw new UsageError('--password-stdin read an empty password')
  const storage = await openStorage(storageTarget(config))
  try {
    const granted = await grantReader(storage.db, values.role, password, organizationId)
    const scope = granted.organizationId === null ? 'every organization' : `organization ${granted.organizationId} only`
    if (values.json) printJson({ ...granted, password: values['password-stdin'] ? undefined : granted.password })
    else if (granted.created) {
      process.stdout.write(`created login role ${granted.role} in ${ANALYST_GROUP_ROLE}: it reads ${scope}\n`)
      if (!values['password-stdin']) process.stdout.write(`password (shown once): ${granted.password}\n`)
    } else process.stdout.write(`role ${granted.role} exists: it is now in ${ANALYST_GROUP_ROLE} and reads ${scope}; its password is unchanged\n`)
    return 0
  } finally {
    await storage.close()
  }
}
