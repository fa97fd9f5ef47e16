import { createHash } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { sql } from 'kysely'
import t, { type Test } from 'tap'
import { issueApiKey } from '../../src/commands/api-keys.js'
import { createOrganization, createWorkspace } from '../../src/commands/tenancy.js'
import { loadConfig } from '../../src/config.js'
import { assertionMessage } from '../helpers/assertion-message.js'
import { openTestApp } from '../helpers/app.js'
import { cliStore, cliStoreNames, runCli, runCliInOneProcess, tempDir } from '../helpers/cli.js'
import { startChatCompletionsServer } from '../helpers/chat-completions-server.js'
import { classifyingEchoFlow, echoFlow, plansFlow } from '../helpers/flows.js'
import { eventually } from '../helpers/wait.js'

const longLived = { settings: { sessionTtlSeconds: 600 } }

// The CLI reaches every store through the same port, and the store is not what these check: they
// run on the one commands cost least on (cliStoreNames, test/helpers/cli.ts).
for (const name of cliStoreNames) {
  t.test(`flowd audit on ${name}`, async (t) => {
    const store = await cliStore(t, name)
    const { env } = store
    // The log is written in-process (engine, sweeper, API through inject), then closed: the CLI runs against what it left.
    const written = {} as { main: { workspaceId: string; apiKey: string }; other: { workspaceId: string }; proSession: string; expiring: string; foreign: string; classified: string; model: Awaited<ReturnType<typeof startChatCompletionsServer>> }
    await t.test('a log of several conversations is written', async (t) => {
      const backend = {
        name,
        async open(t: Test) {
          const storage = await store.open()
          t.teardown(() => storage.close())
          return storage
        },
      }
      // A model of the test's own classifies the replies of one flow; it is stopped before the CLI runs.
      const modelKey = 'sk-audit-test'
      const model = await startChatCompletionsServer(modelKey)
      t.teardown(() => model.close())
      written.model = model
      model.answerWith((request) => JSON.stringify({ label: /bye/.test(JSON.stringify(request.body.messages?.at(-1))) ? 'bye' : 'other' }))
      const loopback = '127.0.0.1/32'
      // Sessions of flows without their own timeout expire after 2 s (the expiry session); the others live 10 minutes.
      const { app, admin, ctx } = await openTestApp(t, backend, {
        engine: true,
        calls: { allowedPrivateCidrs: [loopback], caFile: model.caFile },
        config: loadConfig({ SESSION_TTL_SECONDS: '2', WEBHOOK_ALLOWED_PRIVATE_CIDRS: loopback, WEBHOOK_CA_FILE: model.caFile }),
      })
      const { organizationId } = await createOrganization(ctx, { name: 'Globex' })
      const otherWorkspace = await createWorkspace(ctx, { organizationId, name: 'Other' })
      const otherKey = await issueApiKey(ctx, { organizationId, workspaceId: otherWorkspace.workspaceId, name: 'o', role: 'organization-admin', callbackUrl: null })
      const main = { workspaceId: admin.workspaceId, apiKey: admin.apiKey }
      const other = { workspaceId: otherWorkspace.workspaceId, apiKey: otherKey.apiKey }
      const call = async (apiKey: string, method: 'GET' | 'POST' | 'PUT', path: string, payload?: object): Promise<any> => {
        const response = await app.inject({ method, url: path, headers: { 'x-api-key': apiKey }, ...(payload ? { payload } : {}) })
        if (response.statusCode >= 400) throw new Error(`${method} ${path}: ${response.statusCode} ${response.body}`)
        return response.body ? response.json() : undefined
      }
      const settled = (apiKey: string, sessionId: string) =>
        eventually(`session ${sessionId} settled`, async () => {
          const detail = await call(apiKey, 'GET', `/v1/sessions/${sessionId}`)
          return detail.pendingMessages === 0 ? detail : undefined
        })
      const converse = async (apiKey: string, flowId: string, replies: object[], variables: object = {}) => {
        const { sessionId } = await call(apiKey, 'POST', `/v1/sessions/flows/${flowId}/create`, { variables })
        await settled(apiKey, sessionId)
        for (const reply of replies) {
          await call(apiKey, 'POST', `/v1/sessions/${sessionId}/message`, reply)
          await settled(apiKey, sessionId)
        }
        return sessionId as string
      }
      const textReply = (body: string) => ({ type: 'text', text: { body } })

      const key = main.apiKey
      for (const variable of ['said', 'name', 'plan']) await call(key, 'POST', '/v1/variables', { name: variable, type: 'string' })
      await call(other.apiKey, 'POST', '/v1/variables', { name: 'said', type: 'string' })
      const pipeline = await call(key, 'POST', '/v1/kanban/pipelines', { name: 'Leads', stages: [{ name: 'New', color: '#2196F3' }, { name: 'Qualified', color: '#4CAF50' }] })
      await call(key, 'POST', '/v1/sectors', { name: 'Sales' })
      const sector = (await call(key, 'GET', '/v1/sectors')).content[0]
      const plans = await call(key, 'POST', '/v1/flows', {
        name: 'Plans',
        definition: { ...plansFlow({ pipelineId: pipeline.id, stageIds: [pipeline.stages[0].id, pipeline.stages[1].id], sectorId: sector.id }), ...longLived },
      })
      const echo = await call(key, 'POST', '/v1/flows', { name: 'Echo', definition: { ...echoFlow, ...longLived } })
      const quick = await call(key, 'POST', '/v1/flows', { name: 'Quick', definition: echoFlow })
      const otherEcho = await call(other.apiKey, 'POST', '/v1/flows', { name: 'Echo', definition: { ...echoFlow, ...longLived } })
      await call(key, 'PUT', '/v1/secrets/model', { value: modelKey })
      const connection = await app.inject({ method: 'POST', url: '/v1/ai-connections', headers: { 'x-api-key': key }, payload: { name: 'Model', baseUrl: model.baseUrl, apiKeySecret: 'model', model: 'test-model' } })
      if (connection.statusCode !== 201) throw new Error(`no AI connection: ${connection.body}`)
      const classifying = await call(key, 'POST', '/v1/flows', { name: 'Classifying', definition: { ...classifyingEchoFlow(String(connection.headers.location).split('/').pop()!), ...longLived } })

      const pro = { type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: 'pro', title: 'Pro' } } }
      const proSession = await converse(key, plans.id, [pro], { name: 'Ana' })
      await converse(key, plans.id, [textReply('maybe'), textReply('basic')], { name: 'Bo' })
      await converse(key, echo.id, [textReply('hello'), textReply('again'), textReply('bye')])
      // A preview of a draft that differs from the published version: verify must replay it on the draft it recorded.
      await call(key, 'PUT', `/v1/flows/${echo.id}/definition`, JSON.parse(JSON.stringify({ ...echoFlow, ...longLived }).replace('Say something', 'Say it in the draft')))
      const { sessionId: preview } = await call(key, 'POST', `/v1/flows/${echo.id}/preview-sessions`, {})
      t.equal((await settled(key, preview)).flowVersion, 0, 'a preview runs no published version')
      await call(key, 'POST', `/v1/sessions/${preview}/message`, textReply('hi'))
      await settled(key, preview)
      const classified = await converse(key, classifying.id, [textReply('hello'), textReply('bye')])
      t.equal(model.requests.length, 2, 'the model classified both replies')
      const expiring = await converse(key, quick.id, [])
      const foreign = await converse(other.apiKey, otherEcho.id, [textReply('elsewhere')])
      await eventually('the quick session expired', async () => ((await call(key, 'GET', `/v1/sessions/${expiring}`)).status === 'timeout' ? true : undefined))
      Object.assign(written, { main, other, proSession, expiring, foreign, classified })
    })
    const { main, other, proSession, expiring, foreign, classified, model } = written

    await t.test('verify passes on an untampered log of several sessions', async (t) => {
      await model.down()
      const all = await runCli(['audit', 'verify', '--json'], env)
      t.equal(all.code, 0, assertionMessage(all.stderr))
      // Turns: pro 2, basic-after-retry 3, echo 4, preview 2, classified 3, expiring 1, foreign 2.
      t.same(JSON.parse(all.stdout), { sessions: 7, turns: 17, divergentSessions: 0, divergentTurns: 0, firstDivergence: null })
      t.equal(model.requests.length, 2, 'the AI steps were replayed from their recorded answers with the model stopped, asking it nothing')
      const ai = await runCli(['audit', 'verify', '--session', classified, '--json'], env)
      t.match(JSON.parse(ai.stdout), { sessions: 1, turns: 3, divergentSessions: 0 }, 'the session whose replies the model classified')
      const one = await runCli(['audit', 'verify', '--session', proSession, '--json'], env)
      t.match(JSON.parse(one.stdout), { sessions: 1, turns: 2, divergentSessions: 0 })
      const none = await runCli(['audit', 'verify', '--since', '2999-01-01', '--json'], env)
      t.match(JSON.parse(none.stdout), { sessions: 0, turns: 0 })
    })

    await t.test('verify and export refuse bad arguments with 2; verify names an unknown session', async (t) => {
      // Refused before the store is opened (one nothing listens on would fail them with 1), and so in one process.
      const unreachable = { DATABASE_URL: 'postgres://flowd@127.0.0.1:1/unreachable' }
      const badArguments = [
        ['verify', '--since', 'yesterday'],
        ['verify', '--session', 'nope'],
        ['verify', '--session', proSession, '--since', '2026-01-01'],
        ['export', '--workspace', main.workspaceId],
      ]
      const refused = await runCliInOneProcess(badArguments.map((args) => ({ args: ['audit', ...args], env: unreachable })))
      badArguments.forEach((args, i) => t.equal(refused[i]!.code, 2, `audit ${args.join(' ')}: ${assertionMessage(refused[i]!.stderr.split('\n')[0])}`))
      const unknown = await runCli(['audit', 'verify', '--session', '00000000-0000-4000-8000-000000000000'], env)
      t.not(unknown.code, 0)
      t.match(unknown.stderr, /session 00000000-0000-4000-8000-000000000000 not found/)
    })

    await t.test('export writes the workspace’s events in order with a checksum line that sha256sum confirms', async (t) => {
      const out = join(tempDir(t), 'main.ndjson')
      const result = await runCli(['audit', 'export', '--workspace', main.workspaceId, '--out', out, '--json'], env)
      t.equal(result.code, 0, assertionMessage(result.stderr))
      const content = readFileSync(out, 'utf8')
      t.notOk(existsSync(`${out}.partial`))
      const lines = content.split('\n')
      t.equal(lines.pop(), '', 'every line ends with a newline')
      const checksumLine = lines.pop()!
      const events = lines.map((line) => JSON.parse(line) as { stream: string; type: string; position: string; metadata: { workspaceId?: string } })
      const expected = `sha256:${createHash('sha256').update(content.slice(0, content.length - checksumLine.length - 1)).digest('hex')}`
      t.same(JSON.parse(checksumLine), { checksum: expected, events: events.length })
      t.same(JSON.parse(result.stdout), { file: out, events: events.length, checksum: expected })
      const shell = execFileSync('sh', ['-c', `head -n -1 "${out}" | sha256sum`], { encoding: 'utf8' })
      t.equal(`sha256:${shell.split(' ')[0]}`, expected, 'the documented check with standard tools agrees')

      const positions = events.map((e) => e.position.split('/').map(BigInt) as [bigint, bigint])
      t.ok(positions.every((p, i) => i === 0 || p[0] > positions[i - 1]![0] || (p[0] === positions[i - 1]![0] && p[1] > positions[i - 1]![1])), 'in the log’s order')
      t.ok(events.every((e) => e.metadata.workspaceId === main.workspaceId || e.metadata.workspaceId === undefined))
      t.ok(events.some((e) => e.stream === `session-${expiring}` && e.type === 'SessionExpired'), 'the sweeper’s expiry, which names no workspace, belongs to its session’s')
      t.notOk(events.some((e) => e.stream === `session-${foreign}` || e.metadata.workspaceId === other.workspaceId), 'nothing of another workspace')
      for (const type of ['WorkspaceCreated', 'FlowPublished', 'SessionStarted', 'MessageReceived', 'TurnCompleted', 'CardCreated']) {
        t.ok(events.some((e) => e.type === type), `holds ${type}`)
      }
    })

    await t.test('export refuses an unknown workspace', async (t) => {
      const out = join(tempDir(t), 'x.ndjson')
      const unknown = await runCli(['audit', 'export', '--workspace', '00000000-0000-4000-8000-000000000000', '--out', out], env)
      t.not(unknown.code, 0)
      t.match(unknown.stderr, /workspace 00000000-0000-4000-8000-000000000000 not found/)
      t.notOk(existsSync(out))
    })

    await t.test('verify catches a turn tampered with in the events table', async (t) => {
      const storage = await store.open()
      try {
        const { rows } = await sql<{ event_id: string; body: string }>`
          select event_id, data #>> '{output,messages,0,text,body}' as body from events
          where stream_id = ${`session-${proSession}`} and event_type = 'TurnCompleted' order by stream_revision limit 1`.execute(storage.db)
        t.equal(rows[0]?.body, 'Hi Ana!')
        await sql`update events set data = jsonb_set(data, '{output,messages,0,text,body}', '"Hi Eve!"') where event_id = ${rows[0]!.event_id}`.execute(storage.db)
      } finally {
        await storage.close()
      }
      const result = await runCli(['audit', 'verify'], env)
      t.equal(result.code, 5, 'a divergence has its own exit code')
      t.match(result.stdout, /^1 of 7 session\(s\) diverge \(1 of 17 turn\(s\)\)\n/)
      t.match(result.stdout, new RegExp(`first divergence: session ${proSession}, event [0-9a-f-]{36} \\(revision 1\\)`))
      t.match(result.stdout, '--- recorded\n+++ replayed\n@ $.data.output.messages[0].text.body\n- "Hi Eve!"\n+ "Hi Ana!"\n')
    })
  })
}
