import t from 'tap'
import { browserSkipReason } from '../helpers/browser.js'
import { adminApi, captureScreen, inLook, LOOKS, openDashboard, showIn } from '../helpers/dashboard.js'
import { echoFlow, typedEchoFlow } from '../helpers/flows.js'
import { eventually } from '../helpers/wait.js'

const skip = browserSkipReason()

interface Release {
  liveVersion: number
  gradual: { version: number; percent: number } | null
}
interface ReleaseChange {
  changedAt: string
}
interface VersionFigures {
  version: number
  share: number
  sessions: { total: number; completed: number }
}

t.test('releases: a rollback, a gradual release and its promotion on the flow page, and the versions side by side', { skip }, async (t) => {
  const setup = await openDashboard(t, { engine: true })
  const { call, answered } = adminApi(setup.service)
  const releaseOf = async (flowId: string) => (await call<{ release: Release }>('GET', `/v1/flows/${flowId}`)).release
  /** Starts `count` sessions through the API; each with the version it started on. */
  const startSessions = async (flowId: string, count: number) => {
    const started: { sessionId: string; version: number }[] = []
    for (let n = 0; n < count; n++) {
      const { sessionId } = await call<{ sessionId: string }>('POST', `/v1/sessions/flows/${flowId}/create`, {})
      await answered(sessionId)
      started.push({ sessionId, version: (await call<{ flowVersion: number }>('GET', `/v1/sessions/${sessionId}`)).flowVersion })
    }
    return started
  }

  // Versions 1 and 2 of the echo flow; version 2, the newest, is live.
  await call('POST', '/v1/variables', { name: 'said', type: 'string' })
  const flow = await call<{ id: string }>('POST', '/v1/flows', { name: 'Echo', definition: echoFlow })
  await call('PUT', `/v1/flows/${flow.id}/definition`, typedEchoFlow)
  t.equal((await call<{ version: number }>('POST', `/v1/flows/${flow.id}/publish`)).version, 2, 'version 2 is published')

  const page = await setup.signedInPage(t, { path: `/flows/${flow.id}` })
  const release = page.getByRole('region', { name: 'Release', exact: true })
  const live = release.getByTestId('live-version')
  const gradual = release.getByTestId('gradual-release')
  const chosen = release.getByLabel('Version', { exact: true })
  const status = release.getByRole('status')
  // The release history, under the release's controls: each change in words, newest first, a few a page.
  const history = release.getByRole('region', { name: 'Release history' })
  const historyRows = history.locator('tbody tr')
  const historyWords = () => historyRows.evaluateAll((trs) => trs.map((tr) => (tr.children[1] as unknown as { innerText: string }).innerText))
  /** Waits for the history's newest change to say `newest`, then answers every change the page shows. */
  const historyAfter = async (newest: string | RegExp) => {
    await historyRows.first().locator('td').getByText(newest, { exact: true }).waitFor()
    return historyWords()
  }
  await live.getByText('Version 2 · 100% of new sessions').waitFor()
  t.equal(await gradual.innerText(), 'None: the live version takes every new session', 'no version is in gradual release')
  t.same(await chosen.locator('option').allInnerTexts(), ['Version 2 (live)', 'Version 1'], 'every version can be chosen, the live one marked')

  // Roll back to version 1, asked first with what changes.
  await chosen.selectOption('1')
  t.equal(await release.locator('.releases-about').innerText(), 'Version 1 takes no new sessions now.', 'the chosen version says what it takes now')
  await release.getByRole('button', { name: 'Roll back to version 1' }).click()
  const rollBackQuestion = release.getByRole('group', { name: /^Roll back to version 1\?/ })
  t.equal(
    await rollBackQuestion.locator('span').innerText(),
    'Roll back to version 1? Every new session starts on it at once, instead of on version 2. Sessions already running stay on the version they started on.',
    'the question names what changes',
  )
  t.same(await releaseOf(flow.id), { liveVersion: 2, gradual: null }, 'nothing changes before the answer')
  await rollBackQuestion.getByRole('button', { name: 'Roll back to version 1' }).click()
  await status.getByText('Version 1 is live: every new session starts on it.').waitFor()
  await live.getByText('Version 1 · 100% of new sessions').waitFor()
  t.ok(await status.evaluate((element) => element === element.ownerDocument.activeElement), 'the keyboard lands on what the rollback did')
  t.equal(await release.locator('.releases-about').innerText(), 'Version 1 is live: it takes every new session. Choose another version to roll back to it or to release it gradually.', 'the chosen version now says it is live')
  t.same(await releaseOf(flow.id), { liveVersion: 1, gradual: null }, 'the service made version 1 live')
  t.same(await historyAfter('Rolled back to version 1'), ['Rolled back to version 1', 'Version 2 published', 'Version 1 published'], 'the history tells the rollback above both publishes')
  const { content: changes } = await call<{ content: ReleaseChange[] }>('GET', `/v1/flows/${flow.id}/releases`)
  t.same(await historyRows.locator('th[scope=row] time').evaluateAll((times) => times.map((time) => time.getAttribute('datetime'))), changes.map((change) => change.changedAt), 'each change with the time it was made')
  t.match(await historyRows.first().locator('th').innerText(), new RegExp(`${new Date(changes[0]!.changedAt).getFullYear()}.*\\d{1,2}:\\d{2}`), 'said as a date and a time of day')
  const onVersion1 = await startSessions(flow.id, 3)
  t.same(onVersion1.map((session) => session.version), [1, 1, 1], 'new sessions run version 1')

  // Version 2 at 20 %: a share out of 1 to 99 is refused on its field first.
  await chosen.selectOption('2')
  t.equal(await release.locator('.releases-about').innerText(), 'Version 2 takes no new sessions now.')
  const share = release.getByLabel('Share of new sessions (%)')
  const shareField = release.locator('.field', { has: page.getByLabel('Share of new sessions (%)') })
  t.match(
    await shareField.locator('.hint').innerText(),
    /^A whole number from 1 to 99: version 2 takes this percent of new sessions, each drawn by chance as it starts, and version 1, the live one, takes the rest\.$/,
    'the share says what it means',
  )
  await share.fill('100')
  await release.getByRole('button', { name: 'Release version 2 gradually' }).click()
  const shareError = shareField.getByRole('alert')
  await shareError.waitFor()
  t.equal(await shareError.innerText(), 'Use a whole number from 1 to 99.', 'a share of 100 is refused on the field, in words')
  t.equal(await share.getAttribute('aria-invalid'), 'true', 'the field is marked invalid')
  t.same(await releaseOf(flow.id), { liveVersion: 1, gradual: null }, 'nothing was sent')
  await share.fill('20')
  await share.press('Enter')
  await status.getByText('Version 2 takes 20% of new sessions; version 1 takes the rest.').waitFor()
  await gradual.getByText('Version 2 · 20% of new sessions').waitFor()
  t.equal(await live.innerText(), 'Version 1 · 80% of new sessions', 'the live version takes the rest')
  t.same(await releaseOf(flow.id), { liveVersion: 1, gradual: { version: 2, percent: 20 } }, 'the service released version 2 to 20 %')
  t.same(
    await historyAfter('Version 2 given 20% of new sessions; version 1 takes the rest'),
    ['Version 2 given 20% of new sessions; version 1 takes the rest', 'Rolled back to version 1', 'Version 2 published', 'Version 1 published'],
    'the history tells the share given, newest first',
  )
  t.same(await chosen.locator('option').allInnerTexts(), ['Version 2 (gradual, 20%)', 'Version 1 (live)'], 'the choices say which is which')
  const startsOn = page.getByRole('form', { name: 'Start a session' }).locator('.start-session-facts dd').first()
  await startsOn.getByText('Echo · version 1, or version 2 for 20% of new sessions').waitFor()
  t.pass('a session started on the page says which versions it may run')
  const versionRows = page.getByRole('table', { name: /^Versions: \d+, newest first/ }).locator('tbody tr')
  await versionRows.nth(1).getByText('Live').waitFor()
  t.same(
    await versionRows.evaluateAll((trs) => trs.map((tr) => [tr.children[0], tr.children[2]].map((cell) => (cell as unknown as { innerText: string }).innerText.replace(/\s+/g, ' ')))),
    [
      ['Version 2Newest', '20% Gradual'],
      ['Version 1', '80% Live'],
    ],
    'the published versions give each its share of new sessions',
  )

  // Every look, with the release split between two versions.
  const compared = page.getByRole('table', { name: 'Versions with sessions in the range or a share of new sessions now, newest first' })
  for (const look of LOOKS) {
    await showIn(page, setup.base, `/flows/${flow.id}`, look)
    await page.getByTestId('gradual-release').getByText(inLook(look, 'Version 2 · 20% of new sessions', 'Versão 2 · 20% das sessões novas')).waitFor()
    await page.getByRole('button', { name: inLook(look, 'Promote version 2 to 100%', 'Promover a versão 2 a 100%') }).click()
    await page.getByRole('group', { name: inLook(look, /^Promote version 2\?/, /^Promover a versão 2\?/) }).waitFor()
    await page.locator('.releases-compare-table tbody tr').nth(1).waitFor()
    const shown = page.getByRole('region', { name: inLook(look, 'Release history', 'Histórico de liberação') })
    await shown.locator('tbody tr').nth(3).waitFor()
    t.same(
      await shown.locator('tbody tr td').allInnerTexts(),
      inLook(
        look,
        ['Version 2 given 20% of new sessions; version 1 takes the rest', 'Rolled back to version 1', 'Version 2 published', 'Version 1 published'],
        ['Versão 2 passou a receber 20% das sessões novas; a versão 1 recebe o resto', 'Volta à versão 1', 'Versão 2 publicada', 'Versão 1 publicada'],
      ),
      `the history in ${look.lang}`,
    )
    t.equal(await shown.locator('caption').innerText(), inLook(look, 'Changes: 4, newest first', 'Mudanças: 4, da mais recente à mais antiga'))
    await page.getByRole('region', { name: inLook(look, 'Release', 'Liberação'), exact: true }).scrollIntoViewIfNeeded()
    await captureScreen(t, page, 'flows-release', look)
  }
  await showIn(page, setup.base, `/flows/${flow.id}`, LOOKS[0])
  await gradual.getByText('Version 2 · 20% of new sessions').waitFor()
  t.equal(await chosen.inputValue(), '2', 'the page opens on the version in gradual release')

  // Promoted to all new sessions, asked first.
  await release.getByRole('button', { name: 'Promote version 2 to 100%' }).click()
  const promoteQuestion = release.getByRole('group', { name: /^Promote version 2\?/ })
  t.equal(
    await promoteQuestion.locator('span').innerText(),
    'Promote version 2? Every new session starts on it at once, instead of 80% of them on version 1. Sessions already running stay on the version they started on.',
    'the question names what changes',
  )
  await promoteQuestion.getByRole('button', { name: 'Promote version 2 to 100%' }).click()
  await status.getByText('Version 2 is live: every new session starts on it.').waitFor()
  await live.getByText('Version 2 · 100% of new sessions').waitFor()
  t.equal(await gradual.innerText(), 'None: the live version takes every new session', 'no version is in gradual release any more')
  t.same(await releaseOf(flow.id), { liveVersion: 2, gradual: null }, 'the service made version 2 live')
  t.same((await startSessions(flow.id, 2)).map((session) => session.version), [2, 2], 'new sessions run version 2')
  t.same(
    await historyAfter('Version 2 promoted to all new sessions'),
    ['Version 2 promoted to all new sessions', 'Version 2 given 20% of new sessions; version 1 takes the rest', 'Rolled back to version 1', 'Version 2 published', 'Version 1 published'],
    'the history tells the promotion',
  )

  // The versions side by side, once the analytics have counted the sessions: version 1's three, one of them completed.
  const completing = onVersion1[0]!.sessionId
  await call('POST', `/v1/sessions/${completing}/message`, { type: 'text', text: { body: 'bye' } })
  await answered(completing)
  await eventually('the analytics counted every session', async () => {
    const { versions } = await call<{ versions: VersionFigures[] }>('GET', `/v1/flows/${flow.id}/analytics/versions`)
    const total = (version: number) => versions.find((row) => row.version === version)?.sessions
    return total(1)?.total === 3 && total(1)?.completed === 1 && total(2)?.total === 2 ? true : undefined
  })
  const comparison = page.getByRole('region', { name: 'Versions side by side' })
  await comparison.getByRole('button', { name: 'Refresh the figures' }).click()
  const comparedRows = compared.locator('tbody tr')
  const rowsOf = () => comparedRows.evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => (cell as unknown as { innerText: string }).innerText.replace(/\s+/g, ' '))))
  t.same(await compared.locator('thead th').allInnerTexts(), ['Version', 'Share now', 'Sessions', 'Completion', 'Transfers', 'Drop-off (timed out)', 'Failed'], 'under headers that say what each column counts')
  const expectedRows = [
    ['Version 2', '100% Live', '2', '0 (0%)', '0 (0%)', '0 (0%)', '0 (0%)'],
    ['Version 1', '0%', '3', '1 (33%)', '0 (0%)', '0 (0%)', '0 (0%)'],
  ]
  // The table shows what the refresh fetched once its answer is in; until then, what it showed before.
  const shown = await eventually('the refreshed figures', async () => {
    const rows = await rowsOf()
    return JSON.stringify(rows) === JSON.stringify(expectedRows) ? rows : undefined
  }, 10_000).catch(() => rowsOf())
  t.same(shown, expectedRows, "each version's sessions side by side, with its share now")
  await comparison.getByLabel('Sessions started').selectOption('today')
  await page.waitForURL(/dateRange=today/)
  await comparedRows.nth(1).waitFor()
  t.same((await rowsOf()).map((row) => row[2]), ['2', '3'], 'the date range is in the address, and today holds every session')
  await comparison.getByRole('link', { name: 'Analytics of version 1' }).click()
  await page.waitForURL(new RegExp(`/dashboard/flows/${flow.id}/analytics\\?version=1$`))
  t.pass("a version's row leads to its analytics")

  // A change made elsewhere meanwhile: the refusal is said in words.
  await call('POST', `/v1/flows/${flow.id}/release`, { version: 1, percent: 30 })
  await showIn(page, setup.base, `/flows/${flow.id}`, LOOKS[0])
  await gradual.getByText('Version 1 · 30% of new sessions').waitFor()
  await call('POST', `/v1/flows/${flow.id}/rollback`, { version: 1 })
  await release.getByRole('button', { name: 'Stop the release of version 1' }).click()
  await release.getByRole('alert').getByText('Version 1 is the live one; to take it out, roll back to another version.').waitFor()
  t.same(await releaseOf(flow.id), { liveVersion: 1, gradual: null }, 'the live version stays live')

  // A draft published for a share of new sessions goes out gradually.
  const wrote = echoFlow.nodes.map((node) => (node.id === 'say' ? { ...node, data: { messages: [{ type: 'text', text: { body: 'You wrote {{said}}' } }] } } : node))
  await call('PUT', `/v1/flows/${flow.id}/definition`, { ...echoFlow, nodes: wrote })
  await showIn(page, setup.base, `/flows/${flow.id}`, LOOKS[0])
  const state = page.locator('.flows-state')
  await state.getByTestId('draft-state').getByText('Unpublished changes').waitFor()
  await state.getByLabel('For this share of new sessions (%)').fill('10')
  await state.getByRole('button', { name: 'Publish the draft' }).click()
  await state.getByRole('status').getByText('Published as version 3, for 10% of new sessions.').waitFor()
  await gradual.getByText('Version 3 · 10% of new sessions').waitFor()
  t.same(await releaseOf(flow.id), { liveVersion: 1, gradual: { version: 3, percent: 10 } }, 'the service released version 3 to 10 % of new sessions, version 1 live')
  t.same(
    (await historyAfter('Version 3 published for 10% of new sessions; version 1 takes the rest')).slice(0, 3),
    ['Version 3 published for 10% of new sessions; version 1 takes the rest', 'Rolled back to version 1', 'Version 1 given 30% of new sessions; version 2 takes the rest'],
    'the history tells the gradual publish as one change, above the changes made elsewhere',
  )

  // Its end: the history names the version whose gradual release ended.
  await chosen.selectOption('3')
  await release.getByRole('button', { name: 'Stop the release of version 3' }).click()
  await status.getByText('Version 3 takes no more new sessions; version 1 takes them all.').waitFor()
  t.equal((await historyAfter(/^Gradual release of version 3 ended/))[0], 'Gradual release of version 3 ended; version 1 takes every new session', 'the history tells the end of the release')

  // A page of five: the change an end of release left its version from may be on the next page.
  for (const percent of [10, 20, 30, 40]) await call('POST', `/v1/flows/${flow.id}/release`, { version: 3, percent })
  await showIn(page, setup.base, `/flows/${flow.id}`, LOOKS[0])
  t.same(
    await historyAfter('Version 3 given 40% of new sessions; version 1 takes the rest'),
    [40, 30, 20, 10].map((percent) => `Version 3 given ${percent}% of new sessions; version 1 takes the rest`).concat('Gradual release of version 3 ended; version 1 takes every new session'),
    'the first page: five changes, the last one named from the change before it',
  )
  t.equal(await history.locator('caption').innerText(), 'Changes: 13, newest first')
  await history.getByRole('button', { name: 'Next' }).focus()
  await page.keyboard.press('Enter')
  await page.waitForURL(/releasesPage=1/)
  t.same(
    await historyAfter('Version 3 published for 10% of new sessions; version 1 takes the rest'),
    [
      'Version 3 published for 10% of new sessions; version 1 takes the rest',
      'Rolled back to version 1',
      'Version 1 given 30% of new sessions; version 2 takes the rest',
      'Version 2 promoted to all new sessions',
      'Version 2 given 20% of new sessions; version 1 takes the rest',
    ],
    'the next page, reached by keyboard, goes on with the older changes',
  )
})
