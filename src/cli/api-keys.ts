import { issueApiKeyForWorkspace, revokeApiKey } from '../commands/api-keys.js'
import type { ApiKeyRecord, ApiKeyRole } from '../domain/api-key.js'
import { listApiKeys } from '../projections/api-keys.js'
import type { CliContext } from './main.js'
import { asOperator, printJson, printTable } from './operator.js'
import { parseAction, UsageError, uuidArgument } from './usage.js'

const HELP = `Usage:
  flowd api-keys create --workspace ID [--name NAME] [--role workspace|organization-admin] [--callback-url URL] [--json]
  flowd api-keys list [--workspace ID] [--organization ID] [--json]
  flowd api-keys revoke ID [--json]

Manages API keys as the operator, who stands above organizations: create a key for any workspace,
list the live keys of every organization (or of one organization or workspace), revoke any key.
The same rules apply as in /v1/api-keys (callback URL checks, one event per change).

create   prints the key and its webhook signing secret, shown only this once. --role defaults to
         workspace; --name to 'operator key'. --json: {id, name, workspaceId, role, callbackUrl,
         keyPrefix, createdAt, apiKey, signingSecret}, as POST /v1/api-keys answers.
list     live keys, oldest first. --json: an array of {id, name, workspaceId, role, callbackUrl,
         keyPrefix, createdAt}.
revoke   the key stops working within 5 seconds. --json: {id, revoked: true}.

Exit codes: 0 done, 1 failed (e.g. database unreachable), 2 usage error or refused input (such as
a private callback URL), 3 no such workspace or live key.`

const ROLES: readonly ApiKeyRole[] = ['workspace', 'organization-admin']

export async function apiKeysCommand(cli: CliContext): Promise<number> {
  const parsed = parseAction(
    cli.args,
    {
      workspace: { type: 'string' },
      organization: { type: 'string' },
      name: { type: 'string' },
      role: { type: 'string' },
      'callback-url': { type: 'string' },
      json: { type: 'boolean' },
    },
    HELP,
  )
  if (parsed.exit !== undefined) return parsed.exit
  const { action, values, rest } = parsed
  const allowed: Record<string, readonly string[]> = {
    create: ['workspace', 'name', 'role', 'callback-url', 'json'],
    list: ['workspace', 'organization', 'json'],
    revoke: ['json'],
  }
  if (!allowed[action]) throw new UsageError(`unknown action '${action}'\n\n${HELP}`)
  const misplaced = Object.keys(values).filter((option) => !allowed[action]!.includes(option))
  if (misplaced.length) throw new UsageError(`api-keys ${action} takes no ${misplaced.map((o) => `--${o}`).join(', ')}`)
  if (rest.length > (action === 'revoke' ? 1 : 0)) throw new UsageError(`unexpected argument '${rest.at(-1)}'`)

  if (action === 'create') {
    const workspaceId = uuidArgument(values.workspace, '--workspace', HELP)
    const role = (values.role ?? 'workspace') as ApiKeyRole
    if (!ROLES.includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`)
    const name = values.name?.trim() ?? 'operator key'
    if (!name) throw new UsageError('--name must not be empty')
    const created = await asOperator(cli, (backend, ctx) =>
      issueApiKeyForWorkspace(ctx, { workspaceId, name, role, callbackUrl: values['callback-url'] ?? null }, { allowedPrivateCidrs: backend.config.webhookAllowedPrivateCidrs }),
    )
    if (values.json) printJson(created)
    else {
      printTable(['id', 'workspace', 'role', 'name', 'callback'], [row(created)])
      process.stdout.write(
        ['', 'Shown once; keep them safe:', `  API key (X-Api-Key header)   ${created.apiKey}`, `  webhook signing secret       ${created.signingSecret}`, ''].join('\n'),
      )
    }
    return 0
  }

  if (action === 'list') {
    const workspaceId = values.workspace === undefined ? undefined : uuidArgument(values.workspace, '--workspace', HELP)
    const organizationId = values.organization === undefined ? undefined : uuidArgument(values.organization, '--organization', HELP)
    const keys = await asOperator(cli, async (backend) => {
      const all: ApiKeyRecord[] = []
      for (let page = 0; ; page++) {
        const { content, totalElements } = await listApiKeys(backend.storage.db, { by: 'operator', organizationId, workspaceId, page, size: 100 })
        all.push(...content)
        if (content.length === 0 || all.length >= totalElements) return all
      }
    })
    if (values.json) printJson(keys)
    else if (keys.length === 0) process.stdout.write('no live API keys\n')
    else printTable(['id', 'workspace', 'role', 'name', 'callback'], keys.map(row))
    return 0
  }

  const apiKeyId = uuidArgument(rest[0], 'the API key id', HELP)
  await asOperator(cli, (_backend, ctx) => revokeApiKey(ctx, apiKeyId))
  if (values.json) printJson({ id: apiKeyId, revoked: true })
  else process.stdout.write(`revoked API key ${apiKeyId}\n`)
  return 0
}

const row = (key: ApiKeyRecord): string[] => [key.id, key.workspaceId, key.role, key.name, key.callbackUrl ?? '-']
