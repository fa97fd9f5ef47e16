import { existsSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as delay } from 'node:timers/promises'
import { chromium, type Browser, type Dialog, type Frame, type Page } from 'playwright-core'
import type { Test } from 'tap'

/**
 * The browser the tests drive: Debian's `chromium-headless-shell` where it is installed, else
 * Debian's `chromium`; nothing here ever downloads a browser (.ci/run installs the shell). Both are
 * one build of the same Blink; the shell leaves out the desktop browser around it and costs the
 * renderer a fifth less CPU per screen, which is most of the browser tests' time.
 */
export const CHROMIUM = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((path) => existsSync(path)) ?? '/usr/bin/chromium'

/**
 * Why the browser tests cannot run here, or undefined when they can. With REQUIRE_BROWSER=1
 * (.ci/run sets it) a missing browser is an error instead: the run would otherwise pass with every
 * screen of the editor and the dashboard left out.
 */
export const browserSkipReason = (): string | undefined => browserSkipReasonAt(CHROMIUM)

/** {@link browserSkipReason} for a browser at `path`. */
export function browserSkipReasonAt(path: string): string | undefined {
  if (existsSync(path)) return undefined
  const reason = `${path} is missing (apt-get install chromium-headless-shell; .ci/run installs it)`
  if (process.env.REQUIRE_BROWSER === '1') throw new Error(`REQUIRE_BROWSER=1 but ${reason}: the browser tests would be skipped`)
  return reason
}

export async function launchBrowser(t: Test): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Without site isolation the host page and the editor it frames (another origin of the same
    // host) share one renderer process instead of two, which costs Chromium a seventh less CPU; the
    // same-origin policy and postMessage between them work as before.
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-site-isolation-trials'],
  })
  t.teardown(() => browser.close())
  return browser
}

/**
 * Pages taken in turn by the tests of a file, each in a browser context of its own as
 * `browser.newPage` makes it. A new page costs Chromium a renderer process and a load of the app
 * with nothing cached, about a CPU-second; a page taken again loads the app from its context's
 * cache. (Of two pages sharing a context, the older answers input slowly: a click there takes
 * seconds.)
 */
export interface PagePool {
  /**
   * A page no running test holds, sized to `viewport`. It is `t`'s until `t` ends; then its routes
   * are removed and it is blanked, so that the next test starts from an empty document as on a
   * new page. Listeners a test adds to it are the test's to remove.
   */
  take(t: Test, viewport: { width: number; height: number }): Promise<Page>
}

/** A {@link PagePool} of `browser`'s. */
export function pagePool(browser: Browser): PagePool {
  const idle: Page[] = []
  return {
    async take(t, viewport) {
      let reused = idle.pop()
      while (reused?.isClosed()) reused = idle.pop()
      if (reused) await reused.setViewportSize(viewport)
      const page = reused ?? (await browser.newPage({ viewport }))
      t.teardown(async () => {
        // Closed by the test, or with the browser at the end of the file: nothing to hand back.
        if (page.isClosed()) return
        await page.unrouteAll({ behavior: 'ignoreErrors' })
        await blank(page)
        idle.push(page)
      })
      return page
    },
  }
}

/**
 * Shows about:blank in `page`, agreeing to leave when the page asks first (an editor with unsaved
 * changes does); any other dialog meanwhile is dismissed, as Playwright does unasked.
 */
export async function blank(page: Page): Promise<void> {
  const agreeToLeave = (dialog: Dialog) => void (dialog.type() === 'beforeunload' ? dialog.accept() : dialog.dismiss())
  page.on('dialog', agreeToLeave)
  try {
    await page.goto('about:blank')
  } finally {
    page.off('dialog', agreeToLeave)
  }
}

/**
 * Waits until what `target` shows is at rest, for a screenshot or a check of what is seen: its
 * fonts loaded, no CSS animation or transition with an end still running, and the elements that
 * script moves (`moving`, a selector: React Flow's viewport glides to a fitted view) unmoved and
 * the page's size unchanged across three frames in a row. What still moves after five seconds,
 * which nothing in the apps does, is taken as it is.
 */
