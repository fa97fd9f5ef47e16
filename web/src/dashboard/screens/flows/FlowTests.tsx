import { useEffect, useRef, useState } from 'react'
import { api, unwrap } from '../../api'
import { useQueryParams } from '../../components/address'
import { useAsync } from '../../components/async'
import { ListView, type Column } from '../../components/ListView'
import { ErrorNotice, SelectField } from '../../components/ui'
import { useT, type Translate } from '../../i18n'
import { DeleteAction, useSubmit } from '../workspaces/forms'
import type { ConversationTest, FlowDetail, StepResult, TestResult, TestRun } from './api-types'
import { actualWords, expectedWords, stopWords, turnWords } from './test-words'
import './flow-tests.css'

/** A flow keeps at most 50 tests and the API lists up to 100 a page: one page holds them all. */
const EVERY_TEST = 100
/** The versions a run may be pointed at: the newest hundred. */
const NEWEST_VERSIONS = 100

/** Where a run plays the tests: the draft, or a published version. */
type Target = 'draft' | number

/** A run, with the tests as they were when it ran: a result's expectations are read from them. */
interface KeptRun {
  run: TestRun
  tests: ReadonlyMap<string, ConversationTest>
}

const targetName = (target: Target, newest: number, t: Translate): string =>
  target === 'draft' ? t('flowTests.target.draft') : t(target === newest ? 'flowTests.target.newest' : 'flowTests.target.version', { version: target })

/**
 * The flow's conversation tests, and runs of them against the draft or a published version. The
 * page keeps the last run on each, so going back to a version shows its results again; `?test=`
 * marks one test (the one a session was just turned into).
 */
export function FlowTests({ flow }: { flow: FlowDetail }) {
  const t = useT()
  const [params] = useQueryParams()
  const marked = params.get('test') ?? undefined
  const tests = useAsync(() => unwrap(api.GET('/v1/flows/{id}/tests', { params: { path: { id: flow.id }, query: { size: EVERY_TEST } } })), [flow.id])
  const versions = useAsync(
    () => unwrap(api.GET('/v1/flows/{id}/versions', { params: { path: { id: flow.id }, query: { size: NEWEST_VERSIONS } } })),
    [flow.id, flow.publishedVersion],
  )
  const [target, setTarget] = useState<Target>(flow.publishedVersion)
  const [runs, setRuns] = useState<ReadonlyMap<Target, KeptRun>>(new Map())
  const running = useSubmit()
  const [announced, setAnnounced] = useState('')
  const section = useRef<HTMLElement>(null)
  const listed = tests.data?.content ?? []
  const kept = runs.get(target)
  const shownTarget = targetName(target, flow.publishedVersion, t)

  useEffect(() => {
    if (marked && tests.data) section.current?.querySelector('tr[aria-current="true"]')?.scrollIntoView({ block: 'center' })
  }, [marked, tests.data])

  async function run() {
    const ran = target
    const run = await unwrap(api.POST('/v1/flows/{id}/test-runs', { params: { path: { id: flow.id } }, body: ran === 'draft' ? {} : { version: ran } }))
    setRuns((all) => new Map(all).set(ran, { run, tests: new Map(listed.map((test) => [test.id, test])) }))
  }

  const resultOf = (id: string) => kept?.run.tests.find((result) => result.id === id)
  const columns: Column<ConversationTest>[] = [
    { header: t('flowTests.col.test'), namesRow: true, cell: (test) => test.name },
    { header: t('flowTests.col.steps'), cell: (test) => t('flowTests.steps', { count: test.steps.length }) },
    { header: t('flowTests.col.result', { target: shownTarget }), cell: (test) => <ResultBadge result={resultOf(test.id)} /> },
    {
      header: t('common.actions'),
      cell: (test) => (
        <DeleteAction
          name={test.name}
          question={t('flowTests.confirmDelete', { name: test.name })}
          onDelete={async () => {
            await unwrap(api.DELETE('/v1/flows/{id}/tests/{testId}', { params: { path: { id: flow.id, testId: test.id } } }))
            setAnnounced(t('flowTests.deleted', { name: test.name }))
            tests.reload()
          }}
        />
      ),
    },
  ]
  const newest = versions.data?.content.map((version) => version.version) ?? [flow.publishedVersion]
  const failed = (kept?.run.tests ?? []).filter((result) => !result.passed && listed.some((test) => test.id === result.id))
  const passedCount = kept ? kept.run.tests.filter((result) => result.passed).length : 0

  return (
    <section ref={section} className="card flow-tests" aria-labelledby="flow-tests-title">
      <h2 id="flow-tests-title">{t('flowTests.title')}</h2>
      <p className="hint">{t('flowTests.intro')}</p>
      <div className="form-row flow-tests-run">
        <SelectField
          label={t('flowTests.target')}
          value={String(target)}
          onChange={(value) => {
            setTarget(value === 'draft' ? 'draft' : Number(value))
            running.reset()
          }}
          options={[{ value: 'draft', label: t('flowTests.target.draft') }, ...newest.map((version) => ({ value: String(version), label: targetName(version, flow.publishedVersion, t) }))]}
        />
        <button type="button" onClick={() => void running.run(run)} disabled={running.busy || listed.length === 0}>
          {running.busy ? t('flowTests.running') : t('flowTests.run')}
        </button>
      </div>
      {versions.error && <ErrorNotice error={versions.error} onRetry={versions.reload} />}
      {running.error !== undefined && <ErrorNotice error={running.error} />}
      <p role="status" className={kept ? `notice ${kept.run.passed ? 'ok' : 'error'} flow-tests-summary` : 'flow-tests-summary'} data-testid="flow-tests-summary">
        {kept ? t('flowTests.summary', { target: shownTarget, passed: passedCount, total: kept.run.tests.length }) : ''}
      </p>
      <p role="status" className="flow-tests-announce">
        {announced}
      </p>
      <ListView
        list={tests}
        empty={{ title: t('flowTests.none'), hint: t('flowTests.noneHint') }}
        caption={(found) => t('flowTests.caption', { total: found.totalElements })}
        className="flow-tests-table"
        rowKey={(test) => test.id}
        current={marked}
        columns={columns}
      />
      {kept && failed.length > 0 && (
        <section className="flow-tests-failures" aria-labelledby="flow-tests-failures-title">
          <h3 id="flow-tests-failures-title">{t('flowTests.failures', { target: shownTarget })}</h3>
          {failed.map((result) => (
            <TestFailure key={result.id} result={result} test={kept.tests.get(result.id)} />
          ))}
        </section>
      )}
    </section>
  )
}

