import type { TestRun } from '../engine/conversation-tests.js'

// XML 1.0 allows neither these characters nor an escape for them.
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu

/** Text as XML character data or an attribute value. */
const escaped = (text: string): string =>
  text.replace(NOT_XML, '\uFFFD').replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[char]!)

/** What one failed test says: why it stopped, then each failing step's differences. */
function failureText(test: TestRun['tests'][number]): string {
  const lines = test.steps.flatMap((step) =>
    step.problems.map((problem) => `step ${step.step}: ${problem.at}: expected ${JSON.stringify(problem.expected)}, got ${JSON.stringify(problem.actual)}`),
  )
  return [...lines, ...(test.stopped ? [test.stopped] : [])].join('\n')
}

/**
 * A test run as a JUnit XML report, the format CI systems read (GitLab, Jenkins, GitHub actions'
 * reporters): one suite for the flow's version, one test case per conversation test, a failure
 * naming the step and what differs.
 */
export function junitReport(run: TestRun, flowName: string): string {
  const suite = `${flowName} (${run.version === null ? 'draft' : `version ${run.version}`})`
  const failures = run.tests.filter((test) => !test.passed).length
  const cases = run.tests.map((test) => {
    const open = `    <testcase classname="${escaped(suite)}" name="${escaped(test.name)}">`
    if (test.passed) return `${open}</testcase>`
    const text = failureText(test)
    const first = text.split('\n')[0] ?? 'failed'
    return `${open}\n      <failure message="${escaped(first)}">${escaped(text)}</failure>\n    </testcase>`
  })
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="flowd" tests="${run.tests.length}" failures="${failures}">`,
    `  <testsuite name="${escaped(suite)}" tests="${run.tests.length}" failures="${failures}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n')
}

/** The run as a person reads it in a terminal. */
export function runSummary(run: TestRun, flowName: string): string {
  const lines = [`${flowName} (${run.version === null ? 'draft' : `version ${run.version}`}): ${run.tests.filter((test) => test.passed).length} of ${run.tests.length} tests passed`]
  for (const test of run.tests) {
    lines.push(`  ${test.passed ? 'ok  ' : 'FAIL'} ${test.name}`)
    if (!test.passed) for (const line of failureText(test).split('\n')) lines.push(`         ${line}`)
  }
  return `${lines.join('\n')}\n`
}
