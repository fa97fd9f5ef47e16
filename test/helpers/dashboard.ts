import { readFileSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import type { Browser, Page } from 'playwright-core'
import type { Test } from 'tap'
import { dashboardSignInUrl, issueSignInLink } from '../../src/auth/dashboard-sessions.js'
import { hashApiKey } from '../../src/commands/api-keys.js'
import type { Config } from '../../src/config.js'
import { assertionMessage } from './assertion-message.js'
import { launchBrowser, settled } from './browser.js'
import { openTestApp, type TestApp, type TestWebhookSettings } from './app.js'
import { oneBackend, type Backend } from './storage.js'
import { testEveryLook } from './test-scope.js'
import { eventually } from './wait.js'

/** Where the dashboard's browser tests write their screenshots (looked at by people, not compared). */
export const DASHBOARD_ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/dashboard/', import.meta.url))

export const EVERY_LOOK = [
  { lang: 'en', theme: 'light' },
  { lang: 'en', theme: 'dark' },
  { lang: 'pt', theme: 'light' },
  { lang: 'pt', theme: 'dark' },
] as const
export type Look = (typeof EVERY_LOOK)[number]

/**
 * The looks each screen is captured and axe-checked in: en-light and pt-dark, which together cover
 * both languages and both themes; all four with `TEST_EVERY_LOOK=1` (test/helpers/test-scope.ts).
 * The first is English and light, the last Portuguese and dark.
 */
export const LOOKS: readonly [Look, ...Look[]] = testEveryLook ? EVERY_LOOK : [EVERY_LOOK[0], EVERY_LOOK[3]]

/** What `look` shows: `en` in English, `pt` in Portuguese. */
export const inLook = <T>(look: Look, en: T, pt: T): T => (look.lang === 'pt' ? pt : en)

/**
 * The service's API as its admin key, for arranging what a screen shows: `call` answers the body
 * and throws on a status of 300 or more; `answered` waits until a session has answered every
 * message it was sent.
 */
export function adminApi(service: TestApp) {
  const headers = { 'x-api-key': service.admin.apiKey }
  const call = async <T>(method: 'GET' | 'POST' | 'PUT', url: string, payload?: object): Promise<T> => {
    const response = await service.app.inject({ method, url, headers, ...(payload ? { payload } : {}) })
    if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
    return (response.body ? response.json() : undefined) as T
  }
  const answered = (sessionId: string) =>
    eventually(`session ${sessionId} answered`, async () => ((await call<{ pendingMessages: number }>('GET', `/v1/sessions/${sessionId}`)).pendingMessages === 0 ? true : undefined))
  return { call, answered }
}

export interface DashboardSetup {
  service: TestApp
  /** The service's address, e.g. `http://127.0.0.1:41234`. */
  base: string
  browser: Browser
  /** A one-time sign-in link for `apiKey` (the admin key by default), as `flowd start` prints it. */
  signInLink(apiKey?: string): Promise<string>
  /** A new page signed in with `apiKey` (the admin key by default) by a one-time link, showing `path` under /dashboard. */
  signedInPage(t: Test, options?: { apiKey?: string; path?: string; look?: Look }): Promise<Page>
}

/**
 * One service (its read models, and the engine, its calls outside and webhook delivery when
 * asked) listening on a port, and one Chromium, for a file of dashboard tests; each test opens its
 * own pages.
 */
export async function openDashboard(
  t: Test,
  options: { backend?: Backend; engine?: boolean; webhooks?: TestWebhookSettings; calls?: NonNullable<Parameters<typeof openTestApp>[2]>['calls']; config?: Config } = {},
): Promise<DashboardSetup> {
  const service = await openTestApp(t, options.backend ?? oneBackend, { engine: options.engine, webhooks: options.webhooks, calls: options.calls, config: options.config })
  await service.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`
  const browser = await launchBrowser(t)
  const signInLink = async (apiKey = service.admin.apiKey) => dashboardSignInUrl(base, await issueSignInLink(service.storage.db, hashApiKey(apiKey), new Date()))
  return {
    service,
    base,
    browser,
    signInLink,
    async signedInPage(t, { apiKey, path = '/workspaces', look = LOOKS[0] } = {}) {
      const page = await browser.newPage({ viewport: { width: 1366, height: 900 } })
      t.teardown(() => page.close())
      page.setDefaultTimeout(15_000)
      const link = new URL(await signInLink(apiKey))
      link.search = new URLSearchParams(look).toString()
      await page.goto(link.toString())
      await page.getByRole('navigation', { name: look.lang === 'pt' ? 'Principal' : 'Main' }).waitFor()
      // On to `path` inside the app, as its links go, rather than loading it all again: the look
      // is the link's already. The dashboard's router follows history.pushState.
      const address = `/dashboard${path}${path.includes('?') ? '&' : '?'}${new URLSearchParams(look)}`
      if (path !== '/workspaces') await page.evaluate(`history.pushState(null, '', ${JSON.stringify(address)})`)
      return page
    },
  }
}

/** Opens `path` (under /dashboard) in `look`: the address's `lang` and `theme` win over the stored choice. */
export async function showIn(page: Page, base: string, path: string, look: Look): Promise<void> {
  const url = new URL(`${base}/dashboard${path}`)
  url.searchParams.set('lang', look.lang)
  url.searchParams.set('theme', look.theme)
  await page.goto(url.toString())
}

const AXE_SOURCE = readFileSync(fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url)), 'utf8')

interface AxeViolation {
  id: string
  impact: string | null
  help: string
  nodes: { target: unknown[] }[]
}

/**
 * axe-core's serious and critical violations on the page (or in a frame, such as the embedded
 * editor) as it is now, one line each (rule, help, first elements). Evaluated through the DevTools
 * protocol, so the page's CSP stays as served.
 */
async function seriousAccessibilityViolations(page: Pick<Page, 'evaluate'>): Promise<string[]> {
  // Once a document: it keeps axe until the page shows another.
  if (!(await page.evaluate("typeof axe !== 'undefined'"))) await page.evaluate(AXE_SOURCE)
  // Every rule whose violations are serious or critical runs. The rules whose violations are at
  // most moderate, which can fail no check here, are left out; where axe's rules have no impact
  // to read, every rule runs. A string, evaluated in the page (the tests' TypeScript has no DOM types).
  const violations = (await page.evaluate(`axe.run(document, {
    resultTypes: ['violations'],
    rules: Object.fromEntries((axe._audit?.rules ?? []).filter((rule) => rule.impact === 'minor' || rule.impact === 'moderate').map((rule) => [rule.id, { enabled: false }])),
  }).then((result) => result.violations)`)) as AxeViolation[]
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => assertionMessage(`${violation.impact} ${violation.id}: ${violation.help} (${violation.nodes.slice(0, 3).map((node) => JSON.stringify(node.target)).join(', ')})`))
}

/** Checks the page or frame with axe-core: no serious or critical violation, each named in the message. */
export async function checkAccessibility(t: Test, page: Pick<Page, 'evaluate'>, label: string): Promise<void> {
  const violations = await seriousAccessibilityViolations(page)
  t.same(violations, [], `${label}: no serious or critical accessibility violation${violations.length ? `: ${violations.join('; ')}` : ''}`)
}

/**
 * Writes `test-artifacts/dashboard/{name}-{lang}-{theme}.png` and checks the page with axe-core:
 * no serious or critical violation. Call it with the page showing the screen in `look`.
 */
export async function captureScreen(t: Test, page: Page, name: string, look: Look): Promise<void> {
  await mkdir(DASHBOARD_ARTIFACTS, { recursive: true })
  await settled(page)
  await page.screenshot({ path: `${DASHBOARD_ARTIFACTS}${name}-${look.lang}-${look.theme}.png`, fullPage: true })
  await checkAccessibility(t, page, `${name} (${look.lang}, ${look.theme})`)
}

/**
 * Shows `path` in each of {@link LOOKS}, waits for `ready(page)` (a locator
 * the screen shows once loaded), and captures it.
 */
export async function captureEveryLook(t: Test, page: Page, base: string, name: string, path: string, ready: (page: Page) => Promise<unknown>): Promise<void> {
  for (const look of LOOKS) {
    await showIn(page, base, path, look)
    await ready(page)
    await captureScreen(t, page, name, look)
  }
}
