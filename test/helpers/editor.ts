import { mkdir } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import type { Browser, Frame, FrameLocator, Locator, Page } from 'playwright-core'
import type { Test } from 'tap'
import { loadConfig } from '../../src/config.js'
import { blank, launchBrowser, pagePool, serveHostPage, settled, waitForMessage, type PagePool } from './browser.js'
import { checkAccessibility, type Look } from './dashboard.js'
import { CHEAP_CLIENT_SECRET_COST, openTestApp, type TestApp } from './app.js'
import { oneBackend } from './storage.js'

/** Where the editor's browser tests write their screenshots (looked at by people, not compared). */
export const EDITOR_ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/editor/', import.meta.url))

export interface EditorSetup {
  service: TestApp
  /** The service's address, e.g. `http://127.0.0.1:41234`. */
  base: string
  browser: Browser
  /** The pages the file's editors open in (see {@link openEditor}). */
  pages: PagePool
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

/**
 * One service listening on a port, one host page and one Chromium for a file of editor tests;
 * `options` are the service's, as {@link openTestApp} takes them (the engine, the calls it may make).
 */
export async function openEditorSetup(t: Test, options: Parameters<typeof openTestApp>[2] = {}): Promise<EditorSetup> {
  // Every editor opened signs in with the client's secret; its hashing is not what these files test.
  const service = await openTestApp(t, oneBackend, { clientSecretCost: CHEAP_CLIENT_SECRET_COST, ...options })
  await service.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`
  const key = { 'x-api-key': service.admin.apiKey }
  const client = await service.app.inject({ method: 'POST', url: '/v1/clients', headers: key, payload: { name: 'Portal' } })
  if (client.statusCode !== 201) throw new Error(`no OAuth client: ${client.body}`)
  const { clientId, clientSecret } = client.json()
  const basic = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`
  const host = await serveHostPage(t)
  const browser = await launchBrowser(t)

  return {
    service,
    base,
    browser,
    pages: pagePool(browser),
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

/** {@link EditorSetup} with `call`: the admin's request to the service, which throws when it is refused. */
export interface CallingEditorSetup extends EditorSetup {
  call(method: 'POST' | 'PUT', url: string, payload: object): Promise<Awaited<ReturnType<TestApp['app']['inject']>>>
}

/**
 * {@link openEditorSetup} for flows that call a local HTTPS server of the test's (an API, a chat
 * completions endpoint): the engine's calls and "Try it" may reach 127.0.0.1 and trust the
 * server's certificate, `caFile`; a connection's address is checked as a webhook's.
 */
export async function openEditorSetupCalling(t: Test, caFile: string, { engine = false } = {}): Promise<CallingEditorSetup> {
  const setup = await openEditorSetup(t, {
    engine,
    calls: { allowedPrivateCidrs: ['127.0.0.1/32'], caFile },
    config: loadConfig({ RATE_LIMIT_PER_MINUTE: '0', AUTH_RATE_LIMIT_PER_MINUTE: '0', WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WEBHOOK_CA_FILE: caFile }),
  })
  return {
    ...setup,
    async call(method, url, payload) {
      const response = await setup.service.app.inject({ method, url, headers: setup.key, payload })
      if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
      return response
    },
  }
}

/** The page each test shows its editors in, taken from the setup's pool. */
const editorPages = new WeakMap<Test, Page>()

/**
 * Opens the host page (`width` × 900) framing the editor for `flowId` in `lang` and `theme`, and
 * waits until the editor shows the flow. A test has one page for its editors: an editor it opened
 * before is left, with no question asked about unsaved changes, and this one loaded in its place.
 */
export async function openEditor(
  t: Test,
  setup: EditorSetup,
  flowId: string,
  { lang = 'en', theme = 'light', width = 1440 }: { lang?: 'en' | 'pt'; theme?: 'light' | 'dark'; width?: number } = {},
): Promise<OpenEditor> {
  const viewport = { width, height: 900 }
  let page = editorPages.get(t)
  if (page && !page.isClosed()) {
    // A document of its own, as a new page would have: the host page's record of messages starts empty.
    await blank(page)
    await page.setViewportSize(viewport)
  } else {
    page = await setup.pages.take(t, viewport)
    editorPages.set(t, page)
  }
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

/** A text message as a flow's node sends it. */
export const textMessage = (body: string) => ({ type: 'text', text: { body } })

/** Greets (`name`), asks for a plan with buttons (into `plan`), asks a name (into `name`), thanks and ends. */
export const PLAN_FLOW = {
  schemaVersion: 1,
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'greet', type: 'message', position: { x: 240, y: 0 }, data: { messages: [textMessage('Hi {{name}}!\nWelcome to the shop.')] } },
    {
      id: 'ask',
      type: 'question',
      position: { x: 480, y: 0 },
      data: {
        prompt: { type: 'interactive', interactive: { type: 'button', body: { text: 'Which plan?' }, action: { buttons: [{ id: 'basic', title: 'Basic' }, { id: 'pro', title: 'Pro' }] } } },
        input: { kind: 'choice' },
        saveAs: 'plan',
      },
    },
    { id: 'askName', type: 'question', position: { x: 720, y: 0 }, data: { prompt: textMessage('Your name, please?'), input: { kind: 'text' }, saveAs: 'name' } },
    { id: 'bye', type: 'message', position: { x: 960, y: 0 }, data: { messages: [textMessage('Thanks {{name}}: plan {{plan}}.')] } },
    { id: 'end', type: 'end', position: { x: 1200, y: 0 }, data: {} },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'greet' },
    { id: 'e2', source: 'greet', target: 'ask' },
    { id: 'e3', source: 'ask', sourceHandle: 'basic', target: 'askName' },
    { id: 'e4', source: 'ask', sourceHandle: 'pro', target: 'askName' },
    { id: 'e5', source: 'ask', sourceHandle: 'invalid', target: 'end' },
    { id: 'e6', source: 'askName', sourceHandle: 'default', target: 'bye' },
    { id: 'e7', source: 'askName', sourceHandle: 'invalid', target: 'end' },
    { id: 'e8', source: 'bye', target: 'end' },
  ],
}

/** A new flow whose draft is `definition`, SAMPLE_FLOW unless told. */
export async function sampleFlow(setup: EditorSetup, name: string, definition: object = SAMPLE_FLOW): Promise<string> {
  const flowId = await setup.createFlow(name)
  const saved = await setup.service.app.inject({ method: 'PUT', url: `/v1/flows/${flowId}/definition`, headers: setup.key, payload: definition })
  if (saved.statusCode !== 200) throw new Error(`sample not saved: ${saved.body}`)
  return flowId
}

/**
 * Writes `test-artifacts/editor/{name}-{lang}-{theme}.png` and, unless told not to, checks the
 * editor's frame with axe-core: no serious or critical violation.
 */
export async function captureEditor(t: Test, opened: OpenEditor, name: string, look: Look, { axe = true } = {}): Promise<void> {
  await mkdir(EDITOR_ARTIFACTS, { recursive: true })
  await editorSettled(opened.frame)
  await opened.page.screenshot({ path: `${EDITOR_ARTIFACTS}${name}-${look.lang}-${look.theme}.png` })
  if (!axe) return
  await checkAccessibility(t, opened.frame, `${name} (${look.lang}, ${look.theme})`)
}

/** Waits until the editor in `frame` is at rest: laid out, and the canvas done gliding to a fitted or centred view. */
export const editorSettled = (frame: Frame): Promise<void> => settled(frame, '.react-flow__viewport')

/** What {@link editorLayout} measures: every finding is a sentence naming what is wrong, empty when the layout holds. */
export interface LayoutFindings {
  /** In-flow columns of the workspace (palette, canvas, side panel, test panel) covering one another. */
  covered: string[]
  /** Tab lists wrapped onto a second line. */
  wrappedTabs: string[]
  /** Labels (buttons, tabs, palette names, node types, headings) cut off by their box. */
  cutLabels: string[]
  /** Node handles under the minimap or the zoom controls. */
  hiddenHandles: string[]
  /** Panels scrolled sideways. */
  sideScroll: string[]
  /** Shown columns, by class, with their widths. */
  columns: Record<string, number>
  zoom: number
}

/**
 * The editor's layout as a person sees it, measured in its frame: the columns beside one another,
 * the tab lists on one line, every label whole, nothing under the minimap or the controls, no
 * panel scrolled sideways.
 */
export const editorLayout = (frame: Frame): Promise<LayoutFindings> =>
  frame.evaluate(`(() => {
    const box = (element) => element.getBoundingClientRect()
    const shown = (element) => element && box(element).width > 0 && getComputedStyle(element).display !== 'none'
    const meets = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1
    const name = (element) => (element.getAttribute('data-testid') || element.className || element.tagName).toString().split(' ')[0] + ' "' + element.textContent.trim().slice(0, 40) + '"'

    const columns = [...document.querySelectorAll('.workspace > *')].filter((element) => shown(element) && getComputedStyle(element).position !== 'absolute')
    const covered = []
    columns.forEach((a, i) => columns.slice(i + 1).forEach((b) => meets(box(a), box(b)) && covered.push(a.className + ' and ' + b.className)))

    const wrappedTabs = [...document.querySelectorAll('[role=tablist]')].filter(shown).filter((list) => {
      const tops = [...list.querySelectorAll('[role=tab]')].map((tab) => Math.round(box(tab).top))
      return new Set(tops).size > 1
    }).map((list) => list.closest('aside')?.className ?? 'tabs')

    const labels = '.toolbar button, [role=tab], .palette-item strong, .node-type, .side-panel h2, .test-header h2, .test-panel button, .canvas-actions button'
    const cutLabels = [...document.querySelectorAll(labels)].filter(shown).filter((label) => label.scrollWidth > label.clientWidth + 1 || box(label).right > box(label.parentElement).right + 1).map(name)

    const overlays = [...document.querySelectorAll('.react-flow__minimap, .react-flow__controls')].filter(shown)
    const canvas = box(document.querySelector('.canvas'))
    const hiddenHandles = [...document.querySelectorAll('.react-flow__handle')].filter((handle) => {
      const b = box(handle)
      const inView = b.left >= canvas.left && b.right <= canvas.right && b.top >= canvas.top && b.bottom <= canvas.bottom
      // Each third of the handle across must take a click: nothing of its own node or another over it.
      const underSomething = [1 / 6, 1 / 2, 5 / 6].some((part) => {
        const hit = document.elementFromPoint(b.left + b.width * part, b.top + b.height / 2)
        return hit !== null && hit !== handle && !handle.contains(hit)
      })
      return inView && (underSomething || overlays.some((overlay) => meets(b, box(overlay))))
    }).map((handle) => handle.closest('.react-flow__node')?.dataset.id + ' ' + (handle.dataset.handleid || handle.className.split(' ').find((c) => c === 'source' || c === 'target')))

    const sideScroll = [...document.querySelectorAll('.palette, .panel-body, .test-panel, .test-setup, .test-debug, .chat')].filter(shown).filter((panel) => panel.scrollWidth > panel.clientWidth + 1).map(name)
    if (document.documentElement.scrollWidth > document.documentElement.clientWidth + 1) sideScroll.push('the page')

    const viewport = document.querySelector('.react-flow__viewport')
    return {
      covered, wrappedTabs, cutLabels, hiddenHandles, sideScroll,
      columns: Object.fromEntries(columns.map((column) => [column.className.split(' ')[0], Math.round(box(column).width)])),
      zoom: viewport ? new DOMMatrix(getComputedStyle(viewport).transform).a : 0,
    }
  })()`) as Promise<LayoutFindings>

/**
 * Checks {@link editorLayout}: no column covers another, the palette and a canvas of at least
 * `minCanvas` px are there, tab lists are one line, labels whole, handles clear of the minimap, the
 * controls and anything else, nothing scrolls sideways, and the canvas is at a readable zoom.
 */
export async function checkEditorLayout(t: Test, frame: Frame, name: string, { minCanvas = 400 } = {}): Promise<LayoutFindings> {
  const found = await editorLayout(frame)
  t.same(found.covered, [], `${name}: no column of the editor covers another`)
  t.ok((found.columns['palette'] ?? 0) > 0, `${name}: the palette is there`)
  t.ok((found.columns['canvas'] ?? 0) >= minCanvas, `${name}: the canvas keeps ${found.columns['canvas']} px (at least ${minCanvas})`)
  t.same(found.wrappedTabs, [], `${name}: every tab list is one line`)
  t.same(found.cutLabels, [], `${name}: no label is cut off`)
  t.same(found.hiddenHandles, [], `${name}: no node's entry or exit is under the minimap, the zoom controls or anything else`)
  t.same(found.sideScroll, [], `${name}: nothing scrolls sideways`)
  t.ok(found.zoom >= 0.6, `${name}: the canvas is at a readable zoom (${found.zoom})`)
  return found
}

/**
 * Picks the node `nodeId` and shows its form. On a loaded machine a click can still meet the canvas
 * moving (fit view glides for 200 ms, from a frame that may come late) and land beside the node; a
 * person clicks again, and so does this, twice at most, before failing as the form never showed.
 * A flow wider than the canvas at readable zoom is shown from its start: a node beyond the canvas's
 * edge is picked from the keyboard (focused, then Enter), as a keyboard user picks any node.
 */
export async function selectNode(editor: FrameLocator, nodeId: string): Promise<Locator> {
  const panel = editor.getByTestId('node-panel')
  for (let attempt = 1; ; attempt++) {
    await editor.locator('.toolbar').getByRole('button', { name: /^(Fit view|Ajustar)/ }).click()
    await viewportAtRest(editor)
    try {
      const node = editor.getByTestId(`node-${nodeId}`)
      // A click that keeps meeting another element (the view still gliding) is given up and tried again too.
      if (await centreWithin(node, editor.locator('main.canvas'))) await node.click({ timeout: attempt < 3 ? 5_000 : undefined })
      else await editor.getByTestId(`rf__node-${nodeId}`).press('Enter')
      await panel.getByText(nodeId, { exact: true }).waitFor({ timeout: attempt < 3 ? 3_000 : undefined })
      return panel
    } catch (error) {
      if (attempt >= 3) throw error
    }
  }
}

/** Whether the centre of `element` lies inside `area` as laid out now. */
async function centreWithin(element: Locator, area: Locator): Promise<boolean> {
  const [box, bounds] = await Promise.all([element.boundingBox(), area.boundingBox()])
  if (!box || !bounds) return false
  const [x, y] = [box.x + box.width / 2, box.y + box.height / 2]
  return x > bounds.x && x < bounds.x + bounds.width && y > bounds.y && y < bounds.y + bounds.height
}

/**
 * Waits until the canvas has stopped moving (fit view animates): a click during the animation can land where
 * the node was a frame ago, on a loaded machine where two frames look alike to Playwright's stability check.
 */
async function viewportAtRest(editor: FrameLocator): Promise<void> {
  const viewport = editor.locator('.react-flow__viewport')
  // The glide may start a frame after the click: still at first is not yet at rest.
  await new Promise((resolve) => setTimeout(resolve, 250))
  let last = await viewport.getAttribute('style')
  for (let tries = 0; tries < 50; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    const now = await viewport.getAttribute('style')
    if (now === last) return
    last = now
  }
}

/** Connects `exit` of the selected node (its "Next node" select) to `target`. */
export async function link(editor: FrameLocator, label: string, target: string): Promise<void> {
  await editor.getByTestId('next-nodes').getByRole('combobox', { name: label, exact: true }).selectOption(target)
}

/** Adds a node of `type` from the palette and answers its id. */
export async function addFromPalette(editor: FrameLocator, type: string): Promise<string> {
  const before = await editor.locator(`[data-node-type="${type}"]`).count()
  await editor.getByTestId(`palette-${type}`).click()
  const added = editor.locator(`[data-node-type="${type}"]`).nth(before)
  await added.waitFor()
  return (await added.getAttribute('data-testid'))!.replace(/^node-/, '')
}

/** Waits until `locator` shows exactly `text`, and fails with what it shows when it does not. */
export async function waitForText(locator: Locator, text: string): Promise<void> {
  try {
    await locator.filter({ hasText: new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }).waitFor()
  } catch (error) {
    throw new Error(`expected "${text}", shown: "${await locator.innerText().catch(() => '(nothing)')}"`, { cause: error })
  }
}

/** The focused control as a person hears it: its label's words, its aria-label, else its text. */
export const focusedName = (frame: Frame) =>
  frame.evaluate(`(() => {
    const element = document.activeElement
    const label = element.labels && element.labels[0] && (element.labels[0].querySelector('.field-label') || element.labels[0])
    return (element.getAttribute('aria-label') || (label && label.textContent) || element.textContent || '').trim()
  })()`) as Promise<string>

/** The names of the next `count` controls Tab reaches from the focused one. */
export async function tabStops(page: Page, frame: Frame, count: number): Promise<string[]> {
  const names: string[] = []
  for (let i = 0; i < count; i++) {
    await page.keyboard.press('Tab')
    names.push(await focusedName(frame))
  }
  return names
}
