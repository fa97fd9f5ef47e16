import { sql, type Kysely } from 'kysely'

// The gap rule: a global_position becomes visible before its transaction commits, so readers order
// by (transaction_id, global_position) and only read below the oldest running transaction.
// transaction_id is the xid8 of pg_current_xact_id() held as bigint: PGlite's 32-bit build sorts
// xid8 wrongly, and the 64-bit xid (epoch and xid) fits a bigint for the life of any cluster.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table events (
      global_position bigint generated always as identity primary key,
      transaction_id bigint not null default (pg_current_xact_id()::text)::bigint,
      event_id uuid not null,
      stream_id text not null,
      stream_revision bigint not null,
      event_type text not null,
      data jsonb not null,
      metadata jsonb not null default '{}'::jsonb,
      created_at timestamptz not null default now(),
      constraint events_event_id_unique unique (event_id),
      constraint events_stream_revision_unique unique (stream_id, stream_revision)
    )`.execute(db)
  await sql`create index events_transaction_position_idx on events (transaction_id, global_position)`.execute(db)
  await sql`
    create table streams (
      stream_id text primary key,
      revision bigint not null
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('streams').execute()
  await db.schema.dropTable('events').execute()
}
