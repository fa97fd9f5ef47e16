import { parseArgs } from 'node:util'
import { openStorage } from '../store/connect.js'
import { lockDataDir } from '../store/lock.js'
import { migrateToLatest } from '../store/migrate.js'
import { storageTarget } from '../composition.js'
import type { CliContext } from './main.js'

export async function migrateCommand({ config, args }: CliContext): Promise<number> {
  const { values } = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' } } })
  if (values.help) {
    process.stdout.write('Usage: flowd migrate\n\nApplies pending migrations to DATABASE_URL, or to the embedded database in DATA_DIR.\n')
    return 0
  }
  const unlock = config.databaseUrl ? () => {} : lockDataDir(config.dataDir)
  const storage = await openStorage(storageTarget(config))
  try {
    const applied = await migrateToLatest(storage.db)
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'the database is up to date\n')
    return 0
  } finally {
    await storage.close()
    unlock()
  }
}
