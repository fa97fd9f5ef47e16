import { parseArgs } from 'node:util'
import { startService } from '../server.js'
import type { CliContext } from './main.js'

export async function startCommand({ config, logger, args }: CliContext): Promise<number> {
  const { values } = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' } } })
  if (values.help) {
    process.stdout.write('Usage: flowd start\n\nRuns the service: the HTTP API and the read-model projectors. See the README for configuration.\n')
    return 0
  }
  const service = await startService(config, logger)
  const lines = [
    '',
    'Conversation Flow Service is running',
    `  API          ${service.address}/v1`,
    `  health       ${service.address}/healthz   readiness ${service.address}/readyz`,
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
  } else {
    lines.push('', "API keys: create the first with 'npx flowd bootstrap --organization NAME --workspace NAME' (stop the service first on the embedded store).")
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
