import { sql, type Kysely } from 'kysely'

// Releases (docs/decisions/flows-and-kanban.md, "Rollback and gradual release"): the version new
// sessions start on (`live_version`) apart from the newest published one, and the version in
// gradual release with its share of new sessions. Until now the newest version was the live one.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table flows add column live_version integer not null default 0`.execute(db)
  await sql`alter table flows add column gradual_version integer`.execute(db)
  await sql`alter table flows add column gradual_percent integer`.execute(db)
  await sql`update flows set live_version = published_version`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table flows drop column gradual_percent`.execute(db)
  await sql`alter table flows drop column gradual_version`.execute(db)
  await sql`alter table flows drop column live_version`.execute(db)
}
