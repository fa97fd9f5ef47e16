import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { assertionMessage } from '../helpers/assertion-message.js'
import { tempDir } from '../helpers/cli.js'

const summaryScript = fileURLToPath(new URL('../../.ci/tap-summary', import.meta.url))

/** The line `.ci/run` ends with, for a tap log holding `log` and a run that exited with `status`. */
function summaryOf(t: Test, log: string, status: number) {
  const file = join(tempDir(t), 'tap.log')
  writeFileSync(file, log)
  const run = spawnSync('bash', [summaryScript, file, String(status)], { encoding: 'utf8' })
  t.equal(run.status, 0, assertionMessage(run.stderr))
  return run.stdout.trim()
}

t.test('skipped and todo tests are counted as skipped, from tap\'s last counts line', async (t) => {
  const log = ['ok 1 - test/a.test.ts # SKIP no server', '# { total: 3, pass: 3 }', '', '# { total: 9, pass: 4, fail: 1, todo: 2, skip: 2 }', '# time=12ms'].join('\n')
  t.equal(summaryOf(t, log, 1), '4 passed, 1 failed, 4 skipped')
})

t.test('counts tap leaves out are 0', async (t) => {
  t.equal(summaryOf(t, '# { total: 7, pass: 7 }\n', 0), '7 passed, 0 failed, 0 skipped')
})

t.test('a run that failed without a failing test, or without tap, counts one failure', async (t) => {
  t.equal(summaryOf(t, '# { total: 7, pass: 7 }\nERROR: Coverage for lines (80%) does not meet threshold (85%)\n', 1), '7 passed, 1 failed, 0 skipped')
  t.equal(summaryOf(t, 'npm ERR! install failed\n', 1), '0 passed, 1 failed, 0 skipped')
})
