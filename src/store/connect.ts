import { mkdirSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
import { Kysely, PostgresDialect } from 'kysely'
import { PGliteDialect } from 'kysely-pglite-dialect'
import pg from 'pg'
import type { Database } from './database.js'

export type DatabaseTarget =
  | { kind: 'postgres'; url: string; poolSize?: number }
  /** `dataDir` undefined: in memory (tests), optionally starting from a dump of another instance. */
  | { kind: 'pglite'; dataDir?: string; initialData?: Blob }

export interface Storage {
  db: Kysely<Database>
  target: DatabaseTarget
  /** Present on Postgres: new pools and LISTEN connections use it. */
  pool?: pg.Pool
  /** Present on PGlite. */
  pglite?: PGlite
  close(): Promise<void>
}

export async function openStorage(target: DatabaseTarget): Promise<Storage> {
  if (target.kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: target.url, max: target.poolSize ?? 10 })
    // An idle client losing its connection must not crash the process; the pool replaces it.
    pool.on('error', () => {})
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
    return { db, target, pool, close: () => db.destroy() }
  }
  if (target.dataDir) mkdirSync(target.dataDir, { recursive: true })
  // Card search (`q`) uses trigram indexes; Postgres ships pg_trgm in contrib, PGlite as an extension.
  const extensions = { pg_trgm }
  const pglite = target.dataDir ? await PGlite.create(target.dataDir, { extensions }) : await PGlite.create({ loadDataDir: target.initialData, extensions })
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) })
  return { db, target, pglite, close: () => db.destroy() }
}
