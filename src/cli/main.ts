import { parseArgs } from 'node:util'
import { ConfigError, loadConfig, type Config } from '../config.js'
import { createLogger, type Logger } from '../logger.js'
import { bootstrapCommand } from './bootstrap.js'
import { migrateCommand } from './migrate.js'
import { projectionsCommand } from './projections.js'
import { startCommand } from './start.js'
import { UsageError } from './usage.js'

const HELP = `flowd: the Conversation Flow Service

Usage: flowd <command> [options]

Commands:
  start                       run the service (API, read models)
  bootstrap                   create an organization, its first workspace and an admin API key
  migrate                     apply pending database migrations
  projections status          show each read model's checkpoint
  projections rebuild [name]  rebuild read models from the event store

Run 'flowd <command> --help' for a command's options.
Configuration comes from environment variables; see the README.`

export interface CliContext {
  config: Config
  logger: Logger
  args: string[]
}

const commands: Record<string, (ctx: CliContext) => Promise<number>> = {
  start: startCommand,
  bootstrap: bootstrapCommand,
  migrate: migrateCommand,
  projections: projectionsCommand,
}

export async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, strict: false, allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } })
  const name = positionals[0]
  if (!name) {
    process.stdout.write(`${HELP}\n`)
    return values.help ? 0 : 2
  }
  const command = commands[name]
  if (!command) {
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
    return await command({ config, logger, args: argv.slice(argv.indexOf(name) + 1) })
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`flowd ${name}: ${error.message}\n`)
      return 2
    }
    process.stderr.write(`flowd ${name}: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  }
}

process.exitCode = await main(process.argv.slice(2))
