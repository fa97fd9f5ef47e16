import { PGlite } from '@electric-sql/pglite'
import { Kysely } from 'kysely'
import { PGliteDialect } from 'kysely-pglite-dialect'
import { migrateToLatest } from '/work/main/src/store/migrate.js'
let t0 = Date.now()
const p = await PGlite.create()
console.log('create', Date.now() - t0); t0 = Date.now()
const db = new Kysely<any>({ dialect: new PGliteDialect(p) })
await migrateToLatest(db)
console.log('migrate', Date.now() - t0); t0 = Date.now()
const dump = await p.dumpDataDir('none')
console.log('dump', Date.now() - t0, dump.size); t0 = Date.now()
const q = await PGlite.create({ loadDataDir: dump })
console.log('load', Date.now() - t0); t0 = Date.now()
console.log((await q.query('select count(*) from events')).rows)
