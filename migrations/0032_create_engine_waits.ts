import { sql, type Kysely } from 'kysely'

// What the engine waits for on behalf of sessions, apart from the event store: its own bookkeeping,
// not read models. `pending_calls`: calls outside (a flow's HTTP requests) started and not yet
// answered; a row outliving its process tells the engine that holds the session to make the call
// again. `session_timers`: the timers of waits for outside events, found by due time.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table pending_calls (
      session_id uuid not null,
      message_id uuid not null,
      call_index integer not null,
      started_at timestamptz not null,
      primary key (session_id, message_id, call_index)
    )`.execute(db)
  await sql`create index pending_calls_started_idx on pending_calls (started_at)`.execute(db)
  await sql`
    create table session_timers (
      session_id uuid not null,
      node_id text not null,
      due_at timestamptz not null,
      primary key (session_id, node_id, due_at)
    )`.execute(db)
  await sql`create index session_timers_due_idx on session_timers (due_at)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table session_timers`.execute(db)
  await sql`drop table pending_calls`.execute(db)
}
