import { sql, type Kysely } from 'kysely'

// Sector names reserved per workspace by the sector commands (not a read model: a projection
// rebuild leaves it). The primary key makes two sectors of one workspace unable to hold one name
// key (the name without case and surrounding spaces) even when created at the same moment.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table sector_names (
      workspace_id uuid not null,
      name_key text not null,
      sector_id uuid not null,
      reserved_at timestamptz not null,
      primary key (workspace_id, name_key)
    )`.execute(db)
  await sql`create index sector_names_sector_idx on sector_names (sector_id)`.execute(db)
  // The sectors there are now; of names already shared, the oldest sector holds the name.
  await sql`
    insert into sector_names (workspace_id, name_key, sector_id, reserved_at)
    select distinct on (workspace_id, lower(trim(name))) workspace_id, lower(trim(name)), id, created_at
    from sectors
    order by workspace_id, lower(trim(name)), created_at, id
    on conflict do nothing`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sector_names').execute()
}
