import { sql, type Kysely, type Transaction } from 'kysely'
import { ConflictError } from '../errors.js'
import type { Database } from '../store/database.js'

// What other objects hang on a read model's live tables, which the swap drops: views and
// materialized views that read them (an operator's, the analytics schema's), foreign keys to or
// from them. The swap notes them, drops them, and makes them again over the new tables as they
// were: owner, options (security_barrier, security_invoker, check_option), grants, comments, a
// materialized view's indexes and data; the new tables get the live ones' owner, grants, comment,
// row security and policies. Anything else the drop would take with it is named before
// a rebuild starts, which then refuses, and again in the swap's transaction, which then fails (the
// live tables kept): what appears meanwhile fails loudly rather than vanish. The drops themselves
// are `restrict`, for what the catalog query does not know. Every query runs with the search path
// `pg_catalog`, so definitions come out with every name qualified.

interface Grant {
  /** A quoted role name, or `public`. */
  grantee: string
  privilege: string
  grantable: boolean
  /** Null for the whole relation. */
  column: string | null
}

export interface DependentView {
  schema: string
  name: string
  materialized: boolean
  definition: string
  /** A quoted role name. */
  owner: string
  /** `name=value` each, as pg_class.reloptions holds them: security_barrier, security_invoker, check_option, storage parameters. */
  options: string[] | null
  grants: Grant[]
  comment: string | null
  columnComments: { column: string; comment: string }[]
  /** A materialized view's indexes, and whether it held data. */
  indexes: string[]
  populated: boolean
}

export interface ForeignKey {
  schema: string
  table: string
  name: string
  definition: string
}

/** What a live table has of its own that `create table … (like …)` does not copy. */
export interface TableProperties {
  table: string
  owner: string
  grants: Grant[]
  comment: string | null
  rowSecurity: boolean
  forceRowSecurity: boolean
  /** `create policy` statements, on the table as it is named in public. */
  policies: string[]
}

export interface Dependents {
  tables: TableProperties[]
  /** Views on views after the views they read. */
  views: DependentView[]
  foreignKeys: ForeignKey[]
}

/** The grants on a relation and on its columns other than its owner's, as `Grant`s: a JSON array expression. */
const grantsOf = (relation: string) => sql.raw(`
  coalesce((select json_agg(json_build_object('grantee', case when g.grantee = 0 then 'public' else quote_ident(pg_get_userbyid(g.grantee)) end,
                                              'privilege', g.privilege_type, 'grantable', g.is_grantable, 'column', g.attname))
            from (select a.grantee, a.privilege_type, a.is_grantable, null::name as attname from aclexplode(${relation}.relacl) a
                  union all
                  select x.grantee, x.privilege_type, x.is_grantable, t.attname from pg_attribute t, aclexplode(t.attacl) x
                  where t.attrelid = ${relation}.oid and t.attnum > 0 and not t.attisdropped and t.attacl is not null) g
            where g.grantee <> ${relation}.relowner), '[]')`)

/** The relations that read `tables` (public), through any number of views, as `regclass` oids: a recursive CTE to join on. */
const readersOf = (tables: readonly string[]) => sql`
  with recursive readers(oid, depth) as (
    select r.ev_class, 1 from pg_depend d join pg_rewrite r on r.oid = d.objid
    where d.classid = 'pg_rewrite'::regclass and d.refobjid = any(${liveNames(tables)}::regclass[]) and r.ev_class <> d.refobjid
    union all
    select r.ev_class, v.depth + 1 from readers v join pg_depend d on d.refobjid = v.oid join pg_rewrite r on r.oid = d.objid
    where d.classid = 'pg_rewrite'::regclass and r.ev_class <> d.refobjid
  )`

const liveNames = (tables: readonly string[]) => tables.map((table) => `public.${table}`)

