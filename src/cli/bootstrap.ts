import { parseArgs } from 'node:util'
import { bootstrap } from '../commands/tenancy.js'
import { openBackend, systemContext } from '../composition.js'
import { BadRequestError } from '../errors.js'
import type { CliContext } from './main.js'
import { UsageError } from './usage.js'

const HELP = `Usage: flowd bootstrap --organization NAME --workspace NAME [--callback-url URL] [--json]

Creates an organization, its first workspace and an organization-admin API key, and prints the key
and the webhook signing secret once. With --json it prints exactly one JSON object:
{organizationId, workspaceId, apiKeyId, apiKey, signingSecret}.`

export async function bootstrapCommand({ config, logger, args }: CliContext): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      organization: { type: 'string' },
      workspace: { type: 'string' },
      'callback-url': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    process.stdout.write(`${HELP}\n`)
    return 0
  }
  if (!values.organization?.trim() || !values.workspace?.trim()) throw new UsageError(`--organization and --workspace are required\n\n${HELP}`)
  const callbackUrl = values['callback-url'] ?? null
  const backend = await openBackend(config, logger)
  try {
    await backend.readModels.start()
    const created = await bootstrap(
      systemContext(backend, logger),
      { organization: values.organization.trim(), workspace: values.workspace.trim(), callbackUrl },
      { allowedPrivateCidrs: config.webhookAllowedPrivateCidrs },
    ).catch((error: unknown) => {
      throw error instanceof BadRequestError ? new UsageError(error.message) : error
    })
    if (values.json) {
      process.stdout.write(`${JSON.stringify(created)}\n`)
    } else {
      process.stdout.write(
        [
          `organization  ${created.organizationId}`,
          `workspace     ${created.workspaceId}`,
          `API key id    ${created.apiKeyId}`,
          '',
          'Shown once; keep them safe:',
          `  API key (X-Api-Key header)   ${created.apiKey}`,
          `  webhook signing secret       ${created.signingSecret}`,
          '',
        ].join('\n'),
      )
    }
    return 0
  } finally {
    await backend.close()
  }
}
