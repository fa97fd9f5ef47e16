import { parseArgs } from 'node:util'
import { dashboardSignInUrl, issueSignInLink, SIGN_IN_LINK_TTL_SECONDS } from '../auth/dashboard-sessions.js'
import { NotFoundError } from '../errors.js'
import { liveApiKeyHash, oldestAdminKeyHash } from '../projections/api-keys.js'
import type { CliContext } from './main.js'
import { asOperator, printJson } from './operator.js'
import { uuidArgument } from './usage.js'

const HELP = `Usage: flowd dashboard-link [--api-key-id ID] [--url URL] [--json]

Prints a one-time link that signs the dashboard in with a live API key, without typing the key: the
oldest organization-admin key by default (the one a single-organization install starts with), or
the key --api-key-id names. The link works once, within ${SIGN_IN_LINK_TTL_SECONDS / 3600} hours.

--url   the service's address as browsers reach it (default http://HOST:PORT from the configuration)
--json  {url, expiresInSeconds}

On the embedded store, stop the service first (\`npm start\` prints a link at every start).

Exit codes: 0 printed, 1 failed (e.g. database unreachable), 2 usage error, 3 no such live key.`

export async function dashboardLinkCommand(cli: CliContext): Promise<number> {
  const { values } = parseArgs({
    args: cli.args,
    strict: true,
    options: { 'api-key-id': { type: 'string' }, url: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  })
  if (values.help) {
    process.stdout.write(`${HELP}\n`)
    return 0
  }
  const apiKeyId = values['api-key-id'] === undefined ? undefined : uuidArgument(values['api-key-id'], '--api-key-id', HELP)
  const host = ['0.0.0.0', '::'].includes(cli.config.host) ? '127.0.0.1' : cli.config.host
  const base = values.url ?? `http://${host.includes(':') ? `[${host}]` : host}:${cli.config.port}`
  const url = await asOperator(cli, async (backend) => {
    const db = backend.storage.db
    const keyHash = apiKeyId ? await liveApiKeyHash(db, apiKeyId) : await oldestAdminKeyHash(db)
    if (!keyHash) throw new NotFoundError(apiKeyId ? `no live API key ${apiKeyId}` : 'no live organization-admin API key')
    return dashboardSignInUrl(base, await issueSignInLink(db, keyHash, new Date()))
  })
  if (values.json) printJson({ url, expiresInSeconds: SIGN_IN_LINK_TTL_SECONDS })
  else process.stdout.write(`Open the dashboard, signed in (works once, for ${SIGN_IN_LINK_TTL_SECONDS / 3600} hours):\n  ${url}\n`)
  return 0
}
