import { writeFileSync } from 'node:fs'
import { setTimeout } from 'node:timers/promises'
import { REPLAY_LIMITS } from '../domain/replay.js'
import type { TestRun } from '../engine/conversation-tests.js'
import { NotFoundError } from '../errors.js'
import { junitReport, runSummary } from './junit.js'
import type { DifferingSession, MissingTurn, TurnSide, TurnTrigger } from '../domain/replay.js'
import type { CliContext } from './main.js'
import { printJson } from './operator.js'
import { ExitCode, parseAction, positiveIntegerArgument, UsageError, uuidArgument } from './usage.js'

const HELP = `Usage:
  flowd flows test FLOW_ID [--version N] [--test TEST_ID]... [--junit FILE] [--url URL] [--json]
  flowd flows replay FLOW_ID [--version N] [--last N] [--status STATUS] [--url URL] [--json]

test    runs a flow's conversation tests on the service (POST /v1/flows/{id}/test-runs), for a CI:
        against the draft, or the published --version N; every test, or those --test names.
replay  plays real sessions of the published --version N (the live one without it) again against
        the draft (POST /v1/flows/{id}/replays), waits for the replay and prints the sessions whose
        turns the draft would change, each with its first differing turn: the newest --last N
        sessions (200), of --status running|completed|timeout|error when given.

Both reach the service like any other client, with the API key in FLOWD_API_KEY, so they run wherever
the API is reachable.

--junit FILE  test: also write the results as a JUnit XML report (one test case per conversation test)
--url URL     the service (default FLOWD_URL, else http://HOST:PORT from the configuration)
--json        the run or the replay as the API answers it

Exit codes: 0 every test passed, or no replayed session would change; 1 a test failed (or the
service could not be reached); 2 usage error (FLOWD_API_KEY unset, a bad argument, or the service
refused the request); 3 no such flow or test; 5 the draft would change a replayed session.`

const REPLAY_STATUSES = ['running', 'completed', 'timeout', 'error']
/** How often a replay's progress is read while it runs. */
const REPLAY_POLL_MS = 500

export async function flowsCommand(cli: CliContext): Promise<number> {
  const parsed = parseAction(
    cli.args,
    { version: { type: 'string' }, test: { type: 'string', multiple: true }, junit: { type: 'string' }, last: { type: 'string' }, status: { type: 'string' }, url: { type: 'string' }, json: { type: 'boolean' } },
    HELP,
  )
  if (parsed.exit !== undefined) return parsed.exit
  if (parsed.action !== 'test' && parsed.action !== 'replay') throw new UsageError(`unknown action '${parsed.action}'\n\n${HELP}`)
  const [flowArgument, ...extra] = parsed.rest
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'\n\n${HELP}`)
  const flowId = uuidArgument(flowArgument, 'FLOW_ID', HELP)
  const version = parsed.values.version === undefined ? undefined : positiveIntegerArgument(parsed.values.version, '--version', 2 ** 31 - 1)
  const testIds = (parsed.values.test ?? []).map((id) => uuidArgument(id, '--test', HELP))
  const last = parsed.values.last === undefined ? undefined : positiveIntegerArgument(parsed.values.last, '--last', REPLAY_LIMITS.sessions)
  const status = parsed.values.status
  if (status !== undefined && !REPLAY_STATUSES.includes(status)) throw new UsageError(`--status must be one of ${REPLAY_STATUSES.join(', ')}, got '${status}'`)
  const apiKey = process.env.FLOWD_API_KEY
  if (!apiKey) throw new UsageError('FLOWD_API_KEY must hold an API key of the flow\'s workspace')
  const base = (parsed.values.url ?? process.env.FLOWD_URL ?? `http://${['0.0.0.0', '::'].includes(cli.config.host) ? '127.0.0.1' : cli.config.host}:${cli.config.port}`).replace(/\/+$/, '')

  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { 'x-api-key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const answer = (await response.json().catch(() => ({}))) as { message?: string }
    if (response.status === 404) throw new NotFoundError(answer.message ?? `${path} not found`)
    if (response.status >= 400 && response.status < 500) throw new UsageError(`the service refused ${method} ${path} (${response.status}): ${answer.message ?? ''}`)
    if (!response.ok) throw new Error(`the service answered ${method} ${path} with ${response.status}: ${answer.message ?? ''}`)
    return answer
  }
  const flow = (await call('GET', `/v1/flows/${flowId}`)) as { name: string }
  if (parsed.action === 'replay') {
    const sessions = { ...(last !== undefined && { last }), ...(status !== undefined && { status }) }
    const { replayId } = (await call('POST', `/v1/flows/${flowId}/replays`, { ...(version !== undefined && { version }), sessions })) as { replayId: string }
    let replay = (await call('GET', `/v1/flows/${flowId}/replays/${replayId}`)) as ReplayReport
    while (replay.status !== 'finished') {
      await setTimeout(REPLAY_POLL_MS)
      replay = (await call('GET', `/v1/flows/${flowId}/replays/${replayId}`)) as ReplayReport
    }
    if (parsed.values.json) printJson(replay)
    else process.stdout.write(replaySummary(replay, flow.name))
    return replay.differingCount === 0 ? ExitCode.ok : ExitCode.diverged
  }
  const run = (await call('POST', `/v1/flows/${flowId}/test-runs`, { ...(version !== undefined && { version }), ...(testIds.length > 0 && { testIds }) })) as TestRun
  if (parsed.values.junit !== undefined) writeFileSync(parsed.values.junit, junitReport(run, flow.name))
  if (parsed.values.json) printJson(run)
  else process.stdout.write(runSummary(run, flow.name))
  return run.passed ? ExitCode.ok : ExitCode.failed
}

/** A finished replay as the API answers it. */
interface ReplayReport {
  status: 'running' | 'finished'
  version: number
  total: number
  differingCount: number
  differing: DifferingSession[]
}

/** Differing sessions the summary shows; `--json` gives every one the replay kept. */
const SESSIONS_SHOWN = 20

const sideText = (side: TurnSide): string => side.said.map((said) => JSON.stringify(said)).join(' ') || `(says nothing; ${side.status})`

const triggerText = (trigger: TurnTrigger): string => (trigger.kind === 'message' ? JSON.stringify(trigger.text) : trigger.kind === 'event' ? `event ${trigger.name}` : trigger.kind)

const missingText = (missing: MissingTurn | undefined): string =>
  missing?.reason === 'calls_outside' ? `(would call outside at ${missing.nodeId}, which a replay does not)` : missing?.reason === 'fails' ? '(the turn fails)' : '(answers nothing)'

/** The replay for a person: how many sessions would change, then each with its first differing turn, recorded beside the draft. */
export function replaySummary(replay: ReplayReport, flowName: string): string {
  const lines = [`${flowName} (draft against version ${replay.version}): ${replay.differingCount} of ${replay.total} sessions would change`]
  for (const differing of replay.differing.slice(0, SESSIONS_SHOWN)) {
    lines.push(`  session ${differing.sessionId}, turn ${differing.turn} (${triggerText(differing.trigger)})`)
    lines.push(`    recorded: ${sideText(differing.recorded)}`)
    lines.push(`    draft:    ${differing.replayed ? sideText(differing.replayed) : missingText(differing.missing)}`)
  }
  if (replay.differingCount > SESSIONS_SHOWN) lines.push(`  … and ${replay.differingCount - SESSIONS_SHOWN} more (--json lists the first ${REPLAY_LIMITS.differingKept})`)
  return `${lines.join('\n')}\n`
}
