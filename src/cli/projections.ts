import { parseArgs } from 'node:util'
import cliProgress from 'cli-progress'
import { openBackend } from '../composition.js'
import { positionToString } from '../eventstore/port.js'
import { rebuildProjection } from '../projections/runtime.js'
import type { CliContext } from './main.js'
import { UsageError } from './usage.js'

const HELP = `Usage:
  flowd projections status [--json]
  flowd projections rebuild [NAME]    (all read models when no name is given)

A rebuild empties a read model and replays every event it reads from the start.`

export async function projectionsCommand({ config, logger, args }: CliContext): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  })
  const [action, name] = positionals
  if (values.help || !action) {
    process.stdout.write(`${HELP}\n`)
    return values.help ? 0 : 2
  }
  if (action !== 'status' && action !== 'rebuild') throw new UsageError(`unknown action '${action}'\n\n${HELP}`)

  const backend = await openBackend(config, logger)
  try {
    const known = backend.readModels.projections
    const chosen = name ? known.filter((p) => p.name === name) : known
    if (chosen.length === 0) throw new UsageError(`no read model '${name}'; known: ${known.map((p) => p.name).join(', ')}`)

    if (action === 'status') {
      await backend.readModels.start()
      const status = (await backend.readModels.status(0)).filter((s) => chosen.some((p) => p.name === s.name))
      if (values.json) {
        process.stdout.write(`${JSON.stringify(status.map((s) => ({ ...s, position: positionToString(s.position) })))}\n`)
      } else {
        for (const s of status) process.stdout.write(`${s.name.padEnd(20)} ${positionToString(s.position).padEnd(24)} ${s.caughtUp ? 'caught up' : 'behind'}\n`)
      }
      return 0
    }

    for (const projection of chosen) {
      const bar = new cliProgress.SingleBar(
        { format: `${projection.name.padEnd(16)} [{bar}] {value}/{total} events | {rate} events/s`, stream: process.stderr, hideCursor: true },
        cliProgress.Presets.shades_classic,
      )
      const started = Date.now()
      bar.start(1, 0, { rate: 0 })
      const done = await rebuildProjection(backend.storage.projectorDb, backend.store, projection, ({ done, total }) => {
        const seconds = Math.max((Date.now() - started) / 1000, 0.001)
        bar.setTotal(Math.max(total ?? done, done, 1))
        bar.update(done, { rate: Math.round(done / seconds) })
      })
      bar.stop()
      process.stdout.write(`${projection.name}: rebuilt from ${done} events\n`)
    }
    return 0
  } finally {
    await backend.close()
  }
}
