import t from 'tap'
import { browserSkipReason } from '../helpers/browser.js'
import { captureEveryLook, openDashboard } from '../helpers/dashboard.js'
import { TANGLED_FLOW } from '../fixtures/tangled-flow.js'
import { echoFlow } from '../helpers/flows.js'
import { eventually } from '../helpers/wait.js'

const skip = browserSkipReason()

/** The widths the new screens are captured at: a small laptop's and a common desktop's. */
const WIDTHS = [1280, 1440] as const

/**
 * The drop-off drawing's geometry, read in the page: its nodes and columns, each text that leaves
 * its node's box, each edge that passes through a node other than its source and target (sampled
 * every 3 px along its path, a node's border excluded), and the nodes whose name was cut.
 */
const DIAGRAM_GEOMETRY = `(() => {
  const svg = document.querySelector('[data-testid="dropoff-diagram"]')
  const boxes = [...svg.querySelectorAll('g[data-node]')].map((g) => {
    const [, x, y] = /translate\\(([-\\d.]+) ([-\\d.]+)\\)/.exec(g.getAttribute('transform'))
    const rect = g.querySelector('rect').getBBox()
    const texts = [...g.querySelectorAll('text')].map((text) => ({ box: text.getBBox(), text: text.textContent }))
    return { id: g.dataset.node, x: Number(x), y: Number(y), w: rect.width, h: rect.height, texts }
  })
  const overflowing = boxes.flatMap((b) => b.texts.filter(({ box }) => box.x < 0 || box.y < 0 || box.x + box.width > b.w || box.y + box.height > b.h).map(({ text }) => b.id + ': ' + text))
  const crossing = [...svg.querySelectorAll('path.flows-edge')].flatMap((path) => {
    const through = new Set()
    for (let at = 0, length = path.getTotalLength(); at <= length; at += 3) {
      const p = path.getPointAtLength(at)
      for (const b of boxes) {
        if (b.id === path.dataset.source || b.id === path.dataset.target) continue
        if (p.x > b.x + 1 && p.x < b.x + b.w - 1 && p.y > b.y + 1 && p.y < b.y + b.h - 1) through.add(b.id)
      }
    }
    return [...through].map((id) => path.dataset.source + ' -> ' + path.dataset.target + ' through ' + id)
  })
  return {
    nodes: boxes.length,
    columns: new Set(boxes.map((b) => b.x)).size,
    overflowing,
    crossing,
    truncated: boxes.filter((b) => b.texts[0].text.endsWith('…')).map((b) => b.id),
  }
})()`

interface Flow {
  id: string
  publishedVersion: number
  definition: { nodes: { id: string; data: { messages?: { text?: { body: string } }[] } }[] }
}
interface Analytics {
  version: number
  sessions: { total: number }
  nodes: { nodeId: string; reached: number; waitingHere: number; completedHere: number }[]
}