/** Notes the views and foreign keys that hang on `tables`, to make them again after the swap. */
export async function readDependents(trx: Transaction<Database>, tables: readonly string[]): Promise<Dependents> {
  const { rows: views } = await sql<DependentView>`
    ${readersOf(tables)}
    select n.nspname as schema, c.relname as name, c.relkind = 'm' as materialized, pg_get_viewdef(c.oid) as definition,
      quote_ident(pg_get_userbyid(c.relowner)) as owner, c.reloptions as options, c.relispopulated as populated,
      obj_description(c.oid, 'pg_class') as comment, ${grantsOf('c')} as grants,
      coalesce((select json_agg(json_build_object('column', a.attname, 'comment', col_description(c.oid, a.attnum)) order by a.attnum)
                from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and col_description(c.oid, a.attnum) is not null), '[]') as "columnComments",
      coalesce((select json_agg(pg_get_indexdef(i.indexrelid) order by i.indexrelid) from pg_index i where i.indrelid = c.oid), '[]') as indexes
    from (select oid, max(depth) as depth from readers group by oid) v
    join pg_class c on c.oid = v.oid join pg_namespace n on n.oid = c.relnamespace
    where c.relkind in ('v', 'm')
    order by v.depth, c.oid`.execute(trx)
  const { rows: foreignKeys } = await sql<ForeignKey>`
    select n.nspname as schema, c.relname as table, k.conname as name, pg_get_constraintdef(k.oid) as definition
    from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_namespace n on n.oid = c.relnamespace
    where k.contype = 'f' and (k.conrelid = any(${liveNames(tables)}::regclass[]) or k.confrelid = any(${liveNames(tables)}::regclass[]))
    order by k.oid`.execute(trx)
  const { rows: tableProperties } = await sql<TableProperties>`
    select c.relname as table, quote_ident(pg_get_userbyid(c.relowner)) as owner, ${grantsOf('c')} as grants, obj_description(c.oid, 'pg_class') as comment,
      c.relrowsecurity as "rowSecurity", c.relforcerowsecurity as "forceRowSecurity",
      coalesce((select json_agg(format('create policy %I on public.%I as %s for %s to %s%s%s', p.policyname, p.tablename, p.permissive, p.cmd,
                                       (select string_agg(case when r = 'public' then 'public' else quote_ident(r) end, ', ') from unnest(p.roles) r),
                                       ' using (' || p.qual || ')', ' with check (' || p.with_check || ')'))
                from pg_policies p where p.schemaname = 'public' and p.tablename = c.relname), '[]') as policies
    from pg_class c where c.oid = any(${liveNames(tables)}::regclass[])
    order by c.relname`.execute(trx)
  return { tables: tableProperties, views, foreignKeys }
}

/** Gives the tables swapped in what the live ones had of their own: owner, grants, comment, row security and its policies. */
async function restoreTableProperties(trx: Transaction<Database>, properties: TableProperties): Promise<void> {
  const name = sql.id('public', properties.table)
  await sql`alter table ${name} owner to ${sql.raw(properties.owner)}`.execute(trx)
  await grant(trx, name, properties.grants)
  if (properties.comment !== null) await sql`comment on table ${name} is ${sql.lit(properties.comment)}`.execute(trx)
  if (properties.rowSecurity) await sql`alter table ${name} enable row level security`.execute(trx)
  if (properties.forceRowSecurity) await sql`alter table ${name} force row level security`.execute(trx)
  for (const policy of properties.policies) await sql.raw(policy).execute(trx)
}

async function grant(trx: Transaction<Database>, name: ReturnType<typeof sql.id>, grants: readonly Grant[]): Promise<void> {
  // Privileges and role names both come from the catalog.
  for (const { grantee, privilege, grantable, column } of grants) {
    const columns = column === null ? sql`` : sql` (${sql.id(column)})`
    await sql`grant ${sql.raw(privilege)}${columns} on ${name} to ${sql.raw(grantee)}${sql.raw(grantable ? ' with grant option' : '')}`.execute(trx)
  }
}

/**
 * Drops the views and foreign keys noted, each `restrict`: something else hanging on them fails the
 * swap. A foreign key declared on a swapped table goes with it.
 */
export async function dropDependents(trx: Transaction<Database>, tables: readonly string[], { views, foreignKeys }: Dependents): Promise<void> {
  for (const key of foreignKeys) {
    if (key.schema === 'public' && tables.includes(key.table)) continue
    await sql`alter table ${sql.id(key.schema, key.table)} drop constraint ${sql.id(key.name)} restrict`.execute(trx)
  }
  for (const view of [...views].reverse()) {
    await sql`drop ${sql.raw(view.materialized ? 'materialized view' : 'view')} ${sql.id(view.schema, view.name)} restrict`.execute(trx)
  }
}

/** Makes the views and foreign keys noted again, over the tables swapped in, and gives those what the live ones had of their own. */
export async function recreateDependents(trx: Transaction<Database>, { tables, views, foreignKeys }: Dependents): Promise<void> {
  for (const properties of tables) await restoreTableProperties(trx, properties)
  for (const view of views) await recreateView(trx, view)
  for (const key of foreignKeys) await sql`alter table ${sql.id(key.schema, key.table)} add constraint ${sql.id(key.name)} ${sql.raw(key.definition)}`.execute(trx)
}

