import { writeFileSync } from 'node:fs'
import type { TestRun } from '../engine/conversation-tests.js'
import { NotFoundError } from '../errors.js'
import { junitReport, runSummary } from './junit.js'
import type { CliContext } from './main.js'
import { printJson } from './operator.js'
import { ExitCode, parseAction, positiveIntegerArgument, UsageError, uuidArgument } from './usage.js'

const HELP = `Usage:
  flowd flows test FLOW_ID [--version N] [--test TEST_ID]... [--junit FILE] [--url URL] [--json]

Runs a flow's conversation tests on the service (POST /v1/flows/{id}/test-runs), for a CI: against
the draft, or the published --version N; every test, or those --test names. It reaches the service
as any client does, with the API key in FLOWD_API_KEY, so it runs wherever the API is reachable.

--junit FILE  also write the results as a JUnit XML report (one test case per conversation test)
--url URL     the service (default FLOWD_URL, else http://HOST:PORT from the configuration)
--json        the run as the API answers it

Exit codes: 0 every test passed, 1 a test failed (or the service could not be reached), 2 usage
error (FLOWD_API_KEY unset, a bad argument, or the service refused the request), 3 no such flow or test.`

export async function flowsCommand(cli: CliContext): Promise<number> {
  const parsed = parseAction(cli.args, { version: { type: 'string' }, test: { type: 'string', multiple: true }, junit: { type: 'string' }, url: { type: 'string' }, json: { type: 'boolean' } }, HELP)
  if (parsed.exit !== undefined) return parsed.exit
  if (parsed.action !== 'test') throw new UsageError(`unknown action '${parsed.action}'\n\n${HELP}`)
  const [flowArgument, ...extra] = parsed.rest
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'\n\n${HELP}`)
  const flowId = uuidArgument(flowArgument, 'FLOW_ID', HELP)
  const version = parsed.values.version === undefined ? undefined : positiveIntegerArgument(parsed.values.version, '--version', 2 ** 31 - 1)
  const testIds = (parsed.values.test ?? []).map((id) => uuidArgument(id, '--test', HELP))
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
  const run = (await call('POST', `/v1/flows/${flowId}/test-runs`, { ...(version !== undefined && { version }), ...(testIds.length > 0 && { testIds }) })) as TestRun
  if (parsed.values.junit !== undefined) writeFileSync(parsed.values.junit, junitReport(run, flow.name))
  if (parsed.values.json) printJson(run)
  else process.stdout.write(runSummary(run, flow.name))
  return run.passed ? ExitCode.ok : ExitCode.failed
}
