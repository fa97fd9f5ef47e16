import { sql, type Kysely } from 'kysely'

// A stream one log processor (the engine, a read model, the webhook outbox) could not get past: its
// events wait here, named by the first one that failed, until `flowd processors retry` replays them.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table parked_streams (
      processor text not null,
      stream text not null,
      event_id uuid not null,
      event_type text not null,
      position_commit bigint not null,
      position_prepare bigint not null,
      reason text not null,
      failures integer not null,
      parked_at timestamptz not null default now(),
      primary key (processor, stream)
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table parked_streams`.execute(db)
}
