import { sql, type Kysely } from 'kysely'

// The branches a session's visits to a split node drew, on the session's row for that node: what
// GET /v1/flows/{id}/analytics counts per branch. A turn without `choices` drew nothing, so the
// empty default is true of every row there is, and the read model needs no rebuild.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table analytics_session_nodes add column branches text[] not null default '{}'`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table analytics_session_nodes drop column branches`.execute(db)
}
