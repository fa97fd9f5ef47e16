import { readdir } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { Migrator, type Kysely, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely'

// Resolves to `migrations/` from the sources and to `dist/migrations/` from the build.
const migrationsFolder = fileURLToPath(new URL('../../migrations/', import.meta.url))
const migrationFile = /^\d{4}_[a-z0-9_]+\.(ts|js)$/

class FolderMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await readdir(migrationsFolder)).filter((file) => migrationFile.test(file) && !file.endsWith('.d.ts'))
    const migrations: Record<string, Migration> = {}
    for (const file of files.sort()) {
      migrations[file.replace(/\.(ts|js)$/, '')] = (await import(new URL(file, `file://${migrationsFolder}`).href)) as Migration
    }
    return migrations
  }
}

/** Applies every pending migration; returns the names applied. */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  return migrate(db, (migrator) => migrator.migrateToLatest())
}

/** Applies the pending migrations up to and including `name` (an earlier schema, for upgrade tests); returns the names applied. */
export async function migrateTo(db: Kysely<any>, name: string): Promise<string[]> {
  return migrate(db, (migrator) => migrator.migrateTo(name))
}

async function migrate(db: Kysely<any>, run: (migrator: Migrator) => Promise<MigrationResultSet>): Promise<string[]> {
  // Unordered: 0026 and 0028 were numbered below 0030 yet written after it, so a database deployed
  // between them has 0030 without them; they apply after it as they would before it.
  const { error, results } = await run(new Migrator({ db, provider: new FolderMigrationProvider(), allowUnorderedMigrations: true }))
  if (error) throw error instanceof Error ? error : new Error(String(error))
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
