import t from 'tap'
import { browserSkipReason } from '../helpers/browser.js'
import { captureEveryLook, openDashboard } from '../helpers/dashboard.js'
import { eventually } from '../helpers/wait.js'

const skip = browserSkipReason()

/** At most this many sessions are started for both branches to be drawn (each is a coin toss). */
const MAX_SESSIONS = 40

// start → an A/B test: "short-form" ends the session at once; "long-form" asks a question first.
const abFlow = {
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'ab', type: 'split', position: { x: 240, y: 0 }, data: { label: 'Sign-up form test', branches: [{ id: 'short-form', weight: 50 }, { id: 'long-form', weight: 50 }] } },
    { id: 'ask', type: 'question', position: { x: 480, y: 120 }, data: { prompt: { type: 'text', text: { body: 'Your name?' } }, input: { kind: 'text' } } },
    { id: 'end', type: 'end', position: { x: 720, y: 0 }, data: {} },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'ab' },
    { id: 'e2', source: 'ab', sourceHandle: 'short-form', target: 'end' },
    { id: 'e3', source: 'ab', sourceHandle: 'long-form', target: 'ask' },
    { id: 'e4', source: 'ask', sourceHandle: 'default', target: 'end' },
  ],
}

interface Branch {
  nodeId: string
  branchId: string
  sessions: number
  completed: number
}
interface Analytics {
  sessions: { total: number; completed: number }
  nodes: { nodeId: string; reached: number }[]
  branches: Branch[]
}
interface Session {
  status: string
  waitingAt: string | null
}

const percent = (part: number, whole: number) => `${Math.round((part / whole) * 100)}%`

t.test("flow analytics: a version's A/B tests, per branch", { skip }, async (t) => {
  const setup = await openDashboard(t, { engine: true })
  const headers = { 'x-api-key': setup.service.admin.apiKey }
  const call = async <T>(method: 'GET' | 'POST', url: string, payload?: object): Promise<T> => {
    const response = await setup.service.app.inject({ method, url, headers, ...(payload && { payload }) })
    if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
    return response.json<T>()
  }

  // A version without a split node has no A/B section.
  const plain = await call<{ id: string }>('POST', '/v1/flows', { name: 'No tests' })
  const page = await setup.signedInPage(t, { path: `/flows/${plain.id}/analytics` })
  await page.getByTestId('funnel').waitFor()
  t.equal(await page.getByRole('heading', { name: 'A/B tests' }).count(), 0, 'a version without a split node shows no A/B tests')

  // Before any session, the split says no branch was drawn yet.
  const flow = await call<{ id: string }>('POST', '/v1/flows', { name: 'Sign-up', definition: abFlow })
  await page.goto(`${setup.base}/dashboard/flows/${flow.id}/analytics?lang=en`)
  const section = page.getByTestId('ab-tests')
  await section.getByRole('heading', { level: 2, name: 'A/B tests' }).waitFor()
  await section.getByText('No session has drawn a branch of this split yet.').waitFor()
  t.equal(await section.locator('.flows-split[data-node="ab"] .node-name').innerText(), 'Sign-up form test', 'the split is named by its label, as the funnel names nodes')
  t.equal(await section.getByRole('table').count(), 0, 'and shows no table of zeros')
  await captureEveryLook(t, page, setup.base, 'flows-analytics-ab-tests-empty', `/flows/${flow.id}/analytics`, (p) => p.getByTestId('ab-tests').locator('.empty').waitFor())

  // Sessions until both branches were drawn; one that took the long form answers and completes.
  const settled = (sessionId: string) =>
    eventually(`session ${sessionId} settled`, async () => {
      const session = await call<Session>('GET', `/v1/sessions/${sessionId}`)
      return session.status === 'completed' || session.waitingAt === 'ask' ? session : undefined
    })
  const drawn = { 'short-form': [] as string[], 'long-form': [] as string[] }
  while (drawn['short-form'].length < 2 || drawn['long-form'].length < 2) {
    const count = drawn['short-form'].length + drawn['long-form'].length
    if (count >= MAX_SESSIONS) throw new Error(`${count} sessions drew short-form ${drawn['short-form'].length} and long-form ${drawn['long-form'].length} times`)
    const { sessionId } = await call<{ sessionId: string }>('POST', `/v1/sessions/flows/${flow.id}/create`, {})
    drawn[(await settled(sessionId)).status === 'completed' ? 'short-form' : 'long-form'].push(sessionId)
  }
  const answering = drawn['long-form'][0]!
  await call('POST', `/v1/sessions/${answering}/message`, { type: 'text', text: { body: 'Ana' } })
  await eventually('the answer completed the session', async () => ((await call<Session>('GET', `/v1/sessions/${answering}`)).status === 'completed' ? true : undefined))

  const total = drawn['short-form'].length + drawn['long-form'].length
  const analytics = await eventually('the analytics counted every session and branch', async () => {
    const now = await call<Analytics>('GET', `/v1/flows/${flow.id}/analytics`)
    const drawnInAll = now.branches.reduce((sum, branch) => sum + branch.sessions, 0)
    return now.sessions.total === total && now.sessions.completed === drawn['short-form'].length + 1 && drawnInAll === total ? now : undefined
  })
  const reached = analytics.nodes.find((node) => node.nodeId === 'ab')!.reached
  t.equal(reached, total, 'every session reached the split')
  t.ok(analytics.branches.every((branch) => branch.sessions > 0), 'the API counted sessions in both branches')

  await page.goto(`${setup.base}/dashboard/flows/${flow.id}/analytics?lang=en`)
  const table = section.getByRole('table', { name: `Sign-up form test Per branch; sessions that reached the split: ${reached}` })
  await table.waitFor()
  t.same(await table.locator('thead th').allInnerTexts(), ['Branch', 'Sessions', 'Completed', 'Completion rate', 'Share of the sessions'], 'the columns are named')
  const rows = table.locator('tbody tr')
  t.same(await rows.locator('th').allInnerTexts(), ['short-form', 'long-form'], "both branches, in the definition's order, each a row header")
  for (const branch of analytics.branches) {
    const cells = await table.locator(`tbody tr[data-branch="${branch.branchId}"] td`).allInnerTexts()
    t.same(
      cells.map((cell) => cell.trim()),
      [String(branch.sessions), String(branch.completed), percent(branch.completed, branch.sessions), percent(branch.sessions, reached)],
      `${branch.branchId}: the API's ${branch.sessions} sessions, ${branch.completed} completed, its rate and share`,
    )
  }
  t.equal(await section.getByText('No session has drawn a branch of this split yet.').count(), 0, 'the empty line is gone once a branch was drawn')

  await captureEveryLook(t, page, setup.base, 'flows-analytics-ab-tests', `/flows/${flow.id}/analytics`, (p) => p.getByTestId('ab-tests').getByRole('table').waitFor())
})
