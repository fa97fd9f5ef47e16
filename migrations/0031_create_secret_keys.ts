import { sql, type Kysely } from 'kysely'

// The data keys of workspace secrets, each wrapped by a master key (the fingerprint says which).
// Not in the event store, whose events hold only the ciphertexts: deleting a row here makes its
// ciphertext unreadable for good. Not a read model either: a projection rebuild leaves it.
// `set_version`: the version of the secrets stream whose SecretSet uses the key, null until it is
// appended; keys of earlier versions of a name are the ones a later write shreds.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table secret_keys (
      id uuid primary key,
      workspace_id uuid not null,
      name text not null,
      master_key_id text not null,
      wrapped_key text not null,
      set_version integer,
      created_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index secret_keys_name_idx on secret_keys (workspace_id, name)`.execute(db)
  await sql`create index secret_keys_master_key_idx on secret_keys (master_key_id)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('secret_keys').execute()
}
