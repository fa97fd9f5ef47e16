import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import type { Browser, Frame, FrameLocator, Page } from 'playwright-core'
import type { Test } from 'tap'
import { launchBrowser, serveHostPage, waitForMessage } from './browser.js'
import { openTestApp, type TestApp } from './app.js'
import { pgliteBackend } from './storage.js'

/** Where the editor's browser tests write their screenshots (looked at by people, not compared). */
export const EDITOR_ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/editor/', import.meta.url))

export interface EditorSetup {
  service: TestApp
  /** The service's address, e.g. `http://127.0.0.1:41234`. */
  base: string
  browser: Browser
  /** The API key header of the service's admin. */
  key: { 'x-api-key': string }
  /** A new one-time token, as the customer's backend gets it. */
  ott(): Promise<string>
  /** The host page's address, framing `editorUrl` and handing it `ott`. */
  hostUrl(editorUrl: string, ott: string): string
  createFlow(name: string): Promise<string>
  /** The flow's draft definition, as the API answers it. */
  draft(flowId: string): Promise<{ nodes: { id: string; type: string; position: { x: number; y: number }; data: Record<string, unknown> }[]; edges: { id: string; source: string; sourceHandle?: string; target: string }[] }>
}

export interface OpenEditor {
  page: Page
  /** The editor's iframe, for locators. */
  editor: FrameLocator
  /** The same frame, for evaluating in it (axe) and for its keyboard focus. */
  frame: Frame
}

/** One service listening on a port, one host page and one Chromium for a file of editor tests. */
export async function openEditorSetup(t: Test): Promise<EditorSetup> {
  const service = await openTestApp(t, pgliteBackend)
  await service.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`
  const key = { 'x-api-key': service.admin.apiKey }
  const client = await service.app.inject({ method: 'POST', url: '/v1/clients', headers: key, payload: { name: 'Portal' } })
  if (client.statusCode !== 201) throw new Error(`no OAuth client: ${client.body}`)
  const { clientId, clientSecret } = client.json()
  const basic = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`
  const host = await serveHostPage(t)

  return {
    service,
    base,
    browser: await launchBrowser(t),
    key,
    hostUrl: host.url,
    async ott() {
      const response = await service.app.inject({ method: 'POST', url: '/auth/iframe-token', headers: { authorization: basic, 'content-type': 'application/json' } })
      if (response.statusCode !== 200) throw new Error(`no OTT: ${response.body}`)
      return response.json().ott
    },
    async createFlow(name) {
      const response = await service.app.inject({ method: 'POST', url: '/v1/flows', headers: key, payload: { name } })
      if (response.statusCode !== 201) throw new Error(`no flow: ${response.body}`)
      return response.json().id
    },
    async draft(flowId) {
      return (await service.app.inject({ method: 'GET', url: `/v1/flows/${flowId}`, headers: key })).json().definition
    },
  }
}

/**
 * Opens the host page (`width` × 900) framing the editor for `flowId` in `lang` and `theme`, and
 * waits until the editor shows the flow.
 */
export async function openEditor(
  t: Test,
  setup: EditorSetup,
  flowId: string,
  { lang = 'en', theme = 'light', width = 1440 }: { lang?: 'en' | 'pt'; theme?: 'light' | 'dark'; width?: number } = {},
): Promise<OpenEditor> {
  const page = await setup.browser.newPage({ viewport: { width, height: 900 } })
  t.teardown(() => page.close())
  page.setDefaultTimeout(10_000)
  await page.goto(setup.hostUrl(`${setup.base}/editor/${lang}/flows/builder/${flowId}?theme=${theme}`, await setup.ott()))
  await waitForMessage(page, 'authenticated')
  const editor = page.frameLocator('#editor')
  await editor.getByTestId('node-start').waitFor()
  const frame = await (await page.$('#editor'))!.contentFrame()
  if (!frame) throw new Error('the editor frame is gone')
  return { page, editor, frame }
}
