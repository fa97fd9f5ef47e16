import { parseArgs } from 'node:util'
import type { Config } from '../config.js'
import { ROLES, type Role } from '../roles.js'
import { startService } from '../server.js'
import type { CliContext } from './main.js'
import { UsageError } from './usage.js'

const HELP = `Usage: flowd start [--role ROLE[,ROLE…]]

Runs the service. --role chooses what this process does (default: all):
  all         every role below, in this one process
  api         the HTTP API (writes wait for the read models by reading their stored checkpoints)
  projector   the read models (one active process per read model; others stand by and take over)
  engine      the flow engine and the session-expiry sweeper (engine processes share the sessions
              by partition, ENGINE_PARTITIONS; one of them sweeps)
  dispatcher  webhook delivery (any number of processes share the deliveries)
Several at once: --role api,projector. Every process listens on PORT: with the api role the whole
API, without it only /healthz, /readyz and /metrics (when enabled).

Roles other than all need DATABASE_URL: the embedded database belongs to one process.
Configuration comes from environment variables (see the README); scaling out: docs/scaling.md.`

/** The roles `--role` names, in their usual order; every role when not given. */
export function parseRoles(value: string | undefined, config: Pick<Config, 'databaseUrl'>): Role[] {
  if (value === undefined) return [...ROLES]
  const names = value.split(',').map((name) => name.trim())
  const unknown = names.filter((name) => name !== 'all' && !(ROLES as readonly string[]).includes(name))
  if (unknown.length > 0 || names.length === 0) {
    throw new UsageError(`unknown role ${unknown.map((name) => `'${name}'`).join(', ') || "''"}: expected all or a comma-separated list of ${ROLES.join(', ')}`)
  }
  const roles = names.includes('all') ? [...ROLES] : ROLES.filter((role) => names.includes(role))
  if (roles.length < ROLES.length && !config.databaseUrl) {
    throw new UsageError(
      `--role ${value} needs DATABASE_URL: the embedded database (PGlite) can be opened by one process only, which runs every role. ` +
        'Set DATABASE_URL to a Postgres database shared by the processes, or run --role all.',
    )
  }
  return roles
}

export async function startCommand({ config, logger, args }: CliContext): Promise<number> {
  const { values } = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' }, role: { type: 'string' } } })
  if (values.help) {
    process.stdout.write(`${HELP}\n`)
    return 0
  }
  const roles = parseRoles(values.role, config)
  const service = await startService(config, logger, roles)
  const all = roles.length === ROLES.length
  const lines = [
    '',
    all ? 'Conversation Flow Service is running' : `Conversation Flow Service is running: ${roles.join(', ')}`,
    ...(roles.includes('api')
      ? [
          `  dashboard    ${service.address}/`,
          `  API          ${service.address}/v1`,
          `  reference    ${service.address}/docs   OpenAPI ${service.address}/openapi.json`,
          `  editor       ${service.address}/dashboard/flows (open a flow there; to embed it in your app: docs/embedding.md)`,
          ...(config.embedDemo ? [`  embed demo   ${service.address}/embed-demo`] : []),
        ]
      : []),
    `  health       ${service.address}/healthz   readiness ${service.address}/readyz`,
    ...(config.metricsEnabled ? [`  metrics      ${service.address}/metrics`] : []),
    `  storage      ${config.databaseUrl ? 'Postgres (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`}; event store: ${config.eventStore}`,
  ]
  if (service.bootstrapped) {
    const { apiKey, signingSecret, workspaceId } = service.bootstrapped
    lines.push(
      '',
      'Created a default organization and workspace. Their admin API key, shown only this once:',
      `  X-Api-Key               ${apiKey}`,
      `  webhook signing secret  ${signingSecret}`,
      `  workspace               ${workspaceId}`,
      '',
      'Try it:',
      `  curl -H 'X-Api-Key: ${apiKey}' ${service.address}/v1/workspaces`,
    )
  } else if (roles.includes('api') && service.hadOrganizations) {
    lines.push('', "API keys: the admin key printed at the first start, or a new one from 'npx flowd api-keys create --workspace ID' (stop the service first on the embedded store).")
  }
  if (service.signInLink) {
    lines.push('', 'Open the dashboard, signed in with the admin key (this link works once, for 24 hours):', `  ${service.signInLink}`)
  } else if (roles.includes('api') && !service.bootstrapped && !service.hadOrganizations) {
    lines.push('', "API keys: create the first with 'npx flowd bootstrap --organization NAME --workspace NAME'.")
  }
  process.stdout.write(`${lines.join('\n')}\n\n`)

  await new Promise<void>((resolve) => {
    const shutdown = (signal: string) => {
      logger.info({ signal }, 'shutting down')
      service.close().then(resolve, (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed')
        resolve()
      })
    }
    process.once('SIGTERM', () => shutdown('SIGTERM'))
    process.once('SIGINT', () => shutdown('SIGINT'))
  })
  return 0
}
