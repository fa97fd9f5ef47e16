import { openBackend } from '../composition.js'
import type { CliContext } from './main.js'
import { printJson } from './operator.js'
import { ExitCode, parseAction, UsageError } from './usage.js'

const HELP = `Usage:
  flowd secrets rewrap [--json]

Workspace secrets are sealed with data keys of their own, each wrapped by a master key: SECRETS_KEY,
or the key generated in DATA_DIR/secrets-key when it is unset.

rewrap  re-wraps with SECRETS_KEY (the new master key) every data key wrapped by
        SECRETS_KEY_PREVIOUS (the old one); the values stay as they are. Rotation: give every
        process both variables and restart it (it then unwraps with either), run this once, then
        remove SECRETS_KEY_PREVIOUS. It may run beside the service on Postgres; stop the service
        first on the embedded database. --json: {"masterKeyId", "rewrapped", "unknown", "broken"}.

Exit codes: 0 done, 1 failed, or keys are left that neither key wraps (each named), 2 usage error.`

export async function secretsCommand(cli: CliContext): Promise<number> {
  const parsed = parseAction(cli.args, { json: { type: 'boolean' } }, HELP)
  if (parsed.exit !== undefined) return parsed.exit
  const { action, values, rest } = parsed
  if (action !== 'rewrap') throw new UsageError(`unknown action '${action}'\n\n${HELP}`)
  if (rest.length) throw new UsageError(`unexpected argument '${rest[0]}'`)
  if (cli.config.secretsKey === undefined || cli.config.secretsKeyPrevious === undefined) {
    throw new UsageError('secrets rewrap needs SECRETS_KEY (the new master key) and SECRETS_KEY_PREVIOUS (the old one)')
  }
  const backend = await openBackend(cli.config, cli.logger)
  try {
    const report = await backend.secrets.rewrap()
    if (values.json) printJson(report)
    else process.stdout.write(`re-wrapped ${report.rewrapped} data keys with master key ${report.masterKeyId}\n`)
    for (const { masterKeyId, keys } of report.unknown) {
      process.stderr.write(`flowd secrets: ${keys} data keys are wrapped by master key ${masterKeyId}, which is neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS\n`)
    }
    for (const keyId of report.broken) process.stderr.write(`flowd secrets: data key ${keyId} does not unwrap with SECRETS_KEY_PREVIOUS, the key its row names\n`)
    return report.unknown.length || report.broken.length ? ExitCode.failed : ExitCode.ok
  } finally {
    await backend.close()
  }
}
