import { sql, type Kysely } from 'kysely'

// The dashboard's sign-in: credentials, not domain events and not read models (a projection
// rebuild never touches them). Tokens are kept only as SHA-256 (hex); a session names its API key
// by the key's hash, so revoking the key ends the session.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table dashboard_sessions (
      id uuid primary key,
      token_hash text not null unique,
      api_key_hash text not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      ended_at timestamptz
    )`.execute(db)
  await sql`create index dashboard_sessions_expires_idx on dashboard_sessions (expires_at)`.execute(db)

  // One-time sign-in links (printed by `flowd start` and `flowd dashboard-link`).
  await sql`
    create table dashboard_sign_in_links (
      token_hash text primary key,
      api_key_hash text not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      used_at timestamptz
    )`.execute(db)
  await sql`create index dashboard_sign_in_links_expires_idx on dashboard_sign_in_links (expires_at)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('dashboard_sign_in_links').execute()
  await db.schema.dropTable('dashboard_sessions').execute()
}
