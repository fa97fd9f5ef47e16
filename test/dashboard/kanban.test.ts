import t from 'tap'
import { browserSkipReason } from '../helpers/browser.js'
import { captureEveryLook, openDashboard } from '../helpers/dashboard.js'

const skip = browserSkipReason()

interface Pipeline {
  id: string
  stages: { id: string; name: string; color: string }[]
  fields: { id: string; name: string; currency: string | null }[]
}

t.test('kanban: pipelines, cards, moving by mouse and keyboard, search and totals', { skip }, async (t) => {
  const setup = await openDashboard(t)
  const { service } = setup
  const headers = { 'x-api-key': service.admin.apiKey }
  const getJson = async <T>(url: string): Promise<T> => {
    const response = await service.app.inject({ method: 'GET', url, headers })
    t.equal(response.statusCode, 200, `GET ${url}`)
    return response.json<T>()
  }
  const page = await setup.signedInPage(t, { path: '/kanban' })

  await page.getByRole('link', { name: 'New pipeline' }).first().click()
  await page.getByLabel('Name', { exact: true }).fill('Deals')
  await page.getByLabel('Stage 1 colour').fill('#1e88e5')
  await page.getByLabel('Stage 2 colour').fill('#43a047')
  await page.getByRole('button', { name: 'Add a stage' }).click()
  await page.getByLabel('Stage 3 colour').fill('#8e24aa')
  await page.getByRole('button', { name: 'Add a field' }).click()
  await page.getByLabel('Field 1 name').fill('Title')
  await page.getByLabel('Field 1 is required').check()
  await page.getByRole('button', { name: 'Add a field' }).click()
  await page.getByLabel('Field 2 name').fill('Amount')
  await page.getByLabel('Field 2 type').selectOption('currency')
  const currency = page.getByLabel('Field 2 currency')
  t.equal(await currency.inputValue(), 'USD', 'a currency field starts with a currency (USD in English), chosen from a list')
  t.match(await currency.locator('option[value="BRL"]').textContent(), /^BRL · Brazilian [Rr]eal$/, 'each currency by its code and name')
  await page.getByRole('button', { name: 'Create' }).click()
  const emptyStage = page.getByLabel('Stage 3 name')
  const emptyStageError = page.locator('.field.invalid').filter({ has: emptyStage }).getByRole('alert')
  await emptyStageError.waitFor()
  t.equal(await emptyStage.getAttribute('aria-invalid'), 'true', 'what is wrong with the nameless stage shows on its name')
  t.equal(await emptyStageError.textContent(), 'Fill this in.', 'in words, not the validator’s')

  await emptyStage.fill('Won')
  await page.getByRole('button', { name: 'Create' }).click()
  await page.getByRole('heading', { level: 1, name: 'Deals' }).waitFor()
  const pipelineId = new URL(page.url()).pathname.split('/').pop()!
  const pipeline = await getJson<Pipeline>(`/v1/kanban/pipelines/${pipelineId}`)
  t.same(pipeline.stages.map((stage) => stage.name), ['New', 'Done', 'Won'], 'the stages were created in the order of the form')
  t.same(pipeline.stages.map((stage) => stage.color.toLowerCase()), ['#1e88e5', '#43a047', '#8e24aa'], 'with the colours chosen')
  t.equal(pipeline.fields[1]!.currency, 'USD', 'the currency field has the currency the picker started with')
  const stageId = (name: string) => pipeline.stages.find((stage) => stage.name === name)!.id
  const [title, amount] = pipeline.fields

  await page.getByRole('link', { name: 'Add a card to New' }).click()
  await page.getByRole('heading', { level: 1, name: 'New card in Deals' }).waitFor()
  await page.getByLabel('Amount (USD)').fill('1200')
  await page.getByRole('button', { name: 'Create' }).click()
  const titleInput = page.getByLabel('Title (required)')
  const titleError = page.locator('.field.invalid').filter({ has: titleInput }).getByRole('alert')
  await titleError.waitFor()
  t.equal(await titleError.textContent(), 'Fill in Title: it is required.', 'a card without its required title is refused, and why shows on the title')
  await titleInput.fill('Acme deal')
  await page.getByLabel('Tags').fill('hot, vip')
  await page.getByRole('button', { name: 'Create' }).click()
  await page.getByRole('heading', { level: 1, name: 'Deals' }).waitFor()

  for (const card of [
    { stageId: stageId('New'), values: { [title!.id]: 'Beta deal', [amount!.id]: 300 }, tags: ['cold'] },
    { stageId: stageId('Done'), values: { [title!.id]: 'Gamma deal', [amount!.id]: 50 } },
  ]) {
    const created = await service.app.inject({ method: 'POST', url: `/v1/kanban/pipelines/${pipelineId}/cards`, headers, payload: card })
    t.equal(created.statusCode, 201)
  }
  await page.reload()
  const column = (name: string) => page.getByRole('region', { name, exact: true })
  const cardIn = (stage: string, cardTitle: string) => column(stage).locator('article', { hasText: cardTitle })
  await cardIn('New', 'Beta deal').waitFor()
  const totals = (stage: string) => page.getByRole('group', { name: `Totals of ${stage}` })
  await totals('New').getByText('$1,500.00').waitFor()
  t.pass('the New column sums its amounts')
  t.equal(await totals('New').getByRole('definition').first().textContent(), '2', 'the New column counts its cards')
  await totals('Done').getByText('$50.00').waitFor()

  const acmeId = await cardIn('New', 'Acme deal').getAttribute('data-card-id')
  await cardIn('New', 'Acme deal').dragTo(column('Done'))
  await cardIn('Done', 'Acme deal').waitFor()
  await totals('Done').getByText('$1,250.00').waitFor()
  t.equal(await totals('Done').getByRole('definition').first().textContent(), '2', 'the Done column counts the card it received')
  t.equal((await getJson<{ stageId: string }>(`/v1/kanban/cards/${acmeId}`)).stageId, stageId('Done'), 'the card dragged to Done is in Done through the API')

  const betaId = await cardIn('New', 'Beta deal').getAttribute('data-card-id')
  const betaStage = page.getByLabel('Move to (card Beta deal)')
  await betaStage.focus()
  await betaStage.selectOption({ label: 'Won' })
  await page.keyboard.press('Tab')
  await page.keyboard.press('Enter')
  await page.getByRole('status').filter({ hasText: 'Moved Beta deal to Won.' }).waitFor()
  await cardIn('Won', 'Beta deal').waitFor()
  t.equal((await getJson<{ stageId: string }>(`/v1/kanban/cards/${betaId}`)).stageId, stageId('Won'), 'the card moved with its "move to" choice is in Won through the API')

  const doomed = await service.app.inject({ method: 'POST', url: `/v1/kanban/pipelines/${pipelineId}/cards`, headers, payload: { stageId: stageId('New'), values: { [title!.id]: 'Doomed deal' } } })
  await page.reload()
  await cardIn('New', 'Doomed deal').waitFor()
  t.equal((await service.app.inject({ method: 'DELETE', url: `/v1/kanban/cards/${doomed.json<{ id: string }>().id}`, headers })).statusCode, 204)
  await page.getByLabel('Move to (card Doomed deal)').selectOption({ label: 'Done' })
  await page.getByRole('button', { name: 'Move Doomed deal to the chosen stage' }).click()
  await page.getByRole('alert').filter({ hasText: 'This no longer exists; it may have been deleted.' }).waitFor()
  t.pass('a move of a card deleted meanwhile is refused, and said so')
  await cardIn('New', 'Doomed deal').waitFor({ state: 'detached' })

  await page.getByLabel('Text in any value').fill('gamma')
  await page.getByRole('button', { name: 'Search' }).click()
  await page.waitForURL(/[?&]q=gamma/)
  // Each column loads its own cards: wait for every column to drop the cards that do not match.
  await cardIn('Done', 'Acme deal').waitFor({ state: 'detached' })
  await cardIn('Won', 'Beta deal').waitFor({ state: 'detached' })
  t.equal(await page.locator('article').count(), 1, 'searching "gamma" leaves only its card')
  await page.reload()
  await cardIn('Done', 'Gamma deal').waitFor()
  t.equal(await page.getByLabel('Text in any value').inputValue(), 'gamma', 'the search stays in the address')

  await page.getByLabel('Text in any value').fill('')
  await page.getByLabel('Tags').fill('hot')
  await page.getByRole('button', { name: 'Search' }).click()
  await page.waitForURL(/[?&]tags=hot/)
  await cardIn('Done', 'Acme deal').waitFor()
  await cardIn('Done', 'Gamma deal').waitFor({ state: 'detached' })
  await cardIn('Won', 'Beta deal').waitFor({ state: 'detached' })
  t.equal(await page.locator('article').count(), 1, 'the tag "hot" leaves only its card')

  await page.getByRole('link', { name: 'Acme deal' }).click()
  await page.getByLabel('Amount (USD)').fill('1000')
  await page.getByRole('button', { name: 'Save' }).click()
  await cardIn('Done', 'Acme deal').getByText('$1,000.00').waitFor()
  t.pass('the card edited on its screen shows its new amount on the board')

  await page.getByRole('link', { name: 'Edit pipeline' }).click()
  await page.getByRole('button', { name: 'Remove Done' }).click()
  await page.getByRole('button', { name: 'Save' }).click()
  await page.getByRole('alert').filter({ hasText: 'Stage Done still holds cards: move or delete them first.' }).waitFor()
  t.pass('removing a stage that holds cards is refused, with the reason')
  await page.reload()
  await page.getByLabel('Name', { exact: true }).fill('Deals 2026')
  await page.getByLabel('Stage 3 name').fill('Closed won')
  await page.getByRole('button', { name: 'Save' }).click()
  await page.getByRole('heading', { level: 1, name: 'Deals 2026' }).waitFor()
  await column('Closed won').locator('article', { hasText: 'Beta deal' }).waitFor()
  t.pass('the pipeline edited on its form shows its new names on the board, its cards kept')

  const bulk = await service.app.inject({ method: 'POST', url: '/v1/kanban/pipelines', headers, payload: { name: 'Bulk', stages: [{ name: 'Inbox' }] } })
  const bulkPipeline = bulk.json<Pipeline>()
  for (let i = 0; i < 23; i++) {
    await service.app.inject({ method: 'POST', url: `/v1/kanban/pipelines/${bulkPipeline.id}/cards`, headers, payload: { stageId: bulkPipeline.stages[0]!.id, tags: [`n${i}`] } })
  }
  await page.goto(`${setup.base}/dashboard/kanban/${bulkPipeline.id}`)
  await page.getByRole('button', { name: 'Show more (20 of 23)' }).click()
  await page.locator('article').nth(22).waitFor()
  t.equal(await page.getByRole('button', { name: /Show more/ }).count(), 0, 'every card is shown after "show more", and the button is gone')

  const base = setup.base
  const heading = (p: typeof page) => p.getByRole('heading', { level: 1 }).waitFor()
  await captureEveryLook(t, page, base, 'kanban-pipelines', '/kanban', (p) => p.getByRole('table').waitFor())
  await captureEveryLook(t, page, base, 'kanban-board', `/kanban/${pipelineId}`, (p) => p.locator('article').nth(2).waitFor())
  await captureEveryLook(t, page, base, 'kanban-card-edit', `/kanban/${pipelineId}/cards/${acmeId}`, (p) => p.getByRole('button', { name: /Save|Salvar/ }).waitFor())
  await captureEveryLook(t, page, base, 'kanban-pipeline-edit', `/kanban/${pipelineId}/edit`, async (p) => {
    await heading(p)
    await p.getByRole('button', { name: /Save|Salvar/ }).waitFor()
  })
})
