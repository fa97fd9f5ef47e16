import type { Frame, Locator } from 'playwright-core'
import t, { type Test } from 'tap'
import { browserSkipReason, waitForMessage } from '../helpers/browser.js'
import { LOOKS, type Look } from '../helpers/dashboard.js'
import { captureEditor, checkEditorLayout, focusedName, openEditor, openEditorSetup, PLAN_FLOW, selectNode, textMessage, waitForText, type EditorSetup } from '../helpers/editor.js'

// Publishing with a safety net in the editor, against the real service: the Tests tab's "Publish
// only when these tests pass" saved with the draft (beside settings the editor does not edit), a
// publish the failing tests refuse said in words with the tests named and marked in the Tests tab,
// a publish once the draft is fixed; the Versions tab showing the live version, the shares of a
// gradual release and rolling back to an older version, which new sessions then start on.

const skip = browserSkipReason()
t.setTimeout(300_000)

/** What the editor says, in each language, where these tests read it. */
const WORDS = {
  en: {
    gate: 'Publish only when these tests pass',
    refused: 'Not published: this flow publishes only when its tests pass, and 1 fails against the draft. Fix it, or the draft, and publish again. Failing test: “Pro plan for Bia”.',
    show: 'Show the failing tests',
    step: 'Step 2: sends “Bia”',
    live: 'live',
    shares: { 1: '30% of new sessions', 2: '70% of new sessions' },
  },
  pt: {
    gate: 'Publicar só quando estes testes passarem',
    refused: 'Não publicado: este fluxo só publica quando seus testes passam, e 1 falha no rascunho. Corrija-o, ou o rascunho, e publique de novo. Teste que falha: “Pro plan for Bia”.',
    show: 'Ver os testes que falham',
    step: 'Passo 2: envia “Bia”',
    live: 'no ar',
    shares: { 1: '30% das novas sessões', 2: '70% das novas sessões' },
  },
}

/** PLAN_FLOW's thanks, as the test below expects them and changed so that it fails. */
const THANKS = 'Thanks {{name}}: plan {{plan}}.'
const CHANGED_THANKS = 'Thank you {{name}}: plan {{plan}}.'

const withThanks = (thanks: string, settings?: object) => {
  const definition: Record<string, unknown> = structuredClone(PLAN_FLOW)
  ;(definition.nodes as { id: string; data: object }[]).find((node) => node.id === 'bye')!.data = { messages: [textMessage(thanks)] }
  return settings ? { ...definition, settings } : definition
}

/** Chooses Pro, gives the name Bia, and expects PLAN_FLOW's thanks word for word. */
const PRO_PLAN_FOR_BIA = {
  name: 'Pro plan for Bia',
  start: { messages: [{ type: 'text', text: { contains: 'Welcome' } }, { type: 'interactive' }] },
  steps: [
    { send: { type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: 'pro', title: 'Pro' } } }, expect: { messages: [{ type: 'text', text: { equals: 'Your name, please?' } }] } },
    { send: { type: 'text', text: { body: 'Bia' } }, expect: { messages: [{ type: 'text', text: { equals: 'Thanks Bia: plan pro.' } }] } },
  ],
}

