import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { XMLParser, XMLValidator } from 'fast-xml-parser'
import t from 'tap'
import { openTestApp } from '../helpers/app.js'
import { runCli, tempDir } from '../helpers/cli.js'
import { echoFlow } from '../helpers/flows.js'
import { oneBackend } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// `flowd flows test` as a customer's CI runs it: the built CLI against a listening service, with an
// API key in the environment; its exit code and its JUnit report are what the CI reads.

t.test('flowd flows test runs the tests on the service and writes a JUnit report', async (t) => {
  const { app, admin } = await openTestApp(t, oneBackend)
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const call = async (method: 'POST' | 'PUT', url: string, payload: unknown) => {
    const response = await app.inject({ method, url, headers: { 'x-api-key': admin.apiKey }, payload: payload as object })
    if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
    return response
  }
  await call('POST', '/v1/variables', { name: 'said', type: 'string' })
  const flowId = (await call('POST', '/v1/flows', { name: 'Echo & co', definition: echoFlow })).json().id as string
  const say = (body: string) => ({ type: 'text', text: { body } })
  await call('POST', `/v1/flows/${flowId}/tests`, { name: 'Greets', start: { messages: [{ text: { equals: 'Say something' } }] }, steps: [] })
  await call('POST', `/v1/flows/${flowId}/tests`, { name: 'Echoes <hi>', steps: [{ send: say('hi'), expect: { messages: [{ text: { equals: 'You said hi' } }, {}] } }] })
  const dir = tempDir(t)
  const env = { FLOWD_API_KEY: admin.apiKey }

  const passing = await runCli(['flows', 'test', flowId, '--url', base, '--junit', join(dir, 'ok.xml')], env)
  t.equal(passing.code, 0, passing.stderr)
  t.match(passing.stdout, /Echo & co \(draft\): 2 of 2 tests passed/)

  await call('PUT', `/v1/flows/${flowId}/definition`, { ...echoFlow, nodes: echoFlow.nodes.map((node) => (node.id === 'say' ? { ...node, data: { messages: [{ type: 'text', text: { body: 'You typed {{said}}' } }] } } : node)) })
  const report = join(dir, 'report.xml')
  const failing = await runCli(['flows', 'test', flowId, '--url', base, '--junit', report], env)
  t.equal(failing.code, 1, 'a failing test exits 1')
  t.match(failing.stdout, /1 of 2 tests passed/)
  t.match(failing.stdout, /FAIL Echoes <hi>\n\s+step 1: messages\[0\]\.text: expected "You said hi", got "You typed hi"/)

  const xml = readFileSync(report, 'utf8')
  t.equal(XMLValidator.validate(xml), true, 'well-formed XML')
  const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml)
  t.match(parsed.testsuites, { name: 'flowd', tests: '2', failures: '1', testsuite: { name: 'Echo & co (draft)', tests: '2', failures: '1' } })
  const cases = parsed.testsuites.testsuite.testcase as { name: string; failure?: { message: string; '#text': string } }[]
  t.same(cases.map((testCase) => [testCase.name, testCase.failure === undefined]), [['Echoes <hi>', false], ['Greets', true]])
  t.match(cases[0]!.failure!.message, /^step 1: messages\[0\]\.text: expected/, 'the failure names the step')

  t.equal((await runCli(['flows', 'test', flowId, '--url', base, '--version', '1'], env)).code, 0, 'the published version still passes')
  const json = await runCli(['flows', 'test', flowId, '--url', base, '--json'], env)
  t.match(JSON.parse(json.stdout), { flowId, version: null, passed: false })

  t.equal((await runCli(['flows', 'test', flowId, '--url', base], {})).code, 2, 'without FLOWD_API_KEY')
  t.equal((await runCli(['flows', 'test', 'not-a-uuid', '--url', base], env)).code, 2, 'a malformed id')
  t.equal((await runCli(['flows', 'test', '00000000-0000-4000-8000-000000000000', '--url', base], env)).code, 3, 'an unknown flow')
  t.equal((await runCli(['flows', 'test', flowId, '--url', base, '--version', '7'], env)).code, 2, 'a version the flow does not have')
  t.equal((await runCli(['flows', 'test', flowId, '--url', 'http://127.0.0.1:9'], env)).code, 1, 'a service that cannot be reached')
})

t.test('flowd flows replay prints the sessions the draft would change, and exits 5 when there are some', async (t) => {
  const { app, admin } = await openTestApp(t, oneBackend, { engine: true })
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) => {
    const response = await app.inject({ method, url, headers: { 'x-api-key': admin.apiKey }, ...(payload === undefined ? {} : { payload: payload as object }) })
    if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
    return response.json()
  }
  await call('POST', '/v1/variables', { name: 'said', type: 'string' })
  const flowId = (await call('POST', '/v1/flows', { name: 'Echo', definition: echoFlow })).id as string
  for (const words of ['hi', 'hello', 'bye']) {
    const { sessionId } = await call('POST', `/v1/sessions/flows/${flowId}/create`)
    await call('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: words } })
    await eventually(`the answer to ${words}`, async () => ((await call('GET', `/v1/sessions/${sessionId}`)).pendingMessages === 0 ? true : undefined))
  }
  await eventually('the sessions in the analytics', async () => ((await call('GET', `/v1/flows/${flowId}/analytics/versions`)).versions[0]?.sessions.total === 3 ? true : undefined))
  const env = { FLOWD_API_KEY: admin.apiKey }

  await call('PUT', `/v1/flows/${flowId}/definition`, { ...echoFlow, nodes: echoFlow.nodes.map((node) => (node.id === 'say' ? { ...node, data: { messages: [{ type: 'text', text: { body: 'You typed {{said}}' } }] } } : node)) })
  const changed = await runCli(['flows', 'replay', flowId, '--url', base], env)
  t.equal(changed.code, 5, `the draft changes two of them: ${changed.stderr}`)
  t.match(changed.stdout, /^Echo \(draft against version 1\): 2 of 3 sessions would change\n/)
  t.match(changed.stdout, /turn 1 \("hi"\)\n\s+recorded: "You said hi" "Say something"\n\s+draft:\s+"You typed hi" "Say something"/)
  t.notMatch(changed.stdout, /\("bye"\)/, 'the session that said bye goes the same way')
  const json = await runCli(['flows', 'replay', flowId, '--url', base, '--json', '--last', '1'], env)
  t.match(JSON.parse(json.stdout), { status: 'finished', total: 1, selection: { last: 1 } }, '--last chooses the newest sessions')

  await call('PUT', `/v1/flows/${flowId}/definition`, echoFlow)
  const same = await runCli(['flows', 'replay', flowId, '--url', base, '--status', 'running'], env)
  t.equal(same.code, 0, 'a draft like the version changes none')
  t.match(same.stdout, /0 of 2 sessions would change/, 'of the two still running')
  t.equal((await runCli(['flows', 'replay', flowId, '--url', base, '--status', 'asleep'], env)).code, 2, 'an unknown status')
  t.equal((await runCli(['flows', 'replay', flowId, '--url', base, '--last', '5001'], env)).code, 2, 'more sessions than a replay takes')
})
