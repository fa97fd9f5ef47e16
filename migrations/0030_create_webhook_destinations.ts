import { sql, type Kysely } from 'kysely'

// Webhook delivery is fair per destination: the origin of a delivery's callback URL within its
// workspace. Each delivery records its destination (the outbox writes it from now on; the open
// ones are filled here, the settled ones need none), and each destination that failed has a row
// of health: failing or healthy, since when, the last error, when the next probe may go.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table webhook_deliveries add column destination text`.execute(db)
  await sql`
    update webhook_deliveries set destination = lower(substring(callback_url from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*'))
    where status in ('pending', 'failed')`.execute(db)
  // The deliveries a failing destination holds, counted for the API and the metrics.
  await sql`create index webhook_deliveries_open_destination_idx on webhook_deliveries (workspace_id, destination) where status in ('pending', 'failed')`.execute(db)

  await sql`
    create table webhook_destinations (
      workspace_id uuid not null,
      destination text not null,
      organization_id uuid not null,
      state text not null check (state in ('healthy', 'failing')),
      consecutive_failures integer not null default 0,
      failing_since timestamptz,
      last_error text,
      last_failure_at timestamptz,
      probes integer not null default 0,
      next_probe_at timestamptz,
      probe_until timestamptz,
      updated_at timestamptz not null,
      primary key (workspace_id, destination)
    )`.execute(db)
  await sql`create index webhook_destinations_failing_idx on webhook_destinations (workspace_id, destination) where state = 'failing'`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_destinations').execute()
  await sql`drop index webhook_deliveries_open_destination_idx`.execute(db)
  await sql`alter table webhook_deliveries drop column destination`.execute(db)
}