export async function settled(target: Page | Frame, moving = ''): Promise<void> {
  // A string, evaluated in the page (the tests' TypeScript has no DOM types).
  await target.evaluate(`document.fonts.ready.then(() => new Promise((resolve) => {
    const pose = () => [document.documentElement.scrollWidth, document.documentElement.scrollHeight, ...[...(${JSON.stringify(moving)} ? document.querySelectorAll(${JSON.stringify(moving)}) : [])].map((element) => getComputedStyle(element).transform)].join(' ')
    const animating = () => document.getAnimations().some((animation) => animation.playState === 'running' && animation.effect && animation.effect.getComputedTiming().endTime !== Infinity)
    const giveUp = performance.now() + 5000
    let last = pose()
    let still = 0
    const frame = () => {
      const now = pose()
      still = now === last && !animating() ? still + 1 : 0
      last = now
      if (still >= 3 || performance.now() > giveUp) resolve(undefined)
      else requestAnimationFrame(frame)
    }
    requestAnimationFrame(frame)
  }))`)
}

export interface ReceivedMessage {
  origin: string
  data: { type?: string; [key: string]: unknown }
}

/**
 * A customer's page on an origin of its own: it frames the editor, waits for `ready`, posts
 * `{type: "auth", ott}` to the editor's origin, and records every message the editor sends it.
 */
export async function serveHostPage(t: Test): Promise<{ url(editorUrl: string, ott: string): string }> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://host')
    if (url.pathname !== '/') {
      response.writeHead(404).end()
      return
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(HOST_PAGE)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const { port } = server.address() as AddressInfo
  return { url: (editorUrl, ott) => `http://127.0.0.1:${port}/#${new URLSearchParams({ editor: editorUrl, ott })}` }
}

const HOST_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Host</title>
<style>html, body { margin: 0; height: 100%; } iframe { border: 0; width: 100%; height: 100%; }</style></head>
<body>
<iframe id="editor"></iframe>
<script>
  const params = new URLSearchParams(location.hash.slice(1));
  const editorUrl = params.get('editor');
  const frame = document.getElementById('editor');
  window.received = [];
  window.addEventListener('message', (event) => {
    if (event.source !== frame.contentWindow) return;
    window.received.push({ origin: event.origin, data: event.data });
    if (event.data && event.data.type === 'ready') {
      frame.contentWindow.postMessage({ type: 'auth', ott: params.get('ott') }, new URL(editorUrl).origin);
    }
  });
  frame.src = editorUrl;
</script>
</body></html>
`

/**
 * Waits until `expression` is truthy in the page or frame. Polled through DevTools evaluation,
 * which a page's CSP allows: `waitForFunction` polls with `eval`, which the editor's CSP (no
 * 'unsafe-eval') refuses whenever the expression is not true at the first try.
 */
export async function waitInPage(target: Page | Frame, expression: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await target.evaluate(expression))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting in the page for ${expression}`)
    await delay(50)
  }
}

/** The messages the editor posted to the host so far. */
export const receivedMessages = (page: Page): Promise<ReceivedMessage[]> => page.evaluate('window.received') as Promise<ReceivedMessage[]>

/** Waits until the editor posted its `nth` message of `type` to the host, and answers it. */
export async function waitForMessage(page: Page, type: string, nth = 1, timeoutMs = 15_000): Promise<ReceivedMessage> {
  const count = `window.received.filter((m) => m.data && m.data.type === ${JSON.stringify(type)}).length`
  await page.waitForFunction(`${count} >= ${nth}`, undefined, { timeout: timeoutMs })
  const found = (await receivedMessages(page)).filter((m) => m.data.type === type)[nth - 1]
  if (!found) throw new Error(`no ${type} message number ${nth}`)
  return found
}
