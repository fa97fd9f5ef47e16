import { sql, type Kysely } from 'kysely'

// The dead-deliveries gauge (flowd_webhook_deliveries{status="dead"}) counts them on every metrics
// scrape: this keeps that count to the dead rows instead of the whole, ever-growing outbox.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index webhook_deliveries_dead_idx on webhook_deliveries (created_at) where status = 'dead'`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index webhook_deliveries_dead_idx`.execute(db)
}
