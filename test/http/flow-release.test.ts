import t from 'tap'
import { openTestApp } from '../helpers/app.js'
import { echoFlow } from '../helpers/flows.js'
import { apiBackends } from '../helpers/storage.js'
import { eventually } from '../helpers/wait.js'

// Which version new sessions start on: rollback, gradual release with its share recorded per
// session, promotion, the versions side by side in analytics, and a publish that waits for the
// flow's tests to pass.

const text = (body: string) => ({ type: 'text', text: { body } })

/** The echo flow saying `words` before what the user said. */
const echoing = (words: string, settings?: object) => ({
  ...echoFlow,
  ...(settings && { settings }),
  nodes: echoFlow.nodes.map((node) => (node.id === 'say' ? { ...node, data: { messages: [{ type: 'text', text: { body: `${words} {{said}}` } }] } } : node)),
})

/**
 * Sessions started in the gradual release test, by store: the embedded one, slower, checks the same
 * path on fewer. Five standard deviations of 400 draws at 20 % allow 10 to 30 % (6 to 34 % of 200):
 * a share of none, half or all, or the live version's 80 %, is refused, and the draw's own edges
 * are the domain's tests (test/domain/flow.test.ts).
 */
const RELEASED_SESSIONS: Record<string, number> = { postgres: 400, pglite: 200 }

/** Whether `count` of `total` draws is near 20 %: within five standard deviations. */
const nearTwentyPercent = (count: number, total: number) => Math.abs(count - 0.2 * total) <= 5 * Math.sqrt(total * 0.2 * 0.8)

