import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { defaultWebDir } from '../../src/http/routes/web.js'

/** The dashboard's first screen may load at most this much gzipped JavaScript (docs/dashboard.md). */
const FIRST_SCREEN_BUDGET_BYTES = 250 * 1024

const dir = defaultWebDir()
const built = existsSync(join(dir, 'dashboard.html'))

/** The scripts a page loads before it shows anything: its module entry and what Vite preloads for it. */
const firstScreenScripts = (html: string): string[] =>
  [...html.matchAll(/<(?:script[^>]*\bsrc|link[^>]*rel="modulepreload"[^>]*\bhref)="\/assets\/([^"]+\.js)"/g)].map((match) => match[1]!)

t.test("the dashboard's first screen stays under its gzipped JavaScript budget", { skip: built ? undefined : 'no web build (npm run build:web)' }, async (t) => {
  const html = readFileSync(join(dir, 'dashboard.html'), 'utf8')
  const scripts = firstScreenScripts(html)
  t.ok(scripts.length > 0, 'the page loads its scripts from /assets/')
  let total = 0
  for (const script of scripts) {
    const gzipped = join(dir, 'assets', `${script}.gz`)
    t.ok(existsSync(gzipped), `${script} has a gzip copy to serve`)
    total += statSync(gzipped).size
  }
  t.ok(total < FIRST_SCREEN_BUDGET_BYTES, `first screen: ${(total / 1024).toFixed(1)} KiB of gzipped JavaScript (budget ${FIRST_SCREEN_BUDGET_BYTES / 1024} KiB)`)
  t.notMatch(html, /sourceMappingURL/, 'the page names no source map')
  for (const script of scripts) t.notMatch(readFileSync(join(dir, 'assets', script), 'utf8'), /sourceMappingURL=/, `${script} names no source map`)
})
