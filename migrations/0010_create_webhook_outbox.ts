import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // What the outbox projection needs to route a card operation to its session's callback.
  await sql`
    create table webhook_sessions (
      session_id uuid primary key,
      organization_id uuid not null,
      workspace_id uuid not null,
      api_key_id uuid not null,
      callback_url text,
      active boolean not null
    )`.execute(db)

  // The outbox: one row per webhook, written with the outbox checkpoint. A projection rebuild
  // truncates webhook_sessions only; rows here have ids derived from their events, so replaying
  // finds them present and sends nothing again.
  await sql`
    create table webhook_deliveries (
      id uuid primary key,
      organization_id uuid not null,
      workspace_id uuid not null,
      session_id uuid not null,
      message_id uuid not null,
      api_key_id uuid not null,
      callback_url text,
      body text not null,
      event_ids jsonb not null,
      source_commit bigint not null,
      source_prepare bigint not null,
      status text not null,
      attempt_count integer not null default 0,
      round_attempts integer not null default 0,
      next_attempt_at timestamptz,
      lease_token uuid,
      lease_until timestamptz,
      last_error text,
      delivered_at timestamptz,
      created_at timestamptz not null
    )`.execute(db)
  // The dispatcher's two questions: which are due, and is an earlier one of the session still open.
  await sql`create index webhook_deliveries_open_idx on webhook_deliveries (source_commit, source_prepare) where status in ('pending', 'failed')`.execute(db)
  await sql`create index webhook_deliveries_open_session_idx on webhook_deliveries (session_id, source_commit, source_prepare) where status in ('pending', 'failed')`.execute(db)
  // The deliveries list: a workspace's, newest first, optionally one session's or one status.
  await sql`create index webhook_deliveries_workspace_idx on webhook_deliveries (workspace_id, source_commit, source_prepare)`.execute(db)
  await sql`create index webhook_deliveries_session_idx on webhook_deliveries (session_id, source_commit, source_prepare)`.execute(db)

  await sql`
    create table webhook_attempts (
      delivery_id uuid not null references webhook_deliveries (id),
      attempt integer not null,
      attempted_at timestamptz not null,
      status_code integer,
      error text,
      duration_ms integer not null,
      response_body text,
      response_truncated boolean not null default false,
      primary key (delivery_id, attempt)
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_attempts').execute()
  await db.schema.dropTable('webhook_deliveries').execute()
  await db.schema.dropTable('webhook_sessions').execute()
}
