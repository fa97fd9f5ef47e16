import t from 'tap'
import { REPLAY_LIMITS } from '../../src/domain/replay.js'
import { browserSkipReason } from '../helpers/browser.js'
import { adminApi, captureScreen, inLook, LOOKS, openDashboard, showIn } from '../helpers/dashboard.js'
import { echoFlow } from '../helpers/flows.js'
import { eventually } from '../helpers/wait.js'

const skip = browserSkipReason()

const HELP = 'A person will answer you soon'

/** The echo flow's draft with one answer changed: "help" is answered by a person's promise and the end, where version 1 echoed it. */
const helpDraft = (answer = HELP) => ({
  ...echoFlow,
  nodes: [
    ...echoFlow.nodes.map((node) =>
      node.id === 'check' ? { ...node, data: { rules: [...(node.data as { rules: object[] }).rules, { id: 'help', variable: 'said', operator: 'equals', value: 'help' }] } } : node,
    ),
    { id: 'helpSay', type: 'message', position: { x: 600, y: 400 }, data: { messages: [{ type: 'text', text: { body: answer } }] } },
  ],
  edges: [...echoFlow.edges, { id: 'f', source: 'check', sourceHandle: 'help', target: 'helpSay' }, { id: 'g', source: 'helpSay', target: 'end' }],
})

