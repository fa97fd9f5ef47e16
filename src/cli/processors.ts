import { ENGINE_PROCESSOR } from '../engine/worker.js'
import { describeFailure } from '../processors/failures.js'
import { listParked, type ParkedStream } from '../processors/parked-streams.js'
import { retryParkedStream } from '../projections/checkpoints.js'
import { openBackend, type Backend } from '../composition.js'
import { positionToString } from '../eventstore/port.js'
import type { CliContext } from './main.js'
import { asOperator, printJson, printTable } from './operator.js'
import { ExitCode, parseAction, UsageError } from './usage.js'

const HELP = `Usage:
  flowd processors parked [--json]
  flowd processors retry STREAM [--processor NAME] [--json]

Everything that reads the event log (the engine, each read model, the webhook outbox) is a
processor. A processor that fails again and again on one event parks that event's stream: its
events from there on wait, and every other stream goes on.

parked   the parked streams, oldest first: processor, stream, the event it stopped at, when, how
         many failures, and why.
retry    replays a parked stream once its cause is fixed, for every processor that parked it (or
         only --processor NAME): the waiting events are applied and the stream is taken off the
         list. Failing again, it stays parked, with the new reason.

Exit codes: 0 done, 1 failed (a retry failed again, or the database is unreachable), 2 usage
error, 3 no such parked stream.`

export async function processorsCommand(cli: CliContext): Promise<number> {
  const parsed = parseAction(cli.args, { processor: { type: 'string' }, json: { type: 'boolean' } }, HELP)
  if (parsed.exit !== undefined) return parsed.exit
  const { action, values, rest } = parsed
  if (action === 'parked') {
    if (rest.length) throw new UsageError(`unexpected argument '${rest[0]}'`)
    if (values.processor !== undefined) throw new UsageError('processors parked takes no --processor')
    const backend = await openBackend(cli.config, cli.logger)
    try {
      printParked(await listParked(backend.storage.db), values.json === true)
    } finally {
      await backend.close()
    }
    return ExitCode.ok
  }
  if (action !== 'retry') throw new UsageError(`unknown action '${action}'\n\n${HELP}`)
  const [stream, extra] = rest
  if (!stream) throw new UsageError(`processors retry needs the STREAM to replay\n\n${HELP}`)
  if (extra !== undefined) throw new UsageError(`unexpected argument '${extra}'`)
  return asOperator(cli, async (backend) => {
    const parked = (await listParked(backend.storage.db)).filter((p) => p.stream === stream && (values.processor === undefined || p.processor === values.processor))
    if (parked.length === 0) {
      process.stderr.write(`flowd: no processor has ${stream} parked${values.processor ? ` (asked: ${values.processor})` : ''}\n`)
      return ExitCode.notFound
    }
    const outcomes = []
    for (const { processor } of parked) outcomes.push({ processor, stream, ...(await retry(backend, processor, stream)) })
    if (values.json) printJson(outcomes)
    else for (const o of outcomes) process.stdout.write(o.retried ? `${o.processor}: ${stream} replayed and no longer parked\n` : `${o.processor}: ${stream} is still parked: ${o.reason}\n`)
    return outcomes.every((o) => o.retried) ? ExitCode.ok : ExitCode.failed
  })
}

/** Replays `stream` for one processor; afterwards it is either off the list or parked again, with why. */
async function retry(backend: Backend, processor: string, stream: string): Promise<{ retried: true } | { retried: false; reason: string }> {
  try {
    if (processor === ENGINE_PROCESSOR) await backend.conversations.worker.retryParked(stream)
    else {
      const projection = backend.readModels.projections.find((p) => p.name === processor)
      if (!projection) return { retried: false, reason: `no processor named ${processor} in this version of the service` }
      await retryParkedStream(backend.storage.projectorDb, backend.store, projection, stream)
    }
  } catch (error) {
    return { retried: false, reason: describeFailure(error) }
  }
  const again = (await listParked(backend.storage.db, processor)).find((p) => p.stream === stream)
  return again ? { retried: false, reason: again.reason } : { retried: true }
}

function printParked(parked: ParkedStream[], json: boolean): void {
  if (json) {
    printJson(parked.map((p) => ({ ...p, position: positionToString(p.position), parkedAt: p.parkedAt.toISOString() })))
    return
  }
  if (parked.length === 0) {
    process.stdout.write('no parked streams\n')
    return
  }
  printTable(
    ['processor', 'stream', 'event', 'type', 'parked at', 'failures', 'reason'],
    parked.map((p) => [p.processor, p.stream, p.eventId, p.eventType, p.parkedAt.toISOString(), String(p.failures), p.reason]),
  )
}
