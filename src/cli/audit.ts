import { createWriteStream } from 'node:fs'
import { rename, rm } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import cliProgress from 'cli-progress'
import { workspaceExportLines } from '../audit/export.js'
import { formatDiff } from '../audit/json-diff.js'
import { verifySession, type Divergence } from '../audit/verify.js'
import { openBackend } from '../composition.js'
import { sessionStream, type SessionEvent } from '../domain/session.js'
import { workspaceStream } from '../domain/workspace.js'
import { FlowVersions } from '../engine/flow-versions.js'
import { runTurnOrCall } from '../engine/interpreter.js'
import { START, type EventStore } from '../eventstore/port.js'
import { NotFoundError } from '../errors.js'
import type { CliContext } from './main.js'
import { ExitCode, parseAction, UsageError, uuidArgument } from './usage.js'

const HELP = `Usage:
  flowd audit verify [--session ID | --since DATE] [--json]
  flowd audit export --workspace ID --out FILE.ndjson [--json]

verify  re-runs the interpreter over each session's recorded inputs (sessions started at or after
        DATE, one session, or all) with its recorded flow version and compares every turn with
        the recorded TurnCompleted. Exits ${ExitCode.diverged} when a turn differs and shows the first difference.
export  writes every event of the workspace, in the log's order, one JSON envelope per line, then
        a line {"checksum":"sha256:…","events":N} over the bytes of the lines before it.
        Check it: head -n -1 FILE | sha256sum  (the same hex as in the last line).`

const progressBar = (label: string) =>
  new cliProgress.SingleBar({ format: `${label} [{bar}] {value}/{total}`, stream: process.stderr, hideCursor: true }, cliProgress.Presets.shades_classic)

const parseSince = (value: string): Date => {
  const since = new Date(value)
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(since.getTime())) throw new UsageError(`--since must be a date (2026-01-31) or an ISO 8601 time, got '${value}'`)
  return since
}

/** Ids of the sessions started at or after `since`, in the log's order: one pass over the session streams, keeping ids only. */
async function sessionsStartedSince(store: EventStore, since: Date | undefined): Promise<string[]> {
  const ids: string[] = []
  for (let from = START; ; ) {
    const page = await store.readAll({ from, limit: 1000, streamPrefixes: ['session-'] })
    if (page.length === 0) return ids
    for (const recorded of page) {
      const event = { type: recorded.type, data: recorded.data } as SessionEvent
      if (event.type === 'SessionStarted' && (!since || Date.parse(event.data.startedAt) >= since.getTime())) ids.push(event.data.sessionId)
    }
    from = page[page.length - 1]!.position
  }
}

async function verify({ config, logger }: CliContext, options: { session?: string; since?: string; json?: boolean }): Promise<number> {
  if (options.session !== undefined && options.since !== undefined) throw new UsageError(`--session and --since cannot be combined\n\n${HELP}`)
  const sessionId = options.session === undefined ? undefined : uuidArgument(options.session, '--session', HELP)
  const since = options.since === undefined ? undefined : parseSince(options.since)
  const backend = await openBackend(config, logger)
  try {
    const { store } = backend
    const ids = sessionId ? [sessionId] : await sessionsStartedSince(store, since)
    const flows = new FlowVersions(store)
    const bar = progressBar('sessions')
    bar.start(ids.length, 0)
    let turns = 0
    let divergentSessions = 0
    let divergentTurns = 0
    let first: Divergence | undefined
    for (const id of ids) {
      const events = await store.readStream(sessionStream(id))
      if (events.length === 0) throw new NotFoundError(`session ${id} not found`)
      const verdict = await verifySession(id, events, (session) => flows.ofSession(session), runTurnOrCall)
      turns += verdict.turns
      if (verdict.divergences.length > 0) {
        divergentSessions++
        divergentTurns += verdict.divergences.length
        first ??= verdict.divergences[0]
      }
      bar.increment()
    }
    bar.stop()
    const summary = { sessions: ids.length, turns, divergentSessions, divergentTurns }
    if (options.json) {
      process.stdout.write(`${JSON.stringify({ ...summary, firstDivergence: first ?? null })}\n`)
    } else if (!first) {
      process.stdout.write(`verified ${ids.length} session(s), ${turns} turn(s): every turn matches its record\n`)
    } else {
      process.stdout.write(
        [
          `${divergentSessions} of ${ids.length} session(s) diverge (${divergentTurns} of ${turns} turn(s))`,
          `first divergence: session ${first.sessionId}, event ${first.eventId} (revision ${first.revision}), the turn answering message ${first.messageId}`,
          formatDiff(first.differences, { left: 'recorded', right: 'replayed' }),
          '',
        ].join('\n'),
      )
    }
    return first ? ExitCode.diverged : ExitCode.ok
  } finally {
    await backend.close()
  }
}

async function exportWorkspace({ config, logger }: CliContext, options: { workspace?: string; out?: string; json?: boolean }): Promise<number> {
  const workspaceId = uuidArgument(options.workspace, '--workspace', HELP)
  if (!options.out) throw new UsageError(`--out is required\n\n${HELP}`)
  const out = options.out
  const backend = await openBackend(config, logger)
  try {
    const { store } = backend
    if ((await store.readStream(workspaceStream(workspaceId))).length === 0) throw new NotFoundError(`workspace ${workspaceId} not found`)
    const bar = progressBar('events')
    bar.start((await store.count()) ?? 0, 0)
    let last = ''
    const lines = workspaceExportLines(store, workspaceId, {
      onProgress: (progress) => {
        bar.setTotal(Math.max(bar.getTotal(), progress.scanned))
        bar.update(progress.scanned)
      },
    })
    const remembered = async function* () {
      for await (const line of lines) yield (last = line)
    }
    // Written beside the target and renamed at the end: a file at `out` is always a whole export.
    const partial = `${out}.partial`
    try {
      await pipeline(Readable.from(remembered()), createWriteStream(partial))
      await rename(partial, out)
    } catch (error) {
      await rm(partial, { force: true })
      throw error
    } finally {
      bar.stop()
    }
    const { checksum, events } = JSON.parse(last) as { checksum: string; events: number }
    if (options.json) process.stdout.write(`${JSON.stringify({ file: out, events, checksum })}\n`)
    else process.stdout.write(`exported ${events} event(s) of workspace ${workspaceId} to ${out} (${checksum})\n`)
    return 0
  } finally {
    await backend.close()
  }
}

export async function auditCommand(ctx: CliContext): Promise<number> {
  const parsed = parseAction(
    ctx.args,
    {
      session: { type: 'string' },
      since: { type: 'string' },
      workspace: { type: 'string' },
      out: { type: 'string' },
      json: { type: 'boolean' },
    },
    HELP,
  )
  if (parsed.exit !== undefined) return parsed.exit
  const { action, values, rest } = parsed
  if (rest.length > 0) throw new UsageError(`unexpected argument '${rest[0]}'\n\n${HELP}`)
  const stray = (names: (keyof typeof values)[]) => names.find((name) => values[name] !== undefined)
  if (action === 'verify') {
    const wrong = stray(['workspace', 'out'])
    if (wrong) throw new UsageError(`--${wrong} is an option of 'audit export'\n\n${HELP}`)
    return verify(ctx, values)
  }
  if (action === 'export') {
    const wrong = stray(['session', 'since'])
    if (wrong) throw new UsageError(`--${wrong} is an option of 'audit verify'\n\n${HELP}`)
    return exportWorkspace(ctx, values)
  }
  throw new UsageError(`unknown action '${action}'\n\n${HELP}`)
}
