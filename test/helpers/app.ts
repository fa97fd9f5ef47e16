import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { bootstrap, type Bootstrapped } from '../../src/commands/tenancy.js'
import type { CommandContext } from '../../src/commands/context.js'
import type { ScryptCost } from '../../src/commands/oauth-clients.js'
import { loadConfig, type Config } from '../../src/config.js'
import type { EventStore } from '../../src/eventstore/port.js'
import { PostgresEventStore } from '../../src/eventstore/postgres.js'
import { buildApp } from '../../src/http/app.js'
import { GeneratedText } from '../../src/engine/generated-text.js'
import { ConversationRunner } from '../../src/engine/runner.js'
import type { Resolver } from '../../src/webhooks/callback-url.js'
import { DispatcherRole, type DispatcherRoleSettings } from '../../src/webhooks/dispatcher-role.js'
import { createLogger, type Logger } from '../../src/logger.js'
import { allProjections } from '../../src/all-projections.js'
import { ProjectionRuntime } from '../../src/projections/runtime.js'
import type { Projection } from '../../src/projections/projection.js'
import type { Storage } from '../../src/store/connect.js'
import type { Database } from '../../src/store/database.js'
import type { Kysely } from 'kysely'
import type { Backend } from './storage.js'
import { fakeDns } from './blocked-callbacks.js'
import { masterKey } from '../../src/secrets/cipher.js'
import { SecretKeyring } from '../../src/secrets/keyring.js'
import { revealSecrets } from '../../src/commands/secrets.js'
import type { MasterKeys } from '../../src/secrets/master-keys.js'
import type { Metrics } from '../../src/metrics/registry.js'

export const silentLogger = createLogger('silent')

/** Signs the editor's access tokens in tests, so no test writes a secret into DATA_DIR. */
export const testEditorTokenKey: Uint8Array = randomBytes(32)

/** Wraps the data keys of secrets in tests, so no test writes a key into DATA_DIR. */
export const testSecretsMasterKeys: MasterKeys = { current: masterKey(randomBytes(32)), previous: undefined, source: 'SECRETS_KEY' }

/** The keyring of secrets over `db`, with the tests' master key. */
export const testKeyring = (db: Kysely<Database>): SecretKeyring => new SecretKeyring(db, testSecretsMasterKeys)

export interface TestApp {
  app: FastifyInstance
  storage: Storage
  store: PostgresEventStore
  readModels: ProjectionRuntime
  /** A system command context, to set up data beside the API. */
  ctx: CommandContext
  /** The data keys of workspace secrets, as the app holds them. */
  secrets: SecretKeyring
  /** The first organization, with its admin key. */
  admin: Bootstrapped
  /** Present when the test asked for the engine. */
  conversations: ConversationRunner | undefined
  /** Present when the test asked for webhook delivery. */
  webhooks: DispatcherRole | undefined
}

/**
 * The app over `db` and `store` alone, its read models not started: for what the app answers of
 * its dependencies (readiness, errors). Closed at the end of `t`.
 */
export async function appOver(
  t: Test,
  db: Kysely<Database>,
  store: EventStore,
  { config = loadConfig({}), projections = allProjections }: { config?: Config; projections?: readonly Projection[] } = {},
): Promise<FastifyInstance> {
  const app = await buildApp({
    config,
    db,
    store,
    readModels: new ProjectionRuntime(db, store, projections, silentLogger),
    logger: silentLogger,
    now: () => new Date(),
    editorTokenKey: testEditorTokenKey,
    secrets: testKeyring(db),
    resolveHost: fakeDns({}),
  })
  t.teardown(() => app.close())
  return app
}

/**
 * A scrypt cost for tests that create or check OAuth client secrets by the dozen: production's
 * costs 32 MiB and tens of ms of CPU a hash. Hashes record their cost, so the same code paths run;
 * test/http/clients.test.ts keeps production's cost and checks it is what new secrets get.
 */
export const CHEAP_CLIENT_SECRET_COST: ScryptCost = { N: 2 ** 10, r: 1, p: 1 }

