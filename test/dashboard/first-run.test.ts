import t from 'tap'
import { browserSkipReason, launchBrowser } from '../helpers/browser.js'
import { runCli, startService } from '../helpers/cli.js'
import { migratedDataDir } from '../helpers/pglite-template.js'
import { captureScreen, LOOKS } from '../helpers/dashboard.js'

const skip = browserSkipReason()
const SIGN_IN_LINK = /^ {2}(http:\/\/\S+\/dashboard\/sign-in#token=[A-Za-z0-9_-]{43})$/m

t.test("a newcomer's first start: the printed link opens the dashboard signed in", { skip }, async (t) => {
  const dataDir = await migratedDataDir(t)
  const service = await startService(t, { DATA_DIR: dataDir })
  const banner = service.output()
  t.match(banner, /^ {2}dashboard {4}http:\/\/127\.0\.0\.1:\d+\/$/m, 'the banner names the dashboard first')
  const link = SIGN_IN_LINK.exec(banner)?.[1]
  t.ok(link, 'a one-time sign-in link is printed beside the key')
  t.notMatch(banner, /create the first key/, 'nothing asks for a key that was just printed')

  const home = await fetch(`${service.baseUrl}/`, { redirect: 'manual' })
  t.equal(home.status, 302, 'GET / leads to the dashboard')
  t.equal(home.headers.get('location'), '/dashboard/')

  const browser = await launchBrowser(t)
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } })
  t.teardown(() => context.close())
  const page = await context.newPage()
  page.setDefaultTimeout(15_000)
  const inlineScriptErrors: string[] = []
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/.test(message.text())) inlineScriptErrors.push(message.text())
  })

  await t.test('the link signs in, once, and leaves no token in the address', async (t) => {
    await page.goto(link!)
    await page.getByRole('navigation', { name: 'Main' }).waitFor()
    t.equal(new URL(page.url()).hash, '', 'the token is gone from the address bar and history')
    t.match(new URL(page.url()).pathname, /^\/dashboard\/workspaces$/)
    await page.getByRole('heading', { level: 1 }).waitFor()
    await captureScreen(t, page, 'first-run-signed-in', LOOKS[0])

    const second = await context.newPage()
    t.teardown(() => second.close())
    await context.clearCookies()
    await second.goto(link!)
    const refused = second.getByRole('alert').filter({ hasText: 'has been used or has expired' })
    await refused.waitFor()
    t.match(await refused.textContent(), /npx flowd dashboard-link \(on the embedded database, stop the service first/, 'the same link refused the second time, with a way forward that works on the embedded store')
    await captureScreen(t, second, 'sign-in-link-used', LOOKS[0])
  })

  await t.test('every cookie is HttpOnly and SameSite=Strict; the key is kept nowhere in the browser', async (t) => {
    await context.clearCookies()
    const apiKey = /X-Api-Key\s+(wh_\S+)/.exec(banner)?.[1]
    t.ok(apiKey, 'the banner printed the admin key')
    await page.goto(`${service.baseUrl}/dashboard/`)
    await page.getByLabel('API key').fill(apiKey!)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('navigation', { name: 'Main' }).waitFor()
    const cookies = await context.cookies()
    t.ok(cookies.length > 0, 'a session cookie was set')
    for (const cookie of cookies) {
      t.equal(cookie.httpOnly, true, `${cookie.name} is HttpOnly`)
      t.equal(cookie.sameSite, 'Strict', `${cookie.name} is SameSite=Strict`)
      t.notMatch(cookie.value, apiKey!, `${cookie.name} does not hold the key`)
    }
    const stored = await page.evaluate('JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie })')
    t.notOk(String(stored).includes(apiKey!), 'neither storage nor script-visible cookies hold the key')
    t.notOk(String(stored).includes(cookies[0]!.value), 'nor the session token')
  })

  await t.test("the page's CSP runs no inline script", async (t) => {
    const ran = await page.evaluate(
      "new Promise((resolve) => { const s = document.createElement('script'); s.textContent = 'window.__inline = true'; document.body.append(s); setTimeout(() => resolve(window.__inline === true), 200) })",
    )
    t.equal(ran, false, 'an injected inline script did not run')
    t.ok(inlineScriptErrors.length > 0, 'the browser reported the CSP refusal')
  })

  await t.test('sign-out ends the session on the server, not only in this tab', async (t) => {
    const [cookie] = await context.cookies()
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    const replayed = await fetch(`${service.baseUrl}/v1/workspaces`, { headers: { cookie: `${cookie!.name}=${cookie!.value}` } })
    t.equal(replayed.status, 401, 'the old cookie, replayed, is refused')

    t.ok(await page.getByText('Conversation Flow Service').isVisible(), 'the sign-in page names the product')
    await page.getByLabel('Language').selectOption('pt')
    await page.getByRole('heading', { name: 'Entrar' }).waitFor()
    await page.getByLabel('Tema').selectOption('dark')
    t.equal(await page.evaluate('document.documentElement.dataset.theme'), 'dark', 'the sign-in page switches language and theme before signing in')
    await page.getByLabel('Idioma').selectOption('en')
    await page.getByLabel('Theme').selectOption('light')

    for (const look of LOOKS) {
      await page.goto(`${service.baseUrl}/dashboard/?lang=${look.lang}&theme=${look.theme}`)
      await page.getByRole('heading', { name: look.lang === 'pt' ? 'Entrar' : 'Sign in' }).waitFor()
      await captureScreen(t, page, 'sign-in', look)
    }
  })

  await t.test('a later start prints a new link for the same key, and flowd dashboard-link makes one more', async (t) => {
    t.equal(await service.stop(), 0)
    const again = await startService(t, { DATA_DIR: dataDir })
    const next = SIGN_IN_LINK.exec(again.output())?.[1]
    t.ok(next, 'a new link')
    t.not(next, link)
    t.notMatch(again.output(), /X-Api-Key/, 'the key is not printed again')
    await context.clearCookies()
    await page.goto(next!)
    await page.getByRole('navigation', { name: 'Main' }).waitFor()
    t.pass('it signs in')
    t.equal(await again.stop(), 0)

    const printed = await runCli(['dashboard-link', '--json', '--url', 'https://flows.example.com'], { DATA_DIR: dataDir })
    t.equal(printed.code, 0)
    t.match(JSON.parse(printed.stdout), { url: /^https:\/\/flows\.example\.com\/dashboard\/sign-in#token=[A-Za-z0-9_-]{43}$/, expiresInSeconds: 86400 })
    const unknown = await runCli(['dashboard-link', '--api-key-id', '0190a0b0-0000-7000-8000-000000000000'], { DATA_DIR: dataDir })
    t.equal(unknown.code, 3, 'no such live key: exit 3')
  })
})
