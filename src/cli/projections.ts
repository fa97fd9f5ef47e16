import cliProgress from 'cli-progress'
import { openBackend } from '../composition.js'
import { positionToString } from '../eventstore/port.js'
import { rebuildProjections } from '../projections/rebuild.js'
import { describeHolder, type SwapBlocked } from '../projections/swap-locks.js'
import type { CliContext } from './main.js'
import { parseAction, UsageError } from './usage.js'

/**
 * Read models writing at once by default. A rebuild waits on round trips far more than it works,
 * so a few at once fill the wait; more than this mostly queues on PostgreSQL's cores.
 */
const DEFAULT_PARALLEL = 4

const HELP = `Usage:
  flowd projections status [--json]
  flowd projections rebuild [NAME] [--parallel N]
                                      (all read models when no name is given)

A rebuild replays the log, read once for all of them, into new tables beside the
live ones, which keep serving reads, and swaps each read model's tables in once
they have caught up with it (docs/operations.md, "Rebuilding read models").
--parallel N  read models writing at once, each on its own database connection
              (default ${DEFAULT_PARALLEL}). On the embedded database they write one at
              a time whatever N is: it has one connection.

A swap held up by a transaction on a live table keeps trying, saying which
connection holds it. Exit codes: 0 done, 1 failed, 2 usage error, 4 refused
(another rebuild runs, or the swap would drop objects it cannot make again:
each is named).`

export async function projectionsCommand({ config, logger, args }: CliContext): Promise<number> {
  const parsed = parseAction(args, { json: { type: 'boolean' }, parallel: { type: 'string' } }, HELP)
  if (parsed.exit !== undefined) return parsed.exit
  const { action, values } = parsed
  const [name] = parsed.rest
  if (action !== 'status' && action !== 'rebuild') throw new UsageError(`unknown action '${action}'\n\n${HELP}`)
  const parallel = values.parallel === undefined ? DEFAULT_PARALLEL : Number(values.parallel)
  if (!Number.isInteger(parallel) || parallel < 1) throw new UsageError(`--parallel must be a whole number of at least 1, not '${values.parallel}'`)

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

    // Bars redraw on stderr; while they do, a line written to the same terminal on stdout would
    // tear them, so it goes through the bars' own log there. Piped, stdout gets each line as it ends.
    const bars = new cliProgress.MultiBar(
      // The counts are the bar's payload: a bar needs a total of at least 1, a read model may have no events.
      { format: '{name} [{bar}] {done}/{events} events | {rate} events/s', stream: process.stderr, hideCursor: true },
      cliProgress.Presets.shades_classic,
    )
    const sharesTerminal = process.stdout.isTTY && process.stderr.isTTY
    const say = (line: string) => {
      if (sharesTerminal) bars.log(line)
      else process.stdout.write(line)
    }
    const blockedSwap = blockedSwapReporter((blocked) => {
      const holders = blocked.holders.map(describeHolder)
      logger.warn(
        { projection: blocked.projection, attempts: blocked.attempts, waitingSince: blocked.waitingSince.toISOString(), holders: blocked.holders },
        'the swap of a rebuilt read model waits for connections holding its live tables; it keeps trying, its work kept',
      )
      say(`${blocked.projection}: swap waiting since ${blocked.waitingSince.toISOString()} for ${holders.length ? holders.join('; ') : 'a lock held a moment'}\n`)
    })
    const started = new Map<string, number>()
    const barOf = new Map(chosen.map((p) => [p.name, bars.create(1, 0, { name: p.name.padEnd(20), done: 0, events: '?', rate: 0 })]))
    // The payload given to update replaces the one given at create: every key goes each time.
    const show = (projection: string, done: number, events: number, rate: number) => {
      const bar = barOf.get(projection)!
      bar.setTotal(Math.max(events, done, 1))
      bar.update(events === 0 ? 1 : done, { name: projection.padEnd(20), done, events, rate })
    }
    try {
      await rebuildProjections(backend.storage, backend.store, chosen, {
        concurrency: backend.embedded ? 1 : parallel,
        leases: backend.leases,
        onProgress: ({ projection, done, total }) => {
          if (!started.has(projection)) started.set(projection, Date.now())
          const seconds = Math.max((Date.now() - started.get(projection)!) / 1000, 0.001)
          show(projection, done, total ?? done, Math.round(done / seconds))
        },
        onRebuilt: (projection, events, seconds) => {
          show(projection, events, events, Math.round(events / Math.max(seconds, 0.001)))
          say(`${projection}: rebuilt from ${events} events in ${seconds.toFixed(2)} s\n`)
        },
        onSwapBlocked: blockedSwap,
      })
    } finally {
      // The bars' log is written on their next redraw, and stop() does not redraw first.
      if (sharesTerminal) bars.update()
      bars.stop()
    }
    return 0
  } finally {
    await backend.close()
  }
}

/** Tells of a waiting swap when the connections in its way change, and every BLOCKED_REPORT_MS while they do not. */
const BLOCKED_REPORT_MS = 10_000

function blockedSwapReporter(report: (blocked: SwapBlocked) => void): (blocked: SwapBlocked) => void {
  const last = new Map<string, { holders: string; at: number }>()
  return (blocked) => {
    const holders = blocked.holders.map((holder) => holder.pid).join(',')
    const before = last.get(blocked.projection)
    if (before && before.holders === holders && Date.now() - before.at < BLOCKED_REPORT_MS) return
    last.set(blocked.projection, { holders, at: Date.now() })
    report(blocked)
  }
}