for (const backend of apiBackends) {
  t.test(`releases on ${backend.name}`, async (t) => {
    const { app, admin } = await openTestApp(t, backend, { engine: true })
    const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown): Promise<{ status: number; json: any }> => {
      const response = await app.inject({ method, url, headers: { 'x-api-key': admin.apiKey }, ...(payload === undefined ? {} : { payload: payload as object }) })
      return { status: response.statusCode, json: response.body ? response.json() : undefined }
    }
    const created = async (url: string, payload: object): Promise<string> => {
      const response = await app.inject({ method: 'POST', url, headers: { 'x-api-key': admin.apiKey }, payload })
      t.equal(response.statusCode, 201, `created at ${url}`)
      return String(response.headers.location).split('/').pop()!
    }
    t.equal((await call('POST', '/v1/variables', { name: 'said', type: 'string' })).status, 201)
    const flowId = (await call('POST', '/v1/flows', { name: 'Echo', definition: echoing('You said') })).json.id as string
    const flow = `/v1/flows/${flowId}`
    const publish = async (definition: object, body?: object) => {
      t.equal((await call('PUT', `${flow}/definition`, definition)).status, 200)
      return call('POST', `${flow}/publish`, body)
    }
    const start = async (): Promise<{ sessionId: string; flowVersion: number }> => {
      const { sessionId } = (await call('POST', `/v1/sessions/flows/${flowId}/create`)).json
      return { sessionId, flowVersion: (await call('GET', `/v1/sessions/${sessionId}`)).json.flowVersion }
    }
    const answerTo = async (sessionId: string, words: string) => {
      t.equal((await call('POST', `/v1/sessions/${sessionId}/message`, text(words))).status, 202)
      return eventually(`the answer to ${words}`, async () => {
        const { entries } = (await call('GET', `/v1/sessions/${sessionId}/transcript`)).json
        const said = (entries as { kind: string; message?: { text?: { body: string } } }[]).flatMap((entry) => (entry.kind === 'outbound' && entry.message?.text ? [entry.message.text.body] : []))
        return said.find((body) => body.endsWith(` ${words}`))
      })
    }
    const shares = async () => (await call('GET', `${flow}/versions`)).json.content.map((v: { version: number; share: number }) => [v.version, v.share])

    const published = await publish(echoing('You typed'))
    t.match(published, { status: 200, json: { version: 2, release: { liveVersion: 2, gradual: null } } }, 'a publish goes live for all')
    const onTwo = await start()
    t.equal(onTwo.flowVersion, 2)

    await t.test('a rollback to version 1: new sessions start on 1, running ones keep theirs', async (t) => {
      const rolledBack = await call('POST', `${flow}/rollback`, { version: 1 })
      t.same(rolledBack, { status: 200, json: { liveVersion: 1, gradual: null } })
      t.match((await call('GET', flow)).json, { publishedVersion: 2, release: { liveVersion: 1, gradual: null } }, 'the flow tells its live version apart from its newest')
      t.same(await shares(), [[2, 0], [1, 100]], 'the versions show which one new sessions start on')
      const onOne = await start()
      t.equal(onOne.flowVersion, 1, 'a new session starts on version 1')
      t.equal(await answerTo(onOne.sessionId, 'hi'), 'You said hi', 'and version 1 answers it')
      t.equal(await answerTo(onTwo.sessionId, 'hey'), 'You typed hey', 'the session started before keeps version 2')
      t.same(await call('POST', `${flow}/rollback`, { version: 1 }), { status: 200, json: { liveVersion: 1, gradual: null } }, 'rolling back again changes nothing')
      t.match(await call('POST', `${flow}/rollback`, { version: 7 }), { status: 400, json: { message: /versions 1 to 2/ } }, 'a version never published is refused')
    })

    const released = RELEASED_SESSIONS[backend.name] ?? 400
    await t.test(`a 20 % release of version 3 over ${released} sessions, side by side with version 1, then promoted`, async (t) => {
      const gradual = await publish(echoing('You wrote'), { percent: 20 })
      t.match(gradual, { status: 200, json: { version: 3, release: { liveVersion: 1, gradual: { version: 3, percent: 20 } } } })
      t.same(await shares(), [[3, 20], [2, 0], [1, 80]])
      const refused: number[] = []
      for (let i = 0; i < released; i++) {
        const { status } = await call('POST', `/v1/sessions/flows/${flowId}/create`)
        if (status !== 201) refused.push(status)
      }
      t.same(refused, [], `${released} sessions started`)
      // Version 1 had one session and version 2 one before the release.
      const compared = await eventually('the analytics count every session', async () => {
        const { json } = await call('GET', `${flow}/analytics/versions`)
        const total = (json.versions as { sessions: { total: number } }[]).reduce((sum, v) => sum + v.sessions.total, 0)
        return total === released + 2 ? json : undefined
      })
      const rows = compared.versions.map((v: { version: number; share: number; sessions: { total: number } }) => [v.version, v.share, v.sessions.total])
      t.same(rows.map((row: number[]) => row.slice(0, 2)), [[3, 20], [2, 0], [1, 80]], 'the analytics show the versions side by side with their shares')
      const onThree = rows[0][2] as number
      t.equal(rows[1][2], 1, 'no new session started on version 2')
      t.equal(onThree + rows[2][2] - 1, released, 'every new session started on version 1 or 3')
      t.ok(nearTwentyPercent(onThree, released), `near 20 % start on version 3: ${onThree} of ${released}`)
      t.match(await call('POST', `${flow}/release`, { version: 1, percent: 50 }), { status: 409, json: { message: /is live/ } }, 'the live version takes what is left, no share of its own')
      t.same(await call('POST', `${flow}/release`, { version: 3, percent: 100 }), { status: 200, json: { liveVersion: 3, gradual: null } }, '100 % promotes it')
      t.equal((await start()).flowVersion, 3, 'new sessions all start on it')
      t.same(await call('POST', `${flow}/release`, { version: 2, percent: 10 }), { status: 200, json: { liveVersion: 3, gradual: { version: 2, percent: 10 } } }, 'an older version may take a share too')
      t.same(await call('POST', `${flow}/release`, { version: 2, percent: 0 }), { status: 200, json: { liveVersion: 3, gradual: null } }, 'and 0 % ends it')
    })

    await t.test('the release history tells every change, newest first', async (t) => {
      const { json } = await call('GET', `${flow}/releases?size=20`)
      t.same(
        json.content.map((change: { reason: string; published: number | null; liveVersion: number; gradual: unknown }) => [change.reason, change.published, change.liveVersion, change.gradual]),
        [
          ['halt', null, 3, null],
          ['release', null, 3, { version: 2, percent: 10 }],
          ['promote', null, 3, null],
          ['publish', 3, 1, { version: 3, percent: 20 }],
          ['rollback', null, 1, null],
          ['publish', 2, 2, null],
          ['publish', 1, 1, null],
        ],
        'a gradual publish is one change: the version it made, with its share',
      )
      t.equal(json.totalElements, 7)
    })

    await t.test('a flow that requires its tests to pass publishes only a draft that passes them', async (t) => {
      const saysYouWrote = { name: 'Echoes in writing', steps: [{ send: text('hi'), expect: { messages: [{ text: { equals: 'You wrote hi' } }, { type: 'text' }] } }] }
      const testId = await created(`${flow}/tests`, saysYouWrote)
      const refused = await publish(echoing('You sent', { requirePassingTests: true }))
      t.equal(refused.status, 409)
      t.same(refused.json.failingTests, [{ id: testId, name: 'Echoes in writing' }], 'the answer names the failing test')
      t.match(refused.json.message, /"Echoes in writing"/)
      t.equal((await call('GET', flow)).json.publishedVersion, 3, 'nothing is published')
      const passing = await publish(echoing('You wrote', { requirePassingTests: true, sessionTtlSeconds: 3600 }))
      t.match(passing, { status: 200, json: { version: 4, release: { liveVersion: 4 } } }, 'a draft that passes is published')
    })
  })
}