t.test('flows: create, versions, the editor inside the dashboard, analytics', { skip }, async (t) => {
  const setup = await openDashboard(t, { engine: true })
  const { service } = setup
  const headers = { 'x-api-key': service.admin.apiKey }
  const call = async <T>(method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown): Promise<T> => {
    const response = await service.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) })
    if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode}`)
    return response.json<T>()
  }

  // An empty workspace says how to begin, and its New flow leads to the form.
  const page = await setup.signedInPage(t, { path: '/flows' })
  await page.getByRole('heading', { level: 1, name: 'Flows' }).waitFor()
  const firstSteps = page.getByTestId('first-steps')
  await firstSteps.getByText('No flows yet: create your first flow').waitFor()
  t.equal(await page.getByText('No flow matches these filters.').count(), 0, 'an empty workspace is not told its filters match nothing')
  await firstSteps.getByRole('button', { name: 'New flow' }).click()
  t.equal(await page.evaluate('document.activeElement?.closest("form")?.id + ":" + document.activeElement?.tagName'), 'new-flow:INPUT', "its New flow puts the cursor in the form's name")
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 })
    await captureEveryLook(t, page, setup.base, `flows-empty-${width}`, '/flows', (p) => p.getByTestId('first-steps').waitFor())
  }
  await page.goto(`${setup.base}/dashboard/flows?dateRange=today&lang=en`)
  await page.getByText('No flow matches these filters.').waitFor()
  t.pass('with a filter set, the empty list says nothing matches it')

  // Create through the form: an empty name first says on the field what is wrong.
  await page.goto(`${setup.base}/dashboard/flows?lang=en`)
  await page.getByRole('button', { name: 'Create flow' }).click()
  const nameField = page.locator('.field', { has: page.getByLabel('Name', { exact: true }) })
  await nameField.getByRole('alert').waitFor()
  t.equal(await nameField.getByRole('alert').innerText(), 'Fill this in.', 'an empty name is refused on the Name field, in words')
  t.equal(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid'), 'true', 'the field is marked invalid')
  await page.getByLabel('Name', { exact: true }).fill('Support bot')
  await page.getByRole('button', { name: 'Create flow' }).click()
  await page.getByRole('heading', { level: 1, name: 'Support bot' }).waitFor()
  const flowId = new URL(page.url()).pathname.split('/').pop()!
  t.match(flowId, /^[0-9a-f-]{36}$/, 'the new flow page opens at its id')

  // A definition and a version 2, through the API; the flow page lists both versions.
  const variable = await service.app.inject({ method: 'POST', url: '/v1/variables', headers, payload: { name: 'said', type: 'string' } })
  t.equal(variable.statusCode, 201, 'the echo flow has its variable')
  await call('PUT', `/v1/flows/${flowId}/definition`, echoFlow)
  t.equal((await call<{ version: number }>('POST', `/v1/flows/${flowId}/publish`)).version, 2, 'the echo flow is published as version 2')
  await page.reload()
  const versionRows = page.getByRole('table', { name: /^Versions: \d+, newest first/ }).locator('tbody tr')
  await versionRows.nth(1).waitFor()
  t.same(await versionRows.locator('th').allInnerTexts(), ['Version 2Newest', 'Version 1'], 'both versions are listed, newest first')
  await page.getByTestId('draft-state').getByText('Same as version 2').waitFor()
  await page.getByRole('link', { name: 'View version 2' }).click()
  await page.getByRole('heading', { level: 3, name: 'Version 2' }).waitFor()
  await page.getByText('5 nodes, 5 edges').waitFor()
  t.same(
    await page.getByRole('list', { name: 'Nodes in flow order' }).getByRole('listitem').locator('.mono').allInnerTexts(),
    ['start', 'ask', 'check', 'end', 'say'],
    "the version's summary lists its nodes in flow order",
  )

  // From the list, open it in the editor: signed in by the dashboard, save a small change.
  await page.getByRole('link', { name: 'All flows' }).click()
  await page.getByRole('link', { name: 'Open in editor: Support bot' }).click()
  await page.getByRole('heading', { level: 1, name: 'Editing Support bot' }).waitFor()
  await page.getByTestId('editor-status').getByText('Editor signed in').waitFor()
  const editor = page.frameLocator('iframe[title="Flow editor"]')
  await editor.getByTestId('node-say').click()
  await editor.getByTestId('node-panel').getByRole('textbox', { name: 'Text', exact: true }).fill('You said: {{said}}')
  await editor.getByTestId('save').click()
  await page.getByTestId('editor-status').getByText('Draft saved').waitFor()
  const saved = await call<Flow>('GET', `/v1/flows/${flowId}`)
  const say = saved.definition.nodes.find((node) => node.id === 'say')
  t.equal(say?.data.messages?.[0]?.text?.body, 'You said: {{said}}', 'the edit made in the editor is in the saved draft')
  t.equal(saved.publishedVersion, 2, 'saving does not publish')

  // Three sessions of version 2: one completes, two wait at the question.
  const answered = (sessionId: string) =>
    eventually(`session ${sessionId} answered`, async () => ((await call<{ pendingMessages: number }>('GET', `/v1/sessions/${sessionId}`)).pendingMessages === 0 ? true : undefined))
  const started = async (externalId: string) => (await call<{ sessionId: string }>('POST', `/v1/sessions/flows/${flowId}/create`, { externalId })).sessionId
  const send = async (sessionId: string, body: string) => {
    await call('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body } })
    await answered(sessionId)
  }
  const done = await started('ana')
  await answered(done)
  await send(done, 'hi')
  await send(done, 'bye')
  const quiet = await started('bruno')
  await answered(quiet)
  const chatty = await started('carla')
  await answered(chatty)
  await send(chatty, 'hello')
  await eventually('the analytics counted the sessions', async () => {
    const analytics = await call<Analytics>('GET', `/v1/flows/${flowId}/analytics`)
    const node = (id: string) => analytics.nodes.find((n) => n.nodeId === id)
    return analytics.sessions.total === 3 && node('ask')?.waitingHere === 2 && node('end')?.completedHere === 1 ? true : undefined
  })

  await page.goto(`${setup.base}/dashboard/flows/${flowId}/analytics`)
  const chart = page.getByRole('img', { name: /^Sessions started and completed per day/ })
  await chart.waitFor()
  t.match(await chart.getAttribute('aria-label'), /: 3 started, 1 completed; most started on/, "the chart's summary counts the three sessions and the one completed")
  t.equal(await chart.locator('rect.flows-bar.started').count(), 1, 'one bar of started sessions: every session started today')
  t.equal(await chart.locator('rect.flows-bar.completed').count(), 1, 'beside it, one bar of completed ones, as the title promises')
  t.same(await page.locator('.flows-chart-legend li').allInnerTexts(), ['Started', 'Completed'], 'a legend names both series')
  await page.getByRole('button', { name: 'Show the numbers as a table' }).click()
  const lastDay = page.getByRole('table', { name: 'Sessions started and completed per day' }).locator('tbody tr').last()
  t.same(await lastDay.locator('td').allInnerTexts(), ['3', '1'], "the table shows today's sessions, and the one completed")
  const funnelRows = page.getByTestId('funnel').locator('tbody tr')
  const funnelNodes = funnelRows.locator('th .node-name')
  t.same(await Promise.all((await funnelNodes.all()).map((node) => node.getAttribute('title'))), ['start', 'ask', 'check', 'end', 'say'], 'the funnel follows the flow, each node id a hover away')
  t.same(await funnelNodes.allInnerTexts(), ['Start', 'Question', 'Condition', 'End', 'Message'], 'and names each node by its type')
  t.same(await funnelRows.locator('th .node-gist').allInnerTexts(), ['Say something', 'You said {{said}}'], 'with what a question or message says, to tell them apart')
  t.match(await funnelRows.nth(1).innerText(), /\b3\b[\s\S]*2 \(67%\)/, 'the question was reached by 3 and 2 stopped there')
  const diagram = page.getByRole('img', { name: /^Diagram of the flow's 5 nodes/ })
  t.match(await diagram.getAttribute('aria-label'), /Most drop-off at Question: 2 of the 3 sessions/, "the diagram's summary names the node with the most drop-off")
  t.equal(await diagram.locator('g[data-node="ask"]').getAttribute('data-drop-off'), '2', 'the ask node is drawn with its drop-off')
  t.match(await diagram.locator('g[data-node="ask"]').textContent(), /3 reached2 stopped \(67%\)/, 'and labelled with it')

  await page.getByLabel('Created within').selectOption('today')
  await page.waitForURL(/dateRange=today/)
  await chart.waitFor()
  t.equal(await chart.locator('rect.flows-bar.started').count(), 1, 'the date range is in the address, and today holds the sessions')

  await captureEveryLook(t, page, setup.base, 'flows-list', '/flows', (p) => p.locator('table.flows-table tbody tr').first().waitFor())
  await captureEveryLook(t, page, setup.base, 'flows-flow', `/flows/${flowId}?version=2`, (p) => p.locator('.flows-node-list li').first().waitFor())
  await captureEveryLook(t, page, setup.base, 'flows-editor', `/flows/${flowId}/edit`, (p) => p.frameLocator('iframe').getByTestId('node-say').waitFor())
  await captureEveryLook(t, page, setup.base, 'flows-analytics', `/flows/${flowId}/analytics`, (p) => p.locator('g[data-node="ask"]').waitFor())

  // The twelve nodes the editor's Arrange is tested on, with branches and a loop: laid out in
  // columns, nothing spills out of its box, no edge crosses a node.
  const twelve = await call<{ id: string }>('POST', '/v1/flows', { name: 'Plans and leads', definition: TANGLED_FLOW })
  const twelveStarted = async () => (await call<{ sessionId: string }>('POST', `/v1/sessions/flows/${twelve.id}/create`, {})).sessionId
  const lead = await twelveStarted()
  await answered(lead)
  await call('POST', `/v1/sessions/${lead}/message`, { type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: 'b2', title: 'Support' } } })
  await answered(lead)
  await answered(await twelveStarted())
  await eventually('the analytics counted the twelve-node sessions', async () => ((await call<Analytics>('GET', `/v1/flows/${twelve.id}/analytics`)).sessions.total === 2 ? true : undefined))
  await page.goto(`${setup.base}/dashboard/flows/${twelve.id}/analytics?lang=en`)
  const twelveDiagram = page.getByTestId('dropoff-diagram')
  await twelveDiagram.locator('g[data-node="askName"]').waitFor()
  const geometry = (await page.evaluate(DIAGRAM_GEOMETRY)) as { nodes: number; columns: number; overflowing: string[]; crossing: string[]; truncated: string[] }
  t.equal(geometry.nodes, 12, 'the drawing holds the twelve nodes')
  t.ok(geometry.columns >= 5, `laid out in columns by their edges (${geometry.columns})`)
  t.same(geometry.overflowing, [], 'no name or number spills out of its node')
  t.same(geometry.crossing, [], 'no edge passes through a node other than its two ends')
  t.same(geometry.truncated, ['welcome'], 'the long label is cut with an ellipsis')
  t.match(await twelveDiagram.locator('g[data-node="welcome"] > title').textContent(), /^Welcome message for customers arriving from the spring campaign landing page \(Message, welcome\)/, 'its whole label and id are in its title')
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 })
    await captureEveryLook(t, page, setup.base, `flows-dropoff-12-nodes-${width}`, `/flows/${twelve.id}/analytics`, (p) => p.locator('g[data-node="askName"]').waitFor())
  }
  await page.setViewportSize({ width: 1366, height: 900 })

  // The saved draft differs from version 2: the flow page publishes it.
  await page.goto(`${setup.base}/dashboard/flows/${flowId}?lang=en`)
  await page.getByTestId('draft-state').getByText('Unpublished changes').waitFor()
  await page.getByRole('button', { name: 'Publish the draft' }).click()
  await page.getByRole('status').filter({ hasText: 'Published as version 3.' }).waitFor()
  await page.getByTestId('draft-state').getByText('Same as version 3').waitFor()
  t.equal((await call<Flow>('GET', `/v1/flows/${flowId}`)).publishedVersion, 3, 'the draft is published as version 3')
})
