import { randomBytes } from 'node:crypto'
import { text } from 'node:stream/consumers'
import { sql, type Kysely } from 'kysely'
import { storageTarget } from '../composition.js'
import { NotFoundError } from '../errors.js'
import { openStorage } from '../store/connect.js'
import type { Database } from '../store/database.js'
import type { CliContext } from './main.js'
import { printJson } from './operator.js'
import { parseAction, UsageError } from './usage.js'

/** The analysts' group role of migration 0015: USAGE on schema analytics, SELECT on its views. */
export const ANALYST_GROUP_ROLE = 'flowd_analyst'

const HELP = `Usage:
  flowd analytics grant-reader --role NAME [--password-stdin] [--json]

grant-reader  gives an analyst a Postgres login that reads the analytics schema (docs/analytics.md)
              and nothing else: creates the login role NAME in group role ${ANALYST_GROUP_ROLE} with a
              generated password, printed once (--password-stdin reads one instead). A role that
              exists already joins the group; its password is not changed. Needs DATABASE_URL and
              a database user that may create roles; the embedded database has no logins.`

/** Lower-case SQL identifiers only: no quoting surprises in psql or connection strings. */
const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/

export interface GrantedReader {
  role: string
  created: boolean
  /** Set when the role was created. */
  password: string | undefined
}

/**
 * Makes `role` an analytics reader: the group role and its grants first (the migration skips them
 * when its user may not create roles), then the login role in it. Statements that take no bind
 * parameters are built by Postgres's own `format` (%I, %L), never by string concatenation.
 */
export async function grantReader(db: Kysely<Database>, role: string, password: string | undefined): Promise<GrantedReader> {
  if (!ROLE_NAME.test(role) || role === ANALYST_GROUP_ROLE || role.startsWith('pg_')) {
    throw new UsageError(`--role must be a lower-case name (letters, digits, _; not ${ANALYST_GROUP_ROLE} or pg_…), got '${role}'`)
  }
  const schema = await sql`select 1 from pg_namespace where nspname = 'analytics'`.execute(db)
  if (schema.rows.length === 0) throw new NotFoundError("the database has no analytics schema: run 'flowd migrate' first")
  const execute = async (template: string, ...args: string[]) => {
    const { rows } = await sql<{ statement: string }>`select format(${template}, ${sql.join(args.map((arg) => sql`${arg}::text`))}) as statement`.execute(db)
    await sql.raw(rows[0]!.statement).execute(db)
  }
  return db.connection().execute(async (connection) => {
    const exists = async (name: string) => (await sql`select 1 from pg_roles where rolname = ${name}`.execute(connection)).rows.length > 0
    if (!(await exists(ANALYST_GROUP_ROLE))) {
      await sql.raw(`create role ${ANALYST_GROUP_ROLE} nologin`).execute(connection)
    }
    await sql.raw(`grant usage on schema analytics to ${ANALYST_GROUP_ROLE}`).execute(connection)
    await sql.raw(`grant select on all tables in schema analytics to ${ANALYST_GROUP_ROLE}`).execute(connection)
    await sql.raw(`alter default privileges in schema analytics grant select on tables to ${ANALYST_GROUP_ROLE}`).execute(connection)
    if (await exists(role)) {
      await execute(`grant ${ANALYST_GROUP_ROLE} to %I`, role)
      return { role, created: false, password: undefined }
    }
    const secret = password ?? randomBytes(24).toString('base64url')
    await execute(`create role %I login password %L in role ${ANALYST_GROUP_ROLE}`, role, secret)
    return { role, created: true, password: secret }
  })
}

export async function analyticsCommand({ config, args }: CliContext): Promise<number> {
  const parsed = parseAction(args, { role: { type: 'string' }, 'password-stdin': { type: 'boolean' }, json: { type: 'boolean' } }, HELP)
  if (parsed.exit !== undefined) return parsed.exit
  const { action, values, rest } = parsed
  if (action !== 'grant-reader') throw new UsageError(`unknown action '${action}'\n\n${HELP}`)
  if (rest.length > 0) throw new UsageError(`unexpected argument '${rest[0]}'\n\n${HELP}`)
  if (!values.role) throw new UsageError(`--role is required\n\n${HELP}`)
  if (!config.databaseUrl) {
    throw new UsageError('the embedded database (PGlite) has no logins or roles: grant-reader needs Postgres (DATABASE_URL)')
  }
  const password = values['password-stdin'] ? (await text(process.stdin)).replace(/\r?\n$/, '') : undefined
  if (password === '') throw new UsageError('--password-stdin read an empty password')
  const storage = await openStorage(storageTarget(config))
  try {
    const granted = await grantReader(storage.db, values.role, password)
    if (values.json) printJson({ ...granted, password: values['password-stdin'] ? undefined : granted.password })
    else if (granted.created) {
      process.stdout.write(`created login role ${granted.role} in ${ANALYST_GROUP_ROLE}\n`)
      if (!values['password-stdin']) process.stdout.write(`password (shown once): ${granted.password}\n`)
    } else process.stdout.write(`role ${granted.role} exists: it is now in ${ANALYST_GROUP_ROLE}; its password is unchanged\n`)
    return 0
  } finally {
    await storage.close()
  }
}
