import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const loader = fileURLToPath(new URL('../loader/resolve-ts.mjs', import.meta.url))
const browserHelper = new URL('../helpers/browser.ts', import.meta.url).href

/** Asks the browser helper, in a process of its own whose Chromium is `path`, why browser tests would skip. */
function skipReasonWith(env: Record<string, string>, path: string) {
  const { REQUIRE_BROWSER: _required, ...rest } = process.env
  const script = `const helper = await import(${JSON.stringify(browserHelper)}); console.log(helper.browserSkipReasonAt(${JSON.stringify(path)}) ?? 'runs')`
  const child = spawnSync(process.execPath, [`--import=${loader}`, '--input-type=module', '--eval', script], { env: { ...rest, ...env }, encoding: 'utf8' })
  return { status: child.status, stdout: child.stdout.trim(), stderr: child.stderr }
}

const missing = '/nonexistent/chromium'

t.test('without REQUIRE_BROWSER a missing browser skips the browser tests, saying why', async (t) => {
  t.same(skipReasonWith({}, missing), { status: 0, stdout: `${missing} is missing (apt-get install chromium-headless-shell; .ci/run installs it)`, stderr: '' })
})

t.test('with REQUIRE_BROWSER=1 a missing browser fails the test file instead of skipping it', async (t) => {
  const run = skipReasonWith({ REQUIRE_BROWSER: '1' }, missing)
  t.not(run.status, 0, 'the file fails')
  t.equal(run.stdout, '', 'nothing reports itself skipped')
  t.match(run.stderr, `REQUIRE_BROWSER=1 but ${missing} is missing`, 'saying why')
})

t.test('an installed browser runs the tests, required or not', async (t) => {
  t.same(skipReasonWith({ REQUIRE_BROWSER: '1' }, process.execPath), { status: 0, stdout: 'runs', stderr: '' })
})