/** Delivery settings for a test; the schedule defaults to three quick attempts. */
export type TestWebhookSettings = Partial<DispatcherRoleSettings> & Pick<DispatcherRoleSettings, 'allowedPrivateCidrs'>

/** A migrated database of the backend, read models running, one bootstrapped organization and the app. */
export async function openTestApp(
  t: Test,
  backend: Backend,
  options: {
    apiKeyCacheMs?: number
    now?: () => Date
    config?: Config
    engine?: boolean
    webhooks?: TestWebhookSettings
    resolveHost?: Resolver
    /** The scrypt cost of OAuth client secrets; production's unless a test creates clients by the thousand. */
    clientSecretCost?: ScryptCost
    /** The engine makes the calls flows ask for, reaching these private ranges and trusting this CA. */
    calls?: { allowedPrivateCidrs: string[]; caFile?: string; lookup?: Resolver }
    /** The app's (and the engine's) logger; silent unless a test reads what is logged. */
    logger?: Logger
    /** The app serves them on `/metrics`, and the engine counts into them; none unless a test reads them. */
    metrics?: Metrics
  } = {},
): Promise<TestApp> {
  const now = options.now ?? (() => new Date())
  const storage = await backend.open(t)
  const store = new PostgresEventStore({ db: storage.db, pool: storage.pool, pollIntervalMs: 100 })
  const readModels = new ProjectionRuntime(storage.projectorDb, store, allProjections, silentLogger)
  await readModels.start()
  const secrets = testKeyring(storage.db)
  // The engine and the API share it as in one process of every role.
  const generatedText = new GeneratedText(storage.pool, silentLogger)
  const app = await buildApp({
    // Tests poll lists through one key faster than the default limit; test/http/rate-limit.test.ts covers the limits.
    config: options.config ?? loadConfig({ RATE_LIMIT_PER_MINUTE: '0', AUTH_RATE_LIMIT_PER_MINUTE: '0' }),
    db: storage.db,
    store,
    readModels,
    logger: options.logger ?? silentLogger,
    now,
    apiKeyCacheMs: options.apiKeyCacheMs,
    editorTokenKey: testEditorTokenKey,
    secrets,
    // Tests never ask real DNS: a callback host name is unknown (and so accepted) unless a test says otherwise.
    resolveHost: options.resolveHost ?? fakeDns({}),
    clientSecretCost: options.clientSecretCost,
    generatedText,
    metrics: options.metrics,
  })
  const calls = options.calls && { ...options.calls, lookup: options.calls.lookup ?? fakeDns({}), revealSecrets: (workspaceId: string, names: readonly string[]) => revealSecrets({ store, secrets }, workspaceId, names), generatedText }
  let conversations: ConversationRunner | undefined
  let webhooks: DispatcherRole | undefined
  // Registered before the engine and the dispatcher start: should either fail to start, what runs
  // stops before the storage closes, rather than polling a closed embedded database in a loop.
  t.teardown(async () => {
    await app.close()
    await webhooks?.close()
    await conversations?.stop()
    await generatedText.close()
    await readModels.stop()
    await store.close()
  })
  if (options.engine) {
    conversations = new ConversationRunner({ db: storage.db, store, readModels, logger: options.logger ?? silentLogger, now, sweepIntervalMs: 200, calls, metrics: options.metrics })
    await conversations.start()
  }
  if (options.webhooks) {
    webhooks = new DispatcherRole(storage.dispatcherDb, readModels, { retrySchedule: [0, 0.2, 0.2], pollIntervalMs: 100, now, ...options.webhooks }, silentLogger)
    webhooks.start()
  }
  const ctx: CommandContext = { store, readModels, logger: silentLogger, now, metadata: { actor: 'test' } }
  const admin = await bootstrap(ctx, { organization: 'Acme', workspace: 'Main', callbackUrl: null })
  return { app, storage, store, readModels, ctx, secrets, admin, conversations, webhooks }
}
