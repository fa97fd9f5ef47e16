import { readdirSync } from 'node:fs'
import { sql } from 'kysely'
import t from 'tap'
import { openStorage } from '../../src/store/connect.js'
import { migrateTo, migrateToLatest } from '../../src/store/migrate.js'

// 0026 and 0028 were numbered below 0030 but written after it: a database deployed in between has
// 0030 applied without them. Starting it on today's code applies them instead of refusing to start.
t.test('a database with 0030 but not 0026 or 0028 migrates to the latest', async (t) => {
  const storage = await openStorage({ kind: 'pglite' })
  t.teardown(() => storage.close())
  await migrateTo(storage.db, '0025_preview_session_logs')
  const destinations = (await import('../../migrations/0030_create_webhook_destinations.js')) as { up(db: typeof storage.db): Promise<void> }
  await destinations.up(storage.db)
  await sql`insert into kysely_migration (name, timestamp) values ('0030_create_webhook_destinations', ${new Date().toISOString()})`.execute(storage.db)

  const files = readdirSync(new URL('../../migrations/', import.meta.url)).filter((f) => /^\d{4}_.*\.ts$/.test(f)).map((f) => f.replace(/\.ts$/, '')).sort()
  const later = files.filter((name) => name > '0030_create_webhook_destinations')
  t.same(await migrateToLatest(storage.db), ['0026_scope_analysts_by_organization', '0028_record_engine_partitions', ...later], 'the two it lacked, in name order, then those after 0030')
  const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(storage.db)
  t.same(applied.rows.map((r) => r.name), files, 'every migration applied once')
})
