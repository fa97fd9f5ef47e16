import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { openStorage } from '../../src/store/connect.js'
import { migrateToLatest } from '../../src/store/migrate.js'
import { tempDir } from './cli.js'

// PGlite's initdb and the migrations take several seconds of CPU, paid by every test that opens an
// empty embedded database. They are paid once per migration set instead: a migrated, empty data
// directory (and its dump, for in-memory instances) is kept under node_modules/.cache and copied.
// The first start on a truly empty directory keeps its own test (test/cli/cli.test.ts).

const root = fileURLToPath(new URL('../../', import.meta.url))
const cacheRoot = join(root, 'node_modules', '.cache', 'flowd-test')

/** Changes with every migration, so a template made by other migrations is never used. */
export function migrationSetKey(): string {
  const hash = createHash('sha256')
  const migrations = join(root, 'migrations')
  for (const file of readdirSync(migrations).sort()) hash.update(file).update(readFileSync(join(migrations, file)))
  return hash.digest('hex').slice(0, 16)
}

/** Changes with every migration and with PGlite's version, so a stale template is never used. */
function templateKey(): string {
  const hash = createHash('sha256').update(migrationSetKey())
  hash.update(readFileSync(join(root, 'node_modules', '@electric-sql', 'pglite', 'package.json')))
  hash.update(readFileSync(join(root, 'src', 'store', 'connect.ts')))
  return hash.digest('hex').slice(0, 16)
}

let template: Promise<string> | undefined

/** The template's folder: `pglite/` (a data directory) and `dump.tar`; made by the first process to need it. */
function migratedTemplate(): Promise<string> {
  return (template ??= (async () => {
    const final = join(cacheRoot, `pglite-${templateKey()}`)
    if (existsSync(join(final, 'dump.tar'))) return final
    mkdirSync(cacheRoot, { recursive: true })
    const building = mkdtempSync(join(cacheRoot, 'building-'))
    const storage = await openStorage({ kind: 'pglite', dataDir: join(building, 'pglite') })
    await migrateToLatest(storage.db)
    const dump = await storage.pglite!.dumpDataDir('none')
    await storage.close()
    writeFileSync(join(building, 'dump.tar'), Buffer.from(await dump.arrayBuffer()))
    try {
      renameSync(building, final)
    } catch {
      // Another test process made it first: theirs is the same.
      rmSync(building, { recursive: true, force: true })
    }
    return final
  })())
}

/** A migrated, empty PGlite as a dump, for `openStorage({ kind: 'pglite', initialData })`. */
export async function migratedPgliteDump(): Promise<Blob> {
  return new Blob([readFileSync(join(await migratedTemplate(), 'dump.tar'))])
}

/** A `DATA_DIR` holding a migrated, empty embedded database; removed at teardown. */
export async function migratedDataDir(t: Test): Promise<string> {
  const dataDir = tempDir(t)
  cpSync(join(await migratedTemplate(), 'pglite'), join(dataDir, 'pglite'), { recursive: true })
  return dataDir
}
