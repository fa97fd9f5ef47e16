import { sql, type Kysely } from 'kysely'

// A session reaches nodes of the flows its runFlow nodes run, whose ids may repeat the ids of its
// own flow's nodes (every flow has a `start`): a node of a session is one of a flow version. Every
// row there is was of the session's own flow, so the read model needs no rebuild.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table analytics_session_nodes drop constraint analytics_session_nodes_pkey`.execute(db)
  await sql`alter table analytics_session_nodes add primary key (session_id, flow_id, flow_version, node_id)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from analytics_session_nodes n using analytics_sessions s where s.session_id = n.session_id and (s.flow_id, s.flow_version) <> (n.flow_id, n.flow_version)`.execute(db)
  await sql`alter table analytics_session_nodes drop constraint analytics_session_nodes_pkey`.execute(db)
  await sql`alter table analytics_session_nodes add primary key (session_id, node_id)`.execute(db)
}
