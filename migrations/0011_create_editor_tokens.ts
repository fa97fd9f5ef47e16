import { sql, type Kysely } from 'kysely'

// Credentials of the embedded editor: not domain events and not read models (a projection rebuild
// never touches them). Tokens are kept only as SHA-256 (hex).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table editor_one_time_tokens (
      token_hash text primary key,
      client_id uuid not null,
      organization_id uuid not null,
      workspace_id uuid not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      used_at timestamptz
    )`.execute(db)
  // Expired tokens are pruned by age.
  await sql`create index editor_one_time_tokens_expires_idx on editor_one_time_tokens (expires_at)`.execute(db)

  // One family per exchanged OTT: every refresh token rotated from it. Reusing a rotated token
  // revokes the family; `expires_at` is the family's absolute end.
  await sql`
    create table editor_token_families (
      id uuid primary key,
      client_id uuid not null,
      organization_id uuid not null,
      workspace_id uuid not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      revoked_at timestamptz
    )`.execute(db)
  await sql`create index editor_token_families_expires_idx on editor_token_families (expires_at)`.execute(db)

  await sql`
    create table editor_refresh_tokens (
      token_hash text primary key,
      family_id uuid not null references editor_token_families (id) on delete cascade,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      used_at timestamptz
    )`.execute(db)
  await sql`create index editor_refresh_tokens_family_idx on editor_refresh_tokens (family_id)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('editor_refresh_tokens').execute()
  await db.schema.dropTable('editor_token_families').execute()
  await db.schema.dropTable('editor_one_time_tokens').execute()
}
