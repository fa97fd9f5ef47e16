import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { assertionMessage } from '../helpers/assertion-message.js'

const fixture = fileURLToPath(new URL('../fixtures/line-separator.fixture.ts', import.meta.url))
const loader = fileURLToPath(new URL('../loader/resolve-ts.mjs', import.meta.url))

/**
 * Runs the fixture as tap runs a test file; tap's variables are left out so it reports as a file
 * of its own. Its output is escaped: a failing match prints it, and must not hide what follows.
 */
function runFixture(...args: string[]) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^_?TAP/.test(name)))
  const child = spawnSync(process.execPath, [`--import=${loader}`, fixture, ...args], { env, encoding: 'utf8' })
  return { status: child.status, output: assertionMessage(child.stdout + child.stderr, { keepLineBreaks: true, maxLength: Infinity }) }
}

t.test('a message that went through the helper keeps the assertions after it', async (t) => {
  const run = runFixture()
  t.equal(run.status, 1, 'the run fails', { output: run.output })
  t.match(run.output, /^\s*not ok 2 - the assertion after it fails$/m, 'and reports the failing assertion')
  t.match(run.output, /^# \{ total: 2, pass: 1, fail: 1 \}$/m, 'both assertions counted, one failed')
})

t.test('a raw line separator in a message hides the failure: why the helper exists', async (t) => {
  const run = runFixture('--raw')
  // If tap ever reports this run as failed, its parser was fixed and the helper may go.
  t.equal(run.status, 0, 'tap reports the run as passed', { output: run.output })
  t.match(run.output, /# no tests found/, 'having found no assertion in the subtest')
  t.match(run.output, /^# \{ total: 1, pass: 1 \}$/m, 'and counting no failure')
})

t.test('the helper escapes what tap would misread, and shortens', async (t) => {
  t.equal(assertionMessage('a\u2028b\u2029c'), 'a\\u2028b\\u2029c')
  t.equal(assertionMessage('line\nbreak\r\ttab\u0000nul\u0085next'), 'line\\nbreak\\r\\ttab\\u0000nul\\u0085next')
  t.equal(assertionMessage('one\ntwo\u2028', { keepLineBreaks: true }), 'one\ntwo\\u2028', 'a comment keeps its lines')
  t.equal(assertionMessage('lone \ud800 surrogate, pair 😀 kept'), 'lone \\ud800 surrogate, pair 😀 kept')
  t.equal(assertionMessage({ key: 'para\u2029graph' }), '{"key":"para\\u2029graph"}', 'anything else as JSON')
  t.equal(assertionMessage(new Error('failed\u2028there')), 'failed\\u2028there', 'an error by its message')
  t.equal(assertionMessage('x'.repeat(1500)), `${'x'.repeat(1000)}… (500 more characters)`)
  t.equal(assertionMessage(`${'x'.repeat(9)}😀`, { maxLength: 10 }), `${'x'.repeat(9)}… (2 more characters)`, 'never half a surrogate pair')
})
