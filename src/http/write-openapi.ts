import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { loadConfig } from '../config.js'
import { PostgresEventStore } from '../eventstore/postgres.js'
import { createLogger } from '../logger.js'
import { allProjections } from '../all-projections.js'
import { ProjectionRuntime } from '../projections/runtime.js'
import { masterKey } from '../secrets/cipher.js'
import { SecretKeyring } from '../secrets/keyring.js'
import { openStorage } from '../store/connect.js'
import { buildApp } from './app.js'

/**
 * `npm run openapi`: writes `openapi.json` in the current directory (the repository root under
 * npm) for the default configuration, whatever the environment says, so that the committed file
 * depends on the routes only. Building the app takes a database; an empty one in memory will do,
 * as nothing is asked of it.
 */
async function writeOpenApi(): Promise<void> {
  const logger = createLogger('silent')
  const storage = await openStorage({ kind: 'pglite' })
  try {
    const store = new PostgresEventStore({ db: storage.db })
    const app = await buildApp({
      config: loadConfig({}),
      db: storage.db,
      store,
      readModels: new ProjectionRuntime(storage.projectorDb, store, allProjections, logger),
      logger,
      now: () => new Date(),
      editorTokenKey: randomBytes(32),
      secrets: new SecretKeyring(storage.db, { current: masterKey(randomBytes(32)), previous: undefined, source: 'SECRETS_KEY' }),
    })
    await app.ready()
    const file = resolve('openapi.json')
    writeFileSync(file, `${JSON.stringify(app.swagger(), null, 2)}\n`)
    await app.close()
    process.stdout.write(`wrote ${file}\n`)
  } finally {
    await storage.close()
  }
}

await writeOpenApi()
