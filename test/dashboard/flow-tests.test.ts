import t from 'tap'
import { browserSkipReason } from '../helpers/browser.js'
import { adminApi, captureScreen, inLook, LOOKS, openDashboard, showIn, type Look } from '../helpers/dashboard.js'
import { echoFlow, typedEchoFlow } from '../helpers/flows.js'

const skip = browserSkipReason()

interface SavedTest {
  id: string
  name: string
  start?: { messages?: { text?: unknown }[] }
  steps: { send: { text: { body: string } }; expect?: { messages?: { type?: string; text?: unknown }[]; status?: string; waitsAt?: string | null; variables?: Record<string, unknown> } }[]
}

t.test('conversation tests: a session turned into a test, then run on the flow page against its versions', { skip }, async (t) => {
  const setup = await openDashboard(t, { engine: true })
  const { call, answered } = adminApi(setup.service)
  const savedTests = async (flowId: string) => (await call<{ content: SavedTest[] }>('GET', `/v1/flows/${flowId}/tests?size=100`)).content

  // A conversation on version 1 of the echo flow: it asks, the contact says hi, it echoes and asks again.
  await call('POST', '/v1/variables', { name: 'said', type: 'string' })
  const flow = await call<{ id: string }>('POST', '/v1/flows', { name: 'Echo', definition: echoFlow })
  const { sessionId } = await call<{ sessionId: string }>('POST', `/v1/sessions/flows/${flow.id}/create`, { externalId: 'ana-5511' })
  await answered(sessionId)
  await call('POST', `/v1/sessions/${sessionId}/message`, { type: 'text', text: { body: 'hi' } })
  await answered(sessionId)
  await call('POST', `/v1/flows/${flow.id}/tests`, { name: 'Echoes a greeting', steps: [] })

  // The session page turns the conversation into a test to edit.
  const page = await setup.signedInPage(t, { path: `/sessions/${sessionId}` })
  await page.getByRole('heading', { level: 1, name: `Session ${sessionId.slice(-8)}` }).waitFor()
  await page.getByRole('button', { name: 'Turn into a test' }).click()
  const form = page.getByRole('form', { name: 'New test from this session' })
  const name = form.getByLabel('Test name')
  await name.waitFor()
  t.equal(await name.inputValue(), `Session ${sessionId.slice(-8)}`, 'the test is named after the session')
  t.ok(await name.evaluate((input) => input === input.ownerDocument.activeElement), 'the keyboard is in the form, on its name')
  const start = form.getByRole('group', { name: 'Start of the session' })
  const step = form.getByRole('group', { name: 'Step 1' })
  t.equal(await form.getByRole('group').count(), 2, 'the start and the one message the contact sent are the turns')
  t.equal(await start.getByLabel('Message 1: words').inputValue(), 'Say something', 'the start expects the question, word for word')
  t.equal(await step.getByLabel('The contact sends').inputValue(), 'hi', 'the step sends what the contact sent')
  t.same(
    [await step.getByLabel('Message 1: check').inputValue(), await step.getByLabel('Message 1: words').inputValue(), await step.getByLabel('Message 2: words').inputValue()],
    ['equals', 'You said hi', 'Say something'],
    "the step expects the bot's two messages exactly",
  )
  t.same(
    (await step.locator('.test-check label').allInnerTexts()).map((label) => label.trim()),
    ['Send these 2 messages, in order', 'Set said to "hi"', 'Wait at node Question', 'Leave the session Active'],
    'and lists every other check of the turn, each in words',
  )
  t.equal(await step.locator('.test-check .node-name').getAttribute('title'), 'ask', 'the node it waits at is named, its id on hover')

  // A name the flow's tests already have is refused on the name; words a check needs, on their field.
  await name.fill('Echoes a greeting')
  await step.getByLabel('Message 1: check').selectOption('contains')
  await step.getByLabel('Message 1: words').fill('')
  await form.getByRole('button', { name: 'Save the test' }).click()
  const wordsError = step.locator('.field.invalid', { has: page.getByLabel('Message 1: words') }).getByRole('alert')
  await wordsError.waitFor()
  t.equal(await wordsError.innerText(), 'Fill this in.', 'an empty "contains" is refused on its words, in words')
  t.equal(await savedTests(flow.id).then((tests) => tests.length), 1, 'nothing was saved')
  await step.getByLabel('Message 1: words').fill('You said')
  await form.getByRole('button', { name: 'Save the test' }).click()
  const nameError = form.locator('.field.invalid', { has: page.getByLabel('Test name') }).getByRole('alert')
  await nameError.waitFor()
  t.equal(await nameError.innerText(), 'This flow has a test named Echoes a greeting already. Choose another name.', 'a name taken is refused on the name, in words')
  t.equal(await name.getAttribute('aria-invalid'), 'true', 'the name is marked invalid')

  // Renamed, the first message loosened to "contains", the session's state no longer checked: saved.
  await name.fill('Echoes hi')
  await step.getByLabel('Leave the session Active').uncheck()
  await name.press('Enter')
  const saved = page.getByRole('status').filter({ hasText: 'Saved as “Echoes hi”, a test of the flow.' })
  await saved.waitFor()
  const seeTests = saved.getByRole('link', { name: "See the flow's tests" })
  t.ok(await seeTests.evaluate((link) => link === link.ownerDocument.activeElement), 'saved from the keyboard, the keyboard is on the way to the tests')
  const kept = (await savedTests(flow.id)).find((test) => test.name === 'Echoes hi')
  t.ok(kept, 'the test is saved with the flow')
  t.same(kept?.steps[0]?.send, { type: 'text', text: { body: 'hi' } }, 'its step sends hi')
  t.same(
    kept?.steps[0]?.expect?.messages,
    [
      { type: 'text', text: { contains: 'You said' } },
      { type: 'text', text: { equals: 'Say something' } },
    ],
    'its first message is checked as edited, the second as it was said',
  )
  t.equal(kept?.steps[0]?.expect?.status, undefined, 'the unchecked check is dropped')
  t.same([kept?.steps[0]?.expect?.waitsAt, kept?.steps[0]?.expect?.variables], ['ask', { said: 'hi' }], 'the checks left checked are kept')

  // The saved notice leads to the flow's tests, the new one marked.
  await page.keyboard.press('Enter')
  await page.waitForURL(new RegExp(`/dashboard/flows/${flow.id}\\?test=${kept!.id}$`))
  const tests = page.getByRole('region', { name: 'Conversation tests' })
  const rows = tests.getByRole('table', { name: /^Tests: \d+, by name$/ }).locator('tbody tr')
  await rows.nth(1).waitFor()
  t.same(await rows.locator('th').allInnerTexts(), ['Echoes a greeting', 'Echoes hi'], "the flow's tests are listed by name")
  t.equal(await rows.filter({ hasText: 'Echoes hi' }).getAttribute('aria-current'), 'true', 'the test just saved is marked')

  // The test made before is deleted, asked twice.
  await tests.getByRole('button', { name: 'Delete: Echoes a greeting' }).click()
  await tests.getByRole('group', { name: /^Delete the test Echoes a greeting\?/ }).getByRole('button', { name: 'Delete' }).click()
  await tests.getByRole('status').filter({ hasText: 'Deleted the test Echoes a greeting.' }).waitFor()
  await rows.filter({ hasText: 'Echoes a greeting' }).waitFor({ state: 'detached' })
  t.same((await savedTests(flow.id)).map((test) => test.name), ['Echoes hi'], 'the service deleted it')

  let runsAsked = 0
  page.on('request', (request) => void (request.url().endsWith('/test-runs') && runsAsked++))
  const target = tests.getByLabel('Run against')
  const run = tests.getByRole('button', { name: 'Run the tests' })
  const summary = tests.getByTestId('flow-tests-summary')
  const result = rows.filter({ hasText: 'Echoes hi' }).locator('td .badge, td .hint')

  // On the newest version, which the session ran, the test passes.
  t.equal(await target.inputValue(), '1', 'runs go to the newest version unless another is chosen')
  t.same(await target.locator('option').allInnerTexts(), ['The draft', 'Version 1 (newest)'], 'the draft or any published version can be chosen')
  t.equal(await result.innerText(), 'Not run', 'nothing has run yet')
  await run.click()
  await summary.getByText('Version 1 (newest): 1 of 1 tests passed.').waitFor()
  t.equal(await result.innerText(), 'Passed', 'the test passed on version 1')
  t.equal(await tests.getByRole('region', { name: /^What failed/ }).count(), 0, 'nothing failed')

  // Version 2 answers otherwise: the test fails there, at step 1, with what it expected beside what came.
  await call('PUT', `/v1/flows/${flow.id}/definition`, typedEchoFlow)
  t.equal((await call<{ version: number }>('POST', `/v1/flows/${flow.id}/publish`)).version, 2, 'version 2 is published')
  await page.reload()
  await rows.first().waitFor()
  t.equal(await target.inputValue(), '2', 'the newest version is now 2')
  await target.locator('option').nth(2).waitFor({ state: 'attached' })
  t.same(await target.locator('option').allInnerTexts(), ['The draft', 'Version 2 (newest)', 'Version 1'], 'every published version can be chosen, newest first')
  await run.click()
  await summary.getByText('Version 2 (newest): 0 of 1 tests passed.').waitFor()
  t.equal(await result.innerText(), 'Failed', 'the test failed on version 2')
  const failures = tests.getByRole('region', { name: 'What failed on Version 2 (newest)' })
  const failure = failures.getByRole('article', { name: '“Echoes hi” failed' })
  const diff = failure.getByRole('table', { name: 'Step 1: The contact sends “hi”' })
  t.same(
    await diff.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => (cell as { innerText: string }).innerText))),
    [['messages[0].text', 'a text containing “You said”', '“You typed hi”']],
    'the diff names the step, where it differs, what was expected and what came, side by side',
  )
  t.same(await diff.locator('thead th').allInnerTexts(), ['Where', 'Expected', 'Got'], 'under headers that say which is which')
  t.equal(await failure.locator('.hint').innerText(), 'The bot said: “You typed hi” “Say something”', 'with all the bot said on that turn')

  // Each version keeps its last run on the page: version 1 still passes, and version 2's failure is shown again without running.
  await target.selectOption('1')
  await result.getByText('Not run').waitFor()
  t.equal(await summary.innerText(), '', 'version 1 has not run since the reload')
  await run.click()
  await summary.getByText('Version 1: 1 of 1 tests passed.').waitFor()
  t.equal(await result.innerText(), 'Passed', 'the test still passes on version 1')
  const asked = runsAsked
  await target.selectOption('2')
  await failures.waitFor()
  t.equal(await result.innerText(), 'Failed', "going back to version 2 shows its run's result")
  t.equal(await summary.innerText(), 'Version 2 (newest): 0 of 1 tests passed.', 'and its summary')
  t.equal(runsAsked, asked, 'without running again')

  // Every look: the form with a refused name, and the flow's tests with a failure.
  const shownTests = async (look: Look) => {
    await showIn(page, setup.base, `/flows/${flow.id}`, look)
    await page.getByRole('button', { name: inLook(look, 'Run the tests', 'Rodar os testes') }).click()
    await page.getByRole('article', { name: inLook(look, '“Echoes hi” failed', '“Echoes hi” falhou') }).waitFor()
  }
  for (const look of LOOKS) {
    await showIn(page, setup.base, `/sessions/${sessionId}`, look)
    await page.getByRole('button', { name: inLook(look, 'Turn into a test', 'Transformar em teste') }).click()
    const lookForm = page.getByRole('form', { name: inLook(look, 'New test from this session', 'Novo teste a partir desta sessão') })
    const lookName = lookForm.getByLabel(inLook(look, 'Test name', 'Nome do teste'))
    await lookName.fill('Echoes hi')
    await lookForm.getByRole('button', { name: inLook(look, 'Save the test', 'Salvar o teste') }).click()
    const refused = lookForm.locator('.field.invalid', { has: page.getByLabel(inLook(look, 'Test name', 'Nome do teste')) }).getByRole('alert')
    await refused.waitFor()
    t.equal(
      await refused.innerText(),
      inLook(look, 'This flow has a test named Echoes hi already. Choose another name.', 'Este fluxo já tem um teste chamado Echoes hi. Escolha outro nome.'),
      `the name taken is said in ${look.lang}`,
    )
    await captureScreen(t, page, 'flow-tests-form', look)
    await shownTests(look)
    await captureScreen(t, page, 'flow-tests-results', look)
  }

  // A flow holds at most 50 tests: one more is refused with the limit, in words.
  for (let n = 2; n <= 50; n++) await call('POST', `/v1/flows/${flow.id}/tests`, { name: `Filler ${n}`, steps: [] })
  await showIn(page, setup.base, `/sessions/${sessionId}`, LOOKS[0])
  await page.getByRole('button', { name: 'Turn into a test' }).click()
  await form.getByLabel('Test name').fill('One too many')
  await form.getByRole('button', { name: 'Save the test' }).click()
  await form.getByRole('alert').filter({ hasText: 'This flow has 50 tests, the most it may keep. Delete one before adding another.' }).waitFor()
  t.equal((await savedTests(flow.id)).length, 50, 'the fifty-first test is not saved')
})