function ResultBadge({ result }: { result: TestResult | undefined }) {
  const t = useT()
  if (!result) return <span className="hint">{t('flowTests.notRun')}</span>
  return <span className={`badge ${result.passed ? 'ok' : 'error'}`}>{result.passed ? t('flowTests.passed') : t('flowTests.failed')}</span>
}

/** A failed test: why it stopped short, if it did, and each failing turn with what it expected beside what came. */
function TestFailure({ result, test }: { result: TestResult; test: ConversationTest | undefined }) {
  const t = useT()
  const headingId = `flow-test-failure-${result.id}`
  return (
    <article className="flow-test-failure" aria-labelledby={headingId}>
      <h4 id={headingId}>{t('flowTests.failureOf', { name: result.name })}</h4>
      {result.stop !== undefined && <p className="notice warn">{stopWords(result.stop, t)}</p>}
      {result.steps
        .filter((step) => !step.passed)
        .map((step) => (
          <StepDiff key={step.step} step={step} test={test} />
        ))}
    </article>
  )
}

function StepDiff({ step, test }: { step: StepResult; test: ConversationTest | undefined }) {
  const t = useT()
  return (
    <div className="flow-test-step">
      <table className="flow-test-diff">
        <caption>{turnWords(test, step.step, t)}</caption>
        <thead>
          <tr>
            <th scope="col">{t('flowTests.col.at')}</th>
            <th scope="col">{t('flowTests.col.expected')}</th>
            <th scope="col">{t('flowTests.col.actual')}</th>
          </tr>
        </thead>
        <tbody>
          {step.problems.map((problem, index) => (
            <tr key={index}>
              <th scope="row">
                <code>{problem.at}</code>
              </th>
              <td className="flow-test-expected">{expectedWords(test, step.step, problem, t)}</td>
              <td className="flow-test-actual">{actualWords(problem, t)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="hint">{step.said.length > 0 ? t('flowTests.said', { said: step.said.map((said) => `“${said}”`).join(' ') }) : t('flowTests.saidNothing')}</p>
    </div>
  )
}
