import { sql, type Kysely } from 'kysely'

// A delivery's attempt_count now counts every attempt recorded, the attempts of a dispatcher whose
// lease ran out among them, and numbers the next attempt. Before, those were recorded but not
// counted: the count is raised to the last attempt's number, so the next one follows it.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    update webhook_deliveries d set attempt_count = a.last_attempt
    from (select delivery_id, max(attempt) as last_attempt from webhook_attempts group by delivery_id) a
    where d.id = a.delivery_id and d.attempt_count < a.last_attempt`.execute(db)
}

// The counts raised are true under either way of counting: nothing to undo.
export async function down(): Promise<void> {}