t.test('publishing with a safety net in the editor', { skip }, async (t) => {
  const setup = await openEditorSetup(t)
  const api = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => {
    const response = await setup.service.app.inject({ method, url, headers: setup.key, ...(payload ? { payload } : {}) })
    if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
    return response.body ? response.json() : undefined
  }
  await api('POST', '/v1/variables', { name: 'plan', type: 'string' })
  await api('POST', '/v1/variables', { name: 'name', type: 'string', defaultValue: 'Ana' })
  /** A flow published as version 2 with `draft` as its draft and the test of Bia's pro plan, which version 2 passes. */
  const gatedFlow = async (name: string, draft: object) => {
    const flowId = await setup.createFlow(name)
    await api('PUT', `/v1/flows/${flowId}/definition`, withThanks(THANKS, { sessionTtlSeconds: 600 }))
    await api('POST', `/v1/flows/${flowId}/publish`)
    await api('POST', `/v1/flows/${flowId}/tests`, PRO_PLAN_FOR_BIA)
    await api('PUT', `/v1/flows/${flowId}/definition`, draft)
    return flowId
  }

  t.test('the setting saved with the draft refuses a failing publish, names the test, and lets the fixed draft out', async (t) => {
    const flowId = await gatedFlow('Gate', withThanks(THANKS, { sessionTtlSeconds: 600 }))
    t.ok((await api('POST', `/v1/flows/${flowId}/test-runs`, {})).passed, 'the test passes on the draft as it starts')
    const opened = await openEditor(t, setup, flowId)
    const { page, editor, frame } = opened

    // The Tests tab's setting, turned on from the keyboard, is a draft change saved like any other.
    await editor.getByTestId('tab-tests').click()
    const gate = editor.getByRole('checkbox', { name: WORDS.en.gate })
    t.notOk(await gate.isChecked(), 'the setting is off while the draft does not have it')
    await gate.focus()
    await page.keyboard.press('Space')
    t.ok(await gate.isChecked(), 'Space turns it on')
    t.match(await editor.getByTestId('save-state').textContent(), /Unsaved changes/, 'as a change of the draft')
    await page.keyboard.press('Control+s')
    await waitForMessage(page, 'saved')
    t.same((await setup.draft(flowId) as { settings?: object }).settings, { sessionTtlSeconds: 600, requirePassingTests: true }, 'saved with the draft, beside the setting the editor does not edit')

    // The thanks change: the test fails, and the publish is refused in words naming it.
    await editor.getByRole('tab', { name: 'Node', exact: true }).click()
    const form = await selectNode(editor, 'bye')
    await form.getByRole('textbox', { name: 'Text', exact: true }).fill(CHANGED_THANKS)
    await editor.getByTestId('publish').click()
    const status = editor.getByTestId('status')
    await waitForText(status.locator('span').first(), WORDS.en.refused)
    t.pass('the refusal says why, and names the failing test')
    t.match(await status.getAttribute('class'), /\berror\b/, 'as an error')
    t.match((await waitForMessage(page, 'error')).data, { code: 'request_failed', message: /"Pro plan for Bia"/ }, 'the host page hears of it')
    t.equal((await api('GET', `/v1/flows/${flowId}`)).publishedVersion, 2, 'nothing is published')
    t.match(await editor.getByTestId('published-version').textContent(), /Published: version 2/)
    t.match(await editor.getByTestId('save-state').textContent(), /All changes saved/, 'the publish saved the draft first')

    // The Tests tab marks the test from the refusal; "Show the failing tests" runs them to show where.
    await editor.getByTestId('tab-tests').click()
    const tests = editor.getByTestId('tests-panel')
    const item = tests.getByTestId('conversation-test')
    t.match(await item.getByTestId('test-state').innerText(), /Failed/, 'the refused test is marked failing')
    await item.getByTestId('failed-at-publish').waitFor()
    t.match(await tests.getByTestId('tests-refused').innerText(), /The publish was refused: 1 test fails against the draft\. Run it to see where\./)
    await captureEditor(t, opened, 'publish-refused-marked', LOOKS[0])
    await editor.getByTestId('tab-versions').click()
    await status.getByRole('button', { name: WORDS.en.show }).click()
    t.equal(await editor.getByTestId('tab-tests').getAttribute('aria-selected'), 'true', 'the Tests tab opens')
    await item.getByTestId('failing-step').waitFor()
    t.same(await item.getByTestId('failing-step').locator('h3').allInnerTexts(), [WORDS.en.step], 'the run shows the step that fails')
    t.equal(await item.getByTestId('failed-at-publish').count(), 0, 'in place of the mark from the refusal')
    await captureEditor(t, opened, 'publish-refused', LOOKS[0])
    await checkEditorLayout(t, frame, 'a refused publish')

    // Fixed, the draft is published, with its settings.
    await editor.getByRole('tab', { name: 'Node', exact: true }).click()
    await (await selectNode(editor, 'bye')).getByRole('textbox', { name: 'Text', exact: true }).fill(THANKS)
    await editor.getByTestId('publish').click()
    await waitForText(status.locator('span').first(), 'Version 3 published')
    t.match(await editor.getByTestId('published-version').textContent(), /Published: version 3/)
    const published = await api('GET', `/v1/flows/${flowId}/versions/3`)
    t.same(published.definition.settings, { sessionTtlSeconds: 600, requirePassingTests: true }, 'the version keeps the settings')
  })

  t.test('the Versions tab shows the live version, rolls back to an older one for new sessions, and shows the shares of a gradual release', async (t) => {
    const flowId = await gatedFlow('Rollback', withThanks(THANKS, { requirePassingTests: true }))
    await api('POST', `/v1/flows/${flowId}/publish`)
    const opened = await openEditor(t, setup, flowId)
    const { page, editor, frame } = opened
    await editor.getByTestId('tab-versions').click()
    const panel = editor.getByTestId('versions-panel')
    const version = (n: number) => panel.getByTestId(`version-${n}`)
    await version(1).waitFor()
    t.same(await liveVersions(panel), ['version-3'], 'the newest version is live')
    t.equal(await version(3).getByRole('button', { name: 'Roll back to this version' }).count(), 0, 'the live version offers no roll back')
    const publishButton = editor.getByTestId('publish')
    t.ok(await publishButton.isDisabled(), 'nothing to publish while the saved draft is the live newest version')

    await version(2).getByRole('button', { name: 'Roll back to this version' }).click()
    const confirm = version(2).getByTestId('confirm-live')
    t.match(await confirm.innerText(), /Make version 2 live\? New sessions start on it at once/, 'the roll back is asked about')
    await confirm.getByRole('button', { name: 'Cancel' }).click()
    t.equal(await confirm.count(), 0, 'Cancel closes the question')
    await focusOn(frame, 'Roll back to this version')
    t.pass('and gives the focus back')
    t.equal((await api('GET', `/v1/flows/${flowId}`)).release.liveVersion, 3, 'with nothing changed')

    await page.keyboard.press('Enter')
    await confirm.waitFor()
    t.equal(await focusedName(frame), 'Make it live', 'Enter asks again, the confirming button focused')
    await page.keyboard.press('Enter')
    await waitForText(editor.getByTestId('status').locator('span').first(), 'Version 2 is live: new sessions start on it.')
    await confirm.waitFor({ state: 'detached' })
    t.same(await liveVersions(panel), ['version-2'], 'the older version is shown live')
    t.equal(await version(3).getByRole('button', { name: 'Make this version live' }).count(), 1, 'the newest is offered back')
    t.match(await editor.getByTestId('published-version').textContent(), /Live: version 2/, 'the toolbar says which version is live')
    t.same((await api('GET', `/v1/flows/${flowId}`)).release, { liveVersion: 2, gradual: null })
    const session = await api('POST', `/v1/sessions/flows/${flowId}/create`)
    t.equal((await api('GET', `/v1/sessions/${session.sessionId}`)).flowVersion, 2, 'a new session starts on it')
    t.ok(await publishButton.isEnabled(), 'Publish is offered again: it puts the newest version back out')

    // A gradual release made elsewhere shows as the panel opens: each version's share of new sessions.
    await api('POST', `/v1/flows/${flowId}/release`, { version: 3, percent: 20 })
    await editor.getByTestId('tab-tests').click()
    await editor.getByTestId('tab-versions').click()
    await waitForText(version(3).getByTestId('version-share'), '20% of new sessions')
    t.equal(await version(2).getByTestId('version-share').innerText(), '80% of new sessions', 'the live version takes the rest')
    t.equal(await version(1).getByTestId('version-share').count(), 0, 'a version out of release shows no share')
    t.match(await version(3).innerText(), /gradual release/)

    // Restoring an older version keeps the draft's safety net.
    await version(1).getByRole('button', { name: 'Restore' }).click()
    await waitForText(editor.getByTestId('status').locator('span').first(), 'Version 1 is loaded into the draft; save it to keep it.')
    await editor.getByTestId('tab-tests').click()
    t.ok(await editor.getByRole('checkbox', { name: WORDS.en.gate }).isChecked(), 'the setting stays on')
  })

  for (const look of LOOKS) {
    t.test(`a refused publish, the Tests tab and the versions in ${look.lang} and ${look.theme}`, async (t) => {
      const flowId = await gatedFlow(`Gate ${look.lang} ${look.theme}`, withThanks(CHANGED_THANKS, { requirePassingTests: true }))
      await api('POST', `/v1/flows/${flowId}/release`, { version: 1, percent: 30 })
      await showLook(t, setup, flowId, look)
    })
  }
})

