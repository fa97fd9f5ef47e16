import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { promisify } from 'node:util'
import type { Page } from 'playwright-core'
import t from 'tap'
import { revealSecrets } from '../../src/commands/secrets.js'
import { fakeDns } from '../helpers/blocked-callbacks.js'
import { browserSkipReason, serveHostPage, waitForMessage } from '../helpers/browser.js'
import { captureEveryLook, captureScreen, LOOKS, openDashboard } from '../helpers/dashboard.js'
import { startHttpsReceiver } from '../helpers/https-receiver.js'
import { eventually } from '../helpers/wait.js'

const skip = browserSkipReason()
const run = promisify(execFile)
const CURL = '/usr/bin/curl'

/** The API's message shown on the field labelled `label`. */
const fieldAlert = (page: Page, label: string) =>
  page.locator('.field.invalid').filter({ has: page.getByLabel(label, { exact: true }) }).getByRole('alert')

t.test('workspaces: created, keys shown once, embed code that works, the editor tried in place', { skip }, async (t) => {
  // The admin key's callback is a real HTTPS receiver, named by a host the API cannot resolve (so it
  // accepts it); the delivery agent resolves it to the receiver on loopback, allowed here.
  const receiver = await startHttpsReceiver()
  t.teardown(() => receiver.close())
  const setup = await openDashboard(t, {
    engine: true,
    webhooks: { allowedPrivateCidrs: ['127.0.0.1/32'], caFile: receiver.caFile, lookup: fakeDns({ [receiver.dnsName]: ['127.0.0.1'] }) },
  })
  const { service, base } = setup
  const callbackUrl = `https://${receiver.dnsName}:${receiver.port}/hooks`
  const patched = await service.app.inject({ method: 'PATCH', url: `/v1/api-keys/${service.admin.apiKeyId}`, headers: { 'x-api-key': service.admin.apiKey }, payload: { callbackUrl } })
  t.equal(patched.statusCode, 200, "the admin key's callback is the receiver")
  const admin = await setup.signedInPage(t)

  // A workspace, refused first for its time zone.
  await admin.getByLabel('Name', { exact: true }).fill('Support')
  await admin.getByLabel('Time zone', { exact: true }).fill('Mars/Olympus_Mons')
  await admin.getByRole('button', { name: 'Create' }).click()
  await fieldAlert(admin, 'Time zone').filter({ hasText: 'Choose a time zone from the list, such as America/Sao_Paulo.' }).waitFor()
  t.equal(await admin.getByLabel('Time zone', { exact: true }).getAttribute('aria-invalid'), 'true', 'what is wrong shows on the time zone, in words')
  await admin.getByLabel('Time zone', { exact: true }).fill('America/Sao_Paulo')
  await admin.getByRole('button', { name: 'Create' }).click()
  await admin.getByRole('status').getByText('Workspace Support created.').waitFor()
  await admin.getByRole('cell').getByRole('link', { name: 'Support', exact: true }).click()
  await admin.getByRole('heading', { level: 1, name: 'Support' }).waitFor()
  const workspaceId = new URL(admin.url()).pathname.split('/')[3]!
  t.match(new URL(admin.url()).pathname, /^\/dashboard\/workspaces\/[0-9a-f-]{36}\/general$/, 'a workspace opens on its General tab')

  // An API key for it: a loopback callback refused on the field, then the key and secret shown once.
  await admin.getByRole('link', { name: 'API keys' }).click()
  await admin.getByLabel('Name', { exact: true }).fill('CRM')
  await admin.getByLabel('Callback URL').fill('http://hooks.example.com/flow')
  await admin.getByRole('button', { name: 'Create' }).click()
  await fieldAlert(admin, 'Callback URL').filter({ hasText: /^Use an https:\/\/ address\.$/ }).waitFor()
  await admin.getByLabel('Callback URL').fill('https://127.0.0.1/hook')
  await admin.getByRole('button', { name: 'Create' }).click()
  await fieldAlert(admin, 'Callback URL').filter({ hasText: 'Use a public address: 127.0.0.1 is on a private or local network.' }).waitFor()
  await admin.getByText('refuses anything that is not public https').waitFor()
  t.pass('a refused callback URL says on the field what to use instead, and why')
  await admin.getByLabel('Callback URL').fill('https://hooks.example.com/flow')
  await admin.getByRole('button', { name: 'Create' }).click()
  const apiKey = await admin.getByTestId('created-api-key').inputValue()
  const signingSecret = await admin.getByTestId('created-signing-secret').inputValue()
  t.match(apiKey, /^wh_/, 'the key is shown')
  t.ok(signingSecret.length >= 16, 'the signing secret is shown')
  await captureScreen(t, admin, 'workspaces-key-created', LOOKS[0])
  const reached = await service.app.inject({ method: 'GET', url: '/v1/workspaces', headers: { 'x-api-key': apiKey } })
  t.equal(reached.statusCode, 200, 'the shown key works')
  t.same(
    reached.json<{ content: { id: string }[] }>().content.map((workspace) => workspace.id),
    [workspaceId],
    'and reaches its own workspace only',
  )
  await admin.getByRole('button', { name: 'I have copied them' }).click()
  await admin.getByTestId('created-api-key').waitFor({ state: 'detached' })
  await admin.reload()
  await admin.getByRole('cell', { name: 'CRM', exact: true }).waitFor()
  t.notOk((await admin.content()).includes(apiKey), 'the key is never shown again')

  // Opening Support made it the workspace every screen works in: one sign-in manages them all.
  // A label around its select: the accessible name is the label's text and the chosen workspace's.
  const switcher = admin.locator('header').getByLabel('Workspace')
  t.equal(await switcher.inputValue(), workspaceId, "the header's switcher shows the opened workspace")
  const inSupport = { 'x-api-key': service.admin.apiKey, 'x-workspace-id': workspaceId }
  const listedInSupport = async (url: string) => JSON.stringify((await service.app.inject({ method: 'GET', url, headers: inSupport })).json())
  await admin.getByRole('link', { name: 'Embed' }).click()
  await admin.getByLabel('Name', { exact: true }).fill('Admin portal')
  await admin.getByRole('button', { name: 'Create' }).click()
  const adminClientId = await admin.getByTestId('created-client-id').inputValue()
  t.ok((await listedInSupport('/v1/clients')).includes(adminClientId), "the admin's OAuth client is made in Support")
  await admin.getByRole('link', { name: 'Variables' }).click()
  await admin.getByLabel('Name', { exact: true }).fill('segment')
  await admin.getByRole('button', { name: 'Create' }).click()
  await admin.getByRole('cell', { name: 'segment', exact: true }).waitFor()
  t.ok((await listedInSupport('/v1/variables')).includes('"segment"'), 'so is the variable')
  await admin.getByRole('link', { name: 'Sectors' }).click()
  await admin.getByLabel('Name', { exact: true }).fill('Triage')
  await admin.getByRole('button', { name: 'Create' }).click()
  await admin.getByRole('cell', { name: 'Triage', exact: true }).waitFor()
  t.ok((await listedInSupport('/v1/sectors')).includes('"Triage"'), 'and the sector')
  await admin.getByRole('link', { name: 'General' }).click()
  await admin.getByLabel('Name', { exact: true }).fill('Support Brazil')
  await admin.getByLabel('Time zone', { exact: true }).fill('America/Recife')
  await admin.getByRole('button', { name: 'Save' }).click()
  await admin.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
  await admin.getByRole('heading', { level: 1, name: 'Support Brazil' }).waitFor()
  t.match((await service.app.inject({ method: 'GET', url: `/v1/workspaces/${workspaceId}`, headers: inSupport })).json(), { name: 'Support Brazil', timezone: 'America/Recife' }, 'renamed and re-zoned')
  await switcher.getByRole('option', { name: 'Support Brazil' }).waitFor({ state: 'attached' })
  await admin.getByRole('link', { name: 'Flows', exact: true }).click()
  await admin.getByLabel('Name', { exact: true }).fill('Support bot')
  await admin.getByRole('button', { name: 'Create flow' }).click()
  await admin.waitForURL(/\/dashboard\/flows\/[0-9a-f-]{36}\?workspace=/)
  const adminFlow = await service.app.inject({ method: 'GET', url: `/v1/flows/${new URL(admin.url()).pathname.split('/').at(-1)}`, headers: inSupport })
  t.match(adminFlow.json(), { name: 'Support bot', workspace: { id: workspaceId, name: 'Support Brazil' } }, "New flow creates in the chosen workspace")
  const supportFlowId = new URL(admin.url()).pathname.split('/').at(-1)!
  // The address names the chosen workspace: opened in another signed-in tab, whose own choice is
  // the key's workspace, it shows the same flow rather than a not-found.
  t.equal(new URL(admin.url()).searchParams.get('workspace'), workspaceId, "the flow's address names its workspace")
  const tab = await setup.signedInPage(t)
  await tab.goto(admin.url())
  await tab.getByRole('heading', { level: 1, name: 'Support bot' }).waitFor()
  t.equal(await tab.locator('header').getByLabel('Workspace').inputValue(), workspaceId, 'in another tab the address chooses the workspace')

  // A pipeline with a card, from the empty Kanban screen, which says how to begin.
  await admin.getByRole('link', { name: 'Kanban', exact: true }).click()
  await admin.getByTestId('first-steps').getByText('No pipelines yet: create your first pipeline').waitFor()
  await admin.getByRole('link', { name: 'New pipeline' }).click()
  await admin.getByLabel('Name', { exact: true }).fill('Leads')
  await admin.getByRole('button', { name: 'Create' }).click()
  await admin.getByRole('heading', { level: 1, name: 'Leads' }).waitFor()
  const pipelineId = new URL(admin.url()).pathname.split('/').at(-1)!
  await admin.getByRole('link', { name: 'Add a card to New' }).click()
  await admin.getByLabel('Tags').fill('first-lead')
  await admin.getByRole('button', { name: 'Create' }).click()
  await admin.getByRole('heading', { level: 1, name: 'Leads' }).waitFor()
  t.ok((await listedInSupport('/v1/kanban/pipelines')).includes(pipelineId), 'the pipeline is made in Support')
  await eventually('the card listed in Support', async () => ((await listedInSupport(`/v1/kanban/pipelines/${pipelineId}/cards`)).includes('"first-lead"') ? true : undefined))
  t.pass('and its card')

  // A session started from the flow's page: its variables typed, its webhook at the receiver.
  await admin.goto(`${base}/dashboard/flows/${supportFlowId}`)
  const start = admin.getByRole('form', { name: 'Start a session' })
  t.equal(await start.getByTestId('start-callback').innerText(), callbackUrl, "the form shows where the session's webhooks go: the key's callback")
  await start.getByLabel('Contact id').fill('5511999990000')
  await start.getByLabel('segment (Text)').fill('vip')
  await start.getByRole('button', { name: 'Start the session' }).click()
  await admin.waitForURL(/\/dashboard\/sessions\/[0-9a-f-]{36}\?workspace=/)
  const sessionId = new URL(admin.url()).pathname.split('/').at(-1)!
  await admin.getByTestId('session-flow').getByRole('link', { name: 'Support bot' }).waitFor()
  const session = await service.app.inject({ method: 'GET', url: `/v1/sessions/${sessionId}`, headers: inSupport })
  t.match(session.json(), { workspaceId, flowId: supportFlowId, externalId: '5511999990000', variables: { segment: 'vip' } }, 'the session runs in Support, for the contact, with the variable')
  const webhook = await eventually('the webhook at the receiver', () => receiver.requests.find((request) => request.body.includes(sessionId)))
  t.equal(webhook.path, '/hooks', "the session's webhook arrived at the key's callback")
  t.match(JSON.parse(webhook.body), { sessionId }, 'and it is about that session')
  await captureScreen(t, admin, 'workspaces-switcher', LOOKS[0])
  await switcher.selectOption(service.admin.workspaceId)
  await admin.getByRole('link', { name: 'Workspaces', exact: true }).click()
  await admin.getByRole('cell').getByRole('link', { name: 'Main', exact: true }).click()
  await admin.getByRole('link', { name: 'Sectors' }).click()
  await admin.getByText('No sectors yet: name the first below').waitFor()
  t.equal(await switcher.inputValue(), service.admin.workspaceId, 'switched back to the key\'s own workspace, whose sectors are its own')
  // The organization's flows are listed from any workspace; one of another opens there.
  await admin.getByRole('link', { name: 'Flows', exact: true }).click()
  await admin.locator('tbody').getByRole('link', { name: 'Support bot', exact: true }).click()
  await admin.getByRole('heading', { level: 1, name: 'Support bot' }).waitFor()
  t.equal(await switcher.inputValue(), workspaceId, "a flow of another workspace, opened from the list, chooses its workspace")

  // The new key's own session: its workspace only, and everything made in it.
  const flow = await service.app.inject({ method: 'POST', url: '/v1/flows', headers: { 'x-api-key': apiKey }, payload: { name: 'Welcome' } })
  t.equal(flow.statusCode, 201)
  const flowId = flow.json<{ id: string }>().id
  const own = await setup.signedInPage(t, { apiKey })
  await own.getByText('it reaches only its own workspace').waitFor()
  const rows = own.locator('tbody tr')
  await rows.first().waitFor()
  t.equal(await rows.count(), 1, "a workspace key's session lists one workspace")
  t.match(await rows.first().textContent(), /Support/)
  t.equal(await own.getByRole('button', { name: 'Create' }).count(), 0, 'and offers no new workspace')

  await own.goto(`${base}/dashboard/workspaces/${workspaceId}/embed`)
  await own.getByLabel('Name', { exact: true }).fill('Portal')
  await own.getByRole('button', { name: 'Create' }).click()
  const clientId = await own.getByTestId('created-client-id').inputValue()
  const clientSecret = await own.getByTestId('created-client-secret').inputValue()
  t.ok(clientSecret.length > 0, 'the client secret is shown')
  await own.getByTestId('snippet-iframe').filter({ hasText: flowId }).waitFor()
  await captureScreen(t, own, 'workspaces-client-created', LOOKS[0])

  // The snippets, run as the customer would.
  const nodeCode = (await own.getByTestId('snippet-node').textContent()) ?? ''
  t.ok(nodeCode.includes(clientId) && nodeCode.includes(clientSecret), 'the Node snippet holds the new client id and secret')
  const node = await run(process.execPath, ['--input-type=module', '-e', `${nodeCode}\nconsole.log(ott)`])
  const ott = node.stdout.trim()
  t.ok(ott.length > 0, 'the Node snippet got a one-time token')
  if (existsSync(CURL)) {
    const curlCode = (await own.getByTestId('snippet-curl').textContent()) ?? ''
    const curl = await run('sh', ['-c', curlCode])
    const curlOtt = (JSON.parse(curl.stdout) as { ott: string }).ott
    const exchanged = await service.app.inject({ method: 'POST', url: '/auth/exchange', payload: { ott: curlOtt } })
    t.equal(exchanged.statusCode, 200, "the curl snippet's token signs an editor in")
  }
  const iframeCode = (await own.getByTestId('snippet-iframe').textContent()) ?? ''
  const editorUrl = /src="([^"]+)"/.exec(iframeCode)?.[1]
  t.equal(editorUrl, `${base}/editor/en/flows/builder/${flowId}?theme=light`, "the iframe tag frames this service's editor on the flow")
  const host = await serveHostPage(t)
  const hostPage = await setup.browser.newPage()
  t.teardown(() => hostPage.close())
  await hostPage.goto(host.url(editorUrl!, ott))
  await waitForMessage(hostPage, 'authenticated')
  await hostPage.frameLocator('#editor').getByTestId('node-start').waitFor()
  t.pass("a customer's page signs the editor in with the snippet's token")

  await own.getByRole('button', { name: 'Open the editor here' }).click()
  await own.getByRole('status').filter({ hasText: 'Editor signed in' }).waitFor()
  await own.frameLocator('iframe[title="Flow editor preview"]').getByTestId('node-start').waitFor()
  t.pass('the "try it" preview shows the editor signed in inside the tab')
  await captureScreen(t, own, 'workspaces-embed-try', LOOKS[0])

  // Sectors and variables, in the key's own workspace.
  await own.getByRole('link', { name: 'Sectors' }).click()
  await own.getByLabel('Name', { exact: true }).fill('Sales')
  await own.getByRole('button', { name: 'Create' }).click()
  await own.getByRole('cell', { name: 'Sales', exact: true }).waitFor()
  await own.getByRole('button', { name: 'Rename Sales' }).click()
  await own.getByLabel('New name of Sales').fill('Inside sales')
  await own.getByRole('button', { name: 'Save' }).click()
  await own.getByRole('cell', { name: 'Inside sales', exact: true }).waitFor()
  t.pass('a sector is created and renamed')

  await own.getByRole('link', { name: 'Variables' }).click()
  await own.getByLabel('Name', { exact: true }).fill('plan_limit')
  await own.getByLabel('Type').selectOption('number')
  await own.getByLabel('Default value').fill('ten')
  await own.getByRole('button', { name: 'Create' }).click()
  await fieldAlert(own, 'Default value').waitFor()
  t.pass('a default of the wrong type shows the API message on the field')
  await own.getByLabel('Default value').fill('10')
  await own.getByRole('button', { name: 'Create' }).click()
  await own.getByRole('cell', { name: 'plan_limit', exact: true }).waitFor()
  await own.getByRole('button', { name: 'Edit plan_limit' }).click()
  await own.getByLabel('Description').fill('messages per day')
  await own.getByRole('button', { name: 'Save' }).click()
  await own.getByRole('cell', { name: 'messages per day' }).waitFor()
  t.pass('a variable is created and its description changed')

  // Secrets: added, listed by name and dates only, given a new value, deleted; a value never shown.
  const valueOf = async (name: string) => (await revealSecrets({ store: service.store, secrets: service.secrets }, workspaceId, [name])).get(name)
  await own.getByRole('link', { name: 'Secrets' }).click()
  await own.getByText('No secrets yet: add the first below').waitFor()
  await own.getByText('An HTTP request node reads it as {{secrets.NAME}}').waitFor()
  await captureScreen(t, own, 'workspaces-secrets-empty', LOOKS[0])
  const secretValue = own.getByLabel('Value', { exact: true })
  t.equal(await secretValue.getAttribute('type'), 'password', 'a value is typed into a password field')
  await own.getByLabel('Name', { exact: true }).fill('shop token')
  await secretValue.fill('tok-Sh0p-7f3a9c')
  t.equal(await own.getByTestId('secret-bytes').innerText(), '15 of 8,192 bytes', 'the value counts against its limit in bytes')
  await own.getByRole('button', { name: 'Create' }).click()
  await fieldAlert(own, 'Name').filter({ hasText: 'Use 1 to 64 letters (A–Z, a–z), digits or _, with no spaces.' }).waitFor()
  t.equal(await valueOf('shop token'), undefined, 'a name with a space is refused on its field, in words, before anything is sent')
  await own.getByLabel('Name', { exact: true }).fill('shop')
  await own.getByRole('button', { name: 'Create' }).click()
  await own.getByRole('status').filter({ hasText: 'Secret shop added.' }).waitFor()
  await own.getByRole('rowheader', { name: 'shop', exact: true }).waitFor()
  t.equal(await valueOf('shop'), 'tok-Sh0p-7f3a9c', 'the secret holds the value typed')
  t.equal(await secretValue.inputValue(), '', 'the value field is emptied once saved')
  t.notOk((await own.content()).includes('tok-Sh0p-7f3a9c'), 'the value is nowhere on the page')
  const secretRow = own.getByRole('row').filter({ has: own.getByRole('rowheader', { name: 'shop', exact: true }) })
  t.match(await secretRow.innerText(), /\{\{secrets\.shop\}\}/, 'the row says how a flow reads it')
  await own.getByLabel('Name', { exact: true }).fill('shop')
  await own.getByText('A secret named shop exists: saving replaces its value.').waitFor()
  await own.getByLabel('Name', { exact: true }).fill('')
  t.pass('adding a name that exists says it replaces its value')

  await own.getByRole('button', { name: 'Replace value: shop' }).click()
  await own.getByRole('heading', { name: 'Replace the value of shop' }).waitFor()
  t.equal(await own.getByLabel('Name', { exact: true }).getAttribute('readonly'), '', 'the name stays')
  t.equal(await own.evaluate('document.activeElement.getAttribute("type")'), 'password', 'the value field takes the focus')
  await secretValue.fill('tok-N3w-1b2c')
  await own.getByRole('button', { name: 'Save' }).click()
  await own.getByRole('status').filter({ hasText: 'The value of shop is replaced; the old one can no longer be read.' }).waitFor()
  t.equal(await valueOf('shop'), 'tok-N3w-1b2c', 'the new value replaced the old')
  await own.getByRole('heading', { name: 'New secret' }).waitFor()

  await own.getByRole('button', { name: 'Delete: shop' }).click()
  const confirmDelete = own.getByRole('group', { name: /^Delete shop\? Flows that use it find no value/ })
  await confirmDelete.waitFor()
  await captureScreen(t, own, 'workspaces-secrets-delete', LOOKS[0])
  await confirmDelete.getByRole('button', { name: 'Delete', exact: true }).click()
  await own.getByRole('status').filter({ hasText: 'Secret shop deleted; its value can no longer be read.' }).waitFor()
  await own.getByText('No secrets yet: add the first below').waitFor()
  t.equal(await valueOf('shop'), undefined, 'deleted after asking, its value can no longer be read')
  await own.getByLabel('Name', { exact: true }).fill('crm_token')
  await secretValue.fill('crm-9f8e')
  await own.getByRole('button', { name: 'Create' }).click()
  await own.getByRole('rowheader', { name: 'crm_token', exact: true }).waitFor()

  await captureEveryLook(t, admin, base, 'workspaces-list', '/workspaces', (page) => page.locator('tbody tr').nth(1).waitFor())
  const tabs: [string, (page: Page) => Promise<unknown>][] = [
    ['general', (page) => page.locator('.ws-details').waitFor()],
    ['api-keys', (page) => page.locator('tbody tr').first().waitFor()],
    ['embed', (page) => page.getByTestId('snippet-iframe').filter({ hasText: flowId }).waitFor()],
    ['sectors', (page) => page.locator('tbody tr').first().waitFor()],
    ['variables', (page) => page.locator('tbody tr').first().waitFor()],
    ['secrets', (page) => page.locator('tbody tr').first().waitFor()],
  ]
  for (const [tab, ready] of tabs) await captureEveryLook(t, own, base, `workspaces-${tab}`, `/workspaces/${workspaceId}/${tab}`, ready)
})
