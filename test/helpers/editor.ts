import { mkdir } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import type { Browser, Frame, FrameLocator, Page } from 'playwright-core'
import type { Test } from 'tap'
import { launchBrowser, serveHostPage, waitForMessage } from './browser.js'
import { checkAccessibility, type Look } from './dashboard.js'
import { openTestApp, type TestApp } from './app.js'
import { oneBackend } from './storage.js'

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
  /** The same frame, for evaluating in it (axe, styles, focus). */
  frame: Frame
}

/** One service listening on a port, one host page and one Chromium for a file of editor tests. */
export async function openEditorSetup(t: Test): Promise<EditorSetup> {
  const service = await openTestApp(t, oneBackend)
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

const buttons = (body: string, titles: string[]) => ({
  type: 'interactive',
  interactive: { type: 'button', body: { text: body }, action: { buttons: titles.map((title, i) => ({ id: `b${i + 1}`, title })) } },
})

/** start → welcome (a message with buttons) → plan (a choice question) → basic / pro (ends). */
export const SAMPLE_FLOW = {
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'welcome', type: 'message', position: { x: 240, y: 0 }, data: { messages: [buttons('Welcome!', ['Menu', 'Help'])] } },
    { id: 'plan', type: 'question', position: { x: 480, y: 0 }, data: { prompt: buttons('Which plan?', ['Basic', 'Pro']), input: { kind: 'choice' }, maxRetries: 2 } },
    { id: 'basic', type: 'end', position: { x: 760, y: -60 }, data: {} },
    { id: 'pro', type: 'end', position: { x: 760, y: 120 }, data: {} },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'welcome' },
    { id: 'e2', source: 'welcome', target: 'plan' },
    { id: 'e3', source: 'plan', sourceHandle: 'b1', target: 'basic' },
    { id: 'e4', source: 'plan', sourceHandle: 'b2', target: 'pro' },
  ],
}

/** A new flow whose draft is SAMPLE_FLOW. */
export async function sampleFlow(setup: EditorSetup, name: string): Promise<string> {
  const flowId = await setup.createFlow(name)
  const saved = await setup.service.app.inject({ method: 'PUT', url: `/v1/flows/${flowId}/definition`, headers: setup.key, payload: SAMPLE_FLOW })
  if (saved.statusCode !== 200) throw new Error(`sample not saved: ${saved.body}`)
  return flowId
}

/**
 * Writes `test-artifacts/editor/{name}-{lang}-{theme}.png` and, unless told not to, checks the
 * editor's frame with axe-core: no serious or critical violation.
 */
export async function captureEditor(t: Test, opened: OpenEditor, name: string, look: Look, { axe = true } = {}): Promise<void> {
  await mkdir(EDITOR_ARTIFACTS, { recursive: true })
  // Let transitions and late layout settle before the picture.
  await opened.page.waitForTimeout(250)
  await opened.page.screenshot({ path: `${EDITOR_ARTIFACTS}${name}-${look.lang}-${look.theme}.png` })
  if (!axe) return
  await checkAccessibility(t, opened.frame, `${name} (${look.lang}, ${look.theme})`)
}
