import { parseArgs } from 'node:util'
import { ConfigError, loadConfig, type Config } from '../config.js'
import { createLogger, type Logger } from '../logger.js'
import { exitCodeOf } from './usage.js'

const HELP = `flowd: the Conversation Flow Service

Usage: flowd <command> [options]

Commands:
  start [--role ROLES]        run the service, or some of its roles (api, projector, engine, dispatcher)
  bootstrap                   create an organization, its first workspace and an admin API key
  migrate                     apply pending database migrations
  projections status          show each read model's checkpoint
  projections rebuild [name]  rebuild read models from the event store
  processors parked|retry     list streams a log processor parked after repeated failures, or replay one
  engine repartition          change the number of partitions of the engine's sessions (ENGINE_PARTITIONS)
  api-keys create|list|revoke create, list or revoke API keys of any organization (as the operator)
  secrets rewrap              re-wrap the data keys of workspace secrets with a new master key (SECRETS_KEY)
  dashboard-link              print a one-time link that signs the dashboard in with an API key
  deliveries list|retry       list webhook deliveries, or send one again
  dev-receiver                a local HTTPS webhook receiver that prints signed webhooks
  audit verify                replay recorded turns and compare them with the record
  audit export                write a workspace's events to an NDJSON file with a checksum
  flows test                  run a flow's conversation tests on the service, for a CI (JUnit report)
  flows replay                replay real sessions against a flow's draft and print those it would change
  analytics grant-reader      give an analyst a Postgres login that reads the analytics schema

Run 'flowd <command> --help' for a command's options. Commands that print data take --json.
Configuration comes from environment variables; see the README.

Exit codes (every command):
  0  success
  1  failed at run time (database unreachable, embedded store in use, anything unexpected), or a flows test failed
  2  usage error: unknown command or option, missing or malformed argument, refused input
  3  not found: no such API key, workspace, delivery or parked stream
  4  refused by the current state, e.g. retrying a delivery that is still queued
  5  audit verify found a recorded turn the interpreter does not reproduce, or a flows replay a session the draft would change`

export interface CliContext {
  config: Config
  logger: Logger
  args: string[]
}

type Command = (ctx: CliContext) => Promise<number>

// Each command's module is loaded when it runs, so `flowd --help` and the light commands do not load the server.
const commands: Record<string, () => Promise<Command>> = {
  start: async () => (await import('./start.js')).startCommand,
  bootstrap: async () => (await import('./bootstrap.js')).bootstrapCommand,
  migrate: async () => (await import('./migrate.js')).migrateCommand,
  projections: async () => (await import('./projections.js')).projectionsCommand,
  processors: async () => (await import('./processors.js')).processorsCommand,
  engine: async () => (await import('./engine.js')).engineCommand,
  'api-keys': async () => (await import('./api-keys.js')).apiKeysCommand,
  secrets: async () => (await import('./secrets.js')).secretsCommand,
  'dashboard-link': async () => (await import('./dashboard-link.js')).dashboardLinkCommand,
  deliveries: async () => (await import('./deliveries.js')).deliveriesCommand,
  'dev-receiver': async () => (await import('./dev-receiver.js')).devReceiverCommand,
  audit: async () => (await import('./audit.js')).auditCommand,
  flows: async () => (await import('./flows.js')).flowsCommand,
  analytics: async () => (await import('./analytics.js')).analyticsCommand,
}

export async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, strict: false, allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } })
  const name = positionals[0]
  if (!name) {
    process.stdout.write(`${HELP}\n`)
    return values.help ? 0 : 2
  }
  const loadCommand = commands[name]
  if (!loadCommand) {
    process.stderr.write(`flowd: unknown command '${name}'\n\n${HELP}\n`)
    return 2
  }
  let config: Config
  try {
    config = loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`flowd: ${error.message}\n`)
      return 2
    }
    throw error
  }
  // Commands that print data keep stdout for it; their logs go to stderr.
  const logger = createLogger(name === 'start' ? config.logLevel : 'warn', name === 'start' ? 1 : 2)
  try {
    const command = await loadCommand()
    return await command({ config, logger, args: argv.slice(argv.indexOf(name) + 1) })
  } catch (error) {
    process.stderr.write(`flowd ${name}: ${error instanceof Error ? error.message : String(error)}\n`)
    return exitCodeOf(error)
  }
}

process.exitCode = await main(process.argv.slice(2))