t.test('replays: real sessions of version 1 played on a draft that changes one answer, from the flow page', { skip }, async (t) => {
  const setup = await openDashboard(t, { engine: true })
  const { call, answered } = adminApi(setup.service)

  // Five conversations on version 1: two contacts ask for help, and the bot echoes them as it does everyone.
  await call('POST', '/v1/variables', { name: 'said', type: 'string' })
  const flow = await call<{ id: string }>('POST', '/v1/flows', { name: 'Echo', definition: echoFlow })
  const said = ['hi', 'help', 'bye', 'help', 'hello']
  const sessions: string[] = []
  for (const words of said) {
    const { sessionId } = await call<{ sessionId: string }>('POST', `/v1/sessions/flows/${flow.id}/create`, {})
    await answered(sessionId)
    await call('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: words } })
    await answered(sessionId)
    sessions.push(sessionId)
  }
  const askedForHelp = sessions.filter((_, index) => said[index] === 'help')
  // A replay chooses from the analytics read model, which counts the sessions a moment behind.
  await eventually('the analytics counted the five sessions', async () => {
    const { versions } = await call<{ versions: { version: number; sessions: { total: number } }[] }>('GET', `/v1/flows/${flow.id}/analytics/versions`)
    return versions.find((row) => row.version === 1)?.sessions.total === said.length ? true : undefined
  })
  await call('PUT', `/v1/flows/${flow.id}/definition`, helpDraft())

  const page = await setup.signedInPage(t, { path: `/flows/${flow.id}` })
  const replays = page.getByRole('region', { name: 'Replays against the draft' })
  const form = replays.getByRole('form', { name: 'Replay against the draft' })
  const last = form.getByLabel('How many recent sessions')
  await last.waitFor()
  t.same(
    [await form.getByLabel('Sessions of').inputValue(), await last.inputValue(), await form.getByLabel('Status').inputValue()],
    ['1', '200', ''],
    "the live version's newest 200 sessions, of any status, unless told otherwise",
  )
  t.equal(await last.getAttribute('max'), String(REPLAY_LIMITS.sessions), 'as many as the service replays at most')
  await replays.getByText('No replay of this flow yet.').waitFor()

  // A count out of bounds is refused on its field before anything is sent.
  let replaysAsked = 0
  page.on('request', (request) => void (request.method() === 'POST' && request.url().endsWith('/replays') && replaysAsked++))
  await last.fill('0')
  await form.getByRole('button', { name: 'Replay against the draft' }).click()
  const lastError = form.locator('.field', { has: page.getByLabel('How many recent sessions') }).getByRole('alert')
  await lastError.waitFor()
  t.equal(await lastError.innerText(), 'Use a whole number from 1 to 5,000.', 'a count of 0 is refused on its field, in words')
  t.equal(replaysAsked, 0, 'nothing was asked of the service')
  await last.fill('200')

  // The first answer the page gets says the replay is still running: it asks again until it has finished.
  let reportsAsked = 0
  await page.route(/\/v1\/flows\/[^/]+\/replays\/[^/?]+$/, async (route) => {
    const response = await route.fetch()
    const report = (await response.json()) as { status: string; checked: number; differingCount: number; differing: unknown[] }
    reportsAsked++
    await route.fulfill({ response, json: reportsAsked === 1 ? { ...report, status: 'running', checked: 0, differingCount: 0, differing: [] } : report })
  })
  await form.getByRole('button', { name: 'Replay against the draft' }).click()
  await page.waitForURL(/[?&]replay=[0-9a-f-]{36}/)
  const replayId = new URL(page.url()).searchParams.get('replay')!
  const report = replays.getByRole('region', { name: 'Replay of version 1' })
  const progress = report.getByTestId('replay-progress')
  await progress.getByText('Checked 0 of 5 sessions; 0 differ so far.').waitFor()
  t.pass('while it runs, the report says how far it got')
  await progress.getByText('Finished: 2 of 5 sessions would go differently on the draft.').waitFor()
  t.ok(reportsAsked >= 2, `the page asked for the report again while it ran (${reportsAsked} times)`)
  t.equal(await report.getByRole('progressbar', { name: 'Sessions checked' }).getAttribute('value'), '5', 'the progress bar is full')
  await page.unroute(/\/v1\/flows\/[^/]+\/replays\/[^/?]+$/)
  t.match(await report.locator('.flows-facts').innerText(), /Sessions\s+The newest 200 of version 1/, 'the report says which sessions it played')

  // Exactly the two sessions that asked for help differ, each at its first differing turn, side by side.
  const differing = report.getByRole('article', { name: /^Session / })
  t.same(
    (await differing.locator('h4').allInnerTexts()).sort(),
    askedForHelp.map((id) => `Session ${id.slice(-8)}`).sort(),
    'the sessions that asked for help are listed, and no other',
  )
  const first = differing.filter({ hasText: `Session ${askedForHelp[0]!.slice(-8)}` })
  const diff = first.getByRole('table', { name: 'Turn 1: the contact sent “help”' })
  t.same(await diff.locator('thead th').allInnerTexts(), ['On this turn', 'Recorded', 'Draft'], 'the recorded turn and the draft are side by side')
  const saidRow = diff.locator('tbody tr').first()
  t.same(
    [await saidRow.locator('th').innerText(), await saidRow.locator('td.replay-recorded .chat-text').allInnerTexts(), await saidRow.locator('td.replay-draft .chat-text').allInnerTexts()],
    ['The bot says', ['You said help', 'Say something'], [HELP]],
    'what the bot said as recorded, and what the draft says instead',
  )
  t.same(
    await diff.locator('tbody tr').evaluateAll((trs) => trs.slice(1).map((tr) => [...tr.children].map((cell) => (cell as unknown as { innerText: string }).innerText))),
    [
      ['The session is left', 'Active', 'Completed'],
      ['It waits at', 'Question', 'Nowhere: the conversation ends'],
      ['It also', 'does nothing more', 'finishes the session'],
    ],
    'and each other thing the draft changes on that turn',
  )

  // Its session is a click away, and back.
  await first.getByRole('link', { name: `Session ${askedForHelp[0]!.slice(-8)}` }).click()
  await page.waitForURL(new RegExp(`/dashboard/sessions/${askedForHelp[0]}$`))
  await page.getByRole('heading', { level: 1, name: `Session ${askedForHelp[0]!.slice(-8)}` }).waitFor()
  await page.goBack()
  await diff.waitFor()

  // The flow's replays are listed; another, of the completed sessions only, finds nothing to change.
  const listed = replays.getByRole('table', { name: /^Replays of this flow: \d+, newest first$/ }).locator('tbody tr')
  await listed.first().waitFor()
  const rowsOf = () => listed.evaluateAll((trs) => trs.map((tr) => [...tr.children].slice(1).map((cell) => (cell as unknown as { innerText: string }).innerText)))
  t.same(await rowsOf(), [['Version 1', 'Finished', '5 of 5', '2', 'Shown above']], 'the replay is listed with its counts, marked as the one shown')
  t.equal(await listed.first().getAttribute('aria-current'), 'true')
  await form.getByLabel('Status').selectOption('completed')
  await form.getByRole('button', { name: 'Replay against the draft' }).click()
  await page.waitForURL((url) => url.searchParams.get('replay') !== replayId)
  await progress.getByText('Finished: the draft answers the one session as it went.').waitFor()
  t.equal(await differing.count(), 0, 'the session that said bye ends the same way on the draft')
  t.match(await report.locator('.flows-facts').innerText(), /The newest 200 of version 1, with status Completed/, 'the report says it chose the completed sessions')
  await listed.nth(1).waitFor()
  // The list is asked again when the report sees the replay's progress: its row may still say
  // Running for a moment after the report says Finished.
  await listed.first().getByText('Finished', { exact: true }).waitFor()
  t.same((await rowsOf()).map((row) => row.slice(0, 3)), [['Version 1', 'Finished', '1 of 1'], ['Version 1', 'Finished', '5 of 5']], 'both replays are listed, newest first')
  await listed.nth(1).getByRole('link', { name: /^Open the report/ }).click()
  await page.waitForURL((url) => url.searchParams.get('replay') === replayId)
  await progress.getByText('Finished: 2 of 5 sessions would go differently on the draft.').waitFor()
  t.equal(await differing.count(), 2, 'an earlier replay opens with its report')

  // Every look, with the report of the first replay.
  for (const look of LOOKS) {
    await showIn(page, setup.base, `/flows/${flow.id}?replay=${replayId}`, look)
    const shown = page.getByRole('region', { name: inLook(look, 'Replay of version 1', 'Repetição da versão 1') })
    await shown.getByRole('article', { name: inLook(look, `Session ${askedForHelp[1]!.slice(-8)}`, `Sessão ${askedForHelp[1]!.slice(-8)}`) }).waitFor()
    t.equal(
      await shown.getByRole('table').first().locator('caption').innerText(),
      inLook(look, 'Turn 1: the contact sent “help”', 'Rodada 1: o contato enviou “help”'),
      `the turn is said in ${look.lang}`,
    )
    await shown.scrollIntoViewIfNeeded()
    await captureScreen(t, page, 'flows-replay', look)
  }

  // A draft changed since the replay: the report says so.
  await call('PUT', `/v1/flows/${flow.id}/definition`, helpDraft('Someone will write to you today'))
  await showIn(page, setup.base, `/flows/${flow.id}?replay=${replayId}`, LOOKS[0])
  await report.getByText('The draft has changed since this replay: replay again to check it as it is now.').waitFor()
  t.pass('a report made on an older draft says the draft has changed since')
})
