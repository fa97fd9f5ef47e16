import { MAX_ENGINE_PARTITIONS } from '../config.js'
import { openBackend } from '../composition.js'
import { repartition } from '../engine/partitions.js'
import { START, comparePositions, positionToString } from '../eventstore/port.js'
import type { CliContext } from './main.js'
import { printJson } from './operator.js'
import { ExitCode, parseAction, positiveIntegerArgument, UsageError } from './usage.js'

const HELP = `Usage:
  flowd engine repartition --partitions N [--json]

The engine splits the sessions into partitions (ENGINE_PARTITIONS), each with its checkpoint. The
database records the count the checkpoints were made with, and an engine started with another
count refuses to start.

repartition  changes the recorded count to N (1 to ${MAX_ENGINE_PARTITIONS}): every new partition goes on
             from the earliest checkpoint of the old ones, so no session loses a turn, and the
             turns after it found done are not run again. Stop every engine process first, then
             start them with ENGINE_PARTITIONS=N. --json: {"from", "to", "position"}.

Exit codes: 0 done, 1 failed (e.g. database unreachable), 2 usage error, 4 refused: an engine
process holds partitions of the sessions.`

export async function engineCommand(cli: CliContext): Promise<number> {
  const parsed = parseAction(cli.args, { partitions: { type: 'string' }, json: { type: 'boolean' } }, HELP)
  if (parsed.exit !== undefined) return parsed.exit
  const { action, values, rest } = parsed
  if (action !== 'repartition') throw new UsageError(`unknown action '${action}'\n\n${HELP}`)
  if (rest.length) throw new UsageError(`unexpected argument '${rest[0]}'`)
  if (values.partitions === undefined) throw new UsageError(`engine repartition needs --partitions N\n\n${HELP}`)
  const to = positiveIntegerArgument(String(values.partitions), '--partitions', MAX_ENGINE_PARTITIONS)
  const backend = await openBackend(cli.config, cli.logger)
  try {
    const done = await repartition(backend.storage.db, to)
    if (values.json) printJson({ ...done, position: positionToString(done.position) })
    else {
      const from = comparePositions(done.position, START) === 0 ? 'the start of the log' : positionToString(done.position)
      process.stdout.write(`engine partitions: ${done.from} -> ${done.to}; every partition goes on from ${from}. Start the engines with ENGINE_PARTITIONS=${done.to}.\n`)
    }
    return ExitCode.ok
  } finally {
    await backend.close()
  }
}