/** Publishes the failing draft in `look`, shows the failing test and then the versions, capturing each. */
async function showLook(t: Test, setup: EditorSetup, flowId: string, look: Look): Promise<void> {
  const words = WORDS[look.lang]
  const opened = await openEditor(t, setup, flowId, look)
  const { editor } = opened
  await editor.getByTestId('publish').click()
  const status = editor.getByTestId('status')
  await waitForText(status.locator('span').first(), words.refused)
  await status.getByRole('button', { name: words.show }).click()
  await editor.getByTestId('failing-step').waitFor()
  t.same(await editor.getByTestId('failing-step').locator('h3').allInnerTexts(), [words.step], `the failing step, in ${look.lang}`)
  t.ok(await editor.getByRole('checkbox', { name: words.gate }).isChecked(), `the setting, in ${look.lang}`)
  await captureEditor(t, opened, 'publish-refused', look)
  await checkEditorLayout(t, opened.frame, `a refused publish in ${look.lang} and ${look.theme}`)

  await editor.getByTestId('tab-versions').click()
  const panel = editor.getByTestId('versions-panel')
  await panel.getByTestId('version-1').getByTestId('version-share').waitFor()
  t.same(await liveVersions(panel), ['version-2'], 'the live version is marked')
  t.equal(await panel.getByTestId('version-live').innerText(), words.live, `in ${look.lang}`)
  for (const version of [1, 2] as const) {
    t.equal(await panel.getByTestId(`version-${version}`).getByTestId('version-share').innerText(), words.shares[version], `version ${version}'s share, in ${look.lang}`)
  }
  await panel.getByTestId('version-1').getByRole('button').first().click()
  await panel.getByTestId('confirm-live').waitFor()
  await captureEditor(t, opened, 'versions-release', look)
}

/** Waits until the control named `name` has the focus, and fails naming the one that has it. */
async function focusOn(frame: Frame, name: string): Promise<void> {
  for (let tries = 0; tries < 20 && (await focusedName(frame)) !== name; tries++) await new Promise((resolve) => setTimeout(resolve, 50))
  const focused = await focusedName(frame)
  if (focused !== name) throw new Error(`expected the focus on "${name}", it is on "${focused}"`)
}

/** The rows of the versions marked live. */
const liveVersions = (panel: Locator) => panel.locator('li:has([data-testid="version-live"])').evaluateAll((items) => items.map((item) => item.getAttribute('data-testid')))