/** A view or materialized view as it was: options, owner, grants, comments; a materialized view's data and indexes. */
export async function recreateView(trx: Transaction<Database>, view: DependentView): Promise<void> {
  const name = sql.id(view.schema, view.name)
  const kind = sql.raw(view.materialized ? 'materialized view' : 'view')
  // Options and role names come from the catalog.
  const options = view.options?.length ? sql` with (${sql.raw(view.options.join(', '))})` : sql``
  const data = view.materialized ? sql.raw(view.populated ? ' with data' : ' with no data') : sql``
  await sql`create ${kind} ${name}${options} as ${sql.raw(view.definition.replace(/;\s*$/, ''))}${data}`.execute(trx)
  for (const index of view.indexes) await sql.raw(index).execute(trx)
  await sql`alter ${kind} ${name} owner to ${sql.raw(view.owner)}`.execute(trx)
  await grant(trx, name, view.grants)
  if (view.comment !== null) await sql`comment on ${kind} ${name} is ${sql.lit(view.comment)}`.execute(trx)
  for (const { column, comment } of view.columnComments) await sql`comment on column ${sql.id(view.schema, view.name, column)} is ${sql.lit(comment)}`.execute(trx)
}

/**
 * The CLI exits with "refused" (4) on it: the swap would drop objects that hang on the live tables
 * and that it cannot make again. Raised before anything is built, or by the swap, which then fails.
 */
export class RebuildWouldDropError extends ConflictError {
  readonly objects: readonly string[]

  constructor(objects: readonly string[]) {
    super(
      `the rebuild would drop what hangs on the read models' tables and cannot make it again: ${objects.join('; ')}. ` +
        'Drop these first (and make them again after the rebuild), or rebuild the other read models only',
    )
    this.objects = objects
  }
}

/**
 * What hangs on `tables` that the swap would drop and cannot make again: rules, policies, triggers
 * on their views, functions or columns of other tables typed by their rows, statistics objects...
 * Each as PostgreSQL describes it (`pg_describe_object`). Empty when the swap can keep everything.
 */
export async function unkeptDependents(db: Kysely<Database>, tables: readonly string[]): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    await sql`set local search_path to pg_catalog`.execute(trx)
    return unkeptDependentsIn(trx, tables)
  })
}

/** In the swap's transaction, whose search path is `pg_catalog`: fails it on what it would drop and cannot make again. */
export async function refuseUnkeptDependentsIn(trx: Transaction<Database>, tables: readonly string[]): Promise<void> {
  const unkept = await unkeptDependentsIn(trx, tables)
  if (unkept.length > 0) throw new RebuildWouldDropError(unkept)
}

async function unkeptDependentsIn(trx: Transaction<Database>, tables: readonly string[]): Promise<string[]> {
  const { rows } = await sql<{ object: string }>`
    ${readersOf(tables)},
    kept(oid, view) as (
      select oid, false from unnest(${liveNames(tables)}::regclass[]) as t(oid)
      union select v.oid, true from readers v join pg_class c on c.oid = v.oid where c.relkind in ('v', 'm')
    )
    select distinct pg_describe_object(d.classid, d.objid, d.objsubid) as object
    from kept k join pg_class r on r.oid = k.oid
    join pg_depend d on (d.refclassid = 'pg_class'::regclass and d.refobjid = k.oid) or (d.refclassid = 'pg_type'::regclass and d.refobjid = r.reltype)
    where d.deptype in ('n', 'a')
      -- the rule that is a kept view
      and not (d.classid = 'pg_rewrite'::regclass and exists (
        select 1 from pg_rewrite w join kept v on v.oid = w.ev_class and v.view where w.oid = d.objid and w.rulename = '_RETURN'))
      -- foreign keys, and the tables' own constraints, which the shadow tables copy
      and not (d.classid = 'pg_constraint'::regclass and exists (
        select 1 from pg_constraint c where c.oid = d.objid and (c.contype = 'f' or (c.conrelid = k.oid and not k.view))))
      -- the tables' own indexes, defaults and triggers, which the shadow tables copy, and a materialized view's indexes
      and not (d.classid = 'pg_class'::regclass and exists (select 1 from pg_index i where i.indexrelid = d.objid and i.indrelid = k.oid))
      and not (d.classid = 'pg_attrdef'::regclass and not k.view)
      and not (d.classid = 'pg_trigger'::regclass and not k.view and exists (select 1 from pg_trigger g where g.oid = d.objid and g.tgrelid = k.oid))
      -- a foreign key's own triggers
      and not (d.classid = 'pg_trigger'::regclass and exists (select 1 from pg_trigger g join pg_constraint c on c.oid = g.tgconstraint where g.oid = d.objid and c.contype = 'f'))
      -- the tables' own policies, made again at the swap
      and not (d.classid = 'pg_policy'::regclass and not k.view and exists (select 1 from pg_policy p where p.oid = d.objid and p.polrelid = k.oid))
      -- a view's own row type
      and not (d.classid = 'pg_type'::regclass and d.objid = r.reltype)
    order by 1`.execute(trx)
  return rows.map((row) => row.object)
}
